"""The data-size study on LCQMC, analysed as its plan (results/lcqmc/PLAN.md) fixes it.

:class:`Study` holds the runs :func:`~lessons_lib.ablation.study_files.load_study` read (one
variant and one seed per file, the training subset drawn with that seed, the epoch chosen on dev)
and gives:

- :meth:`Study.primary`: the family of 8 contrasts (learned − none and hard_mask − none at
  1 %, 3 %, 10 %; per arm the difference of differences 1 % vs 10 %), per-seed differences in
  whole test pairs, the seed-level 95 % t-interval, the paired t (within a fraction) or Welch t
  (across), Holm's correction over the 8, signs taken from integers;
- :func:`a48_verdict`: support / against / partly / inconclusive, by the plan's rules;
- :meth:`Study.secondary_runs`: per run AUC, accuracy at the dev-tuned threshold and the share of
  label-1 calls; the exact permutation p of each primary test; the test-pair bootstrap
  ("these trained models, on other pairs like these"); the learned table's movement;
- :func:`control_target` and :meth:`Study.controls`: the family of 3 control contrasts.

Accuracies are counted in whole pairs (``correct``) so that every sign is an integer's. Runs are
keyed by their training fraction as the exact decimal their file gives
(:func:`~lessons_lib.validation.exact`: ``0.1`` is 1/10), their
:class:`~lessons_lib.ablation.arms.Arm` and their seed; a method that takes a fraction or an arm
also takes a float or the arm's label. The tables are printed by :mod:`lessons_lib.ablation.study_report`.
"""

from __future__ import annotations

import statistics
import dataclasses
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Sequence

import numpy as np

from lessons_lib.errors import CourseInputError
from lessons_lib.evaluation.pair_tests import pooled_interval
from lessons_lib.evaluation.probabilities import accuracy_at_threshold, dev_tuned_threshold, label_one_share, rank_auc
from lessons_lib.evaluation.seed_tests import (SeedTest, holm_family, paired_seed_test, scarcity_verdict,
                                               two_sample_seed_test)
from lessons_lib.ablation.arms import Arm
from lessons_lib.validation import exact
from lessons_lib.syntax_bias.registry import BASELINE

__all__ = ["NONE", "LEARNED", "HARD_MASK", "CURVE_ARMS", "BIASED_ARMS", "PRIMARY_FRACTIONS", "PLAN_SEEDS", "FULL",
           "ALPHA", "BARELY_MOVED", "StudyRun", "StudyContrast", "Study", "fraction_name", "control_target",
           "a48_verdict"]

NONE, LEARNED, HARD_MASK = Arm(BASELINE), Arm("learned"), Arm("hard_mask")
CURVE_ARMS = (NONE, LEARNED, HARD_MASK)
BIASED_ARMS = (LEARNED, HARD_MASK)
PRIMARY_FRACTIONS = (Fraction("0.01"), Fraction("0.03"), Fraction("0.1"))
# The plan's seeds per fraction (disjoint, so the fractions are independent samples).
PLAN_SEEDS = {Fraction("0.01"): list(range(100, 110)), Fraction("0.03"): list(range(300, 310)),
              Fraction("0.1"): list(range(1000, 1005)), Fraction("0.3"): list(range(3000, 3003)), Fraction(1): [0]}
