"""What a comparison of two classifiers on the same test pairs can and cannot show.

- :func:`mcnemar_p_value`: the exact (binomial) McNemar p-value from the two discordant
  counts (:func:`lessons_lib.evaluation.metrics.mcnemar_exact` counts them from predictions).
- :func:`t_quantile` / :func:`standard_error` / :func:`mean_ci95`: a 95 % Student-t interval
  for a mean over a few seeds (no SciPy needed: the t distribution with an integer number of degrees of freedom
  has a closed-form CDF); :func:`paired_t_p_value`: the two-sided paired t-test over seeds, the
  test of a claim about a *method* (each seed a fresh draw of its randomness);
  :func:`holm`: Holm's step-down correction of a family of p-values; :func:`welch_t_test`:
  two independent sets of seeds (e.g. gains at two training sizes), with the Welch–Satterthwaite
  degrees of freedom rounded down; :func:`sign_flip_p_value` / :func:`relabelling_p_value`: the
  exact permutation versions of the paired and of the two-sample test, on integer counts;
  :func:`t_test_power` / :func:`detectable_mean`: the power of those t-tests (noncentral t) and
  the true mean they detect with a given power, from the standard error of the mean.
- :func:`smallest_significant_wins`, :func:`mcnemar_power`,
  :func:`minimal_detectable_difference`: how large an accuracy difference the exact McNemar
  test on ``n`` pairs can detect, given how many pairs the two models disagree on.

The model of the power computation: each test pair is *discordant* (one model right, the
other wrong) with probability ``q``, independently; a discordant pair is the variant's win
with probability ``(1 + Δ / q) / 2``, so the expected accuracy difference is ``Δ``. The test
rejects in favour of the variant when its wins ``b`` among the ``n_d`` discordant pairs reach
the smallest ``b`` with exact p < α. Pure Python, no torch.

**What every test here assumes: the ``n`` test pairs are independent observations.** The exact
McNemar p-value treats each discordant pair as its own coin flip, and the power model above
draws each pair's discordance independently. Pairs that share a question are not independent:
a model that misreads one question tends to get all its pairs wrong together, so ``n`` pairs
built from few questions carry less evidence than ``n`` independent ones, and the p-values and
detectable differences computed as if they were independent are too optimistic.
:func:`check_independence` measures how far a split is from the assumption and says whether it
holds, within :data:`INDEPENDENCE_LIMITS`: about one occurrence per question (LCQMC's test:
1.06 pairs per question) and no connected web of pairs sharing questions larger than 1 % of the
split (LCQMC's test: 8 pairs of 12,500). Read a p-value only on a split that passes.
"""

from __future__ import annotations

import functools
import itertools
import math
import statistics
from dataclasses import dataclass
from typing import Sequence

from lessons_lib.errors import CourseInputError
from lessons_lib.pairs.data import PairExample
from lessons_lib.pairs.stats import question_graph
from lessons_lib.validation import check_int, check_number

NO_DIFFERENCE = "no difference detected"
"""The one reading of a comparison that finds no difference, whatever the test: the exact
McNemar test at its α (:meth:`lessons_lib.evaluation.metrics.McNemarResult.verdict`) or the pooled
interval over seeds (:func:`lessons_lib.ablation.grid.verdict`). Its opposite is
:func:`better`."""


def better(name: str) -> str:
    """The reading of a comparison that finds ``name`` better: ``"<name> better"``."""
    return f"{name} better"

__all__ = [
    "NO_DIFFERENCE",
    "better",
    "mcnemar_p_value",
    "t_quantile",
    "standard_error",
    "mean_ci95",
    "paired_t_p_value",
    "holm",
    "WelchTest",
    "welch_t_test",
    "significant",
    "t_test_power",
    "detectable_mean",
    "sign_flip_p_value",
    "relabelling_p_value",
    "smallest_significant_wins",
    "mcnemar_power",
    "DetectableDifference",
    "minimal_detectable_difference",
    "INDEPENDENCE_LIMITS",
    "IndependenceCheck",
    "check_independence",
]


