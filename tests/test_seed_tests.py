"""The one seed-level statistics path: the contrast record, the Holm family, the one rule, and no torch to read."""

from __future__ import annotations

import math
import statistics
import subprocess
import sys

import pytest

from lessons_lib.errors import CourseInputError
from lessons_lib.evaluation.seed_tests import (SeedTest, holm, holm_family, paired_seed_test, paired_t_p_value,
                                               relabelling_p_value, scarcity_verdict, sign_flip_p_value,
                                               two_sample_seed_test, welch_seed_test, welch_t_test)


def _test(p_value: float, sign: int = 1) -> SeedTest:
    return SeedTest(mean=0.01, standard_error=0.001, low=0.0, high=0.02, df=2, p_value=p_value, sign=sign)


def test_the_holm_family_leaves_out_what_cannot_be_tested():
    tests = [_test(0.01), _test(math.nan), _test(0.04), _test(0.02)]
    family = holm_family(tests)
    assert [t.family for t in family] == [3, 3, 3, 3]
    assert math.isnan(family[1].holm_p)  # one seed: no p, outside the family
    assert [family[i].holm_p for i in (0, 2, 3)] == pytest.approx(holm([0.01, 0.04, 0.02]))
    assert [t.p_value for t in family] == pytest.approx([0.01, math.nan, 0.04, 0.02], nan_ok=True)  # untouched


def test_one_rule_decides_every_contrast_holm_p_at_most_alpha_and_a_direction():
    at_alpha = holm_family([_test(0.05)])[0]
    assert at_alpha.holm_p == 0.05 and at_alpha.significant(0.05)  # ≤, not <
    assert not holm_family([_test(0.0500001)])[0].significant(0.05)
    assert not holm_family([_test(0.001, sign=0)])[0].significant(0.05)  # no direction, no claim
    assert not _test(0.001).significant(0.05)  # not yet read in a family: no Holm p, no decision
    assert not holm_family([_test(math.nan)])[0].significant(0.05)


def test_a_paired_test_takes_p_sign_and_exact_p_from_whole_counts_and_the_interval_from_the_differences():
    counts = [3, -1, 4, 2]
    differences = [c / 1000 for c in counts]
    test = paired_seed_test(differences, counts, exact=True)
    assert test.mean == pytest.approx(0.002) and test.low < test.mean < test.high and test.df == 3
    assert test.p_value == paired_t_p_value(counts) and test.sign == 1
    assert test.exact_p == sign_flip_p_value(counts)
    assert math.isnan(paired_seed_test(differences, counts).exact_p)  # only where asked for
    same_everywhere = paired_seed_test([0.002] * 3, [2, 2, 2])  # no spread: testable, p from the integers
    assert same_everywhere.p_value == 0.0 and same_everywhere.testable
    one_seed = paired_seed_test([-0.005], [-5])
    assert not one_seed.testable and one_seed.sign == -1 and math.isnan(one_seed.low)
    assert paired_seed_test([-0.5, 1.0]).sign == 1  # without counts, the sign of the mean
    with pytest.raises(CourseInputError, match="exact sign-flip p is computed from whole counts"):
        paired_seed_test([0.1, 0.2], exact=True)


def test_a_two_sample_test_reads_welch_on_the_scaled_values_and_p_from_the_integers():
    small, large = [12, 15, 9, 14], [-2, 1, 0]
    test = two_sample_seed_test(small, large, 1000)
    welch = welch_t_test([v / 1000 for v in small], [v / 1000 for v in large])
    assert (test.mean, test.low, test.high, test.df) == (welch.difference, welch.low, welch.high, welch.df)
    assert test.p_value == welch_t_test(small, large).p_value and test.sign == 1
    assert test.exact_p == relabelling_p_value(small, large)
    lonely = two_sample_seed_test([5], large, 1000)
    assert not lonely.testable and lonely.sign == 1 and lonely.df == 0
    assert two_sample_seed_test([1, 2], [2, 1], 10).sign == 0  # equal integer means: no direction


