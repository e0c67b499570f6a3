"""The data-size study's reading: the primary family, A48, the secondary readings, controls, refusals."""

from __future__ import annotations

import json
import math
import statistics
import subprocess
import sys
from fractions import Fraction

import pytest

from lessons_lib.errors import CourseInputError
from lessons_lib.files import MANIFEST_NAME, record_written
from lessons_lib.evaluation.metrics import accuracy_at_threshold, dev_tuned_threshold, rank_auc
from lessons_lib.ablation.config import ExperimentConfig
from lessons_lib.ablation.results import DataSummary, EpochRecord, ExperimentResult, RunRecord
from lessons_lib.ablation.arms import Arm
from lessons_lib.ablation.study_analysis import (CURVE_ARMS, HARD_MASK, LEARNED, PLAN_SEEDS, PRIMARY_FRACTIONS,
                                                 a48_verdict, control_target)
from lessons_lib.ablation.study_files import load_study

N_TEST, N_DEV = 200, 40
F = Fraction  # the study keys a training fraction by the exact decimal its files give: F("0.01")
TEST_LABELS = [i % 2 for i in range(N_TEST)]
DEV_LABELS = [i % 2 for i in range(N_DEV)]
PAIRS = {"train": "a" * 64, "dev": "b" * 64, "test": "c" * 64}
PROVENANCE = {"code_commit": "abc", "code_modified": False, "device": "cpu", "device_name": "cpu x",
              "cpu_capability": "AVX2", "torch": "2", "threads": 1}


def _calls(labels, wrong: int, offset: int = 0) -> list[int]:
    return [1 - y if offset <= i < offset + wrong else y for i, y in enumerate(labels)]


def _probabilities(calls) -> list[float]:
    """P(label = 1) that agrees with each 0/1 call (1 exactly when P > 0.5), as the course writes them."""
    return [0.8 if c == 1 else 0.2 for c in calls]


def _result(fraction, variant, seed, wrong, dev_wrong=10, bias=0.5, parser_noise=0.0, scramble=False, **edit):
    """A study file: one run, wrong on ``wrong`` test pairs (the first ones)."""
    test_calls, dev_calls = _calls(TEST_LABELS, wrong), _calls(DEV_LABELS, dev_wrong)
    epochs = [EpochRecord(1, 0.5, 0.5, None, 1.0, bias if variant == "learned" else None)]
    run = RunRecord(variant, seed, 1 - dev_wrong / N_DEV, 1 - wrong / N_TEST, 0.5, 0.5, epochs, test_calls,
                    chosen_epoch=1, optimizer_steps=10, dev_predictions=dev_calls, dev_probabilities=_probabilities(dev_calls),
                    test_probabilities=_probabilities(test_calls))
    data = DataSummary("argument", "lcqmc", 10, 1000, N_DEV, N_TEST, 50, 10, parser_noise, dict(PAIRS),
                       train_subset_sha256=f"{fraction}-{seed}", word_boundaries_kept=0.4 if scramble else None)
    config = ExperimentConfig(variants=[variant], seeds=[seed], train_fraction=fraction, subset_seed=seed,
                              parser_noise=parser_noise, scramble_words=scramble, epoch_choice="best_dev")
    result = ExperimentResult(config, data, {}, [run], {}, [], [], ["lessons", "experiment"], list(TEST_LABELS),
                              list(DEV_LABELS), dict(PROVENANCE))
    blob = result.to_json()
    for path, value in edit.items():  # e.g. provenance__code_modified=True
        *keys, last = path.split("__")
        target = blob
        for key in keys:
            target = target[int(key)] if key.isdigit() else target[key]
        target[last] = value
    return blob


def _write(folder, fraction, name, blob):
    """As `lessons experiment --out` writes: the file and, beside it, the manifest of the files the course wrote."""
    path = folder / f"f{fraction}" / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    record_written(path, json.dumps(blob))
    assert (path.parent / MANIFEST_NAME).is_file()
    return path


SEEDS = {0.01: range(100, 110), 0.03: range(300, 310), 0.1: range(1000, 1005)}


def _study(folder, gain, seeds=SEEDS, base_wrong=60):
    """The curve with ``gain(fraction, arm, seed)`` more right test pairs than none."""
    for fraction, ss in seeds.items():
        for seed in ss:
            _write(folder, fraction, f"matchflags-none-seed{seed}", _result(fraction, "none", seed, base_wrong))
            for arm in ("learned", "hard_mask"):
                _write(folder, fraction, f"matchflags-{arm}-seed{seed}",
                       _result(fraction, arm, seed, base_wrong - gain(fraction, arm, seed)))
    return folder


def _gain_at_one_percent(fraction, arm, seed):
    # +10 pairs on every 1 % seed, nothing at 3 % and 10 %, but a little seed noise so the t-tests have spread
    jitter = (seed % 2) * 2 - 1
    return (10 + jitter if fraction == 0.01 else jitter) if arm == "learned" else jitter * (seed % 3 == 0)


# --- the statistics against independent computations