FULL = Fraction(1)  # A43: the whole training split, one seed, read beside the 10 % seeds
SMALL, LARGE = Fraction("0.01"), Fraction("0.1")  # the difference of differences: (arm − none at SMALL) − (arm − none at LARGE)
ALPHA = 0.05
BARELY_MOVED = 0.1  # a learned table whose median largest |entry| stays below this "barely moved"
# The control that asks "is it the tree, or only nearness?" for each arm.
NEARNESS_CONTROL = {"hard_mask": "window_mask", "learned": "relative_position"}


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

    fraction: Fraction
    arm: Arm
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
    """One contrast of the study, read with the seeds as the sample.

    Attributes:
        name, arm: what it compares (``arm`` against none, or against a control).
        fraction: the training fraction; ``None`` for a difference of differences.
        seeds: the seeds read (for a difference of differences, those of both fractions).
        wins: per seed, correct test pairs of a minus those of b (within a fraction); for a
            difference of differences, ``wins`` at the small fraction and ``wins_other`` at the large one.
        test: the :class:`~lessons_lib.evaluation.seed_tests.SeedTest` — the mean difference in
            accuracy and its 95 % t-interval (unadjusted), its standard error, the t-test's degrees of
            freedom (paired: seeds − 1; Welch: rounded down) and two-sided p, the exact permutation p
            (sign flips, or relabelling the seeds), the sign from the integer sums, and Holm's p in
            its family (``nan``: not testable). Its fields read as the contrast's own (``c.mean``, ``c.holm_p``…).
    """

    name: str
    arm: Arm
    fraction: Fraction | None  # None for the difference of differences
    seeds: list[int]
    wins: list[int]
    wins_other: list[int]
    test: SeedTest

    @property
    def mean(self) -> float:
        return self.test.mean

    @property
    def standard_error(self) -> float:
        return self.test.standard_error

    @property
    def low(self) -> float:
        return self.test.low

    @property
    def high(self) -> float:
        return self.test.high

    @property
    def df(self) -> int:
        return self.test.df

    @property
    def p_value(self) -> float:
        return self.test.p_value

    @property
    def sign(self) -> int:
        return self.test.sign

    @property
    def exact_p(self) -> float:
        return self.test.exact_p

    @property
    def holm_p(self) -> float:
        return self.test.holm_p

    @property
    def significant(self) -> bool:
        return self.test.significant(ALPHA)

    def verdict(self) -> str:
        if self.holm_p != self.holm_p:  # untestable, or read outside a Holm family
            return "not testable"
        if not self.significant:
            return "not significant"
        return "positive, significant" if self.sign > 0 else "negative, significant"


def fraction_name(fraction: Fraction | float) -> str:
    """``1 %``, ``10 %``, ``100 %``: a training fraction as the tables print it."""
    return f"{float(fraction) * 100:g} %"


def _within(name: str, arm: Arm, fraction: Fraction, seeds: list[int], wins: list[int], n_test: int) -> StudyContrast:
    test = paired_seed_test([w / n_test for w in wins], wins, exact=True)
    return StudyContrast(name, arm, fraction, seeds, wins, [], test)


def _across(name: str, arm: Arm, small: StudyContrast, large: StudyContrast, n_test: int) -> StudyContrast:
    return StudyContrast(name, arm, None, small.seeds + large.seeds, small.wins, large.wins,
                         two_sample_seed_test(small.wins, large.wins, n_test))


