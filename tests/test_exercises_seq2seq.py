"""Lesson-02 checkers: reference answers pass, plausible wrong ones are explained."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from lessons_lib.exercises import ExerciseCheckError, ExerciseNotDone
from lessons_lib.exercises.seq2seq import check_additive_scores, check_bilinear_scores


def _bilinear(q, keys, w):
    return torch.einsum("bd,de,bse->bs", q, w, keys)


def _additive(q, keys, w_q, w_k, v):
    return torch.tanh((q @ w_q.T)[:, None, :] + keys @ w_k.T) @ v


def test_reference_answers_pass(capsys):
    check_bilinear_scores(_bilinear)
    check_additive_scores(_additive)
    assert capsys.readouterr().out.count("✅") == 2


@pytest.mark.parametrize("wrong, message", [
    (lambda q, k, w: torch.softmax(_bilinear(q, k, w), -1), "softmax 之后的权重"),
    (lambda q, k, w: _bilinear(q, k, w) / 2.0, "除以了 √d"),
    (lambda q, k, w: torch.einsum("bd,ed,bse->bs", q, w, k), "RuntimeError"),  # W used transposed
    (lambda q, k, w: _bilinear(q, k, w)[:, :, None], "形状"),
])
def test_bilinear_mistakes(wrong, message):
    with pytest.raises(ExerciseCheckError, match=message):
        check_bilinear_scores(wrong)


@pytest.mark.parametrize("wrong, message", [
    (lambda q, k, wq, wk, v: ((q @ wq.T)[:, None, :] + k @ wk.T) @ v, "tanh"),
    (lambda q, k, wq, wk, v: torch.softmax(_additive(q, k, wq, wk, v), -1), "softmax"),
    (lambda q, k, wq, wk, v: torch.tanh((q @ wq.T)[:, None, :] + k @ wk.T).sum(-1), "向量 v"),
])
def test_additive_mistakes(wrong, message):
    with pytest.raises(ExerciseCheckError, match=message):
        check_additive_scores(wrong)


def test_an_unfinished_exercise_is_named_as_not_done():
    def todo(*args):
        raise NotImplementedError()

    with pytest.raises(ExerciseNotDone, match="还没有完成"):
        check_bilinear_scores(todo)


def test_score_parameter_counts_explain_a_forgotten_bias_or_vector(capsys):
    from lessons_lib.exercises import ExerciseCheckError as CheckError
    from lessons_lib.exercises.seq2seq import check_score_parameter_counts

    check_score_parameter_counts(lambda: {"bilinear": 96 * 128, "additive": 64 * 96 + 64 * 128 + 64 + 64})
    assert "为什么" in capsys.readouterr().out
    cases = [({"bilinear": 96 * 128 + 96, "additive": 14464}, "没有偏置项"),
             ({"bilinear": 12288, "additive": 64 * (96 + 128)}, "向量 v"),
             ({"bilinear": 12288, "additive": 64 * (96 + 128) + 64}, "偏置"),
             ({"bilinear": 12288}, "请返回")]
    for answer, message in cases:
        with pytest.raises(CheckError, match=message):
            check_score_parameter_counts(lambda answer=answer: answer)


@pytest.mark.slow
def test_unscaled_saturation_width_is_measured_and_wrong_widths_are_explained(capsys):
    from lessons_lib.exercises import ExerciseCheckError as CheckError
    from lessons_lib.exercises.seq2seq import (NEIGHBOUR_MARGIN, check_unscaled_saturation_width, mean_largest_weight,
                                               saturation_width)

    measured = saturation_width()
    assert mean_largest_weight(measured) >= 0.7 > mean_largest_weight(measured // 2)
    assert mean_largest_weight(1024, scaled=True) < 0.3          # scaled, no width saturates
    check_unscaled_saturation_width(lambda: measured)
    check_unscaled_saturation_width(lambda: np.int64(measured))   # a numpy integer is an integer
    assert capsys.readouterr().out.count("✅") == 2
    check_unscaled_saturation_width(lambda: measured, seed=3)
    # One step narrower is refused: its mean (about 0.62) is far below 0.7, farther than sampling error.
    assert mean_largest_weight(measured // 2) < 0.7 - NEIGHBOUR_MARGIN
    for wrong, message in [(measured // 2, "偏小"), (np.int64(measured // 2), "偏小"), (measured // 8, "标准正态"),
                           (measured // 4, "偏小"), (measured * 4, "√d"),
                           (100, "请返回"), (float(measured), "请返回"), (np.float64(measured), "请返回")]:
        with pytest.raises(CheckError, match=message):
            check_unscaled_saturation_width(lambda wrong=wrong: wrong)
