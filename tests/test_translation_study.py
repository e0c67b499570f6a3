"""Reading the translation study as its design fixes it: files checked against the design and each
other, the primary family with Holm, A48's and the claim's verdicts, controls read only when complete."""

import json
import math

import pytest

from lessons_lib.errors import CourseInputError
from lessons_lib.evaluation.seed_tests import SeedTest
from lessons_lib.evaluation.translation import bleu_from_statistics, sentence_statistics
from lessons_lib.translation.results import RESULTS_FORMAT
from lessons_lib.translation.study import (DESIGN_FORMAT, StudyContrast, claim_verdict, format_study, load_design,
                                           load_study)

# 40 distinct references; a run translates the first k of them right and the rest wrong, so its
# BLEU rises with k and a gain is set by how many more sentences an arm gets right.
REFERENCES = [f"sentence number {i} says {w} things here ." for i, w in enumerate(
    "one two three four five six seven eight nine ten".split() * 4)]
WRONG = "nothing at all ."
SCARCE_SEEDS, FULL_SEEDS = (100, 101, 102, 103, 104, 105), (1000, 1001, 1002, 1003, 1004, 1005)
DESIGN = {"format": DESIGN_FORMAT, "seeds": {"0.1": list(SCARCE_SEEDS), "1.0": list(FULL_SEEDS)},
          "baseline": "none", "biased_arms": ["learned-parser", "hard_mask-parser"], "claim_arm": "learned-parser",
          "claim_band": [0.5, 1.0], "control_fraction": "0.1",
          "controls": [["learned-parser", "learned-random"], ["learned-random", "learned-scrambled"],
                       ["learned-parser", "learned-sequence"]], "alpha": 0.05}


def _write(folder, fraction, arm, seed, right, *, commit="abc", capability="AVX2", subset=None):
    hypotheses = REFERENCES[:right] + [WRONG] * (len(REFERENCES) - right)
    statistics = sentence_statistics(hypotheses, REFERENCES)
    variant, _, trees = arm.partition("-")
    record = {"format": RESULTS_FORMAT, "variant": variant, "trees": trees or "none", "fraction": fraction,
              "seed": seed, "data": {"train": "d"}, "train_config": {"epochs": 20}, "sizes": {}, "bias_options": {},
              "train_subset_sha256": subset or f"subset-{fraction}-{seed}",
              "provenance": {"code_commit": commit, "device": "cpu", "cpu_capability": capability, "torch": "2"},
              "scores": {"all": {"bleu": bleu_from_statistics(statistics), "chrf": 0.0}},
              "sentences": [{"id": str(i), "group": "all", "statistics": s.to_list()} for i, s in enumerate(statistics)]}
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"f{fraction:g}-{variant}-{record['trees']}-s{seed}.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    return path


def _design(tmp_path, **changes):
    path = tmp_path / "design.json"
    path.write_text(json.dumps({**DESIGN, **changes}), encoding="utf-8")
    return load_design(path)


def _curve(folder, learned_gain_scarce, learned_gain_full, hard_gain=(0, 0), controls=True):
    """none gets 10 (scarce) / 24 (full) sentences right, ± a seed's wobble; learned and hard_mask
    add the given gains, each ± its own wobble; the control arms sit at learned − 2 and none."""
    for fraction, seeds, base, learned, hard in ((0.1, SCARCE_SEEDS, 10, learned_gain_scarce, hard_gain[0]),
                                                  (1.0, FULL_SEEDS, 24, learned_gain_full, hard_gain[1])):
        for k, seed in enumerate(seeds):
            wobble = (0, 1, -1, 2, -2, 1)[k]
            _write(folder, fraction, "none", seed, base + wobble)
            _write(folder, fraction, "learned-parser", seed, base + wobble + learned + (k % 2))
            _write(folder, fraction, "hard_mask-parser", seed, base + wobble + hard + (k % 3 == 0))
            if controls and fraction == 0.1:
                for arm in ("learned-random", "learned-scrambled", "learned-sequence"):
                    _write(folder, fraction, arm, seed, base + wobble + (learned - 2 if arm != "learned-scrambled" else 0))


def test_a_gain_at_the_scarce_split_that_shrinks_at_the_full_one_supports_a48(tmp_path):
    design = _design(tmp_path)
    _curve(tmp_path / "runs", learned_gain_scarce=6, learned_gain_full=0)
    study = load_study(tmp_path / "runs", design)
    family = study.primary()
    assert len(family) == 6 and all(c.test.family == 6 for c in family)
    names = [c.name for c in family]
    assert names[:3] == ["learned-parser − none at 10 %", "learned-parser − none at 100 %",
                         "(learned-parser − none at 10 %) − (… at 100 %)"]
    scarce, full, dod = family[:3]
    assert scarce.test.mean > 0 and scarce.test.holm_p <= 0.05 and dod.test.holm_p <= 0.05
    assert dod.test.mean == pytest.approx(scarce.test.mean - full.test.mean)
    assert dod.seeds == SCARCE_SEEDS + FULL_SEEDS and dod.differences == ()
    assert scarce.differences == tuple(study.gains(design.scarce, "learned-parser")[1]) and len(scarce.differences) == 6
    assert study.scarcity_verdicts() == {"learned-parser": "support", "hard_mask-parser": "inconclusive"}


