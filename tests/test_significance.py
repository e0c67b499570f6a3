"""What a paired comparison on n test pairs can detect: exact McNemar, t intervals, power, minimal detectable difference."""

from __future__ import annotations

import itertools
import math
import random
import statistics

import pytest

from lessons_lib.errors import CourseInputError
from lessons_lib.evaluation.metrics import mcnemar_exact
from lessons_lib.evaluation.significance import (detectable_mean, mcnemar_p_value, mcnemar_power, mean_ci95,
                                                 minimal_detectable_difference, smallest_significant_wins,
                                                 standard_error, t_quantile, t_test_power, paired_t_p_value, holm)


def test_p_value_matches_the_prediction_based_test():
    labels = [1] * 10
    a = [1] * 7 + [0] * 3
    b = [0] * 5 + [1] * 5
    result = mcnemar_exact(a, b, labels)
    assert (result.only_a, result.only_b) == (5, 3)
    assert result.p_value == mcnemar_p_value(5, 3) == pytest.approx(2 * (1 + 8 + 28 + 56) / 256)
    assert mcnemar_p_value(0, 0) == 1.0 and mcnemar_p_value(6, 0) == pytest.approx(2 / 64)


@pytest.mark.parametrize("df, expected", [(1, 12.7062), (2, 4.3027), (4, 2.7764), (9, 2.2622), (30, 2.0423)])
def test_t_quantile_against_published_tables(df, expected):
    assert t_quantile(0.975, df) == pytest.approx(expected, abs=1e-4)


def test_t_quantile_tends_to_the_normal_and_orders_by_probability():
    assert t_quantile(0.975, 2000) == pytest.approx(1.96, abs=2e-3)
    assert t_quantile(0.9, 5) < t_quantile(0.95, 5) < t_quantile(0.975, 5)


def test_mean_ci95_covers_the_mean_about_95_percent_of_the_time():
    rng = random.Random(0)
    hits = 0
    for _ in range(2000):
        values = [rng.gauss(3.0, 1.0) for _ in range(5)]
        mean, half = mean_ci95(values)
        hits += abs(mean - 3.0) <= half
    assert 0.93 <= hits / 2000 <= 0.97
    assert math.isnan(mean_ci95([1.0])[1]) and math.isnan(standard_error([1.0]))
    assert standard_error([1.0, 2.0, 3.0, 6.0]) == pytest.approx(math.sqrt((4 + 1 + 0 + 9) / 3 / 4))
    mean, half = mean_ci95([1.0, 2.0, 3.0])
    assert mean == 2.0 and half == pytest.approx(4.3027 * statistics.stdev([1, 2, 3]) / math.sqrt(3), abs=1e-4)


def test_smallest_significant_wins():
    assert [smallest_significant_wins(n) for n in range(6)] == [None] * 6  # even 5/0 gives p = 0.0625
    assert smallest_significant_wins(6) == 6 and smallest_significant_wins(7) == 7
    for n in range(6, 80):
        b = smallest_significant_wins(n)
        assert mcnemar_p_value(b, n - b) < 0.05 <= mcnemar_p_value(b - 1, n - b + 1)


def test_power_grows_with_the_difference_and_matches_a_simulation():
    n, q = 428, 0.1
    powers = [mcnemar_power(n, q, d) for d in (0.0, 0.02, 0.04, 0.06)]
    assert powers == sorted(powers) and powers[0] < 0.05
    rng = random.Random(1)
    delta, rejections, trials = 0.04, 0, 1500
    win = (1 + delta / q) / 2
    for _ in range(trials):
        n_d = sum(rng.random() < q for _ in range(n))
        b = sum(rng.random() < win for _ in range(n_d))
        rejections += b > n_d - b and mcnemar_p_value(b, n_d - b) < 0.05
    assert rejections / trials == pytest.approx(mcnemar_power(n, q, delta), abs=0.04)


def test_minimal_detectable_difference():
    tiny = minimal_detectable_difference(428, 0.01)
    assert tiny.n_discordant == 4 and tiny.smallest_significant_net is None and tiny.minimal_detectable is None
    assert tiny.power_if_every_discordant_pair_is_a_win < 0.8
    usual = minimal_detectable_difference(428, 0.125)
    assert usual.n_discordant == 54 and usual.smallest_significant_net == 16
    assert usual.smallest_significant_accuracy == pytest.approx(16 / 428)
    assert mcnemar_power(428, 0.125, usual.minimal_detectable) >= 0.8 > mcnemar_power(428, 0.125,
                                                                                       usual.minimal_detectable - 1e-3)
    bigger = minimal_detectable_difference(4280, 0.125)
    assert bigger.minimal_detectable < usual.minimal_detectable / 2


