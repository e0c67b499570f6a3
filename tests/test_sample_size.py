"""Sizing a study from a pilot: chi-squared quantiles, the SD's upper limit, seeds for a given power."""

import math

import pytest

from lessons_lib.errors import CourseInputError
from lessons_lib.evaluation.sample_size import (chi_square_cdf, chi_square_quantile, sd_upper_limit, seeds_for_power,
                                                seeds_for_power_welch)
from lessons_lib.evaluation.seed_tests import t_test_power


@pytest.mark.parametrize("probability, df, expected", [
    (0.2, 2, -2 * math.log(0.8)),  # df 2 is exponential with mean 2: a closed form
    (0.95, 1, 3.841458820694124),  # 1.959963984540054², the normal's 97.5 % point squared
    (0.5, 10, 9.341817765591966),  # tables' median of chi-squared with 10 df
    (0.1, 30, 20.59923),  # tables' 10 % point with 30 df (5 decimals)
])
def test_quantiles_match_closed_forms_and_tables(probability, df, expected):
    assert chi_square_quantile(probability, df) == pytest.approx(expected, abs=5e-6)
    assert chi_square_cdf(chi_square_quantile(probability, df), df) == pytest.approx(probability, abs=1e-12)


def test_the_cdf_is_continuous_where_series_and_fraction_meet():
    for df in (1, 2, 5, 40):
        edge = 2 * (df / 2 + 1)  # x/2 = a + 1: the switch between the two methods
        assert chi_square_cdf(edge * (1 - 1e-9), df) == pytest.approx(chi_square_cdf(edge * (1 + 1e-9), df), abs=1e-8)


def test_an_sd_from_three_seeds_is_sized_at_twice_itself():
    assert sd_upper_limit(1.0, 3, 0.8) == pytest.approx(math.sqrt(2 / (-2 * math.log(0.8))))
    assert sd_upper_limit(0.5, 3, 0.8) == pytest.approx(0.5 * sd_upper_limit(1.0, 3, 0.8))
    assert 1.0 < sd_upper_limit(1.0, 30, 0.8) < sd_upper_limit(1.0, 10, 0.8) < sd_upper_limit(1.0, 3, 0.8)


@pytest.mark.parametrize("effect, alpha, expected", [(1.0, 0.05, 10), (0.5, 0.05, 34), (1.0, 0.05 / 3, 14)])
def test_seeds_for_power_is_the_first_count_that_reaches_it(effect, alpha, expected):
    n = seeds_for_power(1.0, effect, alpha)
    assert n == expected  # a paired t at d = 1 needs 10 (d = 0.5: 34), the textbooks' figures
    assert t_test_power(effect * math.sqrt(n), n - 1, alpha) >= 0.8 > t_test_power(effect * math.sqrt(n - 1), n - 2, alpha)


def test_too_many_seeds_and_bad_arguments_are_said_plainly():
    assert seeds_for_power(10.0, 0.1, 0.05, most=50) is None
    with pytest.raises(CourseInputError, match="`alpha` must be < 1"):
        seeds_for_power(1.0, 1.0, 1.0)
    with pytest.raises(CourseInputError, match="`n`"):
        sd_upper_limit(1.0, 1)


@pytest.mark.parametrize("effect, expected", [(1.0, 17), (0.5, 64)])
def test_welch_with_equal_spreads_needs_the_textbooks_two_sample_counts(effect, expected):
    # equal SDs make Welch's degrees of freedom the pooled test's 2n − 2: d = 1 needs 17 a side, d = 0.5 needs 64
    assert seeds_for_power_welch(1.0, 1.0, effect, 0.05) == expected


def test_welch_sizing_grows_with_either_spread_and_refuses_no_spread_at_all():
    assert seeds_for_power_welch(0.3, 0.3, 0.5, 0.01) < seeds_for_power_welch(0.3, 0.6, 0.5, 0.01)
    assert seeds_for_power_welch(0.0, 0.4, 0.5, 0.05) == seeds_for_power(0.4, 0.5, 0.05)
    assert seeds_for_power_welch(5.0, 5.0, 0.1, 0.05, most=30) is None
    with pytest.raises(CourseInputError, match="both 0"):
        seeds_for_power_welch(0.0, 0.0, 0.5, 0.05)