def test_grid_study_and_translation_read_their_contrasts_with_the_same_record():
    from lessons_lib.ablation.arms import Arm
    from lessons_lib.ablation.grid import Contrast, PairedDifference, seed_level_verdicts
    from lessons_lib.translation.analysis import seed_contrasts

    per_seed = [PairedDifference(s, w / 1000, max(w, 0) + 10, max(-w, 0) + 10, 1.0) for s, w in enumerate([20, 22, 19])]
    level = seed_level_verdicts([Contrast("r", Arm("a"), Arm("b"), "?", per_seed, 0.0, 0.0, 0.0, "")])[0]
    assert level.test == holm_family([paired_seed_test([0.020, 0.022, 0.019], [20, 22, 19])])[0]
    runs = {"none": {0: _bleu(10.0), 1: _bleu(11.0), 2: _bleu(12.0)},
            "learned-gold": {0: _bleu(15.0), 1: _bleu(15.5), 2: _bleu(17.5)}}
    contrast = seed_contrasts(runs, "none", ["learned-gold"], "syntax")[0]
    assert contrast.test == holm_family([paired_seed_test((5.0, 4.5, 5.5))])[0]
    assert contrast.better == contrast.test.significant(0.05)


def test_a_translation_contrast_over_one_seed_is_refused_in_one_line():
    from lessons_lib.translation.analysis import seed_contrasts

    runs = {"none": {0: _bleu(10.0)}, "learned-gold": {0: _bleu(15.0)}}
    with pytest.raises(CourseInputError, match="needs at least 2 seeds, got 1"):
        seed_contrasts(runs, "none", ["learned-gold"], "syntax")


def _bleu(score: float) -> dict:
    return {"scores": {"syntax": {"bleu": score}}}


def test_the_lessons_names_are_the_same_objects_as_the_two_modules():
    from lessons_lib.evaluation import metrics, pair_tests, probabilities, seed_tests, significance

    assert significance.holm is seed_tests.holm and significance.significant is seed_tests.significant
    assert significance.mcnemar_p_value is pair_tests.mcnemar_p_value
    assert metrics.mcnemar_exact is pair_tests.mcnemar_exact and metrics.rank_auc is probabilities.rank_auc


@pytest.mark.slow
def test_reading_stored_predictions_and_testing_contrasts_needs_no_torch():
    code = ("import sys\n"
            "from lessons_lib.evaluation.significance import holm_family, paired_seed_test, check_independence\n"
            "from lessons_lib.evaluation.pair_tests import mcnemar_exact, pooled_interval\n"
            "from lessons_lib.evaluation.probabilities import rank_auc, dev_tuned_threshold\n"
            "from lessons_lib.evaluation.baselines import load_baselines\n"
            "holm_family([paired_seed_test([0.1, 0.2], [1, 2])]); mcnemar_exact([1, 0], [0, 0], [1, 0])\n"
            "rank_auc([0.2, 0.9], [0, 1]); dev_tuned_threshold([0.2, 0.9], [0, 1])\n"
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_welch_seed_test_reads_real_values_as_welch_does_and_needs_two_seeds_a_side_to_test():
    a, b = [0.8, 1.1, 0.5, 0.9], [0.1, -0.2, 0.3]
    test, welch = welch_seed_test(a, b), welch_t_test(a, b)
    assert (test.mean, test.low, test.high, test.df, test.p_value) == (welch.difference, welch.low, welch.high,
                                                                      welch.df, welch.p_value)
    assert test.sign == 1 and test.testable and math.isnan(test.exact_p)
    one = welch_seed_test([0.4], b)
    assert one.mean == pytest.approx(0.4 - statistics.fmean(b)) and not one.testable


def _read(mean, holm_p):
    return SeedTest(mean, 0.1, mean - 0.2, mean + 0.2, 9, holm_p, (mean > 0) - (mean < 0), holm_p=holm_p)


@pytest.mark.parametrize("gain, dod, verdict", [
    ((+1.0, 0.01), (+0.8, 0.02), "support"),
    ((+1.0, 0.01), (+0.8, 0.20), "inconclusive"),  # a gain at the scarce split alone says nothing of "more"
    ((+0.2, 0.40), (+0.8, 0.02), "partly"),
    ((-1.0, 0.01), (+0.8, 0.02), "against"),
    ((+1.0, 0.01), (-0.8, 0.05), "against"),        # Holm p ≤ α, exactly at the level, counts
    ((+1.0, 0.051), (+0.8, 0.04), "partly"),
])
def test_scarcity_verdict_reads_the_gain_and_the_difference_of_gains_by_the_one_rule(gain, dod, verdict):
    assert scarcity_verdict(_read(*gain), _read(*dod), 0.05) == verdict
    assert scarcity_verdict(None, _read(*dod), 0.05) == "inconclusive"