def test_auc_and_dev_tuned_threshold_by_brute_force():
    probs, labels = [0.1, 0.4, 0.4, 0.35, 0.8, 0.9, 0.6, 0.4], [0, 0, 1, 1, 1, 1, 0, 1]
    ones = [p for p, y in zip(probs, labels) if y]
    zeros = [p for p, y in zip(probs, labels) if not y]
    brute = sum((p > q) + 0.5 * (p == q) for p in ones for q in zeros) / (len(ones) * len(zeros))
    assert rank_auc(probs, labels) == pytest.approx(brute)
    t = dev_tuned_threshold(probs, labels)
    grid = [i / 1000 for i in range(1001)]
    best = max(accuracy_at_threshold(probs, labels, g) for g in grid)
    assert accuracy_at_threshold(probs, labels, t) == best
    nearest = min((g for g in grid if accuracy_at_threshold(probs, labels, g) == best), key=lambda g: abs(g - 0.5))
    assert nearest == 0.349  # the brute force: the best range of thresholds ends just below 0.35
    assert [p > t for p in probs] == [p > nearest for p in probs]  # the same calls as the nearest best threshold
    # a perfect argmax at 0.5 keeps 0.5
    assert dev_tuned_threshold([0.2, 0.7, 0.1, 0.9], [0, 1, 0, 1]) == 0.5


# --- the primary analysis


def test_a_planted_gain_at_one_percent_is_found_and_read_for_a48(tmp_path):
    study = load_study(_study(tmp_path, _gain_at_one_percent))
    contrasts = study.primary()
    assert len(contrasts) == 8
    by_name = {c.name: c for c in contrasts}
    gain = by_name["learned − none at 1 %"]
    assert gain.wins == [10 + (s % 2) * 2 - 1 for s in range(100, 110)]
    assert gain.mean == pytest.approx(statistics.fmean(gain.wins) / N_TEST)
    assert gain.significant and gain.sign == 1
    dod = by_name["(learned − none at 1 %) − (learned − none at 10 %)"]
    assert dod.significant and dod.sign == 1 and dod.df >= 1
    assert not by_name["learned − none at 10 %"].significant
    # Holm: the smallest p times 8 at most, never below the raw p
    assert all(c.holm_p >= c.p_value for c in contrasts)
    assert a48_verdict(contrasts) == "support"
    assert a48_verdict(contrasts, "hard_mask") == "inconclusive"


def test_the_primary_table_gives_each_contrast_its_seeds(tmp_path):
    from lessons_lib.ablation.study_report import format_a48
    study = load_study(_study(tmp_path, _gain_at_one_percent))
    full, short = format_a48(study).splitlines(), format_a48(study, per_seed=False).splitlines()
    gain = next(line for line in full if line.startswith("learned − none at 1 %"))
    assert gain.split()[6] == "10" and gain.endswith(" ".join(f"{10 + (s % 2) * 2 - 1:+d}" for s in range(100, 110))
                                                     + "  (SD 0.0053)")
    dod = next(line for line in short if line.startswith("(learned − none at 1 %)"))
    assert dod.split()[13] == "10+5" and dod.endswith("positive, significant")
    assert short[-2] == full[-2] == "A48 (learned): support; hard_mask beside it: inconclusive"


def test_a_planted_null_is_inconclusive_and_a_loss_is_against(tmp_path):
    null = load_study(_study(tmp_path / "null", lambda f, a, s: (s % 2) * 2 - 1))
    assert a48_verdict(null.primary()) == "inconclusive"
    assert all(not c.significant for c in null.primary())
    loss = load_study(_study(tmp_path / "loss", lambda f, a, s: -10 + (s % 2) if f == 0.01 else (s % 2)))
    assert a48_verdict(loss.primary()) == "against"


def test_equal_counts_give_p_zero_or_one_from_integers(tmp_path):
    study = load_study(_study(tmp_path, lambda f, a, s: 3 if f == 0.01 else 0))
    by_name = {c.name: c for c in study.primary()}
    assert by_name["learned − none at 1 %"].p_value == 0.0
    assert by_name["learned − none at 10 %"].p_value == 1.0 and by_name["learned − none at 10 %"].sign == 0
    assert a48_verdict(study.primary()) == "support"


def test_partly_when_only_the_difference_of_differences_holds(tmp_path):
    # 1 %: a noisy gain of +1 pair on average (not significant); 10 %: a steady loss of about 5.6 pairs
    noisy = [5, -3, 4, -2, 3, -1, 4, -3, 2, 1]

    def gain(f, a, s):
        return noisy[s - 100] if f == 0.01 else (-6 + (s % 2) if f == 0.1 else 0)

    contrasts = load_study(_study(tmp_path, gain)).primary()
    by_name = {c.name: c for c in contrasts}
    assert not by_name["learned − none at 1 %"].significant
    assert by_name["(learned − none at 1 %) − (learned − none at 10 %)"].significant
    assert by_name["learned − none at 10 %"].significant and by_name["learned − none at 10 %"].sign == -1
    assert a48_verdict(contrasts) == "partly"  # a loss at 10 % is not a verdict on A48


def _contrast(fraction, holm_p, sign):
    from lessons_lib.ablation.study_analysis import LEARNED, StudyContrast
    from lessons_lib.evaluation.seed_tests import SeedTest
    test = SeedTest(mean=0.0, standard_error=0.0, low=0.0, high=0.0, df=1, p_value=holm_p, sign=sign, exact_p=1.0,
                    holm_p=holm_p)
    return StudyContrast("c", LEARNED, None if fraction is None else Fraction(str(fraction)), [], [], [], test)


@pytest.mark.parametrize("gain, dod, expected", [
    ((0.01, +1), (0.01, +1), "support"),
    ((0.01, -1), (0.9, +1), "against"),
    ((0.9, +1), (0.01, -1), "against"),
    ((0.9, +1), (0.01, +1), "partly"),
    ((0.01, +1), (0.9, +1), "inconclusive"),
    ((0.05, +1), (0.05, +1), "support"),  # significant when Holm p ≤ 0.05
    ((0.0, 0), (0.0, +1), "partly"),  # no sign, no significance
])
def test_a48_rules(gain, dod, expected):
    assert a48_verdict([_contrast(0.01, *gain), _contrast(None, *dod)]) == expected


