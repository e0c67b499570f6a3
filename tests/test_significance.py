"""What a paired comparison on n test pairs can detect: exact McNemar, t intervals, power, minimal detectable difference."""

from __future__ import annotations

import math
import random
import statistics

import pytest

from lessons_lib.errors import CourseInputError
from lessons_lib.evaluation.metrics import mcnemar_exact
from lessons_lib.evaluation.significance import (mcnemar_p_value, mcnemar_power, mean_ci95, minimal_detectable_difference,
                                            smallest_significant_wins, t_quantile)


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
    assert math.isnan(mean_ci95([1.0])[1])
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


def test_a_mcnemar_verdict_names_the_better_model_only_below_alpha():
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
    assert result.verdict("strong", "b", alpha=result.p_value) == "no difference detected"
