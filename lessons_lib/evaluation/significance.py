"""What a comparison can and cannot show, in one place to import from: the per-pair and the per-seed tests.

The tests live in two modules, by what they take as the sample:

- :mod:`lessons_lib.evaluation.pair_tests` — the test pairs of one comparison: the exact McNemar
  test, the test-pair bootstrap, what McNemar can detect on ``n`` pairs, and whether a split's
  pairs are independent enough for any of them (:func:`check_independence`).
- :mod:`lessons_lib.evaluation.seed_tests` — the seeds of a method: t-intervals, the paired and
  Welch t-tests and their exact permutation versions, their power, Holm's correction and the
  course's one decision rule (:func:`significant`: p ≤ α), and :class:`SeedTest`, the record of
  one contrast that the grid, the data-size study and the translation readings share.

This module names them all (the lessons import from here). No torch.
"""

from __future__ import annotations

from lessons_lib.evaluation.pair_tests import (INDEPENDENCE_LIMITS, NO_DIFFERENCE, DetectableDifference,
                                               IndependenceCheck, better, check_independence, mcnemar_p_value,
                                               mcnemar_power, minimal_detectable_difference, smallest_significant_wins)
from lessons_lib.evaluation.seed_tests import (SeedTest, WelchTest, detectable_mean, holm, holm_family, mean_ci95,
                                               paired_seed_test, paired_t_p_value, relabelling_p_value,
                                               sign_flip_p_value, significant, standard_error, t_quantile,
                                               t_test_power, two_sample_seed_test, welch_t_test)

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
    "SeedTest",
    "paired_seed_test",
    "two_sample_seed_test",
    "holm_family",
]