# --- secondary and controls


def test_secondary_movement_and_bootstrap(tmp_path):
    study = load_study(_study(tmp_path, _gain_at_one_percent))
    assert study.movement() == {F("0.01"): 0.5, F("0.03"): 0.5, F("0.1"): 0.5}
    gain = next(c for c in study.primary() if c.name == "learned − none at 1 %")
    mean, low, high = study.bootstrap(gain)
    assert mean == pytest.approx(gain.mean) and low <= mean <= high
    row = study.secondary_runs()[0]
    assert row["auc"] == pytest.approx(rank_auc(study.run(0.01, "none", 100).test_probabilities, TEST_LABELS))


def test_discrimination_table_reads_every_arm_and_its_difference_from_none(tmp_path):
    from lessons_lib.ablation.study_report import format_discrimination, format_secondary
    folder = _study(tmp_path, _gain_at_one_percent)
    for seed in SEEDS[0.01]:
        _write(folder / "controls", 0.01, f"random-{seed}", _result(0.01, "learned", seed, 64, parser_noise=1.0))
    study = load_study(folder)
    random_trees = Arm("learned", parser_noise=F(1))
    assert random_trees in study.arms_at(0.01) and random_trees not in study.arms_at(0.03)
    assert random_trees.label == "learned · random trees"
    lines = format_discrimination(study).splitlines()
    row = next(i for i, line in enumerate(lines) if line.split()[:4] == ["1", "%", "learned", "·"])
    # every file's calls are its probabilities' argmax, so accuracy and AUC fall together: 64 wrong of 200
    assert lines[row].split()[-5:] == ["0.6800", "0.6800", "0.6800", "0.500", "0.500"]
    assert lines[row + 1].split()[-5:] == ["-0.0200", "-0.0200", "-0.0200", "+0.000", "+0.000"]  # none: 60 wrong
    learned = next(i for i, line in enumerate(lines) if line.split()[:3] == ["1", "%", "learned"])
    expected = statistics.fmean(_gain_at_one_percent(0.01, "learned", s) for s in SEEDS[0.01]) / N_TEST
    assert float(lines[learned + 1].split()[-5]) == pytest.approx(expected, abs=5e-5)
    assert float(lines[learned + 1].split()[-4]) == pytest.approx(expected, abs=5e-5)
    secondary = format_secondary(load_study(folder, partial=True))
    assert secondary.count("partial:") == 1 and secondary.startswith("partial:")


def test_the_tables_movement_by_epoch_is_the_median_over_seeds(tmp_path):
    folder = _study(tmp_path, _gain_at_one_percent)
    for seed in SEEDS[0.01]:
        path = folder / "f0.01" / f"matchflags-learned-seed{seed}.json"
        blob = json.loads(path.read_text())
        blob["runs"][0]["epochs"] = [{"epoch": e, "train_loss": 0.5, "dev_accuracy": 0.5, "test_accuracy": None,
                                      "pairs_per_second": 1.0, "bias_max_abs": e * (seed - 99) / 100} for e in (1, 2, 3)]
        blob["runs"][0]["optimizer_steps"] = 114
        path.write_text(json.dumps(blob))
    steps, medians = load_study(folder).movement_by_epoch()[F("0.01")]
    # seeds 100–109 scale epoch e by 1 … 10; the median of 1 … 10 is 5.5
    assert steps == 38 and medians == pytest.approx([0.055, 0.11, 0.165])
    blob["runs"][0]["epochs"][1]["bias_max_abs"] = None  # a gap in an epoch the run did not choose
    path.write_text(json.dumps(blob))
    with pytest.raises(CourseInputError, match=r"seed109\.json: runs\[0\] .*epochs\[1\]\.bias_max_abs is None"):
        load_study(folder)


def test_a43_reads_the_full_split_beside_the_ten_percent_seeds(tmp_path):
    from lessons_lib.ablation.study_report import format_a43
    folder = _study(tmp_path, _gain_at_one_percent)
    assert format_a43(load_study(folder)).startswith("A43: no full-split runs")
    # seed 0 on the whole split: learned right on 4 pairs none gets wrong, wrong on 1 it gets right
    _write(folder, 1.0, "matchflags-none-seed0", _result(1.0, "none", 0, 60))
    calls = _calls(TEST_LABELS, 1, offset=70)[:4] + _calls(TEST_LABELS, 57, offset=4)[4:]
    _write(folder, 1.0, "matchflags-learned-seed0", _result(1.0, "learned", 0, 57, dev_wrong=8, **{
        "runs__0__test_predictions": calls, "runs__0__test_probabilities": _probabilities(calls)}))
    _write(folder, 1.0, "matchflags-hard_mask-seed0", _result(1.0, "hard_mask", 0, 60))
    study = load_study(folder)
    lines = format_a43(study).splitlines()
    assert lines[0] == ("learned − none, full split, seed 0: dev +0.0500 (+2 pairs), test +0.0150 (+3 pairs); "
                        "McNemar on test: 4 vs 1, exact p 0.375")
    # the 10 % seeds' learned − none: −1, +1, −1, +1, −1 pairs of 200
    assert lines[1].startswith("  10 % seeds (n=5): test -0.0010 [") and "range -0.0050 … +0.0050" in lines[1]
    assert lines[1].endswith("the full split's test difference is outside the 10 % seeds' range")
    assert lines[2].startswith("hard_mask − none, full split, seed 0: dev +0.0000 (+0 pairs), test +0.0000 (+0 pairs)")
    assert lines[3].endswith("inside the 10 % seeds' range")
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from lessons_lib.ablation.study_figures import gain_curve
    ax = gain_curve(study)  # one seed is not a point of the curve
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1 %", "3 %", "10 %"]
    assert max(x for line in ax.get_lines() if line.get_marker() == "o" for x in line.get_xdata()) < 0.2
    plt.close("all")


