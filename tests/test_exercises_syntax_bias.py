"""The lesson-08 checkers accept the reference answers and explain plausible wrong ones."""

from __future__ import annotations

import pytest
import torch

from lessons_lib.exercises import ExerciseCheckError
from lessons_lib.exercises.syntax_bias import check_bucket_bias, check_hard_mask
from lessons_lib.syntax_bias.variants import lookup_bias


def _reference_hard_mask(buckets, max_distance):
    far = (buckets > max_distance) & (buckets <= 10)
    return torch.zeros(buckets.shape, dtype=torch.float32).masked_fill(far, float("-inf"))[:, None]


def test_reference_answers_pass(capsys):
    check_bucket_bias(lookup_bias)
    check_hard_mask(_reference_hard_mask)
    assert capsys.readouterr().out.count("✅") == 2


@pytest.mark.parametrize(
    "wrong, message",
    [
        (lambda t, b: t[:, b].transpose(0, 1), "最后一个桶"),
        (lambda t, b: lookup_bias(t, b).masked_fill((b < 0)[:, None], float("-inf")), "-inf"),
        (lambda t, b: t[:, b.clamp(min=0)], "形状"),
        (lambda t, b: None, "没有返回值"),
    ],
)
def test_bucket_bias_mistakes(wrong, message):
    with pytest.raises(ExerciseCheckError, match=message):
        check_bucket_bias(wrong)


@pytest.mark.parametrize(
    "wrong, message",
    [
        (lambda b, r: torch.zeros(b.shape).masked_fill(b > r, float("-inf"))[:, None], "跨句"),
        (lambda b, r: _reference_hard_mask(b, r).masked_fill((b < 0)[:, None], float("-inf")), "填充"),
        (lambda b, r: _reference_hard_mask(b, r - 1), "差一"),
        (lambda b, r: _reference_hard_mask(b, r)[:, 0], "形状"),
    ],
)
def test_hard_mask_mistakes(wrong, message):
    with pytest.raises(ExerciseCheckError, match=message):
        check_hard_mask(wrong)


def _prediction(zero, rounding):
    return lambda: {"exactly_zero": set(zero), "rounding_only": set(rounding)}


def test_one_block_gradient_prediction_passes_when_right(capsys):
    from lessons_lib.exercises.syntax_bias import check_one_block_gradients, one_block_table_gradient
    from lessons_lib.syntax.buckets import SPECIAL_BUCKET

    grad = one_block_table_gradient()
    assert grad[SPECIAL_BUCKET] > 0 and (grad[:SPECIAL_BUCKET] == 0).all()  # the measured fact the exercise is about
    check_one_block_gradients(_prediction(range(SPECIAL_BUCKET), [SPECIAL_BUCKET]))
    assert "✅" in capsys.readouterr().out


@pytest.mark.parametrize(
    "answer, message",
    [
        (_prediction(range(13), []), "特殊符号"),
        (_prediction(range(11), [11, 12]), "精确为 0"),
        (_prediction(range(5), [12]), "没有归类"),
        (lambda: {"exactly_zero": {0}}, "rounding_only"),
        (lambda: {"exactly_zero": {99}, "rounding_only": {12}}, "不存在"),
        (lambda: [0, 1], "字典"),
    ],
)
def test_one_block_gradient_prediction_mistakes(answer, message):
    from lessons_lib.exercises.syntax_bias import check_one_block_gradients

    with pytest.raises(ExerciseCheckError, match=message):
        check_one_block_gradients(answer)


def test_the_gradient_check_leaves_the_random_stream_alone():
    from lessons_lib.exercises.syntax_bias import one_block_table_gradient

    torch.manual_seed(3)
    expected = torch.rand(3)
    torch.manual_seed(3)
    one_block_table_gradient()
    assert torch.equal(torch.rand(3), expected)
