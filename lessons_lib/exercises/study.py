"""Checkers for lessons 10 and 11: a contrast counted in whole test pairs and the seed-level t
statistic that makes the seed the unit (lesson 10); what a pre-registered rule calls support, and
Welch's degrees of freedom for a difference of differences (lesson 11)."""

from __future__ import annotations

import math
import numbers
from typing import Callable, Sequence

from lessons_lib.exercises import ExerciseCheckError, call_learner, check_random, passed
from lessons_lib.evaluation.seed_tests import SCARCITY_VERDICTS, SeedTest, scarcity_verdict

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


# Lesson 11, exercise 11-1: (1 % gain mean, its Holm p, difference-of-differences mean, its Holm p) -> verdict.
_A48_CASES = (
    (+0.0021, 1.0, -0.0010, 1.0),      # the study's own reading
    (+0.0010, 0.70, +0.0130, 0.020),   # only the difference of differences holds
    (+0.0150, 0.004, +0.0020, 0.60),   # a gain that holds, a difference of differences that does not
    (+0.0150, 0.004, +0.0120, 0.010),  # both hold
    (-0.0140, 0.030, -0.0020, 0.50),   # a loss that holds at 1 %
    (+0.0120, 0.051, +0.0110, 0.049),  # a Holm p just above 0.05 is not significant
)
A48_VERDICTS = SCARCITY_VERDICTS


def _a48(gain: float, gain_holm_p: float, dod: float, dod_holm_p: float) -> str:
    """The plan's rule (results/lcqmc/PLAN.md, 'What counts for A48'), significance at Holm p ≤ 0.05."""
    def read(mean: float, holm_p: float) -> SeedTest:  # only the mean's sign and the Holm p matter to the rule
        return SeedTest(mean, math.nan, math.nan, math.nan, 0, holm_p, (mean > 0) - (mean < 0), holm_p=holm_p)

    return scarcity_verdict(read(gain, gain_holm_p), read(dod, dod_holm_p), 0.05)


def _a48_hint(case: tuple[float, float, float, float], got: str) -> str:
    gain, gain_p, dod, dod_p = case
    gain_holds = gain_p <= 0.05 and gain > 0
    if got == "support" and not gain_holds:
        return "“支持”要两个对比在 Holm 校正后都显著为正：点估计为正还不够，Holm p 要 ≤ 0.05。"
    if got == "support":
        return "1% 上显著的收益只说明偏置在 1% 上有用；A48 说的是“数据越少、收益越大”，还要差的差显著为正。"
    if got == "inconclusive" and dod_p <= 0.05 and dod > 0:
        return "规程还有一档：差的差显著为正、1% 的收益本身不显著，叫作 partly。"
    if got == "against":
        return "“反对”要一个对比显著为负；这里没有。"
    return "按规程的四档逐条核对：先看两个对比是否都显著为正，再看有没有显著为负的，再看差的差。"


def check_a48_reading(fn: Callable[[float, float, float, float], str], *, seed: int | None = None) -> None:
    """Exercise 11-1: ``fn(gain, gain_holm_p, dod, dod_holm_p)`` → the plan's verdict for A48, one of
    :data:`A48_VERDICTS`. With the grader's ``seed`` more cases are drawn at random."""
    exercise = "练习 11-1 规程怎样读 A48"
    cases = list(_A48_CASES)
    if seed is not None:
        rng = check_random(seed)
        cases += [(rng.choice((-1, 1)) * rng.randint(1, 200) / 10_000, rng.choice((0.001, 0.04, 0.05, 0.2, 1.0)),
                   rng.choice((-1, 1)) * rng.randint(1, 200) / 10_000, rng.choice((0.002, 0.03, 0.07, 0.5)))
                  for _ in range(8)]
    for case in cases:
        got = call_learner(exercise, fn, *case)
        if got not in A48_VERDICTS:
            raise ExerciseCheckError(f"{exercise}: 请返回 {', '.join(map(repr, A48_VERDICTS))} 之一，你返回了 {got!r}。")
        expected = _a48(*case)
        if got != expected:
            gain, gain_p, dod, dod_p = case
            raise ExerciseCheckError(f"{exercise}: 1% 的收益 {gain:+.4f}（Holm p {gain_p:g}），差的差 {dod:+.4f}"
                                     f"（Holm p {dod_p:g}）：你的函数给出 {got!r}，不对。{_a48_hint(case, got)}")
    passed(exercise, f"这个研究自己的读数（1% 的收益 {_A48_CASES[0][0]:+.4f}、差的差 {_A48_CASES[0][2]:+.4f}，"
                     f"Holm p 都是 {_A48_CASES[0][1]:g}）按规程是 {_a48(*_A48_CASES[0])}：没有定论，不是“没有作用”。")