def test_the_control_target_ties_to_the_smaller_fraction(tmp_path):
    study = load_study(_study(tmp_path, _gain_at_one_percent))  # every dev gain is 0: a tie everywhere
    assert control_target(study) == (LEARNED, F("0.01"))


def test_one_and_ten_percent_must_share_commit_and_device(tmp_path):
    folder = _study(tmp_path, _gain_at_one_percent)
    for path in (folder / "f0.1").glob("matchflags-*.json"):
        blob = json.loads(path.read_text())
        blob["provenance"]["code_commit"] = "other"
        path.write_text(json.dumps(blob))
    with pytest.raises(CourseInputError, match="f0.1/.*provenance .* differs from .*f0.01/.*1 % and 10 %"):
        load_study(folder)


def _set_kernels(path, kernel):
    blob = json.loads(path.read_text())
    if kernel is None:
        blob["provenance"].pop("cpu_capability", None)
    else:
        blob["provenance"]["cpu_capability"] = kernel
    path.write_text(json.dumps(blob))


def test_a_contrast_that_mixes_kernel_sets_is_refused_naming_the_file_and_the_field(tmp_path):
    folder = _study(tmp_path, _gain_at_one_percent)
    odd = folder / "f0.1" / "matchflags-hard_mask-seed1004.json"  # one run of a fraction, as in the course's study
    _set_kernels(odd, "AVX512")
    with pytest.raises(CourseInputError) as error:
        load_study(folder)
    line = str(error.value)
    assert line.startswith(f"{odd}: provenance.cpu_capability 'AVX512' differs from "), line
    assert "'AVX2' inside fraction 10 %" in line and "--mixed-kernels" in line and "\n" not in line


def test_one_and_ten_percent_meet_in_a_contrast_so_they_must_share_the_kernel_set(tmp_path):
    folder = _study(tmp_path, _gain_at_one_percent)
    for path in (folder / "f0.1").glob("matchflags-*.json"):
        _set_kernels(path, "AVX512")
    with pytest.raises(CourseInputError, match="cpu_capability .* between 1 % and 10 %"):
        load_study(folder)
    for path in (folder / "f0.01").glob("matchflags-*.json"):
        _set_kernels(path, "AVX512")
    assert load_study(folder).complete_seeds[F("0.1")] == list(SEEDS[0.1])  # 3 % alone may differ


def test_a_file_without_a_kernel_set_agrees_only_with_files_without_one(tmp_path):
    folder = _study(tmp_path, _gain_at_one_percent)
    _set_kernels(folder / "f0.03" / "matchflags-none-seed300.json", None)
    with pytest.raises(CourseInputError, match="cpu_capability 'not recorded' differs .* inside fraction 3 %"):
        load_study(folder)
    for path in (folder / "f0.03").glob("matchflags-*.json"):
        _set_kernels(path, None)
    load_study(folder)


