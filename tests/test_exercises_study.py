"""Lesson 10's exercise checkers accept the right answers and reject the usual mistakes."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest

from lessons_lib.exercises import ExerciseCheckError
from lessons_lib.exercises.study import check_a48_reading, check_seed_level_t, check_welch_df, check_won_minus_lost


def _won_minus_lost(a, b):
    return sum(x > y for x, y in zip(a, b)) - sum(y > x for x, y in zip(a, b))


def _t(differences):
    return statistics.mean(differences) / (statistics.stdev(differences) / math.sqrt(len(differences)))


@pytest.mark.parametrize("seed", [None, 1, 2])
def test_right_answers_pass(seed, capsys):
    check_won_minus_lost(_won_minus_lost, seed=seed)
    check_seed_level_t(_t, seed=seed)
    assert capsys.readouterr().out.count("通过") == 2


@pytest.mark.parametrize("wrong, says", [
    (lambda a, b: -_won_minus_lost(a, b), "符号反了"),
    (lambda a, b: _won_minus_lost(a, b) / len(a), "准确率之差"),
    (lambda a, b: sum(a) - sum(b) + 1, "应得"),
    (lambda a, b: None, "没有返回值"),
])
def test_won_minus_lost_rejects(wrong, says):
    with pytest.raises(ExerciseCheckError, match=says):
        check_won_minus_lost(wrong)


@pytest.mark.parametrize("wrong, says", [
    (lambda d: statistics.mean(d) / (statistics.pstdev(d) / math.sqrt(len(d))), "总体标准差"),
    (lambda d: statistics.mean(d) / statistics.stdev(d), "标准误"),
    (lambda d: statistics.mean(d), "t 应为"),
    (lambda d: "t", "应当返回一个数"),
])
def test_seed_level_t_rejects(wrong, says):
    with pytest.raises(ExerciseCheckError, match=says):
        check_seed_level_t(wrong, seed=3)


@pytest.mark.parametrize("seed", [None, *range(1, 13)])
def test_a_t_without_its_sign_is_rejected_on_the_lessons_cases_and_every_grader_seed(seed):
    with pytest.raises(ExerciseCheckError, match="符号丢了"):
        check_seed_level_t(lambda d: abs(_t(d)), seed=seed)


@pytest.mark.parametrize("seed", [None, 1])
def test_a_count_returned_as_a_numpy_integer_passes(seed, capsys):
    def with_numpy(a, b):
        a, b = np.asarray(a), np.asarray(b)
        return np.sum((a == 1) & (b == 0)) - np.sum((a == 0) & (b == 1))

    assert isinstance(with_numpy([1], [0]), np.integer)
    check_won_minus_lost(with_numpy, seed=seed)
    assert "通过" in capsys.readouterr().out


def _a48(gain, gain_p, dod, dod_p):
    """The plan's rule, written independently of the checker: support, against, partly, inconclusive."""
    if gain_p <= 0.05 and dod_p <= 0.05 and gain > 0 and dod > 0:
        return "support"
    if any(p <= 0.05 and x < 0 for x, p in ((gain, gain_p), (dod, dod_p))):
        return "against"
    return "partly" if dod_p <= 0.05 and dod > 0 else "inconclusive"


def _welch_df(sd_a, n_a, sd_b, n_b):
    va, vb = sd_a ** 2 / n_a, sd_b ** 2 / n_b
    return (va + vb) ** 2 / (va ** 2 / (n_a - 1) + vb ** 2 / (n_b - 1))


@pytest.mark.parametrize("seed", [None, 1, 2])
def test_lesson_11_right_answers_pass(seed, capsys):
    check_a48_reading(_a48, seed=seed)
    check_welch_df(_welch_df, seed=seed)
    check_welch_df(lambda *case: np.float64(_welch_df(*case)), seed=seed)  # a NumPy float is a number
    assert capsys.readouterr().out.count("通过") == 3


@pytest.mark.parametrize("wrong, says", [
    (lambda g, gp, d, dp: "support" if g > 0 and d > 0 else "inconclusive", "点估计为正还不够"),
    (lambda g, gp, d, dp: "support" if g > 0 and gp <= 0.05 else _a48(g, gp, d, dp), "还要差的差显著为正"),
    (lambda g, gp, d, dp: "inconclusive" if _a48(g, gp, d, dp) == "partly" else _a48(g, gp, d, dp), "partly"),
    (lambda g, gp, d, dp: "no effect", "之一"),
    (lambda g, gp, d, dp: None, "之一"),
])
def test_a48_reading_rejects(wrong, says):
    with pytest.raises(ExerciseCheckError, match=says):
        check_a48_reading(wrong)


@pytest.mark.parametrize("wrong, says", [
    (lambda a, na, b, nb: na + nb - 2, "合并方差"),
    (lambda a, na, b, nb: min(na, nb) - 1, "保守"),
    (lambda a, na, b, nb: _welch_df(math.sqrt(a), na, math.sqrt(b), nb), "方差"),
    (lambda a, na, b, nb: (a * a / na + b * b / nb) ** 0.5, "自由度 ="),
    (lambda a, na, b, nb: "12", "应当返回一个数"),
])
def test_welch_df_rejects(wrong, says):
    with pytest.raises(ExerciseCheckError, match=says):
        check_welch_df(wrong)
