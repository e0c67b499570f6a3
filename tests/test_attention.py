"""Unit tests of lessons_lib.attention.functional: values, masks, NaN handling and bad input."""

from __future__ import annotations

import math

import pytest
import torch

from lessons_lib.attention.functional import attention_scores, masked_softmax, padding_mask, scaled_dot_product_attention
from lessons_lib.errors import CourseInputError


@pytest.fixture
def qkv():
    g = torch.Generator().manual_seed(0)
    q = torch.randn(2, 3, 4, 8, generator=g)
    k = torch.randn(2, 3, 5, 8, generator=g)
    v = torch.randn(2, 3, 5, 6, generator=g)
    return q, k, v


def test_scores_are_scaled_dot_products(qkv):
    q, k, _ = qkv
    scores = attention_scores(q, k)
    assert scores.shape == (2, 3, 4, 5)
    manual = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(8)
    torch.testing.assert_close(scores, manual)
    torch.testing.assert_close(attention_scores(q, k, scale=False), manual * math.sqrt(8))


def test_attention_matches_torch_sdpa(qkv):
    q, k, v = qkv
    out, weights = scaled_dot_product_attention(q, k, v)
    expected = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    torch.testing.assert_close(out, expected, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 3, 4))


def test_mask_matches_torch_sdpa_boolean_mask(qkv):
    q, k, v = qkv
    mask = padding_mask([3, 5], 5)[:, None, None, :]  # (B, 1, 1, L_k)
    out, weights = scaled_dot_product_attention(q, k, v, mask=mask)
    expected = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    torch.testing.assert_close(out, expected, atol=1e-6, rtol=1e-5)
    assert torch.all(weights[0, :, :, 3:] == 0)


def test_fully_masked_row_gives_zero_weights_not_nan():
    scores = torch.tensor([[1.0, 2.0, 3.0], [0.5, 0.5, 0.5]])
    mask = torch.tensor([[True, False, True], [False, False, False]])
    weights = masked_softmax(scores, mask)
    assert not torch.isnan(weights).any()
    torch.testing.assert_close(weights[1], torch.zeros(3))
    torch.testing.assert_close(weights[0].sum(), torch.tensor(1.0))
    assert weights[0, 1] == 0


def test_plain_softmax_of_all_minus_inf_is_nan():
    # The failure the library guards against, shown so a torch change would be noticed.
    assert torch.isnan(torch.softmax(torch.full((3,), float("-inf")), dim=-1)).all()


def test_fully_masked_row_has_finite_gradients():
    scores = torch.randn(2, 3, requires_grad=True)
    mask = torch.tensor([[True, True, False], [False, False, False]])
    masked_softmax(scores, mask)[:, 0].sum().backward()
    assert torch.isfinite(scores.grad).all()
    assert torch.all(scores.grad[1] == 0)


def test_padding_mask():
    mask = padding_mask(torch.tensor([1, 3, 0]), 4)
    assert mask.dtype == torch.bool and mask.shape == (3, 4)
    assert mask.tolist() == [[True, False, False, False], [True, True, True, False], [False] * 4]
    assert padding_mask([2, 1]).shape == (2, 2)


@pytest.mark.parametrize(
    "lengths, max_len, message",
    [([[1, 2]], None, "1-D integer"), ([1.0, 2.0], None, "1-D integer"), ([-1, 2], None, "non-negative"),
     ([5], 3, "shorter than")],
)
def test_padding_mask_bad_input(lengths, max_len, message):
    with pytest.raises(CourseInputError, match=message):
        padding_mask(lengths, max_len)


def test_width_mismatch_names_both_shapes():
    with pytest.raises(CourseInputError, match=r"query has d_k=8.*key has d_k=6.*bilinear or additive"):
        attention_scores(torch.randn(2, 8), torch.randn(3, 6))


def test_key_value_length_mismatch():
    with pytest.raises(CourseInputError, match="same number of positions"):
        scaled_dot_product_attention(torch.randn(2, 4), torch.randn(3, 4), torch.randn(2, 4))


@pytest.mark.parametrize("bad", [torch.ones(2, 3, dtype=torch.long), [[1.0, 2.0]], torch.randn(3)])
def test_non_float_or_1d_inputs_are_rejected(bad):
    with pytest.raises(CourseInputError, match="`query`"):
        attention_scores(bad, torch.randn(2, 3))


def test_mask_of_wrong_dtype_explains_the_inversion_pitfall():
    with pytest.raises(CourseInputError, match=r"torch.bool.*mask == 1.*inverts"):
        masked_softmax(torch.randn(2, 3), torch.ones(2, 3, dtype=torch.long))


def test_mask_of_wrong_shape():
    with pytest.raises(CourseInputError, match=r"does not broadcast.*mask\[:, None, :\]"):
        masked_softmax(torch.randn(2, 4, 3), torch.ones(2, 4, dtype=torch.bool))
    with pytest.raises(CourseInputError, match="enlarge"):
        masked_softmax(torch.randn(4, 3), torch.ones(2, 4, 3, dtype=torch.bool))
    with pytest.raises(CourseInputError, match="boolean torch.Tensor"):
        masked_softmax(torch.randn(4, 3), [[True]])


def test_scores_must_be_float():
    with pytest.raises(CourseInputError, match="scores"):
        masked_softmax(torch.ones(2, 3, dtype=torch.long))
