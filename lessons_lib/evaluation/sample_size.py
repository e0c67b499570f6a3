"""How many seeds a study needs, from a pilot's spread: the pilot's SD is itself uncertain, so the
plan sizes the study at an upper confidence limit of it, not at the SD seen.

- :func:`chi_square_cdf`, :func:`chi_square_quantile` — the chi-squared distribution (no scipy).
- :func:`sd_upper_limit` — a one-sided upper confidence limit of a normal SD from ``n`` values.
- :func:`seeds_for_power` — the fewest seeds whose paired t-test at ``alpha`` detects ``effect``
  with probability ``power`` (:func:`lessons_lib.evaluation.seed_tests.t_test_power`);
  :func:`seeds_for_power_welch` — the same for Welch's test of two disjoint sets of seeds (e.g. a
  gain at one training size minus the gain at another), seeds per side.
"""

from __future__ import annotations

import math

from lessons_lib.errors import CourseInputError, FieldName
from lessons_lib.evaluation.seed_tests import t_test_power
from lessons_lib.validation import check_int, check_number

__all__ = ["chi_square_cdf", "chi_square_quantile", "sd_upper_limit", "seeds_for_power", "seeds_for_power_welch"]


def _check_open_unit(value: float, name: str) -> float:
    """``value`` strictly between 0 and 1."""
    value = check_number(value, name, minimum=0.0, maximum=1.0, strict_minimum=True)
    if value >= 1.0:
        raise CourseInputError(f"{name} must be < 1, got {value!r}")
    return value


def _lower_gamma_series(a: float, x: float) -> float:
    """P(a, x) by its power series (converges fast for x < a + 1)."""
    term = total = 1.0 / a
    k = a
    while abs(term) > 1e-16 * abs(total):
        k += 1.0
        term *= x / k
        total += term
    return total * math.exp(-x + a * math.log(x) - math.lgamma(a))


def _upper_gamma_fraction(a: float, x: float) -> float:
    """Q(a, x) = 1 − P(a, x) by its continued fraction (Lentz's method; for x ≥ a + 1)."""
    tiny = 1e-300
    b = x + 1.0 - a
    c, d = 1.0 / tiny, 1.0 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        h *= d * c
        if abs(d * c - 1.0) < 1e-16:
            break
    return h * math.exp(-x + a * math.log(x) - math.lgamma(a))


def chi_square_cdf(x: float, df: int) -> float:
    """P(V ≤ x) for V chi-squared with ``df`` degrees of freedom."""
    check_int(df, "`df` (degrees of freedom)")
    if x <= 0.0:
        return 0.0
    a, half = df / 2.0, x / 2.0
    return _lower_gamma_series(a, half) if half < a + 1.0 else 1.0 - _upper_gamma_fraction(a, half)


def chi_square_quantile(probability: float, df: int) -> float:
    """The ``x`` with P(V ≤ x) = ``probability`` (bisection to 1e-12 relative)."""
    _check_open_unit(probability, "`probability`")
    check_int(df, "`df` (degrees of freedom)")
    low, high = 0.0, float(df) + 10.0
    while chi_square_cdf(high, df) < probability:
        high *= 2.0
    while high - low > 1e-12 * high:
        mid = (low + high) / 2.0
        low, high = (mid, high) if chi_square_cdf(mid, df) < probability else (low, mid)
    return (low + high) / 2.0


def sd_upper_limit(sd: float, n: int, confidence: float = 0.8) -> float:
    """The one-sided upper ``confidence`` limit of σ from the SD of ``n`` normal values:
    ``sd · √((n − 1) / q)``, ``q`` the chi-squared (``n − 1`` df) quantile at ``1 − confidence``.
    With 3 seeds and 80 % confidence it is 2.1 times the SD seen."""
    check_number(sd, FieldName("sd"), minimum=0.0)
    check_int(n, "`n` (values behind the SD)", minimum=2)
    return sd * math.sqrt((n - 1) / chi_square_quantile(1.0 - confidence, n - 1))


def seeds_for_power(sd: float, effect: float, alpha: float, power: float = 0.8, most: int = 1000) -> int | None:
    """The fewest seeds ``n`` (≥ 2) for which a two-sided paired t-test at ``alpha`` over ``n`` seeds
    finds a true mean difference ``effect`` with probability ≥ ``power``, when the per-seed
    differences have SD ``sd``; ``None`` if more than ``most`` would be needed.

    For a family corrected by Holm, pass ``alpha / m``: Holm's first (strictest) step, so each
    contrast keeps that power whatever the others do.
    """
    check_number(sd, FieldName("sd"), minimum=0.0, strict_minimum=True)
    check_number(effect, FieldName("effect"), minimum=0.0, strict_minimum=True)
    _check_open_unit(alpha, "`alpha`")
    check_int(most, FieldName("most"), minimum=2)
    for n in range(2, most + 1):
        if t_test_power(effect / (sd / math.sqrt(n)), n - 1, alpha) >= power:
            return n
    return None


def seeds_for_power_welch(sd_a: float, sd_b: float, effect: float, alpha: float, power: float = 0.8,
                          most: int = 1000) -> int | None:
    """The fewest seeds ``n`` per side (≥ 2) for which Welch's two-sided test at ``alpha`` of
    mean(a) − mean(b), ``n`` values each with SDs ``sd_a`` and ``sd_b``, finds a true difference
    ``effect`` with probability ≥ ``power``; ``None`` if more than ``most`` would be needed.

    The standard error is √((sd_a² + sd_b²) / n) and the degrees of freedom Welch–Satterthwaite's,
    (n − 1)(sd_a² + sd_b²)² / (sd_a⁴ + sd_b⁴), rounded down as the test rounds them.
    """
    for name, sd in (("`sd_a`", sd_a), ("`sd_b`", sd_b)):
        check_number(sd, name, minimum=0.0)
    if sd_a == sd_b == 0.0:
        raise CourseInputError("`sd_a` and `sd_b` are both 0: a test without spread needs no sizing")
    check_number(effect, "`effect`", minimum=0.0, strict_minimum=True)
    _check_open_unit(alpha, "`alpha`")
    check_int(most, "`most`", minimum=2)
    variance, fourth = sd_a**2 + sd_b**2, sd_a**4 + sd_b**4
    for n in range(2, most + 1):
        df = max(1, math.floor((n - 1) * variance**2 / fourth))
        if t_test_power(effect / math.sqrt(variance / n), df, alpha) >= power:
            return n
    return None