@pytest.mark.parametrize("call, message", [
    (lambda: mcnemar_p_value(-1, 2), "only_a"),
    (lambda: t_quantile(0.4, 3), "probability"),
    (lambda: t_quantile(1.0, 3), "probability"),
    (lambda: t_quantile(0.975, 0), "df"),
    (lambda: mean_ci95([]), "empty"),
    (lambda: mcnemar_power(428, 0.0, 0.0), "discordant_share"),
    (lambda: mcnemar_power(428, 0.1, 0.2), "difference"),
    (lambda: minimal_detectable_difference(0, 0.1), "n_pairs"),
    (lambda: smallest_significant_wins(10, alpha=0.0), "alpha"),
])
def test_bad_input(call, message):
    with pytest.raises(CourseInputError, match=message):
        call()


def test_a_mcnemar_verdict_names_the_better_model_only_at_or_below_alpha():
    from lessons_lib.evaluation.metrics import mcnemar_exact

    labels = [1] * 40
    a = [1] * 30 + [0] * 10        # right on 30
    b = [0] * 10 + [1] * 30        # right on 30, on other pairs: 10 vs 10 discordant
    assert mcnemar_exact(a, b, labels).verdict("a", "b") == "no difference detected"
    strong = [1] * 40              # right everywhere: 10 wins, 0 losses against b
    result = mcnemar_exact(strong, b, labels)
    assert (result.only_a, result.only_b) == (10, 0) and result.p_value < 0.05
    assert result.verdict("strong", "b") == "strong better"
    assert mcnemar_exact(b, strong, labels).verdict("b", "strong") == "strong better"
    # the course's one rule: p ≤ α is significant, as for the seed-level tests
    assert result.verdict("strong", "b", alpha=result.p_value) == "strong better"
    assert result.verdict("strong", "b", alpha=result.p_value * 0.999) == "no difference detected"


def test_paired_t_p_value_against_a_hand_computation():
    # differences 1, 2, 3: mean 2, sd 1, t = 2 / (1 / √3) = 3.464 with 2 degrees of freedom;
    # for df = 2 the two-sided p is 1 − t / √(t² + 2) exactly
    t = 2 * 3 ** 0.5
    assert paired_t_p_value([1.0, 2.0, 3.0]) == pytest.approx(1 - t / (t * t + 2) ** 0.5, rel=1e-9)
    assert paired_t_p_value([-1.0, -2.0, -3.0]) == paired_t_p_value([1.0, 2.0, 3.0])  # two-sided
    assert paired_t_p_value([0.004, -0.004, 0.0]) == pytest.approx(1.0)
    assert paired_t_p_value([0.5, 0.5, 0.5]) == 0.0 and paired_t_p_value([0.0, 0.0]) == 1.0
    with pytest.raises(CourseInputError, match="at least 2 seeds"):
        paired_t_p_value([0.1])


def test_three_positive_seeds_are_not_yet_a_method_claim():
    # the pattern of a small gain on every one of 3 seeds, as the LCQMC grid shows it
    assert paired_t_p_value([0.0014, 0.0051, 0.0022]) > 0.05


def test_holm_multiplies_the_smallest_by_the_family_size_and_stays_monotone():
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.001]) == pytest.approx([0.5, 0.002])
    assert holm([0.9, 0.8]) == [1.0, 1.0]  # 2 × 0.8 capped at 1, and never decreasing with rank
    assert holm([]) == []


# --- Welch and the exact permutation tests (the data-size study)


def test_welch_matches_scipy_with_the_rounded_down_df():
    scipy_stats = pytest.importorskip("scipy.stats")
    from lessons_lib.evaluation.significance import welch_t_test
    a, b = [3, 5, 9, 4, 7, 6, 2, 8, 5, 6], [1, -2, 0, 3, -1]
    test = welch_t_test(a, b)
    va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
    df = math.floor((va + vb) ** 2 / (va**2 / 9 + vb**2 / 4))
    t = (statistics.fmean(a) - statistics.fmean(b)) / math.sqrt(va + vb)
    assert test.df == df
    assert test.p_value == pytest.approx(2 * scipy_stats.t.sf(abs(t), df), rel=1e-8)
    half = scipy_stats.t.ppf(0.975, df) * math.sqrt(va + vb)
    assert (test.low, test.high) == pytest.approx((t * math.sqrt(va + vb) - half, t * math.sqrt(va + vb) + half))