# Lesson 11, exercise 11-2: (sd, n) of the per-seed differences at 1 % and at 10 %.
_WELCH_CASES = ((0.0097, 10, 0.0032, 5), (0.0087, 10, 0.0025, 5), (0.004, 6, 0.004, 6), (0.001, 3, 0.02, 12))


def _welch_df(sd_a: float, n_a: int, sd_b: float, n_b: int) -> float:
    va, vb = sd_a ** 2 / n_a, sd_b ** 2 / n_b
    return (va + vb) ** 2 / (va ** 2 / (n_a - 1) + vb ** 2 / (n_b - 1))


def _welch_hint(case: tuple[float, int, float, int], value: float) -> str:
    sd_a, n_a, sd_b, n_b = case
    if math.isclose(value, n_a + n_b - 2):
        return "n_a + n_b − 2 是两组方差相等时（合并方差的 t 检验）的自由度；Welch 不假定方差相等。"
    if math.isclose(value, min(n_a, n_b) - 1):
        return "min(n) − 1 是保守的近似；这里要的是 Welch–Satterthwaite 公式。"
    if math.isclose(value, _welch_df(math.sqrt(sd_a), n_a, math.sqrt(sd_b), n_b), rel_tol=1e-9):
        return "公式里用的是每组均值的方差 sd² / n；你大概把标准差当成了方差。"
    return "自由度 = (s_a²/n_a + s_b²/n_b)² / ((s_a²/n_a)²/(n_a−1) + (s_b²/n_b)²/(n_b−1))。"


def check_welch_df(fn: Callable[[float, int, float, int], float], *, seed: int | None = None) -> None:
    """Exercise 11-2: ``fn(sd_a, n_a, sd_b, n_b)`` → the Welch–Satterthwaite degrees of freedom of a
    difference of two independent means. With the grader's ``seed`` more cases are drawn at random."""
    exercise = "练习 11-2 差的差的 Welch 自由度"
    cases = list(_WELCH_CASES)
    if seed is not None:
        rng = check_random(seed)
        cases += [(rng.randint(5, 150) / 10_000, rng.randint(3, 12), rng.randint(5, 150) / 10_000, rng.randint(3, 12))
                  for _ in range(5)]
    for case in cases:
        got = call_learner(exercise, fn, *case)
        if isinstance(got, bool) or not isinstance(got, numbers.Real) or got != got:
            raise ExerciseCheckError(f"{exercise}: 应当返回一个数（自由度），你返回了 {got!r}。")
        value, expected = float(got), _welch_df(*case)
        if not math.isclose(value, expected, rel_tol=1e-9):
            raise ExerciseCheckError(f"{exercise}: 对 sd {case[0]}（n = {case[1]}）与 sd {case[2]}（n = {case[3]}），"
                                     f"你的函数给出 {value:.4f}。{_welch_hint(case, value)}")
    df = _welch_df(*_WELCH_CASES[0])
    passed(exercise, f"1% 的 10 个种子（sd {_WELCH_CASES[0][0]}）对 10% 的 5 个（sd {_WELCH_CASES[0][2]}）：自由度 "
                     f"{df:.2f}，小于合并方差时的 {_WELCH_CASES[0][1] + _WELCH_CASES[0][3] - 2}：自由度由散布大的一组主导。")
