"""The data-size study on LCQMC, read as its plan (results/lcqmc/PLAN.md) fixes it.

:func:`load_study` reads every result file under a folder (one variant and one seed per file,
the training subset drawn with that seed, the epoch chosen on dev) and refuses, in one line
naming the file and the field, anything that cannot be paired. :class:`Study` then gives:

- :meth:`Study.primary`: the family of 8 contrasts (learned − none and hard_mask − none at
  1 %, 3 %, 10 %; per arm the difference of differences 1 % vs 10 %), per-seed differences in
  whole test pairs, the seed-level 95 % t-interval, the paired t (within a fraction) or Welch t
  (across), Holm's correction over the 8, signs taken from integers;
- :func:`a48_verdict`: support / against / partly / inconclusive, by the plan's rules;
- :func:`format_power`: the true mean each primary test detects with 80 % power at the spread its
  seeds showed (descriptive: what an inconclusive reading could have seen);
- :meth:`Study.secondary`: per run AUC, accuracy at the dev-tuned threshold and the share of
  label-1 calls; the exact permutation p of each primary test; the test-pair bootstrap
  ("these trained models, on other pairs like these"); the learned table's movement;
- :func:`control_target` and :meth:`Study.controls`: the family of 3 control contrasts.

Accuracies are counted in whole pairs (``correct``) so that every sign is an integer's.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from lessons_lib.errors import CourseInputError
from lessons_lib.evaluation.metrics import (accuracy_at_threshold, dev_tuned_threshold, label_one_share,
                                            mcnemar_exact, rank_auc)
from lessons_lib.evaluation.significance import (detectable_mean, holm, mean_ci95, paired_t_p_value,
                                                 relabelling_p_value, sign_flip_p_value, significant,
                                                 standard_error, welch_t_test)
from lessons_lib.syntax_bias.grid import RANDOM_TREES, SCRAMBLED_WORDS, arm_name, pooled_interval
from lessons_lib.syntax_bias.registry import BASELINE
from lessons_lib.syntax_bias.results import ExperimentResult, format_p, load_results, results_paths

__all__ = ["CURVE_ARMS", "PRIMARY_FRACTIONS", "StudyRun", "StudyContrast", "Study", "load_study", "a48_verdict",
           "control_target", "format_curve", "format_a48", "format_runs", "format_discrimination",
           "format_exact_and_bootstrap", "format_power", "format_movement", "format_secondary", "format_controls",
           "format_a43"]

CURVE_ARMS = (BASELINE, "learned", "hard_mask")
BIASED_ARMS = ("learned", "hard_mask")
PRIMARY_FRACTIONS = (0.01, 0.03, 0.1)
# The plan's seeds per fraction (disjoint, so the fractions are independent samples).
PLAN_SEEDS = {0.01: list(range(100, 110)), 0.03: list(range(300, 310)), 0.1: list(range(1000, 1005)),
              0.3: list(range(3000, 3003)), 1.0: [0]}
FULL = 1.0  # A43: the whole training split, one seed, read beside the 10 % seeds
SMALL, LARGE = 0.01, 0.1  # the difference of differences: (arm − none at SMALL) − (arm − none at LARGE)
ALPHA = 0.05
BARELY_MOVED = 0.1  # a learned table whose median largest |entry| stays below this "barely moved"
JACCARD_DEV = 0.6559  # the Jaccard rule's dev accuracy, shown beside none's
PLAN_SD = 0.002  # the per-seed SD the plan's power figures assumed (3 seeds on one 10 % subset)
# The control that asks "is it the tree, or only nearness?" for each arm.
NEARNESS_CONTROL = {"hard_mask": "window_mask", "learned": "relative_position"}
BOOTSTRAP_LABEL = "these trained models, on other pairs like these"


@dataclass(frozen=True)
class StudyRun:
    """One file of the study: one arm, one seed, one training fraction.

    Attributes:
        test_correct: ``(N_test,)`` bool, per test pair whether the chosen epoch's call is right.
        dev_correct, test_correct_count: correct dev / test pairs (integers).
        bias_max_abs: the learned table's largest |entry| at the chosen epoch (``None`` without a table).
        bias_by_epoch: the same after every epoch (empty without a table).
        steps_per_epoch: optimizer steps per epoch (the run's steps over its epochs).
    """

    fraction: float
    arm: str
    seed: int
    dev_correct: int
    test_correct_count: int
    test_correct: np.ndarray = field(repr=False)
    dev_probabilities: list[float] = field(repr=False)
    dev_labels: list[int] = field(repr=False)
    dev_predictions: list[int] = field(repr=False)
    test_probabilities: list[float] = field(repr=False)
    test_labels: list[int] = field(repr=False)
    test_predictions: list[int] = field(repr=False)
    bias_max_abs: float | None
    word_boundaries_kept: float | None
    source: Path
    bias_by_epoch: list[float] = field(default_factory=list, repr=False)
    steps_per_epoch: int | None = None


@dataclass(frozen=True)
class StudyContrast:
    """One contrast read with the seeds as the sample.

    Attributes:
        wins: per seed, correct test pairs of a minus those of b (within a fraction); for a
            difference of differences, ``wins`` at the small fraction and ``wins_other`` at the large one.
        mean, low, high: the mean difference in accuracy and its 95 % t-interval (unadjusted).
        standard_error: the standard error of ``mean`` (the paired t's, or Welch's).
        df: the t-test's degrees of freedom (paired: seeds − 1; Welch: rounded down).
        p_value, holm_p: two-sided p and (in its family) Holm's adjusted p (``nan``: not testable).
        sign: +1 / −1 / 0, from the integer sums.
        exact_p: the exact permutation p (sign flips, or relabelling the seeds).
    """

    name: str
    arm: str
    fraction: float | None  # None for the difference of differences
    seeds: list[int]
    wins: list[int]
    wins_other: list[int]
    mean: float
    standard_error: float
    low: float
    high: float
    df: int
    p_value: float
    sign: int
    exact_p: float
    holm_p: float = math.nan

    @property
    def significant(self) -> bool:
        return significant(self.holm_p, ALPHA) and self.sign != 0

    def verdict(self) -> str:
        if self.holm_p != self.holm_p:
            return "not testable"
        if not self.significant:
            return "not significant"
        return "positive, significant" if self.sign > 0 else "negative, significant"


def _sign(value: int | Fraction) -> int:
    return (value > 0) - (value < 0)


def _fraction_name(fraction: float) -> str:
    return f"{fraction * 100:g} %"


def _within(name: str, arm: str, fraction: float, seeds: list[int], wins: list[int], n_test: int) -> StudyContrast:
    accuracies = [w / n_test for w in wins]
    mean, half = mean_ci95(accuracies)
    p = paired_t_p_value(wins) if len(wins) > 1 else math.nan
    return StudyContrast(name, arm, fraction, seeds, wins, [], mean, standard_error(accuracies), mean - half,
                         mean + half, len(wins) - 1, p, _sign(sum(wins)), sign_flip_p_value(wins))


def _across(name: str, arm: str, small: StudyContrast, large: StudyContrast, n_test: int) -> StudyContrast:
    # mean(small) − mean(large) in pairs, as an exact fraction: its sign is an integer's
    sign = _sign(Fraction(sum(small.wins), len(small.wins)) - Fraction(sum(large.wins), len(large.wins)))
    if len(small.wins) < 2 or len(large.wins) < 2:
        difference = small.mean - large.mean
        return StudyContrast(name, arm, None, small.seeds + large.seeds, small.wins, large.wins, difference,
                             math.nan, math.nan, math.nan, 0, math.nan, sign, math.nan)
    test = welch_t_test([w / n_test for w in small.wins], [w / n_test for w in large.wins])
    # p from the integer counts (the same test, free of the division's rounding when nothing varies)
    p = welch_t_test(small.wins, large.wins).p_value
    return StudyContrast(name, arm, None, small.seeds + large.seeds, small.wins, large.wins, test.difference,
                         test.standard_error, test.low, test.high, test.df, p, sign,
                         relabelling_p_value(small.wins, large.wins))


def _with_holm(contrasts: list[StudyContrast]) -> list[StudyContrast]:
    testable = [i for i, c in enumerate(contrasts) if c.p_value == c.p_value]
    adjusted = dict(zip(testable, holm([contrasts[i].p_value for i in testable])))
    return [StudyContrast(**{**c.__dict__, "holm_p": adjusted.get(i, math.nan)}) for i, c in enumerate(contrasts)]


@dataclass
class Study:
    """The runs of the study (see :func:`load_study`).

    Attributes:
        runs: every run read, curve and controls.
        complete_seeds: per fraction, the seeds with all of none, learned and hard_mask, in order.
        partial: whether seeds without every curve arm were left out (every printout says so).
        unfinished: per fraction the plan adds after the curve (30 %, the full split) whose runs are
            not all written yet, ``(written, planned)``: its runs are counted, not read.
    """

    runs: list[StudyRun]
    complete_seeds: dict[float, list[int]]
    partial: bool
    n_test: int
    unfinished: dict[float, tuple[int, int]] = field(default_factory=dict)

    def has_run(self, fraction: float, arm: str, seed: int) -> bool:
        return (fraction, arm, seed) in self._index

    def run(self, fraction: float, arm: str, seed: int) -> StudyRun:
        """The run of ``arm`` and ``seed`` at ``fraction`` (callers ask only for runs the study holds)."""
        try:
            return self._index[(fraction, arm, seed)]
        except KeyError:
            raise CourseInputError(f"the study holds no run of {arm} with seed {seed} at {fraction:.0%}") from None

    def __post_init__(self) -> None:
        self._index = {(r.fraction, r.arm, r.seed): r for r in self.runs}

    def fractions(self) -> list[float]:
        return sorted(self.complete_seeds)

    def arms(self) -> list[str]:
        return list(dict.fromkeys(r.arm for r in self.runs))

    def paired(self, fraction: float, a: str, b: str) -> tuple[list[int], list[int]]:
        """``(seeds, wins)``: the complete seeds of ``fraction`` where both arms ran, and per seed a's
        correct test pairs minus b's."""
        seeds = [s for s in self.complete_seeds.get(fraction, []) if self.has_run(fraction, a, s) and self.has_run(fraction, b, s)]
        return seeds, [self.run(fraction, a, s).test_correct_count - self.run(fraction, b, s).test_correct_count
                       for s in seeds]

    def contrast(self, fraction: float, a: str, b: str) -> StudyContrast:
        seeds, wins = self.paired(fraction, a, b)
        if not seeds:
            raise CourseInputError(f"{_fraction_name(fraction)}: arms {a!r} and {b!r} share no complete seed")
        return _within(f"{a} − {b} at {_fraction_name(fraction)}", a, fraction, seeds, wins, self.n_test)

    def primary(self) -> list[StudyContrast]:
        """The family of the plan's 8 contrasts (those the files allow, with ``partial``), Holm over them."""
        out: list[StudyContrast] = []
        for arm in BIASED_ARMS:
            within = {f: self.contrast(f, arm, BASELINE) for f in PRIMARY_FRACTIONS if self.complete_seeds.get(f)}
            out += within.values()
            if SMALL in within and LARGE in within:
                out.append(_across(f"({arm} − none at 1 %) − ({arm} − none at 10 %)", arm, within[SMALL],
                                   within[LARGE], self.n_test))
        return _with_holm(out)

    def beyond_curve(self) -> list[StudyContrast]:
        """Each biased arm − none at the complete fractions the plan adds after the curve (30 %, the
        full split): descriptive, outside the primary family, so without Holm."""
        return [self.contrast(f, arm, BASELINE) for f in self.fractions() if f not in PRIMARY_FRACTIONS
                for arm in BIASED_ARMS]

    def movement_by_epoch(self) -> dict[float, tuple[int | None, list[float]]]:
        """Per fraction, ``(steps per epoch, medians)``: after every epoch, the median over complete
        seeds of the learned table's largest |entry|."""
        out = {}
        for f in self.fractions():
            runs = [self.run(f, "learned", s) for s in self.complete_seeds[f]]
            epochs = min(len(r.bias_by_epoch) for r in runs)
            out[f] = (runs[0].steps_per_epoch,
                      [statistics.median(r.bias_by_epoch[e] for r in runs) for e in range(epochs)])
        return out

    def movement(self) -> dict[float, float]:
        """Per fraction, the median over complete seeds of the learned table's largest |entry| at the chosen epoch."""
        out = {}
        for f in self.fractions():
            values = [self.run(f, "learned", s).bias_max_abs for s in self.complete_seeds[f]]
            measured = [v for v in values if v is not None]
            if len(measured) < len(values):
                raise CourseInputError(f"{_fraction_name(f)}: a learned run without its table's movement")
            out[f] = statistics.median(measured)
        return out

    def arms_at(self, fraction: float) -> list[str]:
        """The curve's arms, then every control arm that ran on a complete seed of ``fraction``."""
        controls = [a for a in self.arms() if a not in CURVE_ARMS and self.paired(fraction, a, BASELINE)[0]]
        return [*CURVE_ARMS, *controls]

    def secondary_runs(self) -> list[dict]:
        """Per run of every arm (curve and controls) on a complete seed: test accuracy, AUC, the
        dev-tuned threshold and the accuracy at it, the share of label-1 calls on dev and test."""
        rows = []
        for f in self.fractions():
            for arm in self.arms_at(f):
                for s in self.paired(f, arm, BASELINE)[0]:
                    r = self.run(f, arm, s)
                    threshold = dev_tuned_threshold(r.dev_probabilities, r.dev_labels)
                    rows.append({"fraction": f, "arm": arm, "seed": s, "test_accuracy": r.test_correct_count / self.n_test,
                                 "auc": rank_auc(r.test_probabilities, r.test_labels), "threshold": threshold,
                                 "tuned_accuracy": accuracy_at_threshold(r.test_probabilities, r.test_labels, threshold),
                                 "dev_ones": label_one_share(r.dev_predictions),
                                 "test_ones": label_one_share(r.test_predictions)})
        return rows

    def bootstrap(self, contrast: StudyContrast) -> tuple[float, float, float] | None:
        """The test-pair bootstrap of a within-fraction contrast, the seeds held fixed (``None`` across fractions)."""
        fraction = contrast.fraction
        if fraction is None:
            return None

        def stack(arm: str) -> np.ndarray:
            return np.stack([self.run(fraction, arm, s).test_correct for s in contrast.seeds])
        return pooled_interval(stack(contrast.arm), stack(BASELINE))

    def dev_gain(self, fraction: float, arm: str) -> Fraction | None:
        """The mean dev gain of ``arm`` over none at ``fraction`` in dev pairs, exactly (``None``: no complete seed)."""
        seeds = self.complete_seeds.get(fraction, [])
        if not seeds:
            return None
        return Fraction(sum(self.run(fraction, arm, s).dev_correct - self.run(fraction, BASELINE, s).dev_correct
                            for s in seeds), len(seeds))

    def controls(self) -> tuple[tuple[str, float], list[StudyContrast], list[StudyContrast]]:
        """``(target, family, descriptive)``: the family of 3 at :func:`control_target` with Holm over
        it, and each control arm − none (descriptive, no correction)."""
        arm, fraction = control_target(self)
        family = []
        random_trees, scrambled, nearness = self._control_names(arm, fraction)
        for a, b in ((arm, random_trees), (random_trees, scrambled), (arm, nearness)):
            if b is not None and self.paired(fraction, a, b)[0]:
                family.append(self.contrast(fraction, a, b))
        controls = [a for a in self.arms() if a not in CURVE_ARMS and self.paired(fraction, a, BASELINE)[0]]
        return (arm, fraction), _with_holm(family), [self.contrast(fraction, a, BASELINE) for a in controls]

    def control_progress(self) -> tuple[int, int]:
        """``(written, planned)``: the runs of the three controls at :func:`control_target` on its
        complete seeds, against three per complete seed."""
        arm, fraction = control_target(self)
        names = self._control_names(arm, fraction)
        written = sum(len(self.paired(fraction, name, BASELINE)[0]) for name in names if name is not None)
        return written, len(names) * len(self.complete_seeds[fraction])

    def _control_names(self, arm: str, fraction: float) -> tuple[str, str, str | None]:
        """The plan's three controls of ``arm``: on random trees, on scrambled words, and the nearness
        control that ran at ``fraction`` (``None`` when none did)."""
        return f"{arm} · {RANDOM_TREES}", f"{arm} · {SCRAMBLED_WORDS}", self._nearness_arm(arm, fraction)

    def _nearness_arm(self, arm: str, fraction: float) -> str | None:
        names = [a for a in self.arms() if a.split(" · ")[0] == NEARNESS_CONTROL[arm] and self.paired(fraction, a, BASELINE)[0]]
        return names[0] if names else None

    def word_boundaries_kept(self, fraction: float) -> list[float]:
        return [r.word_boundaries_kept for r in self.runs
                if r.fraction == fraction and r.word_boundaries_kept is not None]


def control_target(study: Study) -> tuple[str, float]:
    """The (arm, fraction) of the curve (1 %, 3 %, 10 %) with the largest mean dev gain over none
    (exact; ties to the smaller fraction, then to learned, the article's method). 30 % and the full
    split, run after the controls, never move it."""
    best = None
    for f in PRIMARY_FRACTIONS:  # dev_gain is None where a fraction has no complete seed
        for arm in BIASED_ARMS:
            gain = study.dev_gain(f, arm)
            if gain is not None and (best is None or gain > best[0]):
                best = (gain, arm, f)
    if best is None:
        raise CourseInputError("no fraction with a complete seed: no control target")
    return best[1], best[2]


def a48_verdict(contrasts: Sequence[StudyContrast], arm: str = "learned") -> str:
    """The plan's reading of A48 for ``arm``: ``support``, ``against``, ``partly`` or ``inconclusive``."""
    gain = next((c for c in contrasts if c.arm == arm and c.fraction == SMALL), None)
    dod = next((c for c in contrasts if c.arm == arm and c.fraction is None), None)
    if gain is None or dod is None:
        return "inconclusive"
    def positive(c: StudyContrast) -> bool:
        return c.significant and c.sign > 0

    def negative(c: StudyContrast) -> bool:
        return c.significant and c.sign < 0

    if positive(gain) and positive(dod):
        return "support"
    if negative(dod) or negative(gain):
        return "against"
    if positive(dod):
        return "partly"
    return "inconclusive"


# --- reading the files


def _read_run(path: Path, result: ExperimentResult) -> StudyRun:
    """The one run of a study file: what the plan asks of a file beyond :func:`load_results`' checks
    (one variant and seed, the subset drawn with that seed, the epoch chosen on dev, unmodified code,
    the subset's SHA-256, the dev labels, calls and probabilities, the learned table's size)."""
    if len(result.runs) != 1:
        raise CourseInputError(f"{path}: runs holds {len(result.runs)} runs; a study file holds one variant and one seed")
    run = result.runs[0]
    where = f"{path}: runs[0] ({run.variant}, seed {run.seed})"
    if result.config.subset_seed != run.seed:
        raise CourseInputError(f"{path}: config.subset_seed {result.config.subset_seed} is not the run's seed {run.seed}")
    if result.config.epoch_choice != "best_dev":
        raise CourseInputError(f"{path}: config.epoch_choice {result.config.epoch_choice!r} is not 'best_dev'")
    if result.provenance.get("code_modified") is not False:
        raise CourseInputError(f"{path}: provenance.code_modified is {result.provenance.get('code_modified')!r}: "
                               "the study's runs come from one unmodified commit")
    if not result.data.train_subset_sha256:
        raise CourseInputError(f"{path}: data.train_subset_sha256 is missing")
    dev_labels = result.dev_labels
    if not dev_labels:
        raise CourseInputError(f"{path}: dev_labels must be a non-empty list of 0 and 1")
    for name in ("dev_probabilities", "test_probabilities", "dev_predictions"):
        if not getattr(run, name):
            raise CourseInputError(f"{where}: {name} is missing (written by an older course); run its command again")
    dev_correct = sum(p == y for p, y in zip(run.dev_predictions, dev_labels))
    chosen = run.chosen_epoch
    if chosen is None:
        raise CourseInputError(f"{where}: chosen_epoch {chosen!r} is not one of its {len(run.epochs)} epochs")
    bias = run.epochs[chosen - 1].bias_max_abs
    if run.variant == "learned" and not _is_finite_number(bias):
        raise CourseInputError(f"{where}: epochs[{chosen - 1}].bias_max_abs (the chosen epoch's) is {bias!r}, "
                               "not a number")
    labels = np.asarray(result.test_labels)
    correct = np.asarray(run.test_predictions) == labels
    return StudyRun(result.config.train_fraction, arm_name(result, run.variant), run.seed, dev_correct,
                    int(correct.sum()), correct, run.dev_probabilities, dev_labels, run.dev_predictions,
                    run.test_probabilities, result.test_labels, run.test_predictions,
                    bias if _is_finite_number(bias) else None, result.data.word_boundaries_kept, path,
                    _bias_by_epoch(where, run), _steps_per_epoch(where, run))


def _bias_by_epoch(where: str, run) -> list[float]:
    if run.variant != "learned":
        return []
    values = [e.bias_max_abs for e in run.epochs]
    index = next((i for i, v in enumerate(values) if not _is_finite_number(v)), None)
    if index is not None:
        raise CourseInputError(f"{where}: epochs[{index}].bias_max_abs is {values[index]!r}, not a number")
    return values


def _steps_per_epoch(where: str, run) -> int | None:
    steps = run.optimizer_steps
    if steps is None:
        return None
    if type(steps) is not int or steps < 1 or steps % len(run.epochs):
        raise CourseInputError(f"{where}: optimizer_steps {steps!r} is not a whole number of steps per epoch "
                               f"over its {len(run.epochs)} epochs")
    return steps // len(run.epochs)


def _is_finite_number(value) -> bool:
    return type(value) in (int, float) and math.isfinite(value)


def _where_made(result: ExperimentResult) -> tuple:
    p = result.provenance
    return p.get("code_commit"), p.get("device"), p.get("device_name")


def _check_planned(path: Path, run: StudyRun) -> None:
    """One line naming the file when its fraction or seed is not one the plan names (:data:`PLAN_SEEDS`):
    such a file would enter the curve and the tables beside the plan's runs as if it were one of them."""
    if run.fraction not in PLAN_SEEDS:
        planned = ", ".join(_fraction_name(f) for f in PLAN_SEEDS)
        raise CourseInputError(f"{path}: config.train_fraction {run.fraction:g} is not one of the plan's fractions "
                               f"({planned}; results/lcqmc/PLAN.md); --unplanned reads a folder that is not the plan's")
    seeds = PLAN_SEEDS[run.fraction]
    if run.seed not in seeds:
        which = f"{seeds[0]}" if len(seeds) == 1 else f"{seeds[0]}–{seeds[-1]}"
        raise CourseInputError(f"{path}: runs[0].seed {run.seed} is not one of the plan's seeds at "
                               f"{_fraction_name(run.fraction)} ({which}); --unplanned reads a folder that is not the plan's")


def load_study(folder: str | Path, expected_sha256: Mapping[str, str] | None = None, partial: bool = False,
               unplanned: bool = False) -> Study:
    """Read every ``*.json`` under ``folder`` (curve and controls) into a :class:`Study`.

    Every file is read by :func:`~lessons_lib.syntax_bias.results.load_results` (calls, accuracies
    and probabilities that contradict each other are refused there). Refused besides, in one line
    naming the file and the field: other splits than the first file's (or than ``expected_sha256``),
    another training subset for one (fraction, seed), two files for one (fraction, arm, seed),
    modified code, another commit or device inside one fraction (or between 1 % and 10 %, whose
    difference is a contrast), missing probabilities, a learned run without the chosen epoch's
    ``bias_max_abs``.

    Args:
        partial: keep only the seeds of a fraction that have all of none, learned and hard_mask
            (taken in seed order); without it, a seed lacking one of them is refused.
        unplanned: the folder is not the plan's: read fractions and seeds the plan does not name
            (without it, a file at any other fraction or seed than :data:`PLAN_SEEDS` is refused).
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise CourseInputError(f"{folder}: not a folder of study results")
    paths = results_paths(folder, recursive=True)
    if not paths:
        raise CourseInputError(f"{folder}: a folder without results files (*.json)")
    runs: dict[tuple[float, str, int], StudyRun] = {}
    subsets: dict[tuple[float, int], tuple[str | None, Path]] = {}
    made: dict[float, tuple[tuple, Path]] = {}
    first: tuple[Path, ExperimentResult] | None = None
    for path in paths:
        result = load_results(path, expected_sha256, first)
        first = first or (path, result)
        run = _read_run(path, result)
        if not unplanned:
            _check_planned(path, run)
        key = (run.fraction, run.seed)
        subset = subsets.setdefault(key, (result.data.train_subset_sha256, path))
        if subset[0] != result.data.train_subset_sha256:
            raise CourseInputError(f"{path}: data.train_subset_sha256 differs from {subset[1]}'s for fraction "
                                   f"{run.fraction:g}, seed {run.seed}")
        where = made.setdefault(run.fraction, (_where_made(result), path))
        if where[0] != _where_made(result):
            raise CourseInputError(f"{path}: provenance (code_commit, device, device_name) {_where_made(result)} differs "
                                   f"from {where[1]}'s {where[0]} inside one fraction")
        if (run.fraction, run.arm, run.seed) in runs:
            raise CourseInputError(f"{path}: fraction {run.fraction:g} / {run.arm} / seed {run.seed} is also in "
                                   f"{runs[run.fraction, run.arm, run.seed].source}")
        runs[run.fraction, run.arm, run.seed] = run
    if SMALL in made and LARGE in made and made[SMALL][0] != made[LARGE][0]:
        raise CourseInputError(f"{made[LARGE][1]}: provenance (code_commit, device, device_name) differs from "
                               f"{made[SMALL][1]}'s: the 1 % and 10 % runs meet in one contrast")
    unfinished = {} if partial else _set_aside_unfinished(runs)
    complete: dict[float, list[int]] = {}
    for fraction in sorted({f for f, _, _ in runs}):
        seeds = sorted({s for f, a, s in runs if f == fraction and a in CURVE_ARMS})
        for seed in seeds:
            missing = [a for a in CURVE_ARMS if (fraction, a, seed) not in runs]
            if missing and not partial:
                raise CourseInputError(f"{folder}: fraction {fraction:g}, seed {seed} has no run of {', '.join(missing)} "
                                       "(use --partial to read only complete seeds)")
        kept = [s for s in seeds if all((fraction, a, s) in runs for a in CURVE_ARMS)]
        if kept:
            complete[fraction] = kept
    if not complete:
        raise CourseInputError(f"{folder}: no seed has all of {', '.join(CURVE_ARMS)}")
    if not partial:
        for fraction in PRIMARY_FRACTIONS:
            if complete.get(fraction, []) != PLAN_SEEDS[fraction]:
                raise CourseInputError(f"{folder}: fraction {fraction:g} has seeds {complete.get(fraction, [])}, the plan's "
                                       f"are {PLAN_SEEDS[fraction][0]}–{PLAN_SEEDS[fraction][-1]} "
                                       "(use --partial to read only complete seeds)")
    assert first is not None  # paths is not empty
    return Study(list(runs.values()), complete, partial, len(first[1].test_labels), unfinished)


def _set_aside_unfinished(runs: dict[tuple[float, str, int], StudyRun]) -> dict[float, tuple[int, int]]:
    """Remove from ``runs`` every run of a fraction the plan adds after the curve (30 %, the full
    split) until all of its planned curve runs are written; return ``{fraction: (written, planned)}``.
    Like the controls, such a fraction is read once, complete: a seed or an arm alone is not read."""
    out = {}
    for fraction in sorted({f for f, _, _ in runs} - set(PRIMARY_FRACTIONS)):
        if fraction not in PLAN_SEEDS:
            continue
        planned = {(fraction, arm, seed) for arm in CURVE_ARMS for seed in PLAN_SEEDS[fraction]}
        written = len(planned & runs.keys())
        if written < len(planned):
            out[fraction] = (written, len(planned))
            for key in [k for k in runs if k[0] == fraction]:
                del runs[key]
    return out


# --- printing


def _partial_note(study: Study) -> list[str]:
    if not study.partial:
        return []
    counts = ", ".join(f"{_fraction_name(f)}: seeds {', '.join(map(str, s))}" for f, s in study.complete_seeds.items())
    return [f"partial: only complete seeds read ({counts}); not the plan's analysis"]


def _p(value: float) -> str:
    return "—" if value != value else format_p(value)


def _interval(c: StudyContrast) -> str:
    if c.low != c.low:
        return f"{c.mean:+.4f} [—]"
    return f"{c.mean:+.4f} [{c.low:+.4f}, {c.high:+.4f}]"


def format_curve(study: Study) -> str:
    """Accuracy per fraction and arm (mean over complete seeds), none's dev beside the Jaccard rule's."""
    lines = _partial_note(study)
    lines.append(f"{'fraction':>8} {'seeds':>5} {'arm':<10} {'dev':>7} {'test':>7}")
    for f in study.fractions():
        seeds = study.complete_seeds[f]
        for arm in CURVE_ARMS:
            runs = [study.run(f, arm, s) for s in seeds]
            dev = statistics.fmean(r.dev_correct / len(r.dev_labels) for r in runs)
            test = statistics.fmean(r.test_correct_count / study.n_test for r in runs)
            note = f"  (Jaccard rule: {JACCARD_DEV})" if arm == BASELINE else ""
            lines.append(f"{_fraction_name(f):>8} {len(seeds):>5} {arm:<10} {dev:7.4f} {test:7.4f}{note}")
    lines += [_unfinished_line(study, f) for f in study.unfinished if f != FULL]
    return "\n".join(lines)


def _unfinished_line(study: Study, fraction: float) -> str:
    written, planned = study.unfinished[fraction]
    seeds = PLAN_SEEDS[fraction]
    name = "the full split" if fraction == FULL else _fraction_name(fraction)
    which = f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {seeds[0]}–{seeds[-1]}"
    return f"{name}: {written} of {planned} runs written ({which}); nothing is read before all are"


def format_a48(study: Study, per_seed: bool = True) -> str:
    """The primary family: per contrast the number of seeds, mean [95 % t-interval], the test, p, Holm
    p and the verdict, then (``per_seed``) each seed's test pairs won and their SD; below it, once
    30 % is read, its two contrasts with the same columns and no Holm (descriptive); then A48."""
    contrasts = study.primary()
    beyond = [c for c in study.beyond_curve() if c.fraction != FULL]  # the full split's one seed is A43's
    rows = [(c, c.verdict()) for c in contrasts] + [(c, "descriptive (not in the family)") for c in beyond]
    lines = _partial_note(study)
    width = max(len(c.name) for c, _ in rows)
    lines.append(f"{'contrast':<{width}} {'seeds':>7}  {'mean [95 % t-interval]':<28} {'test':<9} {'p':>7} {'Holm p':>7}  "
                 f"verdict" + ("   per-seed test pairs won (seed SD)" if per_seed else ""))
    for c, verdict in rows:
        test = "paired t" if c.fraction is not None else f"Welch {c.df}"
        n = f"{len(c.wins)}" if c.fraction is not None else f"{len(c.wins)}+{len(c.wins_other)}"
        line = (f"{c.name:<{width}} {n:>7}  {_interval(c):<28} {test:<9} {_p(c.p_value):>7} {_p(c.holm_p):>7}  "
                f"{verdict}")
        if per_seed:
            wins = " ".join(f"{w:+d}" for w in c.wins) + ("  vs  " + " ".join(f"{w:+d}" for w in c.wins_other)
                                                           if c.fraction is None else "")
            spread = [w / study.n_test for w in c.wins]
            sd = f"  (SD {statistics.stdev(spread):.4f})" if c.fraction is not None and len(spread) > 1 else ""
            line += f"   {wins}{sd}"
        lines.append(line)
    lines.append(f"Holm over the {sum(c.p_value == c.p_value for c in contrasts)} testable contrasts; "
                 f"significant when Holm p ≤ {ALPHA}; intervals unadjusted.")
    lines.append(f"A48 (learned): {a48_verdict(contrasts, 'learned')}; hard_mask beside it: "
                 f"{a48_verdict(contrasts, 'hard_mask')}")
    lines.append(f"(the plan's power figures assumed a seed SD of {PLAN_SD}; the power table reads them at the spread "
                 "measured)")
    return "\n".join(lines)


def format_power(study: Study) -> str:
    """The plan's power, at the spread the seeds showed: per primary contrast the SD of its per-seed
    differences and the true mean it would detect with 80 % power at α and at Holm's strictest
    level α / k (k: the testable contrasts), beside the mean it measured."""
    contrasts = [c for c in study.primary() if c.p_value == c.p_value]
    lines = _partial_note(study)
    if not contrasts:  # one complete seed per fraction (--partial): no spread, so no power to read
        lines.append("power: no primary contrast has two complete seeds yet, so there is no spread to read the "
                     "plan's power at")
        return "\n".join(lines)
    strictest = ALPHA / len(contrasts)
    width = max(len(c.name) for c in contrasts)
    lines.append(f"{'':<{width}} {'':>7} {'':>7}  {'detected 4 in 5 at':>18}")
    lines.append(f"{'contrast':<{width}} {'seed SD':>7} {'SE':>7}  {f'α {ALPHA}':>8} {f'α {strictest:.4f}':>9}  "
                 f"{'|mean|':>7}")
    for c in contrasts:
        se = c.standard_error
        sd = statistics.stdev([w / study.n_test for w in c.wins]) if c.fraction is not None else math.nan
        sd_text = f"{sd:7.4f}" if sd == sd else f"{'—':>7}"
        lines.append(f"{c.name:<{width}} {sd_text} {se:7.4f}  {detectable_mean(se, c.df, ALPHA):>8.4f} "
                     f"{detectable_mean(se, c.df, strictest):>9.4f}  {abs(c.mean):7.4f}")
    lines.append(f"(the true mean gain a two-sided t-test calls significant with 80 % power, at α and at Holm's "
                 f"strictest level α / {len(contrasts)}; the plan assumed a seed SD of {PLAN_SD})")
    return "\n".join(lines)


SECONDARY_KEYS = ("test_accuracy", "auc", "tuned_accuracy", "dev_ones", "test_ones")
SECONDARY_HEADER = f"{'test acc':>8} {'AUC':>7} {'tuned acc':>9} {'dev 1s':>6} {'test 1s':>7}"


def _secondary_cells(values: Mapping[str, float], signed: bool = False) -> str:
    # round before formatting so that a tiny negative mean prints +0.000, not -0.000
    fmt = (lambda v, w, d: f"{round(v, d) + 0.0:+{w}.{d}f}") if signed else (lambda v, w, d: f"{v:{w}.{d}f}")
    return " ".join(fmt(values[k], w, d) for k, w, d in zip(SECONDARY_KEYS, (8, 7, 9, 6, 7), (4, 4, 4, 3, 3)))


def format_runs(study: Study) -> str:
    """Per run (curve and controls): test accuracy, AUC, the dev-tuned threshold and its test accuracy, label-1 shares."""
    lines = _partial_note(study)
    lines.append(f"{'fraction':>8} {'arm':<34} {'seed':>5} {'tuned t':>7} {SECONDARY_HEADER}")
    for row in study.secondary_runs():
        lines.append(f"{_fraction_name(row['fraction']):>8} {row['arm']:<34} {row['seed']:>5} {row['threshold']:7.4f} "
                     f"{_secondary_cells(row)}")
    return "\n".join(lines)


def format_discrimination(study: Study) -> str:
    """Per fraction and arm, means over seeds of plain accuracy, AUC, accuracy at the dev-tuned
    threshold and the label-1 shares; under each arm but none, its mean difference from none on
    the same seeds (a threshold shift moves the shares and plain accuracy, discrimination moves AUC)."""
    rows = {(r["fraction"], r["arm"], r["seed"]): r for r in study.secondary_runs()}
    lines = _partial_note(study)
    lines.append(f"{'fraction':>8} {'arm':<34} {'seeds':>5} {SECONDARY_HEADER}")
    for f in study.fractions():
        for arm in study.arms_at(f):
            seeds = study.paired(f, arm, BASELINE)[0]
            mean = {k: statistics.fmean(rows[f, arm, s][k] for s in seeds) for k in SECONDARY_KEYS}
            lines.append(f"{_fraction_name(f):>8} {arm:<34} {len(seeds):>5} {_secondary_cells(mean)}")
            if arm != BASELINE:
                gain = {k: statistics.fmean(rows[f, arm, s][k] - rows[f, BASELINE, s][k] for s in seeds)
                        for k in SECONDARY_KEYS}
                lines.append(f"{'':>8} {'  − none':<34} {'':>5} {_secondary_cells(gain, signed=True)}")
    return "\n".join(lines)


def format_exact_and_bootstrap(study: Study) -> str:
    """Per primary contrast, and per arm at 30 % and the full split (outside the family): the t-test's
    p beside the exact permutation p, and the bootstrap over test pairs with the seeds held fixed."""
    contrasts = [*study.primary(), *study.beyond_curve()]
    width = max(len(c.name) for c in contrasts)
    lines = _partial_note(study)
    lines.append(f"{'contrast':<{width}} {'t p':>7} {'exact p':>7}  bootstrap over test pairs ({BOOTSTRAP_LABEL})")
    for c in contrasts:
        boot = study.bootstrap(c)
        interval = "—" if boot is None else f"{boot[0]:+.4f} [{boot[1]:+.4f}, {boot[2]:+.4f}]"
        disagree = ""
        if c.p_value == c.p_value and c.exact_p == c.exact_p and significant(c.p_value, ALPHA) != significant(c.exact_p, ALPHA):
            disagree = "  (t and exact disagree at 0.05)"
        outside = "" if c.fraction in PRIMARY_FRACTIONS or c.fraction is None else "  (not in the family)"
        lines.append(f"{c.name:<{width}} {_p(c.p_value):>7} {_p(c.exact_p):>7}  {interval}{disagree}{outside}")
    return "\n".join(lines)


def format_movement(study: Study) -> str:
    """Per fraction, the median over seeds of the learned table's largest |entry| at the chosen epoch."""
    lines = _partial_note(study)
    lines.append("learned table, median largest |entry| at the chosen epoch:")
    for f, median in study.movement().items():
        lines.append(f"  {_fraction_name(f):>6}: {median:.4f}" + ("  barely moved" if median < BARELY_MOVED else ""))
    return "\n".join(lines)


def format_secondary(study: Study) -> str:
    """Descriptive, all of it: :func:`format_runs`, :func:`format_discrimination`,
    :func:`format_exact_and_bootstrap` and :func:`format_movement`, the partial note once."""
    parts = [f(study) for f in (format_runs, format_discrimination, format_exact_and_bootstrap, format_movement)]
    if study.partial:  # each part opens with the same one-line note: keep the first
        parts = [parts[0], *(part.split("\n", 1)[1] for part in parts[1:])]
    return "\n\n".join(parts)


def format_controls(study: Study) -> str:
    """The family of 3 at the control target, each control − none, and the word boundaries kept;
    until every control run at the target is written (unless ``partial``), only how many are."""
    (arm, fraction), family, descriptive = study.controls()
    lines = _partial_note(study)
    gain = study.dev_gain(fraction, arm)
    lines.append(f"control target: {arm} at {_fraction_name(fraction)} (largest mean dev gain over none: "
                 + ("no complete seed" if gain is None else f"{float(gain):+.2f} dev pairs") + ")")
    written, planned = study.control_progress()
    if written < planned and not study.partial:  # the plan tests the controls once, when all are written
        lines.append(f"  controls: {written} of {planned} runs written; nothing is tested before all are "
                     "(--partial reads the seeds that have them)")
        return "\n".join(lines)
    if not family:
        lines.append("  no control runs at the target yet")
    width = max([len(c.name) for c in [*family, *descriptive]] or [0])
    for c in family:
        lines.append(f"  {c.name:<{width}} {_interval(c):<28} p {_p(c.p_value):>7} Holm {_p(c.holm_p):>7}  {c.verdict()}")
    if family:
        lines.append(f"  Holm over the {len(family)} control contrasts read")
    for c in descriptive:
        lines.append(f"  {c.name:<{width}} {_interval(c):<28} (descriptive)")
    kept = study.word_boundaries_kept(fraction)
    if kept:
        lines.append(f"  word boundaries kept by the scrambled segmentation: {min(kept):.3f} … {max(kept):.3f}")
    return "\n".join(lines)


def format_a43(study: Study) -> str:
    """A43, described: per biased arm, the full split's dev and test difference from none (seed 0)
    with its exact McNemar counts on test, beside the 10 % seeds' mean test difference, its
    seed-level interval and the range of their dev and test differences. One seed describes
    whether the 10 % reading carries to the full split; it cannot decide it."""
    lines = _partial_note(study)
    seeds = study.complete_seeds.get(FULL, [])
    if FULL in study.unfinished:
        lines.append(f"A43, {_unfinished_line(study, FULL)}")
        return "\n".join(lines)
    if not seeds:
        lines.append("A43: no full-split runs (none, learned and hard_mask on the whole training split) in this folder")
        return "\n".join(lines)
    seed = seeds[0]
    for arm in BIASED_ARMS:
        a, b = study.run(FULL, arm, seed), study.run(FULL, BASELINE, seed)
        dev, test = a.dev_correct - b.dev_correct, a.test_correct_count - b.test_correct_count
        mcnemar = mcnemar_exact(a.test_predictions, b.test_predictions, a.test_labels)
        lines.append(f"{arm} − none, full split, seed {seed}: dev {dev / len(a.dev_labels):+.4f} ({dev:+d} pairs), "
                     f"test {test / study.n_test:+.4f} ({test:+d} pairs); McNemar on test: {mcnemar.only_a} vs "
                     f"{mcnemar.only_b}, exact p {format_p(mcnemar.p_value)}")
        if study.complete_seeds.get(LARGE):
            ten = study.contrast(LARGE, arm, BASELINE)
            devs = [study.run(LARGE, arm, s).dev_correct - study.run(LARGE, BASELINE, s).dev_correct for s in ten.seeds]
            n_dev = len(a.dev_labels)
            inside = min(ten.wins) <= test <= max(ten.wins)
            lines.append(f"  10 % seeds (n={len(ten.wins)}): test {_interval(ten)}, range {min(ten.wins) / study.n_test:+.4f}"
                         f" … {max(ten.wins) / study.n_test:+.4f}; dev range {min(devs) / n_dev:+.4f} … "
                         f"{max(devs) / n_dev:+.4f}; the full split's test difference is "
                         f"{'inside' if inside else 'outside'} the 10 % seeds' range")
    return "\n".join(lines)
