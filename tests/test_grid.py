"""Several experiment files read as one grid: arms, paired differences, contrasts, refusals."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest

from lessons_lib.errors import CourseInputError
from lessons_lib.files import record_via
from lessons_lib.pairs.data import LCQMC_SHA256
from lessons_lib.ablation.config import ExperimentConfig
from lessons_lib.ablation.arms import Arm
from lessons_lib.ablation.grid import (Contrast, PairedDifference, load_grid, pooled_interval, seed_level_verdicts,
                                      verdict)
from lessons_lib.ablation.results import DataSummary, ExperimentResult, RunRecord, results_paths

N_TEST = 400
LABELS = [i % 2 for i in range(N_TEST)]
PAIRS = {"train": "a" * 64, "dev": "b" * 64, "test": "c" * 64}


def _predictions(wrong: set[int]) -> list[int]:
    """The labels, flipped on the pairs in ``wrong``."""
    return [1 - y if i in wrong else y for i, y in enumerate(LABELS)]


def _result(runs: dict[tuple[str, int], set[int]], pairs=PAIRS, **config) -> ExperimentResult:
    """An experiment file with one run per ``(variant, seed)``, wrong exactly on the given test pairs."""
    variants = list(dict.fromkeys(v for v, _ in runs))
    seeds = sorted({s for _, s in runs})
    records = [RunRecord(v, s, 0.5, 1 - len(wrong) / N_TEST, 0.5, 0.5, [], _predictions(wrong))
               for (v, s), wrong in runs.items()]
    data = DataSummary("argument", "lcqmc", 100, 1000, 200, N_TEST, 50, 10, config.get("parser_noise", 0.0), dict(pairs))
    return ExperimentResult(ExperimentConfig(variants=variants, seeds=seeds, train_fraction=0.1, **config), data,
                            {}, records, {}, [], [], ["lessons", "experiment"], list(LABELS))


def _save(tmp_path, name: str, result: ExperimentResult):
    """As `lessons experiment --out` saves: recorded in the folder's manifest, which a folder's reading skips."""
    return record_via(tmp_path / f"{name}.json", result.save)


def _label(result, variant):
    return Arm.of(result, variant).label


def test_arms_are_named_by_variant_trees_and_changed_options():
    plain = _result({("learned", 0): set()})
    assert _label(plain, "learned") == "learned"
    noisy = _result({("learned", 0): set()}, parser_noise=1.0)
    assert _label(noisy, "learned") == "learned · random trees"
    assert _label(noisy, "none") == "none"  # the baseline reads no tree
    assert _label(noisy, "window_mask") == "window_mask"  # sequence distances, no tree either
    assert _label(_result({("learned", 0): set()}, parser_noise=0.3), "learned") == "learned · noise 0.3"
    slow = _result({("learned", 0): set()}, bias_options={"bias_lr_multiplier": 1.0})
    assert _label(slow, "learned") == "learned · bias_lr_multiplier=1.0"
    scrambled = _result({("learned", 0): set()}, scramble_words=True)
    assert _label(scrambled, "learned") == "learned · scrambled words"


def test_an_arm_is_a_value_whose_parts_are_read_not_parsed_from_its_label():
    noisy = Arm.of(_result({("learned", 0): set()}, parser_noise=0.3), "learned")
    # the noise is the exact decimal the file gives, whatever float arithmetic would make of it
    assert noisy == Arm("learned", Fraction(3, 10)) and noisy != Arm("learned", Fraction(0.1 * 3))
    assert Arm.of(_result({("learned", 0): set()}, parser_noise=1.0), "learned") == Arm("learned", Fraction(1))
    assert Arm.of(_result({("none", 0): set()}, parser_noise=1.0), "none") == Arm("none")  # no tree read
    slow = Arm.of(_result({("learned", 0): set()}, bias_options={"bias_lr_multiplier": 1.0}), "learned")
    assert slow.variant == "learned" and slow.options == ("bias_lr_multiplier=1.0",) and slow != Arm("learned")
    assert f"{slow:<40}|" == f"{slow.label:<40}|" and str(slow) == slow.label


def test_contrasts_pair_runs_of_different_files_seed_by_seed(tmp_path):
    # learned is wrong on 20 pairs, its random-tree twin on those 20 and 40 more: a better on every seed.
    base = {(v, s): set(range(s, 60 + s)) for v in ("none",) for s in (0, 1, 2)}
    tree = {("learned", s): set(range(s, 20 + s)) for s in (0, 1, 2)}
    random_trees = {("learned", s): set(range(s, 60 + s)) for s in (0, 1, 2)}
    paths = [_save(tmp_path, "textbook", _result({**base, **tree})),
             _save(tmp_path, "textbook_random", _result(random_trees, parser_noise=1.0))]
    grid = load_grid(paths)
    assert grid.arms("textbook") == [Arm("none"), Arm("learned"), Arm("learned", Fraction(1))]
    assert [arm.label for arm in grid.arms("textbook")] == ["none", "learned", "learned · random trees"]
    contrast = grid.contrast("textbook", "learned", "learned · random trees")
    assert [(d.seed, d.only_a_right, d.only_b_right) for d in contrast.per_seed] == [(0, 40, 0), (1, 40, 0), (2, 40, 0)]
    assert contrast.pooled == pytest.approx(40 / N_TEST)
    assert contrast.low <= contrast.pooled <= contrast.high and contrast.low > 0
    assert contrast.verdict == "a better"
    same = grid.contrast("textbook", "learned · random trees", "none")
    assert same.pooled == 0 and same.verdict == "no difference detected" and same.per_seed[0].p_value == 1.0
    table = grid.format()
    assert "learned − learned · random trees   (is it the tree?)" in table
    assert "seed 1: +0.1000   only a right   40 / only b right    0" in table
    assert "→ a better" in table and "n=3" in table
    compact = grid.format_table().splitlines()
    rows = [line for line in compact if line.strip().startswith("learned − learned · random trees")]
    assert len(rows) == 2  # one under "these models", one under "the method"
    assert "+40 +40 +40" in rows[0] and rows[0].endswith("a better")
    # every seed wins by exactly 40 pairs: no spread, so the paired t-test's p is 0 and the method's verdict holds
    assert "n=3 +0.1000 [+0.1000, +0.1000]" in rows[1] and rows[1].endswith("a better")


def test_the_bootstrap_interval_is_the_spread_of_resampled_pair_means():
    rng = np.random.default_rng(1)
    a, b = rng.random((3, 2000)) < 0.62, rng.random((3, 2000)) < 0.60
    difference, low, high = pooled_interval(a, b)
    assert difference == pytest.approx(a.mean() - b.mean())
    per_pair = a.mean(0) - b.mean(0)
    standard_error = per_pair.std(ddof=1) / np.sqrt(per_pair.size)
    assert high - low == pytest.approx(2 * 1.96 * standard_error, rel=0.1)  # the normal approximation agrees
    assert pooled_interval(a, b) == (difference, low, high)  # seeded: the same numbers every time


def test_the_bootstrap_interval_is_computed_in_whole_pairs_so_an_end_at_zero_is_exactly_zero():
    # 5 pairs won by a on one seed, 1 by b, 200 pairs: the 2.5 % end's order statistics are 0 pairs
    rng = np.random.default_rng(390)
    a, b = np.zeros((3, 200), bool), np.zeros((3, 200), bool)
    for row, column in zip(rng.integers(0, 3, 5), rng.choice(200, 5, replace=False)):
        a[row, column] = True
    b[1, 17] = True
    difference, low, high = pooled_interval(a, b)
    wins = a.sum(0).astype(int) - b.sum(0)
    draws = np.random.default_rng(0)  # the draws pooled_interval makes, summed in exact integers
    sums = np.concatenate([wins[draws.integers(0, 200, size=(200, 200))].sum(1) for _ in range(10)])
    order = np.sort(sums)
    assert order[49] == order[50] == 0 and low == 0.0  # a mean of thirds gave -1.4e-20 here
    assert verdict([1 / 600, 1 / 600, 1 / 600], low, high) == "no difference detected"
    assert (difference, high) == (4 / 600, np.quantile(sums, 0.975) / 600)


@pytest.mark.parametrize("per_seed, low, high, expected", [
    ([0.01, 0.02], 0.001, 0.03, "a better"),
    ([-0.01, -0.02], -0.03, -0.001, "b better"),
    ([0.01, -0.002], 0.001, 0.02, "seeds disagree"),
    ([0.01, 0.02], -0.001, 0.03, "no difference detected"),
])
def test_a_verdict_needs_the_seeds_and_the_pooled_interval_to_agree(per_seed, low, high, expected):
    assert verdict(per_seed, low, high) == expected


def test_files_of_other_data_are_refused_with_one_line(tmp_path, capsys):
    from lessons_lib.cli import main

    path = _save(tmp_path, "textbook", _result({("none", 0): set(), ("learned", 0): {1}}))
    with pytest.raises(CourseInputError, match=r"textbook.json: made on other data: its train pairs have SHA-256 aaaa"):
        load_grid([path], LCQMC_SHA256)
    assert main(["grid", str(tmp_path), "--expect", "lcqmc"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and "made on other data" in err
    other = _save(tmp_path, "other", _result({("learned", 1): set()}, pairs={**PAIRS, "test": "d" * 64}))
    with pytest.raises(CourseInputError, match="other.json: made on other pairs than"):
        load_grid([path, other])


def test_a_run_in_two_files_and_a_file_without_fingerprints_are_refused(tmp_path):
    first = _save(tmp_path, "a", _result({("none", 0): set()}))
    second = _save(tmp_path, "b", _result({("none", 0): {3}}))
    with pytest.raises(CourseInputError, match="b.json: textbook / none / seed 0 is also in an earlier file"):
        load_grid([first, second])
    old = json.loads(first.read_text(encoding="utf-8"))
    old["data"].pop("pairs_sha256")
    (tmp_path / "old.json").write_text(json.dumps(old), encoding="utf-8")
    with pytest.raises(CourseInputError, match="old.json: these results record no SHA-256"):
        load_grid([tmp_path / "old.json"])


def test_the_command_reads_a_folder_and_prints_the_grid(tmp_path, capsys):
    from lessons_lib.cli import main

    _save(tmp_path, "textbook", _result({("none", 0): {1, 2}, ("learned", 0): {1}}))
    assert main(["grid", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "recipe textbook" in out and "these models" in out and "the method" in out
    assert "learned − none  +1" in out and "one seed, no test" in out
    assert main(["grid", str(tmp_path), "--per-seed"]) == 0
    assert "learned − none   (does it beat no bias?)" in capsys.readouterr().out
    assert main(["grid", str(tmp_path / "missing")]) == 2


@pytest.mark.slow
def test_no_lcqmc_text_is_tracked():
    """The course ships numbers computed on LCQMC, never its text (the maintainers' guard, where it is beside the checkout)."""
    import subprocess
    import sys

    from lessons_lib import paths

    guard = paths.REPO_ROOT.parent / "shared" / "tools" / "lcqmc_guard" / "lcqmc_guard.py"
    if not guard.exists():
        pytest.skip(f"{guard} is not beside this checkout")
    done = subprocess.run([sys.executable, str(guard), str(paths.REPO_ROOT)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_shipped_real_lcqmc_results_load_as_one_grid():
    from lessons_lib import paths

    files = results_paths(paths.LCQMC_RESULTS_DIR)
    assert files, f"no results in {paths.LCQMC_RESULTS_DIR}"
    grid = load_grid(files, LCQMC_SHA256)
    assert {"none", "learned", "relative_position", "hard_mask", "window_mask", "learned · random trees",
            "hard_mask · random trees"} <= {arm.label for arm in grid.arms("textbook")}
    assert all(len(grid.seeds("textbook", arm)) == 3 for arm in grid.arms("textbook") if not arm.options)


def _contrast(wins_per_seed, pairs=1000):
    per_seed = [PairedDifference(s, w / pairs, max(w, 0) + 10, max(-w, 0) + 10, 1.0) for s, w in enumerate(wins_per_seed)]
    return Contrast("r", Arm("a"), Arm("b"), "?", per_seed, 0.0, 0.0, 0.0, "")


def test_the_method_is_judged_over_seeds_with_holms_correction():
    steady = _contrast([20, 22, 19, 21, 20])  # five seeds that agree closely: a better, even after Holm
    small = _contrast([3, 9, 4])  # a gain on every one of three seeds, the LCQMC pattern: no claim
    against = _contrast([-30, -28, -33, -31])
    levels = seed_level_verdicts([steady, small, against])
    assert [level.verdict for level in levels] == ["a better", "no difference detected", "b better"]
    assert all(level.family == 3 for level in levels)
    assert levels[1].p_value > 0.05 and levels[1].low < 0 < levels[1].high
    smallest = min(range(3), key=lambda i: levels[i].p_value)
    assert levels[smallest].holm_p == pytest.approx(3 * levels[smallest].p_value)
    # alone, the steady contrast's Holm p is its own p; in a larger family it only grows
    assert seed_level_verdicts([steady])[0].holm_p == pytest.approx(levels[0].p_value)
    one_seed = seed_level_verdicts([_contrast([50])])[0]
    assert one_seed.verdict == "no difference detected" and one_seed.family == 0


def test_a_grids_forest_plot_draws_each_seed_and_the_seed_level_interval():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from lessons_lib.ablation.study_figures import forest_plot, grid_rows

    contrasts = [_contrast([20, 22, 19]), _contrast([-5])]  # the second has one seed: no interval
    levels = seed_level_verdicts(contrasts)
    ax = forest_plot(grid_rows(contrasts, levels))
    points = [list(collection.get_offsets()[:, 0]) for collection in ax.collections]
    assert points == [pytest.approx([0.020, 0.022, 0.019]), pytest.approx([-0.005])]
    intervals = [list(line.get_xdata()) for line in ax.get_lines() if line.get_color() == "tab:blue"]
    assert intervals == [pytest.approx([levels[0].low, levels[0].high])]
    plt.close("all")


def _edit_run(field: str, value):
    def edit(saved: dict) -> None:
        saved["runs"][0][field] = value(saved["runs"][0][field]) if callable(value) else value
    return edit


@pytest.mark.parametrize("edit, message", [
    (_edit_run("test_accuracy", float("nan")), "runs[0] (none, seed 0): test_accuracy nan is not a number in [0, 1]"),
    (_edit_run("dev_accuracy", float("inf")), "runs[0] (none, seed 0): dev_accuracy inf is not a number in [0, 1]"),
    (_edit_run("test_accuracy", 1.5), "runs[0] (none, seed 0): test_accuracy 1.5 is not a number in [0, 1]"),
    (_edit_run("test_predictions", lambda p: [2, *p[1:]]), "runs[0] (none, seed 0): test_predictions must be a list of 0 and 1"),
    (_edit_run("test_predictions", lambda p: p[:-1]), f"runs[0] (none, seed 0): test_predictions has {N_TEST - 1} values for {N_TEST} test_labels"),
    (_edit_run("test_accuracy", 0.99), "runs[0] (none, seed 0): test_accuracy 0.99 disagrees with its test_predictions, which give 0.997500"),
    (lambda saved: saved["test_labels"].__setitem__(0, 2), "test_labels must be a list of 0 and 1"),
    # pair 1 is called 0 (its label is 1, and the run is wrong on it): a P of 0.9 says the opposite
    (_edit_run("test_probabilities", lambda _: [0.9 if i == 1 else float(y) for i, y in enumerate(LABELS)]),
     "runs[0] (none, seed 0): test_predictions[1] is 0 but test_probabilities[1] is 0.9: the course calls 1 exactly "
     "when P(label = 1) > 0.5"),
    (_edit_run("test_probabilities", lambda _: [float("nan")] * N_TEST),
     "runs[0] (none, seed 0): test_probabilities[0] is nan, not a probability in [0, 1]"),
    (_edit_run("test_probabilities", lambda _: [0.5] * (N_TEST - 1)),
     f"runs[0] (none, seed 0): test_probabilities has {N_TEST - 1} values for {N_TEST} labels"),
])
def test_an_edited_results_file_is_refused_naming_the_file_and_field(tmp_path, capsys, edit, message):
    from lessons_lib.cli import main

    path = _save(tmp_path, "textbook", _result({("none", 0): {1}, ("learned", 0): {1, 2}}))
    saved = json.loads(path.read_text(encoding="utf-8"))
    edit(saved)
    path.write_text(json.dumps(saved), encoding="utf-8")
    assert main(["grid", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"error: {path}: {message}"), err
