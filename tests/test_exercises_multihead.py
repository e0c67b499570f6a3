"""Lesson-03 checkers: reference answers pass, plausible wrong ones are explained."""

from __future__ import annotations

import pytest

from lessons_lib.exercises import ExerciseCheckError
from lessons_lib.exercises.multihead import check_key_padding_mask, check_split_heads
from lessons_lib.attention.multihead import split_heads


def test_reference_answers_pass(capsys):
    check_split_heads(split_heads)
    check_key_padding_mask(lambda m: m == 0)
    assert capsys.readouterr().out.count("✅") == 2


@pytest.mark.parametrize("wrong, message", [
    (lambda x, h: x.reshape(x.shape[0], h, x.shape[1], -1), "transpose"),
    (lambda x, h: x.reshape(x.shape[0], x.shape[1], -1, h).permute(0, 3, 1, 2), "间隔为 H"),
    (lambda x, h: x.reshape(x.shape[0], x.shape[1], h, -1), "形状"),
])
def test_split_heads_mistakes(wrong, message):
    with pytest.raises(ExerciseCheckError, match=message):
        check_split_heads(wrong)


@pytest.mark.parametrize("wrong, message", [
    (lambda m: m == 1, "方向反了"),
    (lambda m: 1 - m, "torch.bool"),
    (lambda m: (m == 0).float(), "偏置"),
])
def test_key_padding_mask_mistakes(wrong, message):
    with pytest.raises(ExerciseCheckError, match=message):
        check_key_padding_mask(wrong)


def test_nan_prediction_names_the_sentences_without_padding(capsys):
    from lessons_lib.exercises.multihead import check_nan_prediction, sentences_with_nan

    assert sentences_with_nan() == {0, 2}
    check_nan_prediction(lambda: [0, 2])
    assert "为什么" in capsys.readouterr().out
    for wrong, message in [({1, 3}, "有填充的句子不会得到 NaN"), (set(), "一个可以关注的键也不剩"), ("none", "集合")]:
        with pytest.raises(ExerciseCheckError, match=message):
            check_nan_prediction(lambda wrong=wrong: wrong)