def _with_holm(contrasts: list[StudyContrast]) -> list[StudyContrast]:
    tests = holm_family([c.test for c in contrasts])
    return [dataclasses.replace(c, test=test) for c, test in zip(contrasts, tests)]


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
    complete_seeds: dict[Fraction, list[int]]
    partial: bool
    n_test: int
    unfinished: dict[Fraction, tuple[int, int]] = field(default_factory=dict)

    def arm(self, arm: Arm | str) -> Arm:
        """``arm``, or the study's arm whose label is ``arm`` (``"learned · random trees"``, as the
        tables print it); a label of no run gives an arm of no run."""
        if isinstance(arm, Arm):
            return arm
        return next((r.arm for r in self.runs if r.arm.label == arm), Arm(arm))

    def has_run(self, fraction: Fraction | float, arm: Arm | str, seed: int) -> bool:
        return (exact(fraction), self.arm(arm), seed) in self._index

    def run(self, fraction: Fraction | float, arm: Arm | str, seed: int) -> StudyRun:
        """The run of ``arm`` and ``seed`` at ``fraction`` (callers ask only for runs the study holds)."""
        try:
            return self._index[(exact(fraction), self.arm(arm), seed)]
        except KeyError:
            raise CourseInputError(f"the study holds no run of {arm} with seed {seed} at "
                                   f"{float(fraction):.0%}") from None

    def __post_init__(self) -> None:
        self._index = {(r.fraction, r.arm, r.seed): r for r in self.runs}

    def fractions(self) -> list[Fraction]:
        return sorted(self.complete_seeds)

    def arms(self) -> list[Arm]:
        return list(dict.fromkeys(r.arm for r in self.runs))

    def paired(self, fraction: Fraction | float, a: Arm | str, b: Arm | str) -> tuple[list[int], list[int]]:
        """``(seeds, wins)``: the complete seeds of ``fraction`` where both arms ran, and per seed a's
        correct test pairs minus b's."""
        fraction, a, b = exact(fraction), self.arm(a), self.arm(b)
        seeds = [s for s in self.complete_seeds.get(fraction, []) if self.has_run(fraction, a, s) and self.has_run(fraction, b, s)]
        return seeds, [self.run(fraction, a, s).test_correct_count - self.run(fraction, b, s).test_correct_count
                       for s in seeds]

    def contrast(self, fraction: Fraction | float, a: Arm | str, b: Arm | str) -> StudyContrast:
        fraction, a, b = exact(fraction), self.arm(a), self.arm(b)
        seeds, wins = self.paired(fraction, a, b)
        if not seeds:
            raise CourseInputError(f"{fraction_name(fraction)}: arms {a.label!r} and {b.label!r} share no complete seed")
        return _within(f"{a} − {b} at {fraction_name(fraction)}", a, fraction, seeds, wins, self.n_test)

    def primary(self) -> list[StudyContrast]:
        """The family of the plan's 8 contrasts (those the files allow, with ``partial``), Holm over them."""
        out: list[StudyContrast] = []
        for arm in BIASED_ARMS:
            within = {f: self.contrast(f, arm, NONE) for f in PRIMARY_FRACTIONS if self.complete_seeds.get(f)}
            out += within.values()
            if SMALL in within and LARGE in within:
                out.append(_across(f"({arm} − none at 1 %) − ({arm} − none at 10 %)", arm, within[SMALL],
                                   within[LARGE], self.n_test))
        return _with_holm(out)

    def beyond_curve(self) -> list[StudyContrast]:
        """Each biased arm − none at the complete fractions the plan adds after the curve (30 %, the
        full split): descriptive, outside the primary family, so without Holm."""
        return [self.contrast(f, arm, NONE) for f in self.fractions() if f not in PRIMARY_FRACTIONS
                for arm in BIASED_ARMS]

    def movement_by_epoch(self) -> dict[Fraction, tuple[int | None, list[float]]]:
        """Per fraction, ``(steps per epoch, medians)``: after every epoch, the median over complete
        seeds of the learned table's largest |entry|."""
        out = {}
        for f in self.fractions():
            runs = [self.run(f, LEARNED, s) for s in self.complete_seeds[f]]
            epochs = min(len(r.bias_by_epoch) for r in runs)
            out[f] = (runs[0].steps_per_epoch,
                      [statistics.median(r.bias_by_epoch[e] for r in runs) for e in range(epochs)])
        return out

    def movement(self) -> dict[Fraction, float]:
        """Per fraction, the median over complete seeds of the learned table's largest |entry| at the chosen epoch."""
        out = {}
        for f in self.fractions():
            values = [self.run(f, LEARNED, s).bias_max_abs for s in self.complete_seeds[f]]
            measured = [v for v in values if v is not None]
            if len(measured) < len(values):
                raise CourseInputError(f"{fraction_name(f)}: a learned run without its table's movement")
            out[f] = statistics.median(measured)
        return out

    def arms_at(self, fraction: Fraction | float) -> list[Arm]:
        """The curve's arms, then every control arm that ran on a complete seed of ``fraction``."""
        controls = [a for a in self.arms() if a not in CURVE_ARMS and self.paired(fraction, a, NONE)[0]]
        return [*CURVE_ARMS, *controls]

    def secondary_runs(self) -> list[dict]:
        """Per run of every arm (curve and controls) on a complete seed: test accuracy, AUC, the
        dev-tuned threshold and the accuracy at it, the share of label-1 calls on dev and test."""
        rows = []
        for f in self.fractions():
            for arm in self.arms_at(f):
                for s in self.paired(f, arm, NONE)[0]:
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

        def stack(arm: Arm) -> np.ndarray:
            return np.stack([self.run(fraction, arm, s).test_correct for s in contrast.seeds])
        return pooled_interval(stack(contrast.arm), stack(NONE))

    def dev_gain(self, fraction: Fraction | float, arm: Arm | str) -> Fraction | None:
        """The mean dev gain of ``arm`` over none at ``fraction`` in dev pairs, exactly (``None``: no complete seed)."""
        seeds = self.complete_seeds.get(exact(fraction), [])
        if not seeds:
            return None
        return Fraction(sum(self.run(fraction, arm, s).dev_correct - self.run(fraction, NONE, s).dev_correct
                            for s in seeds), len(seeds))

    def controls(self) -> tuple[tuple[Arm, Fraction], list[StudyContrast], list[StudyContrast]]:
        """``(target, family, descriptive)``: the family of 3 at :func:`control_target` with Holm over
        it, and each control arm − none (descriptive, no correction)."""
        arm, fraction = control_target(self)
        family = []
        random_trees, scrambled, nearness = self._control_arms(arm, fraction)
        for a, b in ((arm, random_trees), (random_trees, scrambled), (arm, nearness)):
            if b is not None and self.paired(fraction, a, b)[0]:
                family.append(self.contrast(fraction, a, b))
        controls = [a for a in self.arms() if a not in CURVE_ARMS and self.paired(fraction, a, NONE)[0]]
        return (arm, fraction), _with_holm(family), [self.contrast(fraction, a, NONE) for a in controls]

    def control_progress(self) -> tuple[int, int]:
        """``(written, planned)``: the runs of the three controls at :func:`control_target` on its
        complete seeds, against three per complete seed."""
        arm, fraction = control_target(self)
        controls = self._control_arms(arm, fraction)
        written = sum(len(self.paired(fraction, control, NONE)[0]) for control in controls if control is not None)
        return written, len(controls) * len(self.complete_seeds[fraction])

    def _control_arms(self, arm: Arm, fraction: Fraction) -> tuple[Arm, Arm, Arm | None]:
        """The plan's three controls of ``arm``: on random trees, on scrambled words, and the nearness
        control that ran at ``fraction`` (``None`` when none did)."""
        return (Arm(arm.variant, parser_noise=Fraction(1)), Arm(arm.variant, scrambled_words=True),
                self._nearness_arm(arm, fraction))

    def _nearness_arm(self, arm: Arm, fraction: Fraction) -> Arm | None:
        arms = [a for a in self.arms() if a.variant == NEARNESS_CONTROL[arm.variant] and self.paired(fraction, a, NONE)[0]]
        return arms[0] if arms else None

    def word_boundaries_kept(self, fraction: Fraction | float) -> list[float]:
        return [r.word_boundaries_kept for r in self.runs
                if r.fraction == exact(fraction) and r.word_boundaries_kept is not None]


def control_target(study: Study) -> tuple[Arm, Fraction]:
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


def a48_verdict(contrasts: Sequence[StudyContrast], arm: Arm | str = LEARNED) -> str:
    """The plan's reading of A48 for ``arm`` (an arm, or a variant's name for its plain arm):
    ``support``, ``against``, ``partly`` or ``inconclusive`` (:func:`~lessons_lib.evaluation.seed_tests.scarcity_verdict`
    of its gain at 1 % and its difference of differences)."""
    arm = arm if isinstance(arm, Arm) else Arm(arm)
    gain = next((c.test for c in contrasts if c.arm == arm and c.fraction == SMALL), None)
    dod = next((c.test for c in contrasts if c.arm == arm and c.fraction is None), None)
    return scarcity_verdict(gain, dod, ALPHA)
