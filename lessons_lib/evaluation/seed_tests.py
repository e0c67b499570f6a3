"""Per-seed tests: what a contrast over a few seeds (each seed a fresh draw of a method's randomness) can show.

- :func:`t_quantile` / :func:`standard_error` / :func:`mean_ci95`: a 95 % Student-t interval
  for a mean over a few seeds (no SciPy needed: the t distribution with an integer number of degrees of freedom
  has a closed-form CDF); :func:`paired_t_p_value`: the two-sided paired t-test over seeds, the
  test of a claim about a *method*; :func:`welch_t_test`: two independent sets of seeds (e.g.
  gains at two training sizes), with the Welch–Satterthwaite degrees of freedom rounded down;
  :func:`sign_flip_p_value` / :func:`relabelling_p_value`: the exact permutation versions of the
  paired and of the two-sample test, on integer counts; :func:`t_test_power` /
  :func:`detectable_mean`: the power of those t-tests (noncentral t) and the true mean they detect
  with a given power, from the standard error of the mean.
- :func:`holm`: Holm's step-down correction of a family of p-values; :func:`significant`: the
  course's one decision rule (p ≤ α).
- :class:`SeedTest`: one contrast read over seeds — mean difference, 95 % interval, standard
  error, degrees of freedom, p, the exact permutation p where computed, Holm's p in its family —
  made by :func:`paired_seed_test` (the same seeds on both sides) or :func:`two_sample_seed_test`
  (two disjoint sets of seeds, whole counts) or :func:`welch_seed_test` (two disjoint sets of
  seeds, real values such as BLEU); :func:`holm_family` corrects a family of them, leaving out the
  contrasts that cannot be tested (fewer than 2 seeds). The grid
  (:mod:`lessons_lib.ablation.grid`), the data-size study (:mod:`lessons_lib.ablation.study_analysis`)
  and the translation readings (:mod:`lessons_lib.translation.analysis`) all decide with it.
- :func:`scarcity_verdict`: the plans' one reading of "the bias helps more when data are scarce"
  (support / against / partly / inconclusive) from a gain at the scarce fraction and the
  difference of the gains between the scarce and the full fraction.

Pure Python, no torch. The per-pair tests (McNemar, the test-pair bootstrap) are in
:mod:`lessons_lib.evaluation.pair_tests`.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import statistics
from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

from lessons_lib.errors import CourseInputError, FieldName, input_error
from lessons_lib.validation import check_int, check_number

__all__ = [
    "t_quantile",
    "standard_error",
    "mean_ci95",
    "paired_t_p_value",
    "holm",
    "significant",
    "WelchTest",
    "welch_t_test",
    "t_test_power",
    "detectable_mean",
    "sign_flip_p_value",
    "relabelling_p_value",
    "SeedTest",
    "paired_seed_test",
    "two_sample_seed_test",
    "welch_seed_test",
    "holm_family",
    "SCARCITY_VERDICTS",
    "scarcity_verdict",
]


def _t_cdf_two_sided(t: float, df: int) -> float:
    """``P(|T| < t)`` for Student's t with integer ``df`` (Abramowitz & Stegun 26.7.3–4)."""
    theta = math.atan(t / math.sqrt(df))
    c2, s = math.cos(theta) ** 2, math.sin(theta)
    if df % 2 == 1:
        total, term = 0.0, 1.0
        for k in range(1, (df - 1) // 2 + 1):  # 1 + 2/3 c² + (2·4)/(3·5) c⁴ + ...
            total += term
            term *= c2 * (2 * k) / (2 * k + 1)
        series = math.cos(theta) * total if df > 1 else 0.0
        return 2 / math.pi * (theta + s * series)
    total, term = 0.0, 1.0
    for k in range(1, df // 2 + 1):  # 1 + 1/2 c² + (1·3)/(2·4) c⁴ + ...
        total += term
        term *= c2 * (2 * k - 1) / (2 * k)
    return s * total


def t_quantile(probability: float, df: int) -> float:
    """The ``probability`` quantile (in (0.5, 1)) of Student's t with ``df`` degrees of freedom."""
    check_number(probability, FieldName("probability"), minimum=0.5, maximum=1.0, strict_minimum=True)
    if probability >= 1.0:
        raise input_error(FieldName("probability"), f" must be < 1, got {probability!r}")
    check_int(df, "`df` (degrees of freedom)")
    target = 2 * probability - 1  # P(|T| < t)
    low, high = 0.0, 1.0
    while _t_cdf_two_sided(high, df) < target:
        high *= 2
    for _ in range(200):
        mid = (low + high) / 2
        low, high = (mid, high) if _t_cdf_two_sided(mid, df) < target else (low, mid)
        if high - low < 1e-12 * high:
            break
    return (low + high) / 2


def standard_error(values: Sequence[float]) -> float:
    """The standard error of the mean of ``values``: their sample SD / √n (NaN for one value)."""
    if len(values) == 0:
        raise input_error(FieldName("values"), " is empty")
    return statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else math.nan


def mean_ci95(values: Sequence[float]) -> tuple[float, float]:
    """``(mean, half-width of its 95 % Student-t interval)``; the half-width is NaN for one value."""
    se = standard_error(values)  # refuses an empty list
    return statistics.fmean(values), (t_quantile(0.975, len(values) - 1) * se if len(values) > 1 else math.nan)


def paired_t_p_value(differences: Sequence[float]) -> float:
    """Two-sided p-value of the paired t-test that the mean of ``differences`` (one per seed: method
    a minus method b on the same seed) is 0, with ``len − 1`` degrees of freedom.

    Raises:
        CourseInputError: fewer than 2 differences (no spread to test against).
    """
    if len(differences) < 2:
        raise CourseInputError(f"a paired t-test needs at least 2 seeds, got {len(differences)}")
    mean, se = statistics.fmean(differences), standard_error(differences)
    if se == 0.0:
        return 1.0 if mean == 0.0 else 0.0
    return max(0.0, 1.0 - _t_cdf_two_sided(abs(mean) / se, len(differences) - 1))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's adjusted p-values, in the given order: the ``i``-th smallest of ``m`` is multiplied by
    ``m − i`` (0-based), made non-decreasing in that order and capped at 1. Rejecting where the
    adjusted p < α keeps the chance of any false rejection in the family at most α."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted, running = [0.0] * len(p_values), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def significant(p_value: float, alpha: float) -> bool:
    """The course's one decision rule for a (possibly Holm-adjusted) p: significant when p ≤ ``alpha``,
    as the data-size study's plan fixes it (results/lcqmc/PLAN.md: "significant when its Holm
    adjusted p ≤ 0.05"). A NaN p (a test that could not be made) is never significant."""
    return p_value <= alpha  # False for NaN: every comparison with NaN is


@dataclass(frozen=True)
class WelchTest:
    """Welch's two-sample t-test of mean(a) − mean(b), two-sided.

    Attributes:
        difference: mean(a) − mean(b), in the units of the values.
        standard_error: its standard error, √(s_a² / n_a + s_b² / n_b).
        low, high: its 95 % t-interval with ``df`` degrees of freedom.
        df: the Welch–Satterthwaite degrees of freedom rounded down to an integer (conservative), at least 1.
        p_value: two-sided p with ``df`` degrees of freedom.
    """

    difference: float
    standard_error: float
    low: float
    high: float
    df: int
    p_value: float


def welch_t_test(a: Sequence[float], b: Sequence[float]) -> WelchTest:
    """Welch's t-test of two independent samples (e.g. per-seed differences at two training sizes).

    When both samples have no spread the test has no scale: p is 0 when their means differ, else 1
    (the interval is then the difference itself).

    Raises:
        CourseInputError: a sample with fewer than 2 values.
    """
    if len(a) < 2 or len(b) < 2:
        raise CourseInputError(f"Welch's t-test needs at least 2 values per sample, got {len(a)} and {len(b)}")
    mean_a, mean_b = statistics.fmean(a), statistics.fmean(b)
    share_a, share_b = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
    difference = mean_a - mean_b
    if share_a + share_b == 0.0:
        p = 0.0 if mean_a != mean_b else 1.0
        return WelchTest(difference, 0.0, difference, difference, len(a) + len(b) - 2, p)
    se = math.sqrt(share_a + share_b)
    satterthwaite = (share_a + share_b) ** 2 / (share_a**2 / (len(a) - 1) + share_b**2 / (len(b) - 1))
    df = max(1, math.floor(satterthwaite))
    half = t_quantile(0.975, df) * se
    p = max(0.0, 1.0 - _t_cdf_two_sided(abs(difference) / se, df))
    return WelchTest(difference, se, difference - half, difference + half, df, p)


_SQRT2 = math.sqrt(2.0)


@functools.lru_cache(maxsize=64)
def _chi_nodes(df: int, intervals: int) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Nodes ``u`` and weights (summing to 1) for integrating over u = √V, V chi-squared with ``df``
    degrees of freedom: Simpson's rule on [0, √df + 12] (``intervals`` even). The density
    ∝ u^(df−1) e^(−u²/2) is smooth and has no singularity at 0; it is normalised on the grid itself."""
    top = math.sqrt(df) + 12.0
    nodes = tuple(top * i / intervals for i in range(intervals + 1))
    raw = [(math.exp((df - 1) * math.log(u) - u * u / 2) if u > 0 else float(df == 1))
           * (1 if i in (0, intervals) else 4 if i % 2 else 2) for i, u in enumerate(nodes)]
    total = math.fsum(raw)
    return nodes, tuple(w / total for w in raw)


def _power_at(shift: float, df: int, critical: float) -> float:
    """P(|T| ≥ critical) for T = (Z + shift) / √(V / df), Z standard normal, V chi-squared (``df``)."""
    scale = critical / math.sqrt(df)
    # the integrand steps from 0 to 1 over about 1 / scale in u: at least 20 intervals across that step
    top = math.sqrt(df) + 12.0
    nodes, weights = _chi_nodes(df, max(800, 2 * math.ceil(10 * top * scale)))
    # |T| ≥ critical  ⇔  |Z + shift| ≥ critical · √(V / df); Φ(x) = erfc(−x / √2) / 2
    return math.fsum(w * (math.erfc((u * scale - shift) / _SQRT2) + math.erfc((u * scale + shift) / _SQRT2)) / 2
                     for u, w in zip(nodes, weights))


def t_test_power(shift: float, df: int, alpha: float = 0.05) -> float:
    """The power of a two-sided t-test at ``alpha`` when the true mean is ``shift`` standard errors
    from 0: P(|T| ≥ t₁₋α/₂) for T noncentral t with ``df`` degrees of freedom, integrated numerically
    over the chi-squared part (within about 1e-8 of a grid a hundred times finer)."""
    check_int(df, "`df` (degrees of freedom)")
    return _power_at(shift, df, t_quantile(1 - alpha / 2, df))


def detectable_mean(standard_error: float, df: int, alpha: float = 0.05, power: float = 0.8) -> float:
    """The true mean difference a two-sided t-test at ``alpha`` detects with probability ``power``
    (:func:`t_test_power`), given the standard error of the mean difference and the degrees of
    freedom: SD / √n and n − 1 for a paired t over n seeds; √(s₁²/n₁ + s₂²/n₂) and the rounded-down
    Welch–Satterthwaite degrees of freedom for Welch's test.
    """
    check_number(standard_error, FieldName("standard_error"), minimum=0.0)
    check_number(power, FieldName("power"), minimum=alpha, maximum=1.0, strict_minimum=True)
    check_int(df, "`df` (degrees of freedom)")
    critical = t_quantile(1 - alpha / 2, df)
    low, high = 0.0, 1.0
    while _power_at(high, df, critical) < power:
        high *= 2
    while high - low > 1e-7 * high:  # the shift in standard errors, to 7 significant digits
        mid = (low + high) / 2
        low, high = (mid, high) if _power_at(mid, df, critical) < power else (low, mid)
    return (low + high) / 2 * standard_error


def sign_flip_p_value(differences: Sequence[int]) -> float:
    """Exact two-sided sign-flip p of paired integer differences: the share of the ``2**n`` sign
    assignments whose |sum| is at least the observed |sum| (integers, so the comparison is exact)."""
    check_int(len(differences), "the number of differences", minimum=1)
    values = [abs(int(d)) for d in differences]
    observed = abs(sum(int(d) for d in differences))
    hits = 0
    for mask in range(2 ** len(values)):
        total = sum(v if mask >> i & 1 else -v for i, v in enumerate(values))
        hits += abs(total) >= observed
    return hits / 2 ** len(values)


def relabelling_p_value(a: Sequence[int], b: Sequence[int]) -> float:
    """Exact two-sided permutation p of mean(a) − mean(b) for integer samples: every way of relabelling
    the pooled values into groups of ``len(a)`` and ``len(b)``, counting those whose |difference of
    means| is at least the observed one (compared as the integer ``len(b)·sum(A) − len(a)·sum(B)``)."""
    if not a or not b:
        raise CourseInputError(f"a relabelling test needs values in both samples, got {len(a)} and {len(b)}")
    pooled = [int(v) for v in (*a, *b)]
    n_a, n_b, grand = len(a), len(b), sum(pooled)

    def statistic(sum_a: int) -> int:
        return abs(n_b * sum_a - n_a * (grand - sum_a))

    observed = statistic(sum(int(v) for v in a))
    hits = total = 0
    for chosen in itertools.combinations(range(len(pooled)), n_a):
        total += 1
        hits += statistic(sum(pooled[i] for i in chosen)) >= observed
    return hits / total



def _sign(value: float | Fraction) -> int:
    return (value > 0) - (value < 0)


@dataclass(frozen=True)
class SeedTest:
    """One contrast read with the seeds as the sample: the record every seed-level reading shares.

    Attributes:
        mean: the mean difference over seeds (a − b), in the units the caller gave.
        standard_error: its standard error (the paired t's, or Welch's; ``nan`` with one seed).
        low, high: its 95 % t-interval, unadjusted (``nan`` ends with one seed).
        df: the t-test's degrees of freedom (paired: seeds − 1; Welch: rounded down; 0 when untested).
        p_value: the two-sided t-test's p (``nan``: not testable, fewer than 2 seeds).
        sign: +1 / −1 / 0, the direction of ``mean``, taken from exact values where the caller has them.
        exact_p: the exact permutation p (sign flips, or relabelling the seeds); ``nan`` where not computed.
        holm_p: ``p_value`` after Holm's correction over the family it was read in (:func:`holm_family`);
            ``nan`` before that, and for a contrast that cannot be tested.
        family: how many testable contrasts that family holds (0 before :func:`holm_family`).
    """

    mean: float
    standard_error: float
    low: float
    high: float
    df: int
    p_value: float
    sign: int
    exact_p: float = math.nan
    holm_p: float = math.nan
    family: int = 0

    @property
    def testable(self) -> bool:
        """Whether a t-test could be made (a NaN p is one that could not)."""
        return self.p_value == self.p_value

    def significant(self, alpha: float) -> bool:
        """The one rule: Holm p ≤ ``alpha`` (:func:`significant`) and a direction to claim."""
        return significant(self.holm_p, alpha) and self.sign != 0


def paired_seed_test(differences: Sequence[float], counts: Sequence[int] | None = None, *,
                     exact: bool = False) -> SeedTest:
    """The paired test of per-seed differences (a and b trained with the same seed).

    Args:
        differences: per seed, a − b in the units the interval is read in (accuracy, BLEU).
        counts: the same differences in whole units where they exist (test pairs won minus lost):
            then the t-test, the sign and the exact p are computed from these integers, so that a
            sign is an integer's and a difference with no spread is exactly that.
        exact: also compute the exact sign-flip p of ``counts`` (which it needs).

    With one seed the contrast is not testable: ``p_value`` is ``nan``.
    """
    if exact and counts is None:
        raise CourseInputError("an exact sign-flip p is computed from whole counts: give `counts`")
    tested = differences if counts is None else counts
    mean, half = mean_ci95(differences)  # refuses an empty list
    p = paired_t_p_value(tested) if len(tested) > 1 else math.nan
    sign = _sign(mean) if counts is None else _sign(sum(counts))
    exact_p = sign_flip_p_value(counts) if exact and counts is not None else math.nan
    return SeedTest(mean, standard_error(differences), mean - half, mean + half, len(differences) - 1, p, sign,
                    exact_p)


def two_sample_seed_test(a: Sequence[int], b: Sequence[int], unit: int) -> SeedTest:
    """Welch's test of mean(a) − mean(b) for two disjoint sets of seeds, given in whole units (e.g. per
    seed, test pairs won minus lost) and read in units of ``1 / unit`` (e.g. accuracy on ``unit`` pairs).

    The interval comes from the scaled values, the p from the integers (the same test, free of the
    division's rounding when nothing varies), the sign from the exact difference of the integer
    means, the exact p from relabelling the seeds. With fewer than 2 seeds on a side only the mean
    and the sign are given.
    """
    sign = _sign(Fraction(sum(a), len(a)) - Fraction(sum(b), len(b)))
    scaled_a, scaled_b = [v / unit for v in a], [v / unit for v in b]
    if len(a) < 2 or len(b) < 2:
        difference = statistics.fmean(scaled_a) - statistics.fmean(scaled_b)
        return SeedTest(difference, math.nan, math.nan, math.nan, 0, math.nan, sign, math.nan)
    test = welch_t_test(scaled_a, scaled_b)
    return SeedTest(test.difference, test.standard_error, test.low, test.high, test.df, welch_t_test(a, b).p_value,
                    sign, relabelling_p_value(a, b))


def welch_seed_test(a: Sequence[float], b: Sequence[float]) -> SeedTest:
    """Welch's test of mean(a) − mean(b) for two disjoint sets of seeds given as real values (e.g.
    per seed, an arm's BLEU gain over the baseline at two training sizes). No exact p: that needs
    whole counts (:func:`two_sample_seed_test`). With fewer than 2 seeds on a side only the mean
    and its sign are given."""
    if not a or not b:
        raise CourseInputError(f"a two-sample test needs values on both sides, got {len(a)} and {len(b)}")
    if len(a) < 2 or len(b) < 2:
        difference = statistics.fmean(a) - statistics.fmean(b)
        return SeedTest(difference, math.nan, math.nan, math.nan, 0, math.nan, _sign(difference))
    test = welch_t_test(a, b)
    return SeedTest(test.difference, test.standard_error, test.low, test.high, test.df, test.p_value,
                    _sign(test.difference))


def holm_family(tests: Sequence[SeedTest]) -> list[SeedTest]:
    """``tests`` as one family: each with its Holm-adjusted p and the family's size. A contrast that
    cannot be tested (``nan`` p, fewer than 2 seeds) stays out of the family, its Holm p ``nan``."""
    testable = [i for i, t in enumerate(tests) if t.testable]
    adjusted = dict(zip(testable, holm([tests[i].p_value for i in testable])))
    return [dataclasses.replace(t, holm_p=adjusted.get(i, math.nan), family=len(testable)) for i, t in enumerate(tests)]


SCARCITY_VERDICTS = ("support", "against", "partly", "inconclusive")


def scarcity_verdict(gain: SeedTest | None, difference_of_gains: SeedTest | None, alpha: float) -> str:
    """The plans' reading of "the bias helps more when training data are scarce" for one arm.

    Args:
        gain: the arm − baseline at the scarcest fraction, Holm-corrected in its family.
        difference_of_gains: (gain at the scarce fraction) − (gain at the full one), Holm-corrected.
        alpha: the family's level (significant when Holm p ≤ ``alpha``).

    Returns:
        ``support`` (both shown positive), ``against`` (either shown negative), ``partly`` (only the
        difference of gains shown positive: more help with less data, no help shown), else
        ``inconclusive`` (also when a contrast is missing or cannot be tested).
    """
    if gain is None or difference_of_gains is None:
        return "inconclusive"

    def shown(test: SeedTest, sign: int) -> bool:
        return test.significant(alpha) and test.sign == sign

    if shown(gain, 1) and shown(difference_of_gains, 1):
        return "support"
    if shown(gain, -1) or shown(difference_of_gains, -1):
        return "against"
    if shown(difference_of_gains, 1):
        return "partly"
    return "inconclusive"