def test_a_loss_at_the_scarce_split_reads_against(tmp_path):
    _curve(tmp_path / "runs", learned_gain_scarce=-6, learned_gain_full=0)
    study = load_study(tmp_path / "runs", _design(tmp_path))
    assert study.scarcity_verdicts()["learned-parser"] == "against"


def _contrast(low, high, p, mean):
    test = SeedTest(mean, 0.1, low, high, 9, p, (mean > 0) - (mean < 0))
    return StudyContrast("x", "learned-parser", None, tuple(range(10)), test)


@pytest.mark.parametrize("low, high, p, mean, verdict", [
    (-0.30, 0.40, 0.40, 0.05, "against"),       # a gain of 0.5 is ruled out
    (0.10, 0.90, 0.02, 0.50, "support"),        # shown positive, reaching the band
    (1.20, 1.90, 0.001, 1.55, "larger"),        # shown above the band
    (-0.40, 0.80, 0.30, 0.20, "inconclusive"),  # neither shown nor ruled out
    (0.02, 0.49, 0.04, 0.25, "against"),        # positive, but below the band
])
def test_the_claim_reads_its_interval_against_the_band(low, high, p, mean, verdict):
    assert claim_verdict(_contrast(low, high, p, mean), (0.5, 1.0)) == verdict


def test_one_seed_or_no_contrast_leaves_the_claim_inconclusive():
    one = StudyContrast("x", "a", None, (1,), SeedTest(0.7, math.nan, math.nan, math.nan, 0, math.nan, 1))
    assert claim_verdict(one, (0.5, 1.0)) == claim_verdict(None, (0.5, 1.0)) == "inconclusive"


def test_controls_are_read_only_once_every_planned_control_run_is_written(tmp_path):
    design = _design(tmp_path)
    _curve(tmp_path / "runs", 6, 0)
    (tmp_path / "runs" / "f0.1-learned-sequence-s105.json").unlink()
    study = load_study(tmp_path / "runs", design)
    assert study.control_progress() == (17, 18)
    with pytest.raises(CourseInputError, match="17 of 18 control runs are written"):
        study.controls()
    assert "controls at 10 %: 17 of 18 runs written, not read yet" in format_study(study)
    _write(tmp_path / "runs", 0.1, "learned-sequence", 105, 10 + 1 + 4)
    controls = load_study(tmp_path / "runs", design).controls()
    assert [c.name for c in controls] == ["learned-parser − learned-random at 10 %",
                                          "learned-random − learned-scrambled at 10 %",
                                          "learned-parser − learned-sequence at 10 %"]
    assert all(c.test.family == 3 for c in controls) and controls[0].test.mean > 0


def test_a_missing_curve_run_needs_partial_and_every_reading_says_so(tmp_path):
    design = _design(tmp_path)
    _curve(tmp_path / "runs", 6, 0)
    (tmp_path / "runs" / "f1-none-none-s1003.json").unlink()
    with pytest.raises(CourseInputError, match="1 planned runs are not written yet .first: none seed 1003 at 100 %"):
        load_study(tmp_path / "runs", design)
    study = load_study(tmp_path / "runs", design, partial=True)
    assert study.partial and format_study(study).startswith("PARTIAL")
    assert study.primary()[1].seeds == (1000, 1001, 1002, 1004, 1005)


@pytest.mark.parametrize("change, message", [
    (lambda d: _write(d, 0.1, "none", 900, 10), "fraction 0.1 seed 900 is not in the plan's design"),
    (lambda d: _write(d, 0.3, "none", 100, 10), "fraction 0.3 seed 100 is not in the plan's design"),
    (lambda d: _write(d, 0.1, "learned-gold", 100, 10), "the arm 'learned-gold' is not in the plan's design"),
    (lambda d: _write(d, 1.0, "none", 1000, 24, capability="AVX512"), "cpu_capability 'AVX512'"),
    (lambda d: _write(d, 0.1, "none", 100, 10, commit="def"), "code_commit 'def'"),
    (lambda d: _write(d, 0.1, "hard_mask-parser", 101, 10, subset="other"),
     "10 % seed 101: .* trained on another subset than"),
])
def test_files_outside_the_design_or_of_another_setup_are_refused(tmp_path, change, message):
    design = _design(tmp_path)
    _curve(tmp_path / "runs", 6, 0)
    change(tmp_path / "runs")
    with pytest.raises(CourseInputError, match=message):
        load_study(tmp_path / "runs", design)


@pytest.mark.parametrize("changes, message", [
    ({"format": "x"}, "not a translation study design"),
    ({"seeds": {"0.1": [1, 2], "1.0": [2, 3]}}, "each with seeds of its own"),
    ({"control_fraction": "0.3"}, "the control fraction must be one of the fractions"),
    ({"alpha": "high"}, "a field is missing or malformed"),
])
def test_a_malformed_design_is_refused_naming_its_file(tmp_path, changes, message):
    with pytest.raises(CourseInputError, match=f"design.json: .*{message}"):
        _design(tmp_path, **changes)