def mcnemar_p_value(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value: ``min(1, 2 · P[Bin(n, 1/2) ≤ min(only_a, only_b)])``, ``n = only_a + only_b``."""
    check_int(only_a, "`only_a`", minimum=0)
    check_int(only_b, "`only_b`", minimum=0)
    n = only_a + only_b
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(only_a, only_b) + 1))
    return min(1.0, 2 * tail / 2**n)


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
    check_number(probability, "`probability`", minimum=0.5, maximum=1.0, strict_minimum=True)
    if probability >= 1.0:
        raise CourseInputError(f"`probability` must be < 1, got {probability!r}")
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
        raise CourseInputError("`values` is empty")
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
    check_number(standard_error, "`standard_error`", minimum=0.0)
    check_number(power, "`power`", minimum=alpha, maximum=1.0, strict_minimum=True)
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


@functools.lru_cache(maxsize=4096)
def _critical_wins(n_discordant: int, alpha: float) -> int | None:
    """Smallest ``b`` with exact p(b, n_d − b) < α, by an exact integer tail sum (``None``: none)."""
    if n_discordant == 0:
        return None
    total = 2**n_discordant
    tail, comb = 0, 1  # comb = C(n, k) for k going down from n
    best = None
    for k in range(n_discordant, (n_discordant - 1) // 2, -1):
        tail += comb  # tail = Σ_{j ≥ k} C(n, j) = Σ_{j ≤ n-k} C(n, j)
        if min(1.0, 2 * tail / total) < alpha and 2 * k > n_discordant:
            best = k
        else:
            break
        comb = comb * k // (n_discordant - k + 1)
    return best


def smallest_significant_wins(n_discordant: int, alpha: float = 0.05) -> int | None:
    """The fewest wins ``b`` of ``n_discordant`` discordant pairs with exact McNemar p < ``alpha``.

    ``None`` when no split reaches it (with 5 or fewer discordant pairs, even 5/0 gives p = 0.0625).
    """
    check_int(n_discordant, "`n_discordant`", minimum=0)
    check_number(alpha, "`alpha`", minimum=0.0, maximum=1.0, strict_minimum=True)
    return _critical_wins(n_discordant, alpha)


def _binomial_pmf(n: int, k: int, p: float) -> float:
    if p <= 0.0:
        return 1.0 if k == 0 else 0.0
    if p >= 1.0:
        return 1.0 if k == n else 0.0
    log = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * math.log(p) + (n - k) * math.log1p(-p)
    return math.exp(log)


def _likely_range(n: int, p: float) -> range:
    """The counts of Bin(n, p) outside which less than ~1e-12 of the mass lies."""
    mean, sd = n * p, math.sqrt(n * p * (1 - p))
    return range(max(0, int(mean - 8 * sd - 2)), min(n, int(math.ceil(mean + 8 * sd + 2))) + 1)


def mcnemar_power(n_pairs: int, discordant_share: float, difference: float, alpha: float = 0.05) -> float:
    """Probability that the exact McNemar test on ``n_pairs`` rejects in favour of the variant.

    Args:
        n_pairs: test pairs.
        discordant_share: ``q``, the chance that a pair is discordant (one model right, the other wrong).
        difference: ``Δ``, the true accuracy difference (variant − baseline), ``0 ≤ Δ ≤ q``.
        alpha: the significance level.
    """
    check_int(n_pairs, "`n_pairs`")
    q = check_number(discordant_share, "`discordant_share`", minimum=0.0, maximum=1.0, strict_minimum=True)
    check_number(difference, "`difference`", minimum=0.0, maximum=q)
    win = min(1.0, (1 + difference / q) / 2)
    power = 0.0
    for n_d in _likely_range(n_pairs, q):
        b = _critical_wins(n_d, alpha)
        if b is None:
            continue
        power += _binomial_pmf(n_pairs, n_d, q) * _upper_tail(n_d, b, win)
    return min(1.0, power)


def _upper_tail(n: int, k: int, p: float) -> float:
    """``P[Bin(n, p) ≥ k]``, by the recurrence ``pmf(j + 1) = pmf(j) · (n − j) / (j + 1) · p / (1 − p)``."""
    if p >= 1.0:
        return 1.0
    term, total = _binomial_pmf(n, k, p), 0.0
    ratio = p / (1 - p)
    for j in range(k, n + 1):
        total += term
        term *= (n - j) / (j + 1) * ratio
    return total


@dataclass(frozen=True)
class DetectableDifference:
    """What the exact McNemar test on ``n_pairs`` can show when a share ``discordant_share`` of them is discordant.

    Attributes:
        n_pairs: test pairs.
        discordant_share: ``q``.
        n_discordant: ``round(q · n_pairs)``.
        smallest_significant_net: the smallest net difference ``b − c`` (in pairs) with p < α
            when exactly ``n_discordant`` pairs are discordant; ``None``: no split is significant.
        smallest_significant_accuracy: the same as an accuracy difference (``net / n_pairs``).
        power_if_every_discordant_pair_is_a_win: the test's power when ``Δ = q``.
        minimal_detectable: the smallest ``Δ`` with power ≥ the target; ``None``: even ``Δ = q`` falls short.
        alpha, target_power: the settings.
    """

    n_pairs: int
    discordant_share: float
    n_discordant: int
    smallest_significant_net: int | None
    smallest_significant_accuracy: float | None
    power_if_every_discordant_pair_is_a_win: float
    minimal_detectable: float | None
    alpha: float
    target_power: float


def minimal_detectable_difference(n_pairs: int, discordant_share: float, alpha: float = 0.05,
                                  power: float = 0.8) -> DetectableDifference:
    """The smallest accuracy difference the exact McNemar test on ``n_pairs`` detects (see :class:`DetectableDifference`)."""
    check_int(n_pairs, "`n_pairs`")
    q = check_number(discordant_share, "`discordant_share`", minimum=0.0, maximum=1.0, strict_minimum=True)
    check_number(power, "`power`", minimum=0.0, maximum=1.0, strict_minimum=True)
    n_d = round(q * n_pairs)
    wins = smallest_significant_wins(n_d, alpha)
    net = None if wins is None else 2 * wins - n_d
    best = mcnemar_power(n_pairs, q, q, alpha)
    found = None
    if best >= power:
        low, high = 0.0, q
        while high - low > 1e-5:
            mid = (low + high) / 2
            low, high = (mid, high) if mcnemar_power(n_pairs, q, mid, alpha) < power else (low, mid)
        found = high
    return DetectableDifference(n_pairs, q, n_d, net, None if net is None else net / n_pairs, best, found, alpha, power)


# The independence the tests above assume, as measured limits on a split's question graph
# (lessons_lib.pairs.stats.question_graph): how often a question occurs (2 × pairs / distinct
# questions) and the largest web of pairs linked by shared questions, as a share of the pairs.
INDEPENDENCE_LIMITS = {"pairs_per_question": 1.2, "largest_component_share": 0.01}


@dataclass(frozen=True)
class IndependenceCheck:
    """How close a split's pairs are to the independent observations the tests assume.

    Attributes:
        pairs: the split's pairs.
        questions: its distinct questions.
        pairs_per_question: ``2 × pairs / questions`` (1.0: no two pairs share a question).
        largest_component: pairs of the largest set of pairs linked by shared questions.
        largest_share: ``largest_component / pairs``.
        holds: both within :data:`INDEPENDENCE_LIMITS`.
    """

    pairs: int
    questions: int
    pairs_per_question: float
    largest_component: int
    largest_share: float
    holds: bool

    def describe(self) -> str:
        limits = INDEPENDENCE_LIMITS
        verdict = ("holds: the exact McNemar test and the detectable difference may be read" if self.holds else
                   "does NOT hold: the exact McNemar p-values and the detectable difference overstate the evidence")
        return (f"{self.pairs:,} pairs of {self.questions:,} distinct questions: {self.pairs_per_question:.2f} pairs per "
                f"question (limit {limits['pairs_per_question']}), largest linked web {self.largest_component:,} pair{'s' * (self.largest_component != 1)} "
                f"= {self.largest_share:.1%} (limit {limits['largest_component_share']:.0%}); independence {verdict}")


def check_independence(examples: Sequence[PairExample]) -> IndependenceCheck:
    """Measure whether ``examples`` (a test split) satisfy the independence the tests assume (module docstring).

    Raises:
        CourseInputError: ``examples`` is empty.
    """
    if len(examples) == 0:
        raise CourseInputError("`examples` is empty: independence is measured on a split's pairs")
    graph = question_graph(examples)
    holds = (graph.pairs_per_question <= INDEPENDENCE_LIMITS["pairs_per_question"]
             and graph.largest_share <= INDEPENDENCE_LIMITS["largest_component_share"])
    return IndependenceCheck(graph.pairs, graph.questions, graph.pairs_per_question, graph.largest_component,
                             graph.largest_share, holds)
