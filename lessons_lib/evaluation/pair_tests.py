"""Per-pair tests: what a comparison of two classifiers on the same test pairs can and cannot show.

- :func:`mcnemar_p_value`: the exact (binomial) McNemar p-value from the two discordant counts;
  :func:`mcnemar_exact` counts them from two models' predictions (:class:`McNemarResult`, with
  the reading a lesson states: :data:`NO_DIFFERENCE` or :func:`better`).
- :func:`bootstrap_sums` / :func:`pooled_interval`: the test-pair bootstrap of an accuracy
  difference over seeds, the seeds held fixed ("these trained models, on other pairs like these").
- :func:`smallest_significant_wins`, :func:`mcnemar_power`,
  :func:`minimal_detectable_difference`: how large an accuracy difference the exact McNemar
  test on ``n`` pairs can detect, given how many pairs the two models disagree on.
- :func:`check_independence`: whether a split's pairs are the independent observations these
  tests assume.

The model of the power computation: each test pair is *discordant* (one model right, the
other wrong) with probability ``q``, independently; a discordant pair is the variant's win
with probability ``(1 + Δ / q) / 2``, so the expected accuracy difference is ``Δ``. The test
rejects in favour of the variant when its wins ``b`` among the ``n_d`` discordant pairs reach
the smallest ``b`` with exact p < α. No torch (the bootstrap uses numpy).

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

The per-seed tests (t-intervals, Holm, the one decision rule) are in
:mod:`lessons_lib.evaluation.seed_tests`.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from lessons_lib.errors import CourseInputError, FieldName, input_error
from lessons_lib.pairs.data import PairExample
from lessons_lib.pairs.stats import question_graph
from lessons_lib.evaluation.seed_tests import significant
from lessons_lib.validation import check_int, check_number

__all__ = [
    "NO_DIFFERENCE",
    "better",
    "mcnemar_p_value",
    "McNemarResult",
    "mcnemar_exact",
    "BOOTSTRAP_RESAMPLES",
    "bootstrap_sums",
    "pooled_interval",
    "smallest_significant_wins",
    "mcnemar_power",
    "DetectableDifference",
    "minimal_detectable_difference",
    "INDEPENDENCE_LIMITS",
    "IndependenceCheck",
    "check_independence",
]

NO_DIFFERENCE = "no difference detected"
"""The one reading of a comparison that finds no difference, whatever the test: the exact
McNemar test at its α (:meth:`McNemarResult.verdict`), the pooled
interval over seeds (:func:`lessons_lib.ablation.grid.verdict`) or a seed-level test
(:class:`lessons_lib.evaluation.seed_tests.SeedTest`). Its opposite is :func:`better`."""


def better(name: str) -> str:
    """The reading of a comparison that finds ``name`` better: ``"<name> better"``."""
    return f"{name} better"


def mcnemar_p_value(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value: ``min(1, 2 · P[Bin(n, 1/2) ≤ min(only_a, only_b)])``, ``n = only_a + only_b``."""
    check_int(only_a, FieldName("only_a"), minimum=0)
    check_int(only_b, FieldName("only_b"), minimum=0)
    n = only_a + only_b
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(only_a, only_b) + 1))
    return min(1.0, 2 * tail / 2**n)


@dataclass
class McNemarResult:
    """Exact McNemar test. ``only_a``: pairs model A gets right and B wrong; ``only_b`` the reverse."""

    only_a: int
    only_b: int
    p_value: float

    def verdict(self, a: str = "A", b: str = "B", alpha: float = 0.05) -> str:
        """The reading a lesson states: ``"<a> better"``, ``"<b> better"`` (p ≤ ``alpha``, the course's
        one rule :func:`~lessons_lib.evaluation.seed_tests.significant`) or :data:`NO_DIFFERENCE`.

        Printed beside the counts, it is what a cell asserts and what the prose may say, so a run whose
        numbers would read otherwise stops at that cell instead of sitting under stale prose.
        """
        if not significant(self.p_value, alpha):
            return NO_DIFFERENCE
        return better(a) if self.only_a > self.only_b else better(b)


def mcnemar_exact(predictions_a: Sequence[int], predictions_b: Sequence[int], labels: Sequence[int]) -> McNemarResult:
    """Exact (binomial) McNemar test on two models' predictions for the same pairs.

    Only the discordant pairs carry information; under "equally good" each of them is
    A's win with probability 1/2, so the two-sided p-value is
    ``min(1, 2 · P[Binomial(n, 1/2) ≤ min(only_a, only_b)])`` with ``n = only_a + only_b``.
    """
    if not len(predictions_a) == len(predictions_b) == len(labels):
        raise CourseInputError(
            f"predictions and labels must have one entry per pair: {len(predictions_a)}, "
            f"{len(predictions_b)}, {len(labels)}"
        )
    right_a = [int(p) == int(y) for p, y in zip(predictions_a, labels)]
    right_b = [int(p) == int(y) for p, y in zip(predictions_b, labels)]
    only_a = sum(a and not b for a, b in zip(right_a, right_b))
    only_b = sum(b and not a for a, b in zip(right_a, right_b))
    return McNemarResult(only_a, only_b, mcnemar_p_value(only_a, only_b))


BOOTSTRAP_RESAMPLES = 2000


