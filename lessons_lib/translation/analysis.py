"""Reading translation results by seed: the seed is the unit of a claim about a method.

- :func:`load_runs` — every results file of some folders, checked, keyed by arm and seed (made of
  :func:`read_results`, :func:`check_one_setup` and :func:`runs_by_arm`).
- :func:`arm_scores` — one arm's BLEU per seed on a group of test sentences.
- :func:`seed_contrasts` — each arm against a baseline arm on a group: the per-seed differences
  (same seed, same training subset), their mean, 95 % t interval, paired-t p and Holm p over the
  family, and whether the plan's rule (Holm p ≤ α, mean above 0) calls the arm better.
- :func:`format_contrasts` — those as a table of text.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from lessons_lib.errors import CourseInputError
from lessons_lib.evaluation.seed_tests import SeedTest, holm_family, paired_seed_test
from lessons_lib.translation.results import load_results

__all__ = ["arm_label", "load_runs", "read_results", "check_one_setup", "runs_by_arm", "arm_scores", "SeedContrast", "seed_contrasts", "format_contrasts"]

# What must be equal in every file of one reading: otherwise two arms would not differ by their arm alone.
_SHARED_KEYS = ("data", "train_config", "sizes", "fraction")
_SHARED_PROVENANCE = ("code_commit", "device", "cpu_capability", "torch")


def arm_label(record: Mapping) -> str:
    """``"none"``, ``"learned-gold"``, …: the variant and, for a biased one, where its trees came from."""
    return record["variant"] if record["variant"] == "none" else f"{record['variant']}-{record['trees']}"


def load_runs(paths: Sequence[str | Path]) -> dict[str, dict[int, dict]]:
    """``{arm: {seed: record}}`` from results files and folders of them (``f*.json``, one level down too).

    Raises:
        CourseInputError: no file; two files for one arm and seed; files that differ in data,
            knobs, training fraction, commit, device, ``cpu_capability`` or torch.
    """
    records = read_results(paths)
    check_one_setup(records)
    return runs_by_arm(records)


def read_results(paths: Sequence[str | Path]) -> list[tuple[Path, dict]]:
    """Every results file of ``paths`` (files, and folders of ``f*.json`` one level down too), read
    and checked one by one (:func:`~lessons_lib.translation.results.load_results`)."""
    files: list[Path] = []
    for given in map(Path, paths):
        files += sorted(given.glob("f*.json")) + sorted(given.glob("*/f*.json")) if given.is_dir() else [given]
    if not files:
        raise CourseInputError(f"no translation results files in {', '.join(map(str, paths))}")
    return [(path, load_results(path)) for path in files]


def check_one_setup(records: Sequence[tuple[Path, dict]], keys: Sequence[str] = _SHARED_KEYS) -> None:
    """Refuse files that differ in any of ``keys`` (data, knobs, sizes, fraction) or in commit, device,
    ``cpu_capability`` or torch: two arms read together must differ by their arm alone."""
    first_path, first = records[0]
    for path, record in records:
        for key in keys:
            if record.get(key) != first.get(key):
                raise CourseInputError(f"{path}: its {key} differs from {first_path}'s; one reading takes runs of one setup")
        for key in _SHARED_PROVENANCE:
            if record["provenance"].get(key) != first["provenance"].get(key):
                raise CourseInputError(f"{path}: made with {key} {record['provenance'].get(key)!r}, {first_path} with "
                                       f"{first['provenance'].get(key)!r}; a contrast never mixes them")


def runs_by_arm(records: Sequence[tuple[Path, dict]]) -> dict[str, dict[int, dict]]:
    """``{arm: {seed: record}}``, refusing a second file for one arm and seed."""
    runs: dict[str, dict[int, dict]] = {}
    for path, record in records:
        seeds = runs.setdefault(arm_label(record), {})
        if record["seed"] in seeds:
            raise CourseInputError(f"{path}: a second file for {arm_label(record)} seed {record['seed']}")
        seeds[record["seed"]] = record
    return runs


def arm_scores(runs: Mapping[int, Mapping], group: str) -> dict[int, float]:
    """``{seed: BLEU on group}`` of one arm."""
    try:
        return {seed: float(record["scores"][group]["bleu"]) for seed, record in sorted(runs.items())}
    except KeyError:
        raise CourseInputError(f"no group {group!r} in these results") from None


@dataclass(frozen=True)
class SeedContrast:
    """One arm minus the baseline on one group, seed by seed.

    Attributes:
        differences: per seed (in seed order), the arm's BLEU minus the baseline's.
        test: their :class:`~lessons_lib.evaluation.seed_tests.SeedTest` (mean, 95 % t-interval,
            paired-t p, Holm p over the family read together).
        alpha: the level of the one rule, Holm p ≤ ``alpha``.
    """

    arm: str
    baseline: str
    group: str
    differences: tuple[float, ...]
    test: SeedTest
    alpha: float

    @property
    def mean(self) -> float:
        return self.test.mean

    @property
    def half_width(self) -> float:
        """Half the width of the 95 % t-interval around :attr:`mean`."""
        return (self.test.high - self.test.low) / 2

    @property
    def p(self) -> float:
        return self.test.p_value

    @property
    def holm_p(self) -> float:
        return self.test.holm_p

    @property
    def better(self) -> bool:
        """Holm p ≤ ``alpha`` and a positive mean: the arm is shown better than the baseline."""
        return self.test.significant(self.alpha) and self.test.sign > 0


def seed_contrasts(runs: Mapping[str, Mapping[int, Mapping]], baseline: str, arms: Sequence[str], group: str,
                   alpha: float = 0.05) -> list[SeedContrast]:
    """Each of ``arms`` minus ``baseline`` on ``group``, paired by seed, Holm over the family ``arms``.

    Raises:
        CourseInputError: an arm missing, an arm whose seeds are not the baseline's, or fewer than 2 seeds.
    """
    for arm in (baseline, *arms):
        if arm not in runs:
            raise CourseInputError(f"no runs of the arm {arm!r}; found {', '.join(sorted(runs))}")
    base = arm_scores(runs[baseline], group)
    rows = []
    for arm in arms:
        scores = arm_scores(runs[arm], group)
        if set(scores) != set(base):
            raise CourseInputError(f"{arm} has seeds {sorted(scores)}, {baseline} {sorted(base)}: contrasts pair seeds")
        differences = tuple(scores[seed] - base[seed] for seed in sorted(base))
        if len(differences) < 2:  # one seed gives no spread: a contrast over seeds needs two
            raise CourseInputError(f"a paired t-test needs at least 2 seeds, got {len(differences)}")
        rows.append((arm, differences, paired_seed_test(differences)))
    tests = holm_family([test for _, _, test in rows])
    return [SeedContrast(arm, baseline, group, differences, test, alpha) for (arm, differences, _), test in zip(rows, tests)]


def _p_text(p: float) -> str:
    return "<0.0001" if p < 1e-4 else f"{p:.4f}"


def format_contrasts(contrasts: Sequence[SeedContrast]) -> str:
    """One line per contrast: the mean difference in BLEU, its interval, p, Holm p, the verdict, and the
    difference of each seed (in seed order)."""
    lines = [f"{'arm − ' + contrasts[0].baseline:<22} {'group':<7} {'mean ΔBLEU':>10} {'95 % interval':>17} "
             f"{'p':>8} {'Holm p':>8}  {'verdict':<22}  per seed"]
    for c in contrasts:
        verdict = f"better (Holm p ≤ {c.alpha:g})" if c.better else "not shown better"
        per_seed = " ".join(f"{d:+.2f}" for d in c.differences)
        lines.append(f"{c.arm:<22} {c.group:<7} {c.mean:>+10.2f} [{c.test.low:>+7.2f}, "
                     f"{c.test.high:>+7.2f}] {_p_text(c.p):>8} {_p_text(c.holm_p):>8}  {verdict:<22}  {per_seed}")
    return "\n".join(lines)
