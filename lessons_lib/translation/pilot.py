"""Reading a pilot to size a study: per training fraction, what a run costs, where dev BLEU stops
rising, and how much the paired difference in test BLEU varies from seed to seed, with the seeds a
study would need at that spread. A pilot's contrasts are never tested: it only sizes the plan.

- :func:`pilot_fractions` — the pilot's files read fraction by fraction (:class:`PilotFraction`).
- :func:`format_pilot` — those as a table of text, with the seeds needed per arm.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from lessons_lib.errors import CourseInputError
from lessons_lib.evaluation.sample_size import sd_upper_limit, seeds_for_power, seeds_for_power_welch
from lessons_lib.translation.analysis import arm_scores, load_runs
from lessons_lib.translation.results import load_results

__all__ = ["PilotArm", "PilotFraction", "pilot_fractions", "format_pilot"]


@dataclass(frozen=True)
class PilotArm:
    """One biased arm against ``none`` at one fraction, seed by seed.

    Attributes:
        arm: e.g. ``"learned-parser"``.
        differences: test BLEU of the arm minus ``none``'s, per seed (seed order).
        sd: their SD (``None`` with fewer than 2 seeds).
        best_epochs: the dev-chosen epoch of each of the arm's runs.
    """

    arm: str
    differences: tuple[float, ...]
    sd: float | None
    best_epochs: tuple[int, ...]


@dataclass(frozen=True)
class PilotFraction:
    """What the pilot measured at one training fraction.

    Attributes:
        fraction: the share of the training split.
        seeds: the seeds with a run of every arm.
        train_pairs: pairs in each seed's training subset.
        epochs: the epochs each run trained.
        seconds: mean wall seconds of a run (training and evaluation), all arms.
        none_bleu: ``none``'s test BLEU per seed.
        none_best_epochs: ``none``'s dev-chosen epochs.
        arms: the biased arms against ``none``.
    """

    fraction: float
    seeds: tuple[int, ...]
    train_pairs: int
    epochs: int
    seconds: float
    none_bleu: tuple[float, ...]
    none_best_epochs: tuple[int, ...]
    arms: tuple[PilotArm, ...]


def _by_fraction(folder: Path) -> dict[float, list[Path]]:
    files = sorted(folder.glob("f*.json"))
    if not files:
        raise CourseInputError(f"{folder}: no translation results files (f*.json)")
    out: dict[float, list[Path]] = {}
    for path in files:
        out.setdefault(float(load_results(path)["fraction"]), []).append(path)
    return dict(sorted(out.items()))


def pilot_fractions(folder: str | Path) -> list[PilotFraction]:
    """Every fraction of a pilot folder, each read with :func:`~lessons_lib.translation.analysis.load_runs`
    (one setup, commit and kernel set per fraction); only seeds with a run of every arm are kept."""
    out = []
    for fraction, paths in _by_fraction(Path(folder)).items():
        runs = load_runs(paths)
        if "none" not in runs:
            raise CourseInputError(f"{folder}: no run of none at fraction {fraction:g}; the pilot pairs each arm with it")
        seeds = sorted(set.intersection(*(set(by_seed) for by_seed in runs.values())))
        if not seeds:
            continue
        none = arm_scores(runs["none"], "all")
        arms = []
        for arm in sorted(a for a in runs if a != "none"):
            scores = arm_scores(runs[arm], "all")
            differences = tuple(scores[s] - none[s] for s in seeds)
            arms.append(PilotArm(arm, differences, statistics.stdev(differences) if len(seeds) > 1 else None,
                                 tuple(runs[arm][s]["best_epoch"] for s in seeds)))
        every = [runs[a][s] for a in runs for s in seeds]
        out.append(PilotFraction(fraction, tuple(seeds), every[0]["train_pairs"], every[0]["train_config"]["epochs"],
                                 statistics.fmean(r["seconds"] for r in every), tuple(none[s] for s in seeds),
                                 tuple(runs["none"][s]["best_epoch"] for s in seeds), tuple(arms)))
    if not out:
        raise CourseInputError(f"{folder}: no seed has a run of every arm at any fraction")
    return out


def format_pilot(fractions: Sequence[PilotFraction], effect: float, family: int, alpha: float = 0.05,
                 confidence: float = 0.8, power: float = 0.8) -> str:
    """Per fraction its cost and ``none``'s BLEU, then per arm the differences, their SD, the SD's upper
    ``confidence`` limit, and the seeds a paired t-test at Holm's strictest level ``alpha / family``
    needs to find ``effect`` BLEU with probability ``power`` at the SD seen and at its upper limit;
    with two fractions or more, the same for each arm's difference of gains (scarcest − largest)."""
    level = alpha / family
    lines = [f"seeds needed: paired t at α = {alpha:g}/{family} = {level:.4f} (Holm's first step), power {power:.0%}, "
             f"effect {effect:g} BLEU; SD's upper limit at {confidence:.0%} confidence"]
    for f in fractions:
        lines.append(f"fraction {f.fraction:g}: {f.train_pairs:,} training pairs, seeds {', '.join(map(str, f.seeds))}, "
                     f"{f.epochs} epochs, {f.seconds:.0f} s a run; none BLEU "
                     f"{' '.join(f'{b:.2f}' for b in f.none_bleu)} (dev-chosen epochs {list(f.none_best_epochs)})")
        for a in f.arms:
            per_seed = " ".join(f"{d:+.2f}" for d in a.differences)
            if a.sd is None:
                lines.append(f"  {a.arm:<16} − none: {per_seed}; one seed, no spread")
                continue
            upper = sd_upper_limit(a.sd, len(a.differences), confidence)
            needed = [seeds_for_power(sd, effect, level, power) if sd > 0 else 2 for sd in (a.sd, upper)]
            shown = ["more than 1000" if n is None else str(n) for n in needed]
            lines.append(f"  {a.arm:<16} − none: {per_seed}; mean {statistics.fmean(a.differences):+.2f}, "
                         f"SD {a.sd:.2f} (upper {upper:.2f}); seeds needed {shown[0]} (at the upper SD {shown[1]}); "
                         f"dev-chosen epochs {list(a.best_epochs)}")
    lines += _difference_of_gains(fractions, effect, level, confidence, power)
    return "\n".join(lines)


def _difference_of_gains(fractions: Sequence[PilotFraction], effect: float, level: float, confidence: float,
                         power: float) -> list[str]:
    """Per arm, the seeds per fraction Welch's test of (gain at the scarcest fraction) − (gain at the
    largest) needs at ``level`` to find ``effect``, at the two SDs seen and at their upper limits."""
    if len(fractions) < 2:
        return []
    scarce, full = fractions[0], fractions[-1]
    lines = []
    for a in scarce.arms:
        b = next((b for b in full.arms if b.arm == a.arm), None)
        if b is None or a.sd is None or b.sd is None:
            continue
        uppers = (sd_upper_limit(a.sd, len(a.differences), confidence), sd_upper_limit(b.sd, len(b.differences), confidence))
        needed = [seeds_for_power_welch(x, y, effect, level, power) if x or y else 2 for x, y in ((a.sd, b.sd), uppers)]
        shown = ["more than 1000" if n is None else str(n) for n in needed]
        lines.append(f"  {a.arm:<16}: mean {statistics.fmean(a.differences) - statistics.fmean(b.differences):+.2f}; "
                     f"seeds needed {shown[0]} (at the upper SDs {shown[1]})")
    header = f"difference of gains, fraction {scarce.fraction:g} − fraction {full.fraction:g} (Welch, seeds per fraction):"
    return [header, *lines] if lines else []