def bootstrap_sums(correct_a: np.ndarray, correct_b: np.ndarray, resamples: int = BOOTSTRAP_RESAMPLES,
                   seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The test-pair bootstrap in whole units: ``(wins, sums)``.

    Args:
        correct_a, correct_b: ``(S, N)`` booleans, seed ``s`` of a beside seed ``s`` of b.

    Returns:
        ``wins``: ``(N,)`` int, per test pair the seeds where only a is right minus those where only
        b is; ``sums``: ``(resamples,)`` int, ``wins`` summed over ``N`` pairs drawn with replacement.
    """
    wins = correct_a.sum(axis=0, dtype=np.int64) - correct_b.sum(axis=0, dtype=np.int64)
    n = wins.shape[0]
    rng = np.random.default_rng(seed)
    sums = np.concatenate([wins[rng.integers(0, n, size=(min(200, resamples - start), n))].sum(axis=1)
                           for start in range(0, resamples, 200)])
    return wins, sums


def pooled_interval(correct_a: np.ndarray, correct_b: np.ndarray, resamples: int = BOOTSTRAP_RESAMPLES,
                    seed: int = 0) -> tuple[float, float, float]:
    """The mean accuracy difference a − b over seeds and its 95 % percentile bootstrap interval over pairs.

    Args:
        correct_a, correct_b: ``(S, N)`` booleans, seed ``s`` of a beside seed ``s`` of b.

    Returns:
        ``(difference, low, high)``.
    """
    # In whole units (a pair won on one seed): the resampled sums are exact integers, so an end of
    # the interval is exactly 0 when its order statistics are (a float mean of fractions can miss
    # 0 by 1e-19 and turn "no difference" into a verdict).
    wins, sums = bootstrap_sums(correct_a, correct_b, resamples, seed)
    low, high = np.quantile(sums, [0.025, 0.975])  # between two integers
    units = correct_a.shape[0] * wins.shape[0]
    return float(wins.sum() / units), float(low / units), float(high / units)


@functools.lru_cache(maxsize=4096)
def _critical_wins(n_discordant: int, alpha: float) -> int | None:
    """Smallest ``b`` with exact p(b, n_d − b) ≤ α (the one rule), by an exact integer tail sum (``None``: none)."""
    if n_discordant == 0:
        return None
    total = 2**n_discordant
    tail, comb = 0, 1  # comb = C(n, k) for k going down from n
    best = None
    for k in range(n_discordant, (n_discordant - 1) // 2, -1):
        tail += comb  # tail = Σ_{j ≥ k} C(n, j) = Σ_{j ≤ n-k} C(n, j)
        if significant(min(1.0, 2 * tail / total), alpha) and 2 * k > n_discordant:
            best = k
        else:
            break
        comb = comb * k // (n_discordant - k + 1)
    return best


def smallest_significant_wins(n_discordant: int, alpha: float = 0.05) -> int | None:
    """The fewest wins ``b`` of ``n_discordant`` discordant pairs with exact McNemar p < ``alpha``.

    ``None`` when no split reaches it (with 5 or fewer discordant pairs, even 5/0 gives p = 0.0625).
    """
    check_int(n_discordant, FieldName("n_discordant"), minimum=0)
    check_number(alpha, FieldName("alpha"), minimum=0.0, maximum=1.0, strict_minimum=True)
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
    check_int(n_pairs, FieldName("n_pairs"))
    q = check_number(discordant_share, FieldName("discordant_share"), minimum=0.0, maximum=1.0, strict_minimum=True)
    check_number(difference, FieldName("difference"), minimum=0.0, maximum=q)
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
    check_int(n_pairs, FieldName("n_pairs"))
    q = check_number(discordant_share, FieldName("discordant_share"), minimum=0.0, maximum=1.0, strict_minimum=True)
    check_number(power, FieldName("power"), minimum=0.0, maximum=1.0, strict_minimum=True)
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
        # Only identical questions are counted: near-duplicates (lessons_lib.pairs.stats.near_duplicates) are not.
        verdict = ("within the limits, as far as identical questions go (near-duplicate questions are not "
                   "counted here)" if self.holds else
                   "beyond the limits: the exact McNemar p-values and the detectable difference overstate the evidence")
        return (f"{self.pairs:,} pairs of {self.questions:,} distinct questions: {self.pairs_per_question:.2f} pairs per "
                f"question (limit {limits['pairs_per_question']}), largest linked web {self.largest_component:,} pair{'s' * (self.largest_component != 1)} "
                f"= {self.largest_share:.1%} (limit {limits['largest_component_share']:.0%}); shared questions {verdict}")


def check_independence(examples: Sequence[PairExample]) -> IndependenceCheck:
    """Measure whether ``examples`` (a test split) satisfy the independence the tests assume (module docstring).

    Raises:
        CourseInputError: ``examples`` is empty.
    """
    if len(examples) == 0:
        raise input_error(FieldName("examples"), " is empty: independence is measured on a split's pairs")
    graph = question_graph(examples)
    holds = (graph.pairs_per_question <= INDEPENDENCE_LIMITS["pairs_per_question"]
             and graph.largest_share <= INDEPENDENCE_LIMITS["largest_component_share"])
    return IndependenceCheck(graph.pairs, graph.questions, graph.pairs_per_question, graph.largest_component,
                             graph.largest_share, holds)