def test_mixed_kernels_reads_the_mix_and_the_command_prints_it(tmp_path, capsys):
    from lessons_lib.cli import main
    from lessons_lib.ablation.study_files import format_kernel_sets, kernel_sets
    folder = _study(tmp_path, _gain_at_one_percent)
    _set_kernels(folder / "f0.1" / "matchflags-hard_mask-seed1004.json", "AVX512")
    study = load_study(folder, mixed_kernels=True)
    assert format_kernel_sets(kernel_sets(study)).splitlines()[1:] == [
        "  f0.01/           AVX2 30", "  f0.03/           AVX2 30",
        "  f0.1/            AVX2 14, AVX512 1 (matchflags-hard_mask-seed1004)"]
    assert main(["study", str(folder)]) == 2
    assert "provenance.cpu_capability" in capsys.readouterr().err
    assert main(["study", str(folder), "--mixed-kernels"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("== kernel sets (read with --mixed-kernels)") and "AVX512 1 (matchflags-hard_mask-seed1004)" in out


def test_controls_at_the_largest_dev_gain(tmp_path):
    from lessons_lib.ablation.study_report import format_controls
    folder = _study(tmp_path, _gain_at_one_percent)
    # dev gain: hard_mask at 3 % is best (4 dev pairs more than none on every seed)
    for seed in SEEDS[0.03]:
        path = folder / "f0.03" / f"matchflags-hard_mask-seed{seed}.json"
        blob = json.loads(path.read_text())
        blob["runs"][0]["dev_predictions"] = _calls(DEV_LABELS, 6)
        blob["runs"][0]["dev_probabilities"] = _probabilities(_calls(DEV_LABELS, 6))
        blob["runs"][0]["dev_accuracy"] = 1 - 6 / N_DEV
        path.write_text(json.dumps(blob))
        controls = folder / "controls"
        _write(controls, 0.03, f"random-{seed}", _result(0.03, "hard_mask", seed, 60, parser_noise=1.0))
        _write(controls, 0.03, f"scrambled-{seed}", _result(0.03, "hard_mask", seed, 62, scramble=True))
        _write(controls, 0.03, f"window-{seed}", _result(0.03, "window_mask", seed, 61))
    study = load_study(folder)
    assert control_target(study) == (HARD_MASK, F("0.03"))
    (arm, fraction), family, descriptive = study.controls()
    assert [c.name for c in family] == ["hard_mask − hard_mask · random trees at 3 %",
                                        "hard_mask · random trees − hard_mask · scrambled words at 3 %",
                                        "hard_mask − window_mask at 3 %"]
    assert family[1].wins == [2] * 10 and family[1].p_value == 0.0
    assert "p       0 Holm       0  positive, significant" in format_controls(study)  # no spread: p is exactly 0
    assert len(descriptive) == 3 and study.word_boundaries_kept(0.03) == [0.4] * 10


def test_power_is_read_at_the_spread_the_seeds_showed(tmp_path):
    from lessons_lib.evaluation.significance import detectable_mean
    from lessons_lib.ablation.study_report import format_power
    study = load_study(_study(tmp_path, _gain_at_one_percent))
    text = format_power(study)
    line = next(line for line in text.splitlines() if line.startswith("learned − none at 1 %"))
    wins = [_gain_at_one_percent(0.01, "learned", s) / N_TEST for s in SEEDS[0.01]]
    se = statistics.stdev(wins) / math.sqrt(10)
    assert line.split()[-5:] == [f"{statistics.stdev(wins):.4f}", f"{se:.4f}", f"{detectable_mean(se, 9):.4f}",
                                 f"{detectable_mean(se, 9, 0.05 / 8):.4f}", f"{statistics.fmean(wins):.4f}"]
    dod = next(line for line in text.splitlines() if line.startswith("(learned − none at 1 %)"))
    ten = [_gain_at_one_percent(0.1, "learned", s) / N_TEST for s in SEEDS[0.1]]
    assert dod.split()[-5] == "—" and dod.split()[-4] == f"{math.sqrt(statistics.variance(wins) / 10 + statistics.variance(ten) / 5):.4f}"
    assert "α / 8" in text


def test_controls_are_tested_only_when_all_are_written(tmp_path):
    from lessons_lib.ablation.study_report import format_controls
    folder = _study(tmp_path, _gain_at_one_percent)  # target: learned at 1 % (the planted dev-free gain ties)
    target, exact_fraction = control_target(load_study(folder))
    arm, fraction = target.variant, float(exact_fraction)
    controls = folder / "controls"
    for seed in list(SEEDS[fraction])[:4]:
        _write(controls, fraction, f"random-{seed}", _result(fraction, arm, seed, 60, parser_noise=1.0))
        _write(controls, fraction, f"scrambled-{seed}", _result(fraction, arm, seed, 62, scramble=True))
    text = format_controls(load_study(folder))
    assert "controls: 8 of 30 runs written; nothing is tested" in text and "Holm" not in text
    partial = format_controls(load_study(folder, partial=True))
    assert partial.startswith("partial:") and "Holm over the 2 control contrasts read" in partial


# --- refusals


def _one_seed(folder, **edits):
    for arm in ("none", "learned", "hard_mask"):
        _write(folder, 0.01, f"matchflags-{arm}-seed100", _result(0.01, arm, 100, 60, **edits.get(arm, {})))
    return folder


@pytest.mark.parametrize("edits, message", [
    ({"learned": {"provenance__code_modified": True}}, "provenance.code_modified"),
    ({"learned": {"provenance__code_commit": "def"}}, "code_commit"),
    ({"learned": {"provenance__device": "cuda"}}, "inside one fraction"),
    ({"learned": {"data__train_subset_sha256": "other"}}, "data.train_subset_sha256 differs"),
    ({"learned": {"data__pairs_sha256": {"train": "a" * 64, "dev": "b" * 64, "test": "d" * 64}}}, "other"),
    ({"learned": {"runs__0__test_probabilities": []}}, "test_probabilities is missing"),
    ({"learned": {"runs__0__dev_probabilities": [0.5] * (N_DEV - 1)}}, "dev_probabilities has 39 values"),
    ({"learned": {"runs__0__test_probabilities": [1.5] * N_TEST}}, "not a probability"),
    ({"learned": {"runs__0__test_probabilities": [float("nan")] * N_TEST}}, "not a probability"),
    ({"learned": {"runs__0__epochs__0__bias_max_abs": None}}, "bias_max_abs"),
    ({"learned": {"runs__0__optimizer_steps": 0}}, "optimizer_steps 0 is not a whole number"),
    ({"learned": {"runs__0__test_accuracy": 0.99}}, "test_accuracy 0.99 disagrees"),
    ({"learned": {"runs__0__dev_accuracy": 0.99}}, "dev_accuracy 0.99 disagrees"),
    ({"learned": {"config__epoch_choice": "last"}}, "config.epoch_choice"),
    ({"learned": {"test_labels": [1 - y for y in TEST_LABELS]}}, "test_labels differ"),
    ({"learned": {"dev_labels": [1 - y for y in DEV_LABELS]}}, "dev_labels differ"),
    ({"learned": {"config__subset_seed": 7}}, "config.subset_seed"),
    # probabilities turned round against unchanged calls (AUC below 0.5): pair 0 is called 1 with P 0.2
    ({"learned": {"runs__0__test_probabilities": _probabilities(1 - c for c in _calls(TEST_LABELS, 60))}},
     "test_predictions[0] is 1 but test_probabilities[0] is 0.2: the course calls 1 exactly when P(label = 1) > 0.5"),
    # calls turned round with their accuracy recomputed, the probabilities left saying the opposite
    ({"learned": {"runs__0__test_predictions": [1 - c for c in _calls(TEST_LABELS, 60)], "runs__0__test_accuracy": 0.3}},
     "test_predictions[0] is 0 but test_probabilities[0] is 0.8"),
    ({"learned": {"runs__0__dev_probabilities": _probabilities(1 - c for c in _calls(DEV_LABELS, 10))}},
     "dev_predictions[0] is 1 but dev_probabilities[0] is 0.2"),
    ({"learned": {"runs__0__dev_probabilities": [-0.1] * N_DEV}}, "dev_probabilities[0] is -0.1, not a probability"),
    ({"learned": {"runs__0__test_probabilities": ["0.5"] * N_TEST}}, "test_probabilities[0] is '0.5', not a probability"),
])
def test_unpairable_files_are_refused_naming_file_and_field(tmp_path, edits, message):
    folder = _one_seed(tmp_path, **edits)
    with pytest.raises(CourseInputError) as error:
        load_study(folder)
    line = str(error.value)
    assert line.startswith(str(folder / "f0.01" / "matchflags-learned-seed100.json")), line
    assert message in line and "\n" not in line


def test_the_command_refuses_calls_against_their_probabilities_in_one_line(tmp_path, capsys):
    from lessons_lib.cli import main
    flipped = [1 - c for c in _calls(TEST_LABELS, 60)]
    folder = _one_seed(tmp_path, learned={"runs__0__test_predictions": flipped, "runs__0__test_accuracy": 0.3})
    assert main(["study", str(folder), "--partial"]) == 2
    out, err = capsys.readouterr()
    path = folder / "f0.01" / "matchflags-learned-seed100.json"
    assert err.startswith(f"error: {path}: runs[0] (learned, seed 100): test_predictions[0] is 0 but "
                          "test_probabilities[0] is 0.8")
    assert err.count("\n") == 1 and out == ""


def test_a_fraction_or_seed_the_plan_does_not_name_is_refused_unless_the_folder_is_not_the_plans(tmp_path, capsys):
    from lessons_lib.cli import main
    from lessons_lib.ablation.study_report import format_curve
    folder = _study(tmp_path / "five", _gain_at_one_percent)
    _study(folder, lambda f, a, s: 0, seeds={0.05: range(500, 503)})  # complete seeds at 5 %: not the plan's
    with pytest.raises(CourseInputError) as error:
        load_study(folder)
    line = str(error.value)
    assert line.startswith(f"{folder / 'f0.05' / 'matchflags-hard_mask-seed500.json'}: config.train_fraction 0.05 is "
                           "not one of the plan's fractions (1 %, 3 %, 10 %, 30 %, 100 %")
    assert line.endswith("--unplanned reads a folder that is not the plan's") and "\n" not in line
    study = load_study(folder, unplanned=True)  # said to be another folder: read as before
    assert study.fractions() == [F("0.01"), F("0.03"), F("0.05"), F("0.1")] and "5 %" in format_curve(study)
    # a seed the plan does not name at a planned fraction, even among complete seeds read with --partial
    folder = _one_seed(tmp_path / "seed")
    for arm in (a.variant for a in CURVE_ARMS):
        _write(folder, 0.01, f"matchflags-{arm}-seed7", _result(0.01, arm, 7, 60))
    with pytest.raises(CourseInputError, match=r"seed7\.json: runs\[0\]\.seed 7 is not one of the plan's seeds at 1 % "
                                               r"\(100–109\); --unplanned"):
        load_study(folder, partial=True)
    assert load_study(folder, partial=True, unplanned=True).complete_seeds == {F("0.01"): [7, 100]}
    # the command: exit 2 and the one line; --unplanned reads it
    assert main(["study", str(folder), "--partial"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "seed 7 is not one of the plan's" in err and err.count("\n") == 1
    assert main(["study", str(folder), "--partial", "--unplanned"]) == 0
    assert "1 %: seeds 7, 100" in capsys.readouterr().out


def test_two_files_for_one_run_and_a_missing_arm(tmp_path):
    folder = _one_seed(tmp_path)
    _write(folder, 0.01, "copy-of-learned", _result(0.01, "learned", 100, 60))
    with pytest.raises(CourseInputError, match="learned / seed 100 is also in"):
        load_study(folder)
    folder = _one_seed(tmp_path / "b")
    (folder / "f0.01" / "matchflags-hard_mask-seed100.json").unlink()
    _write(folder, 0.01, "matchflags-none-seed101", _result(0.01, "none", 101, 60))
    with pytest.raises(CourseInputError, match="seed 100 has no run of hard_mask"):
        load_study(folder)
    with pytest.raises(CourseInputError, match="no seed has all"):
        load_study(folder, partial=True)


def test_partial_reads_only_complete_seeds_and_says_so(tmp_path):
    from lessons_lib.ablation.study_report import format_a48, format_controls, format_curve, format_secondary
    folder = _study(tmp_path, _gain_at_one_percent, seeds={0.01: range(100, 104)})
    _write(folder, 0.01, "matchflags-none-seed104", _result(0.01, "none", 104, 60))
    with pytest.raises(CourseInputError):
        load_study(folder)
    study = load_study(folder, partial=True)
    assert study.complete_seeds == {F("0.01"): [100, 101, 102, 103]}
    assert len(study.primary()) == 2
    for text in (format_curve(study), format_a48(study), format_secondary(study), format_controls(study)):
        assert text.startswith("partial: only complete seeds read (1 %: seeds 100, 101, 102, 103)")


def test_without_partial_every_primary_fraction_needs_the_plans_seeds(tmp_path):
    folder = _study(tmp_path, _gain_at_one_percent, seeds={**SEEDS, 0.1: range(1000, 1004)})
    with pytest.raises(CourseInputError, match="fraction 0.1 has seeds \\[1000, 1001, 1002, 1003\\], the plan's are 1000–1004"):
        load_study(folder)
    folder = _study(tmp_path / "no3", _gain_at_one_percent, seeds={0.01: SEEDS[0.01], 0.1: SEEDS[0.1]})
    with pytest.raises(CourseInputError, match="fraction 0.03 has seeds \\[\\]"):
        load_study(folder)
    assert len(load_study(folder, partial=True).primary()) == 6  # 1 % and 10 % and both differences of differences


def test_thirty_percent_and_the_full_split_are_counted_until_all_their_runs_are_written(tmp_path):
    from lessons_lib.ablation.study_report import format_a43, format_a48, format_curve, format_exact_and_bootstrap
    folder = _study(tmp_path, _gain_at_one_percent)
    for arm in ("none", "learned", "hard_mask"):  # seed 3000 complete, seed 3001 begun
        _write(folder, 0.3, f"matchflags-{arm}-seed3000", _result(0.3, arm, 3000, 50))
    _write(folder, 0.3, "matchflags-none-seed3001", _result(0.3, "none", 3001, 50))
    _write(folder, 1.0, "matchflags-none-seed0", _result(1.0, "none", 0, 40))
    study = load_study(folder)
    assert study.unfinished == {F("0.3"): (4, 9), F(1): (1, 3)}
    assert study.fractions() == list(PRIMARY_FRACTIONS) and not any(r.fraction in (F("0.3"), F(1)) for r in study.runs)
    assert format_curve(study).splitlines()[-1] == ("30 %: 4 of 9 runs written (seeds 3000–3002); "
                                                    "nothing is read before all are")
    assert format_a43(study) == "A43, the full split: 1 of 3 runs written (seed 0); nothing is read before all are"
    assert "30 %" not in format_exact_and_bootstrap(study) and "30 %" not in format_a48(study)
    # an unfinished fraction's files are still checked
    _write(folder, 0.3, "matchflags-learned-seed3001",
           _result(0.3, "learned", 3001, 50, provenance__code_modified=True))
    with pytest.raises(CourseInputError, match=r"learned-seed3001\.json: provenance\.code_modified"):
        load_study(folder)
    # --partial reads the complete seed; and once all nine are written, 30 % is read
    (folder / "f0.3" / "matchflags-learned-seed3001.json").unlink()
    assert load_study(folder, partial=True).complete_seeds[F("0.3")] == [3000]
    for seed in (3001, 3002):
        for arm in ("none", "learned", "hard_mask"):
            _write(folder, 0.3, f"matchflags-{arm}-seed{seed}",
                   _result(0.3, arm, seed, 50 - (arm == "learned"), dev_wrong=2 if arm == "learned" else 10))
    study = load_study(folder)
    assert study.unfinished == {F(1): (1, 3)} and study.complete_seeds[F("0.3")] == [3000, 3001, 3002]
    # learned's dev gain at 30 % is the largest anywhere, but the controls' target stays on the curve
    assert study.dev_gain(0.3, "learned") == Fraction(16, 3) and control_target(study) == (LEARNED, F("0.01"))
    assert "learned − none at 30 %" in format_exact_and_bootstrap(study)
    # 30 %'s contrasts print below the family, with its columns and no Holm; the family stays the plan's 8
    a48 = format_a48(study).splitlines()
    thirty = [line for line in a48 if " at 30 %" in line]
    assert [line.split()[0] for line in thirty] == ["learned", "hard_mask"]
    learned = thirty[0].split()  # wins 0, 1, 1: t = 2 on 2 df, whose two-sided p is 1 − 2 / √6
    assert learned[6:8] == ["3", f"{2 / 3 / N_TEST:+.4f}"] and learned[12] == f"{1 - 2 / math.sqrt(6):.3f}"
    assert learned[13:] == ["—", "descriptive", "(not", "in", "the", "family)", "+0", "+1", "+1", "(SD", "0.0029)"]
    assert "Holm over the 8 testable contrasts; significant when Holm p ≤ 0.05; intervals unadjusted." in a48
    assert "30 %" in format_curve(study) and "written" not in format_curve(study)
    # the curve's figure: the family's three fractions joined, 30 % hollow, linked by a dashed line
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from lessons_lib.ablation.study_figures import gain_curve
    ax = gain_curve(study)
    means = [line for line in ax.get_lines() if line.get_marker() == "o"]
    solid = [line for line in means if line.get_linestyle() == "-"]
    hollow = [line for line in means if line.get_markerfacecolor() == "white"]
    assert [len(line.get_xdata()) for line in solid] == [3, 3] and [len(line.get_xdata()) for line in hollow] == [1, 1]
    assert list(hollow[0].get_ydata()) == [pytest.approx(study.contrast(0.3, "learned", "none").mean)]
    dashed = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
    assert [len(line.get_xdata()) for line in dashed] == [2, 2]  # 10 % to 30 %, per arm
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1 %", "3 %", "10 %", "30 %"]
    plt.close("all")


def test_the_command_end_to_end(tmp_path):
    folder = _study(tmp_path / "s", _gain_at_one_percent)
    done = subprocess.run([sys.executable, "-m", "lessons_lib.cli", "study", str(folder)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "A48 (learned): support" in done.stdout and "== controls" in done.stdout
    bad = subprocess.run([sys.executable, "-m", "lessons_lib.cli", "study", str(folder), "--expect", "lcqmc"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stderr.startswith("error: ") and len(bad.stderr.strip().splitlines()) == 1


def test_figures_draw_the_contrasts_means(tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from lessons_lib.ablation.study_figures import forest_plot, gain_curve, study_rows, table_movement

    study = load_study(_study(tmp_path, _gain_at_one_percent))
    ax = gain_curve(study)
    lines = [line for line in ax.get_lines() if len(line.get_xdata()) == 3]
    learned = [study.contrast(f, "learned", "none").mean for f in (0.01, 0.03, 0.1)]
    assert any(list(line.get_ydata()) == pytest.approx(learned) for line in lines)
    assert ax.get_xscale() == "log"
    # each arm's seeds are drawn in its line's colour
    colours = {tuple(c.get_facecolor()[0][:3]) for c in ax.collections if len(c.get_offsets()) == 10}
    line_colours = {matplotlib.colors.to_rgb(line.get_color()) for line in lines}
    assert colours == line_colours and len(colours) == 2
    ax = table_movement(study)
    drawn = {line.get_label(): (list(line.get_xdata()), list(line.get_ydata())) for line in ax.get_lines()
             if not line.get_label().startswith("_")}
    assert drawn == {"1 %": ([10], [0.5]), "3 %": ([10], [0.5]), "10 %": ([10], [0.5])}  # one epoch of 10 steps
    contrasts = study.primary()
    ax = forest_plot(study_rows(contrasts, N_TEST))
    means = [line.get_xdata()[0] for line in ax.get_lines() if line.get_marker() == "o"]
    assert means == pytest.approx([c.mean for c in contrasts])
    by_height = sorted(zip(ax.get_yticks(), (t.get_text() for t in ax.get_yticklabels())), reverse=True)
    assert [name for _, name in by_height] == [c.name for c in contrasts]  # the first contrast on top
    plt.close("all")


@pytest.mark.parametrize("group, fractions", [("curve", PRIMARY_FRACTIONS), ("thirty", (F("0.3"),)), ("full", (F(1),))])
def test_the_run_script_writes_the_files_the_plan_reads(tmp_path, group, fractions):
    """results/lcqmc/datasize/run.sh and PLAN_SEEDS name the same runs: one file per fraction, arm and seed."""
    import shutil

    from lessons_lib.paths import REPO_ROOT

    if shutil.which("bash") is None:
        pytest.skip("no bash here")
    script = tmp_path / "run.sh"  # a copy in an empty folder: no run is done yet
    shutil.copy(REPO_ROOT / "results" / "lcqmc" / "datasize" / "run.sh", script)
    todo = subprocess.run(["bash", str(script), "todo", group], capture_output=True, text=True, timeout=60)
    assert todo.returncode == 0, todo.stderr
    expected = {f"f{float(f):g}/matchflags-{arm}-seed{seed}.json" for f in fractions for seed in PLAN_SEEDS[f]
                for arm in (a.variant for a in CURVE_ARMS)}
    listed = todo.stdout.splitlines()
    assert set(listed) == expected and len(listed) == len(expected)
    done = tmp_path / listed[0]  # a file that exists is never made again
    done.parent.mkdir(parents=True)
    done.write_text("{}", encoding="utf-8")
    again = subprocess.run(["bash", str(script), "todo", group], capture_output=True, text=True, timeout=60)
    assert again.stdout.splitlines() == listed[1:]


def test_one_complete_seed_per_fraction_prints_every_table_without_a_traceback(tmp_path, capsys):
    from lessons_lib.cli import main

    folder = tmp_path / "study"
    for fraction, seed in ((0.01, 100), (0.03, 300), (0.1, 1000)):
        for arm in ("none", "learned", "hard_mask"):
            _write(folder, fraction, f"matchflags-{arm}-seed{seed}", _result(fraction, arm, seed, 60 - (arm != "none")))
    assert main(["study", str(folder), "--partial"]) == 0
    out = capsys.readouterr().out
    power = out.split("== power at the spread measured\n")[1].split("\n== ")[0]
    assert "no primary contrast has two complete seeds yet" in power and "Traceback" not in out


def test_the_run_script_keeps_strange_paths_whole_and_runs_nothing_found_in_them(tmp_path):
    """A space and a `$(...)` in every path: each stays one argument, and the command in it is never run."""
    import os
    import shutil

    from lessons_lib.paths import REPO_ROOT

    if shutil.which("bash") is None:
        pytest.skip("no bash here")
    strange = tmp_path / "my study $(touch INJECTED)"
    strange.mkdir()
    script = strange / "run.sh"
    shutil.copy(REPO_ROOT / "results" / "lcqmc" / "datasize" / "run.sh", script)
    fake = tmp_path / "bin" / "python"  # records the arguments it was given, one per line
    fake.parent.mkdir()
    fake.write_text('#!/usr/bin/env bash\nprintf "%s\\n" "$@" > "$ARGS_DIR/$$.args"\n', encoding="utf-8")
    fake.chmod(0o755)
    (tmp_path / "args").mkdir()
    env = {**os.environ, "PATH": f"{fake.parent}:{os.environ['PATH']}", "ARGS_DIR": str(tmp_path / "args"),
           "LCQMC": str(strange / "lcqmc data"), "CACHE": str(strange / "parse cache"), "WORK": str(strange / "work dir")}
    done = subprocess.run(["bash", str(script), "full"], capture_output=True, text=True, timeout=120, env=env,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert not list(tmp_path.rglob("INJECTED"))
    calls = [p.read_text(encoding="utf-8").splitlines() for p in (tmp_path / "args").iterdir()]
    assert len(calls) == 3
    for argv in calls:
        arm = argv[argv.index("--variants") + 1]
        assert argv[argv.index("--data-dir") + 1] == env["LCQMC"]
        assert argv[argv.index("--cache-dir") + 1] == env["CACHE"]
        assert argv[argv.index("--work-dir") + 1] == f"{env['WORK']}/f1"
        assert argv[argv.index("--out") + 1] == str(strange / "f1" / f"matchflags-{arm}-seed0.json")
        assert (strange / "work dir" / "logs" / f"f1-matchflags-{arm}-seed0.log").is_file()