def _t_two_sided_by_integration(t: float, df: int) -> float:
    """2 · P(T > |t|) by Simpson's rule on Student's density (independent of the library's series)."""
    def density(x: float) -> float:
        return (math.gamma((df + 1) / 2) / (math.sqrt(df * math.pi) * math.gamma(df / 2))
                * (1 + x * x / df) ** (-(df + 1) / 2))
    # substitute x = |t| + u / (1 − u) to reach infinity on [0, 1)
    n, total = 20000, 0.0
    for i in range(n + 1):
        u = min(i / n, 1 - 1e-12)
        x = abs(t) + u / (1 - u)
        weight = 1 if i in (0, n) else (4 if i % 2 else 2)
        total += weight * density(x) / (1 - u) ** 2
    return 2 * total / (3 * n)


def test_welch_against_an_integrated_t_density():
    from lessons_lib.evaluation.significance import welch_t_test
    a, b = [3, 5, 9, 4, 7, 6, 2, 8, 5, 6], [1, -2, 0, 3, -1]
    va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
    df = math.floor((va + vb) ** 2 / (va**2 / 9 + vb**2 / 4))
    t = (statistics.fmean(a) - statistics.fmean(b)) / math.sqrt(va + vb)
    test = welch_t_test(a, b)
    assert test.df == df and test.difference == pytest.approx(statistics.fmean(a) - statistics.fmean(b))
    assert test.standard_error == pytest.approx(math.sqrt(va + vb))
    assert test.p_value == pytest.approx(_t_two_sided_by_integration(t, df), rel=1e-5)
    # the interval's ends are where the test's p would be exactly 0.05
    half = (test.high - test.low) / 2
    assert _t_two_sided_by_integration(half / math.sqrt(va + vb), df) == pytest.approx(0.05, rel=1e-5)
    assert welch_t_test([2, 2], [2, 2]).p_value == 1.0 and welch_t_test([3, 3], [2, 2]).p_value == 0.0


def test_exact_permutation_p_values_match_brute_force():
    from lessons_lib.evaluation.significance import relabelling_p_value, sign_flip_p_value
    d = [3, -1, 4, 2, 0]
    flips = [sum(s * v for s, v in zip(signs, d)) for signs in itertools.product((1, -1), repeat=len(d))]
    assert sign_flip_p_value(d) == sum(abs(x) >= abs(sum(d)) for x in flips) / len(flips)
    assert sign_flip_p_value([5] * 5) == 2 / 32  # the floor the plan names: 1/16
    a, b = [4, 6, 5], [1, 2]
    pooled = a + b
    observed = abs(statistics.fmean(a) - statistics.fmean(b))
    splits = list(itertools.combinations(range(5), 3))
    hits = sum(abs(statistics.fmean([pooled[i] for i in s]) - statistics.fmean([pooled[i] for i in range(5) if i not in s]))
               >= observed - 1e-12 for s in splits)
    assert relabelling_p_value(a, b) == hits / len(splits)


def test_detectable_mean_reproduces_the_plans_figures_and_a_simulation():
    # the plan's figures for a seed SD of 0.002 (its Monte Carlo): 0.0020 at α = 0.05 and 0.0029 at α / 8 with 10 seeds
    se = 0.002 / math.sqrt(10)
    assert round(detectable_mean(se, 9), 4) == 0.0020 and round(detectable_mean(se, 9, 0.05 / 8), 4) == 0.0029
    assert round(detectable_mean(0.002 / math.sqrt(5), 4, 0.05 / 8), 4) == 0.0060  # 5 seeds
    for df in (1, 2, 4, 9, 30):  # no shift: the test's own level, also where the critical value is large
        for alpha in (0.05, 0.05 / 8):
            assert t_test_power(0.0, df, alpha) == pytest.approx(alpha, abs=1e-7)
    # a simulation of paired t-tests over 10 normal seeds with that true mean: significant about 4 times in 5
    rng, critical = random.Random(3), t_quantile(0.975, 9)
    mean, hits, trials = detectable_mean(se, 9), 0, 4000
    for _ in range(trials):
        values = [rng.gauss(mean, 0.002) for _ in range(10)]
        hits += abs(statistics.fmean(values)) / (statistics.stdev(values) / math.sqrt(10)) >= critical
    assert abs(hits / trials - 0.8) < 0.03
    assert detectable_mean(2 * se, 9) == pytest.approx(2 * detectable_mean(se, 9))
    with pytest.raises(CourseInputError, match="standard_error"):
        detectable_mean(-1.0, 9)


def test_the_decision_rule_is_the_plans_p_at_most_alpha():
    from lessons_lib.evaluation.significance import significant

    assert significant(0.05, 0.05) and significant(0.0, 0.05)  # an adjusted p of exactly α is significant
    assert not significant(0.0500001, 0.05) and not significant(float("nan"), 0.05)
