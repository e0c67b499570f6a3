"""Several experiment files read together: the real-data grid and the contrasts that decide it.

One ``lessons experiment`` file holds the runs of one recipe on one kind of tree (the
parser's, or random ones with ``--parser-noise 1.0``). :func:`load_grid` reads several,
checks that they were made on the same pairs (and, when asked, on the real LCQMC, by the
SHA-256 of its splits) and keys each run by its **arm** (:class:`~lessons_lib.ablation.arms.Arm`):
its variant, its trees and any variant option set away from its default. :meth:`Grid.format` prints, per recipe:

- per arm, dev and test accuracy over seeds: mean, range and number of seeds (no
  t-interval: see :mod:`lessons_lib.ablation.results`);
- per arm and seed, the test difference to the baseline of the same seed with the exact
  McNemar counts and p;
- the contrasts of :data:`CONTRASTS`, per seed in the same way, and pooled over seeds: the
  mean difference with a 95 % bootstrap interval over test pairs.

The pooled interval resamples test pairs (each pair's correctness averaged over the seeds),
with the seeds held fixed: it says how far the difference of *these* seeds' models could move
on other pairs like these, and it assumes the test pairs are independent (nearly true of
LCQMC's test split, whose 12,500 pairs share few questions). The range over seeds, printed
beside it, is the other source of doubt; a verdict about these models needs both to agree
(:func:`verdict`).

A claim about the *method* takes the seed as its unit, as every lesson does: each contrast also
gets the paired t-test over its seeds (the per-seed differences counted in whole test pairs, so
their signs are exact), with the seeds' 95 % t-interval, and Holm's correction over the family of
every contrast one grid prints (:func:`seed_level_verdicts`). With 3 seeds a small gain on every
seed is not yet such a claim.

Both kinds of test live in :mod:`lessons_lib.evaluation`: the per-pair ones (McNemar, the bootstrap:
:mod:`~lessons_lib.evaluation.pair_tests`, named here too) and the seed-level record and Holm family
(:mod:`~lessons_lib.evaluation.seed_tests`) the data-size study and the translation readings share.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from lessons_lib.errors import CourseInputError
from lessons_lib.evaluation.pair_tests import NO_DIFFERENCE, better, bootstrap_sums, mcnemar_p_value, pooled_interval
from lessons_lib.evaluation.seed_tests import SeedTest, holm_family, paired_seed_test
from lessons_lib.ablation.arms import Arm
from lessons_lib.ablation.results import ExperimentResult, Spread, format_p, format_spread, load_results, spread
from lessons_lib.syntax_bias.registry import BASELINE, VARIANTS

__all__ = ["CONTRASTS", "GridRun", "PairedDifference", "Contrast", "Grid", "load_grid",
           "bootstrap_sums", "pooled_interval", "verdict", "SeedLevel", "seed_level_verdicts"]

_RANDOM = Fraction(1)  # parser noise 1: every head reattached at random
# (arm a, arm b, the question a − b answers), printed for every recipe that has both arms.
CONTRASTS = (
    (Arm("learned"), Arm("learned", _RANDOM), "is it the tree?"),
    (Arm("learned"), Arm("relative_position"), "is it the tree, or only nearness?"),
    (Arm("hard_mask"), Arm("hard_mask", _RANDOM), "is it the tree?"),
    (Arm("hard_mask"), Arm("window_mask"), "is it the tree, or only closing far pairs?"),
)
SEED_LEVEL_ALPHA = 0.05


@dataclass(frozen=True)
class GridRun:
    """One trained model of the grid."""

    recipe: str
    arm: Arm
    seed: int
    dev_accuracy: float
    test_accuracy: float
    test_correct: np.ndarray  # (N,) bool, one per test pair
    source: Path


@dataclass(frozen=True)
class PairedDifference:
    """Arm a minus arm b on the test pairs of one seed, with the exact McNemar test."""

    seed: int
    difference: float
    only_a_right: int
    only_b_right: int
    p_value: float


@dataclass(frozen=True)
class Contrast:
    """Arm a minus arm b over the seeds both ran.

    Attributes:
        per_seed: the paired difference of each seed.
        pooled: the mean difference over those seeds, with ``low``/``high`` its 95 % bootstrap
            interval over test pairs (see the module docstring).
        verdict: see :func:`verdict`.
    """

    recipe: str
    a: Arm
    b: Arm
    question: str
    per_seed: list[PairedDifference]
    pooled: float
    low: float
    high: float
    verdict: str

    @property
    def seeds(self) -> Spread:
        return spread([d.difference for d in self.per_seed])


def verdict(per_seed: Sequence[float], low: float, high: float) -> str:
    """``"a better"`` / ``"b better"`` when every seed and the pooled interval agree on the sign;
    :data:`~lessons_lib.evaluation.significance.NO_DIFFERENCE` when the interval holds 0; ``"seeds disagree"`` otherwise."""
    if low <= 0.0 <= high:
        return NO_DIFFERENCE
    if low > 0 and all(d > 0 for d in per_seed):
        return better("a")
    if high < 0 and all(d < 0 for d in per_seed):
        return better("b")
    return "seeds disagree"


@dataclass(frozen=True)
class SeedLevel:
    """A contrast read as a claim about the method: the seeds are the sample.

    Attributes:
        test: its :class:`~lessons_lib.evaluation.seed_tests.SeedTest` — the mean per-seed difference
            and its 95 % Student-t interval (``nan`` ends with one seed), the paired t-test's p over
            the per-seed differences in whole test pairs (``nan`` with one seed), and Holm's p over
            the family it was read in (:attr:`family` contrasts).
        verdict: ``better(a)`` / ``better(b)`` when the test is significant at :data:`SEED_LEVEL_ALPHA`
            (Holm p ≤ α, the course's one rule, :meth:`~lessons_lib.evaluation.seed_tests.SeedTest.significant`),
            the sign taken from the per-seed counts; :data:`NO_DIFFERENCE` otherwise.
    """

    test: SeedTest
    verdict: str

    @property
    def mean(self) -> float:
        return self.test.mean

    @property
    def low(self) -> float:
        return self.test.low

    @property
    def high(self) -> float:
        return self.test.high

    @property
    def p_value(self) -> float:
        return self.test.p_value

    @property
    def holm_p(self) -> float:
        return self.test.holm_p

    @property
    def family(self) -> int:
        return self.test.family


def seed_level_verdicts(contrasts: Sequence["Contrast"]) -> list[SeedLevel]:
    """Each contrast's seed-level test, with Holm's correction over ``contrasts`` as one family."""
    # the t-test on whole test pairs won minus lost (exact signs), the interval on the accuracy differences
    tests = holm_family([paired_seed_test([d.difference for d in c.per_seed],
                                          [d.only_a_right - d.only_b_right for d in c.per_seed]) for c in contrasts])
    return [SeedLevel(test, _seed_level_verdict(test)) for test in tests]


def _seed_level_verdict(test: SeedTest) -> str:
    if not test.significant(SEED_LEVEL_ALPHA):
        return NO_DIFFERENCE
    return better("a") if test.sign > 0 else better("b")


def _check_same_subset(path: Path, result: ExperimentResult, first: tuple[Path, ExperimentResult] | None) -> None:
    """One line naming the file when it trained on another subset than the first file (a grid reads one)."""
    if first is None:
        return
    first_path, first_result = first
    for name in ("train_fraction", "subset_seed"):
        if getattr(result.config, name) != getattr(first_result.config, name):
            raise CourseInputError(f"{path}: {name} {getattr(result.config, name)} differs from "
                                   f"{getattr(first_result.config, name)} in {first_path}")


def load_grid(paths: Sequence[str | Path], expected_sha256: Mapping[str, str] | None = None) -> "Grid":
    """Read experiment files made on the same pairs into one :class:`Grid`.

    Args:
        paths: files written by ``lessons experiment`` (:meth:`ExperimentResult.save`).
        expected_sha256: ``{"train": …, "dev": …, "test": …}`` the pairs must have (e.g.
            :data:`lessons_lib.pairs.data.LCQMC_SHA256`); ``None``: only that all files agree.
    """
    if not paths:
        raise CourseInputError("no results files given")
    runs: list[GridRun] = []
    recipes: dict[str, tuple[Path, dict]] = {}
    first: tuple[Path, ExperimentResult] | None = None
    for path in map(Path, paths):
        result = load_results(path, expected_sha256, first)
        _check_same_subset(path, result, first)
        first = first or (path, result)
        recipe, options = result.config.preset, {"model": result.config.model, "train": result.config.train}
        if recipes.setdefault(recipe, (path, options))[1] != options:
            raise CourseInputError(f"{path}: recipe {recipe!r} with other options than in {recipes[recipe][0]}")
        labels = np.asarray(result.test_labels)
        for run in result.runs:
            arm = Arm.of(result, run.variant)
            if any(r.recipe == recipe and r.arm == arm and r.seed == run.seed for r in runs):
                raise CourseInputError(f"{path}: {recipe} / {arm} / seed {run.seed} is also in an earlier file")
            runs.append(GridRun(recipe, arm, run.seed, run.dev_accuracy, run.test_accuracy,
                                np.asarray(run.test_predictions) == labels, path))
    assert first is not None  # paths is not empty
    return Grid(runs, first[1])


@dataclass
class Grid:
    """The runs of several experiment files (see :func:`load_grid`)."""

    runs: list[GridRun]
    reference: ExperimentResult  # the first file: its data summary describes every file's

    def recipes(self) -> list[str]:
        return list(dict.fromkeys(r.recipe for r in self.runs))

    def arms(self, recipe: str) -> list[Arm]:
        """The recipe's arms in registry order (the baseline first), each variant's plain arm before its others."""
        order = list(VARIANTS)
        arms = dict.fromkeys(r.arm for r in self.runs if r.recipe == recipe)
        return sorted(arms, key=lambda arm: (order.index(arm.variant), arm.label))

    def arm(self, arm: Arm | str) -> Arm:
        """``arm``, or the grid's arm whose label is ``arm`` (``"hard_mask · random trees"``, as the
        tables print it); a label of no run gives an arm of no run."""
        if isinstance(arm, Arm):
            return arm
        return next((r.arm for r in self.runs if r.arm.label == arm), Arm(arm))

    def seeds(self, recipe: str, arm: Arm | str) -> dict[int, GridRun]:
        """The runs of ``arm`` (an arm or its label) in ``recipe``, by seed."""
        arm = self.arm(arm)
        return {r.seed: r for r in sorted(self.runs, key=lambda r: r.seed) if r.recipe == recipe and r.arm == arm}

    def contrast(self, recipe: str, a: Arm | str, b: Arm | str, question: str = "") -> Contrast:
        """Arm ``a`` minus arm ``b`` (arms or their labels) over the seeds both ran."""
        a, b = self.arm(a), self.arm(b)
        runs_a, runs_b = self.seeds(recipe, a), self.seeds(recipe, b)
        common = [s for s in runs_a if s in runs_b]
        if not common:
            raise CourseInputError(f"{recipe}: arms {a.label!r} and {b.label!r} share no seed")
        per_seed = []
        for s in common:
            ra, rb = runs_a[s], runs_b[s]
            only_a = int((ra.test_correct & ~rb.test_correct).sum())
            only_b = int((rb.test_correct & ~ra.test_correct).sum())
            per_seed.append(PairedDifference(s, ra.test_accuracy - rb.test_accuracy, only_a, only_b,
                                             mcnemar_p_value(only_a, only_b)))
        pooled, low, high = pooled_interval(np.stack([runs_a[s].test_correct for s in common]),
                                            np.stack([runs_b[s].test_correct for s in common]))
        return Contrast(recipe, a, b, question, per_seed, pooled, low, high,
                        verdict([d.difference for d in per_seed], low, high))

    def contrasts(self, recipe: str) -> list[Contrast]:
        """Every arm against the baseline, then the contrasts of :data:`CONTRASTS` this recipe has both arms of."""
        arms, baseline = self.arms(recipe), Arm(BASELINE)
        out = [self.contrast(recipe, arm, baseline, "does it beat no bias?") for arm in arms
               if arm != baseline and baseline in arms]
        out += [self.contrast(recipe, a, b, q) for a, b, q in CONTRASTS if a in arms and b in arms]
        return out

    def format(self) -> str:
        """The grid as plain text (see the module docstring)."""
        data = self.reference.data
        lines = [f"data: train {data.train_pairs:,} of {data.train_pairs_available:,} pairs "
                 f"(fraction {self.reference.config.train_fraction:g}, subset seed {self.reference.config.subset_seed}), "
                 f"dev {data.dev_pairs:,}, test {data.test_pairs:,}; test SHA-256 {data.pairs_sha256['test'][:12]}…"]
        by_recipe = {recipe: self.contrasts(recipe) for recipe in self.recipes()}
        family = [c for contrasts in by_recipe.values() for c in contrasts]  # Holm's family: all of them
        seed_level = dict(zip(map(id, family), seed_level_verdicts(family)))
        for recipe in self.recipes():
            lines += ["", *self._format_arms(recipe)]
            for c in by_recipe[recipe]:
                level = seed_level[id(c)]
                lines += ["", f"  {c.a} − {c.b}   ({c.question})"]
                lines += [f"    seed {d.seed}: {d.difference:+.4f}   only a right {d.only_a_right:>4} / only b right "
                          f"{d.only_b_right:>4}   exact McNemar p = {format_p(d.p_value)}" for d in c.per_seed]
                lines.append(f"    pooled over {len(c.per_seed)} seeds: {c.pooled:+.4f}, 95 % bootstrap over test pairs "
                             f"[{c.low:+.4f}, {c.high:+.4f}]; seeds {c.seeds.min:+.4f} … {c.seeds.max:+.4f} → {c.verdict}")
                lines.append(self._format_seed_level(level, len(c.per_seed)))
        return "\n".join(lines)

    def format_table(self) -> str:
        """The grid as small tables per recipe: dev and test accuracy per arm; per contrast, "these models"
        (its per-seed differences in whole test pairs and the bootstrap over test pairs) and "the
        method" (the seed-level t-test), Holm's family being every contrast of every recipe."""
        by_recipe = {recipe: self.contrasts(recipe) for recipe in self.recipes()}
        family = [c for contrasts in by_recipe.values() for c in contrasts]
        seed_level = dict(zip(map(id, family), seed_level_verdicts(family)))
        lines = self.format().splitlines()[:1]
        for recipe, contrasts in by_recipe.items():
            lines += ["", *self._format_arms(recipe)]
            label = max(len(f"{c.a} − {c.b}") for c in contrasts)
            lines += ["", f"  {'these models':<{label}}  {'pairs won − lost':<25}mean [95 % bootstrap over test pairs]"]
            for c in contrasts:
                wins = " ".join(f"{d.only_a_right - d.only_b_right:+d}" for d in c.per_seed)
                lines.append(f"  {f'{c.a} − {c.b}':<{label}}  {wins:<24} {c.pooled:+.4f} [{c.low:+.4f}, {c.high:+.4f}]  "
                             f"{c.verdict}")
            lines += ["", f"  {'the method':<{label}}  {'seeds, mean [95 % t-interval]':<32}{'t p':>5} {'Holm':>5}"]
            for c in contrasts:
                level = seed_level[id(c)]
                if len(c.per_seed) < 2:
                    lines.append(f"  {f'{c.a} − {c.b}':<{label}}  one seed, no test")
                    continue
                lines.append(f"  {f'{c.a} − {c.b}':<{label}}  n={len(c.per_seed)} {level.mean:+.4f} [{level.low:+.4f}, "
                             f"{level.high:+.4f}]  {format_p(level.p_value):>5} {format_p(level.holm_p):>5}  {level.verdict}")
        tested = max((level.family for level in seed_level.values()), default=0)
        lines += ["", f"Holm's family: the {tested} contrasts above with more than one seed. 'these models' says a/b "
                      f"better when every seed and the bootstrap agree; 'the method' when Holm p ≤ {SEED_LEVEL_ALPHA}."]
        return "\n".join(lines)

    def _format_arms(self, recipe: str) -> list[str]:
        """Per arm of the recipe, dev and test accuracy over its seeds."""
        width = max(26, *(len(arm.label) for arm in self.arms(recipe)))
        lines = [f"recipe {recipe}: accuracy over seeds, mean [min, max] n", f"  {'arm':<{width}} {'dev':>30} {'test':>30}"]
        for arm in self.arms(recipe):
            runs = list(self.seeds(recipe, arm).values())
            lines.append(f"  {arm:<{width}} {format_spread(spread([r.dev_accuracy for r in runs])):>30} "
                         f"{format_spread(spread([r.test_accuracy for r in runs])):>30}")
        return lines

    @staticmethod
    def _format_seed_level(level: SeedLevel, seeds: int) -> str:
        if seeds < 2:
            return "    the method (seeds as the sample): one seed, no test"
        return (f"    the method (seeds as the sample): {level.mean:+.4f}, 95 % t-interval over {seeds} seeds "
                f"[{level.low:+.4f}, {level.high:+.4f}], paired t p = {format_p(level.p_value)}, "
                f"Holm over {level.family} contrasts p = {format_p(level.holm_p)} → {level.verdict}")
