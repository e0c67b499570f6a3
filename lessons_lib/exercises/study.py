"""Checkers for lesson 10's exercises: a contrast counted in whole test pairs, and the seed-level
t statistic that makes the seed the unit."""

from __future__ import annotations

import math
import numbers
from typing import Callable, Sequence

from lessons_lib.exercises import ExerciseCheckError, call_learner, check_random, passed

# The lesson's own cases when no grader seed is given: one seed's correctness on 12 test pairs.
_CORRECT_A = (1, 1, 0, 1, 0, 1, 1, 0, 1, 1, 0, 1)
_CORRECT_B = (1, 0, 0, 1, 1, 0, 1, 0, 0, 1, 1, 1)
# The last case loses on average: its t is negative, so a t that drops its sign is caught.
_DIFFERENCES = ((17, 64, 28), (39, 39, 110), (-8, 33, 23, 5), (-41, 6, -30, -12))


def _as_int(exercise: str, got, what: str) -> int:
    if got is None:
        raise ExerciseCheckError(f"{exercise}: 你的函数没有返回值 (returned None)，是不是忘了 `return`？")
    # numbers.Integral: Python's int and NumPy's integers alike (a sum over an array gives numpy.int64)
    whole = isinstance(got, numbers.Integral) or isinstance(got, float) and got.is_integer()
    if isinstance(got, bool) or not whole:
        raise ExerciseCheckError(f"{exercise}: {what}应当是一个整数（句对数），你返回了 {got!r}。")
    return int(got)


def check_won_minus_lost(fn: Callable[[Sequence[int], Sequence[int]], int], *, seed: int | None = None) -> None:
    """Exercise 10-1: ``fn(correct_a, correct_b)`` (0/1 per test pair, one seed) → pairs only a got right
    minus pairs only b got right, an integer. With the grader's ``seed`` the lists are drawn afresh."""
    exercise = "练习 10-1 按整数个句对数一个对比"
    cases: list[tuple[tuple[int, ...], tuple[int, ...]]] = [(_CORRECT_A, _CORRECT_B)]
    rng = check_random(808 if seed is None else seed)
    for n in (20, 57):
        cases.append((tuple(rng.randint(0, 1) for _ in range(n)), tuple(rng.randint(0, 1) for _ in range(n))))
    for a, b in cases:
        expected = sum(x == 1 and y == 0 for x, y in zip(a, b)) - sum(x == 0 and y == 1 for x, y in zip(a, b))
        got = call_learner(exercise, fn, list(a), list(b))
        if isinstance(got, float) and not got.is_integer() and math.isclose(got, expected / len(a)):
            raise ExerciseCheckError(f"{exercise}: 你返回的是准确率之差 {got:.4f}；这里要的是整数个句对 ({expected})，"
                                     "符号和判定都从整数来。")
        value = _as_int(exercise, got, "赢的句对数减输的句对数")
        if value == -expected and expected != 0:
            raise ExerciseCheckError(f"{exercise}: 符号反了：要的是 a − b，只有 a 判对的句对记 +1。")
        if value != expected:
            raise ExerciseCheckError(f"{exercise}: 对 {len(a)} 对测试句对，应得 {expected:+d}，你的函数给出 {value:+d}。"
                                     "两个都对或两个都错的句对不计。")
    passed(exercise)


def _t(differences: Sequence[float], ddof: int = 1, root_n: bool = True) -> float:
    n = len(differences)
    mean = sum(differences) / n
    sd = math.sqrt(sum((d - mean) ** 2 for d in differences) / (n - ddof))
    return mean / (sd / math.sqrt(n) if root_n else sd)


def check_seed_level_t(fn: Callable[[Sequence[int]], float], *, seed: int | None = None) -> None:
    """Exercise 10-2: ``fn(differences)`` (one integer per seed) → the paired t statistic, mean / (sd / √n)
    with the sample standard deviation (n − 1). With the grader's ``seed`` the differences are drawn afresh."""
    exercise = "练习 10-2 以种子为单位的 t 统计量"
    cases = list(_DIFFERENCES)
    if seed is not None:
        rng = check_random(seed)
        cases = [tuple(rng.randint(-60, 120) for _ in range(n)) for n in (3, 5, 10)]
        cases = [c if len(set(c)) > 1 else c[:-1] + (c[-1] + 1,) for c in cases]
        cases += [tuple(-d for d in c) for c in cases if sum(c) > 0][:1]  # one t below zero at least
    for differences in cases:
        expected = _t(differences)
        got = call_learner(exercise, fn, list(differences))
        if got is None:
            raise ExerciseCheckError(f"{exercise}: 你的函数没有返回值 (returned None)，是不是忘了 `return`？")
        try:
            value = float(got)
        except (TypeError, ValueError):
            raise ExerciseCheckError(f"{exercise}: 应当返回一个数，你返回了 {got!r}。") from None
        if math.isclose(value, expected, rel_tol=1e-9):
            continue
        if expected < 0 and math.isclose(value, -expected, rel_tol=1e-9):
            raise ExerciseCheckError(f"{exercise}: 符号丢了：对差 {list(differences)}，均值为负，t 也应为负"
                                     "（取了绝对值？）。符号说明哪一臂更好。")
        if math.isclose(value, _t(differences, ddof=0), rel_tol=1e-9):
            raise ExerciseCheckError(f"{exercise}: 你用的是总体标准差（除以 n）；种子是样本，要除以 n − 1。")
        if math.isclose(value, _t(differences, root_n=False), rel_tol=1e-9):
            raise ExerciseCheckError(f"{exercise}: 你用标准差本身做了分母；均值的标准误是 sd / √n。")
        raise ExerciseCheckError(f"{exercise}: 对每个种子的差 {list(differences)}，t 应为 {expected:.4f}，"
                                 f"你的函数给出 {value:.4f}。")
    passed(exercise, f"三个种子 (+17, +64, +28) 的 t = {_t(_DIFFERENCES[0]):.3f}：自由度只有 2，"
                     "这样的 t 还不够显著。")
