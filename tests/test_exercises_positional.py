"""Lesson-04 checkers: reference answers pass, plausible wrong ones are explained."""

from __future__ import annotations

import pytest
import torch

from lessons_lib.exercises import ExerciseCheckError
from lessons_lib.exercises.positional import check_shift_matrix, check_sinusoidal_table
from lessons_lib.transformer.positional import shift_matrix, sinusoidal_encoding


def _table(max_len, d_model, swap=False, halves=False, denominator=None):
    t = torch.arange(max_len, dtype=torch.float64)[:, None]
    omega = 10000 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / (denominator or d_model))
    s, c = torch.sin(t * omega), torch.cos(t * omega)
    if swap:
        s, c = c, s
    if halves:
        return torch.cat([s, c], dim=1)
    return torch.stack([s, c], dim=-1).flatten(1)


def test_reference_answers_pass(capsys):
    check_sinusoidal_table(sinusoidal_encoding)
    check_sinusoidal_table(_table)
    check_shift_matrix(shift_matrix)
    assert capsys.readouterr().out.count("✅") == 3


@pytest.mark.parametrize("wrong, message", [
    (lambda n, d: _table(n, d, swap=True), "放反了"),
    (lambda n, d: _table(n, d, halves=True), "交错排列"),
    (lambda n, d: _table(n, d, denominator=d // 2), "分母是 D"),
    (lambda n, d: _table(n, d).T, "形状"),
])
def test_table_mistakes(wrong, message):
    with pytest.raises(ExerciseCheckError, match=message):
        check_sinusoidal_table(wrong)


def test_shift_matrix_mistakes():
    with pytest.raises(ExerciseCheckError, match="M_{-k}"):
        check_shift_matrix(lambda k, d: shift_matrix(k, d).T)
    with pytest.raises(ExerciseCheckError, match="数值"):
        check_shift_matrix(lambda k, d: torch.eye(d))


def test_default_init_ratio_accepts_a_prediction_near_the_measurement(capsys):
    from lessons_lib.exercises import ExerciseCheckError as CheckError
    from lessons_lib.exercises.positional import check_default_init_ratio, default_init_ratio

    assert abs(default_init_ratio(1024) - (2 * 1024) ** 0.5) < 1.0
    check_default_init_ratio(lambda: (2 * 1024) ** 0.5)
    assert "为什么" in capsys.readouterr().out
    for wrong, message in [(1.41, "乘以 √D"), (1000.0, "不是 1"), ("45", "应当是一个数")]:
        with pytest.raises(CheckError, match=message):
            check_default_init_ratio(lambda wrong=wrong: wrong)
