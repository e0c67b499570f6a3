"""strict_from_dict: configuration round trips, unknown keys are errors."""

from dataclasses import asdict, dataclass

import pytest
import torch

from lessons_lib.validation import check_bias, check_divisible, check_mask, check_tensor, strict_from_dict
from lessons_lib.errors import CourseInputError


@dataclass
class _Config:
    width: int
    depth: int = 1


def test_round_trip():
    config = _Config(width=8, depth=2)
    assert strict_from_dict(_Config, asdict(config)) == config


def test_unknown_key_is_named():
    with pytest.raises(CourseInputError, match=r"unknown _Config fields: \['heads'\]"):
        strict_from_dict(_Config, {"width": 8, "heads": 4})


@pytest.mark.parametrize("call, message", [
    (lambda: check_tensor([1.0], "x"), "`x` must be a torch.Tensor, got list"),
    (lambda: check_tensor(torch.ones(2, dtype=torch.long), "x"), "`x` must be a floating-point tensor, got dtype torch.int64"),
    (lambda: check_tensor(torch.ones(3), "x", min_dim=2), r"`x` must have at least 2 dimensions .* got shape \(3,\)"),
    (lambda: check_tensor(torch.ones(2, 3), "x", width=4), r"`x` must have width 4 in its last dimension, got shape \(2, 3\)"),
    (lambda: check_mask(torch.ones(2, 3), (2, 3)), "torch.bool .*`mask == 0`, which inverts it"),
    (lambda: check_mask(torch.ones(2, 3), torch_hint=True), "boolean tensor .*key_padding_mask means the opposite"),
    (lambda: check_mask(torch.ones(2, 4, dtype=torch.bool), (2, 4, 3)), r"does not broadcast .*mask\[:, None, :\]"),
    (lambda: check_mask(torch.ones(2, 4, 3, dtype=torch.bool), (4, 3)), "would enlarge"),
    (lambda: check_bias(torch.zeros(1, 1, 5, 4), (2, 4, 5, 5)), r"`attn_bias` of shape \(1, 1, 5, 4\) does not broadcast"),
    (lambda: check_bias(torch.zeros(1, dtype=torch.long), (2, 4, 5, 5)), "floating-point tensor"),
    (lambda: check_divisible(30, "`d_model`", 4, "`n_heads`"), "`d_model`=30 must be divisible by `n_heads`=4"),
])
def test_tensor_checks_name_the_argument(call, message):
    with pytest.raises(CourseInputError, match=message):
        call()


def test_tensor_checks_return_what_passes():
    x, mask = torch.ones(2, 3), torch.ones(1, 3, dtype=torch.bool)
    assert check_tensor(x, "x", min_dim=2, width=3) is x
    assert check_mask(mask, (2, 3)) is mask and check_mask(mask, torch_hint=True) is mask
    assert check_bias(x, (4, 2, 3)) is x and check_divisible(32, "d", 4, "h") == 32
