"""The data-size study's files: every result file under a folder read and checked as one study.

:func:`load_study` reads every result file under a folder (one variant and one seed per file,
the training subset drawn with that seed, the epoch chosen on dev) and refuses, in one line
naming the file and the field, anything that cannot be paired; it returns the
:class:`~lessons_lib.ablation.study_analysis.Study` the analysis reads.

The CPU kernel set a run was made with (``provenance.cpu_capability``: torch's AVX2, AVX-512 …)
changes the last digits of every step, so two runs that meet in one contrast must share it;
:func:`kernel_sets` and :func:`format_kernel_sets` show which file used which, for a reading
that accepts a mix (``mixed_kernels=True``) and must say so.
"""

from __future__ import annotations

import math
import os
from fractions import Fraction
from pathlib import Path
from typing import Mapping

import numpy as np

from lessons_lib.errors import CourseInputError
from lessons_lib.ablation.arms import Arm
from lessons_lib.validation import exact
from lessons_lib.ablation.results import ExperimentResult, load_results, results_paths
from lessons_lib.ablation.study_analysis import (CURVE_ARMS, LARGE, PLAN_SEEDS, PRIMARY_FRACTIONS, SMALL, Study,
                                                 StudyRun, fraction_name)

__all__ = ["NOT_RECORDED", "format_kernel_sets", "kernel_sets", "load_study"]

# A file written before the course recorded the kernel set: a value of its own, which agrees only
# with itself (nothing shows that such a run used the same kernels as one that records them).
NOT_RECORDED = "not recorded"


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
    return StudyRun(exact(result.config.train_fraction), Arm.of(result, run.variant), run.seed, dev_correct,
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


def _kernel_set(result: ExperimentResult) -> str:
    return result.provenance.get("cpu_capability") or NOT_RECORDED


def _check_one_kernel_set(kernels: dict[Fraction, dict[str, list[Path]]]) -> None:
    """One line naming a file when the runs of one fraction (they meet in its paired contrasts and its
    controls), or of 1 % and 10 % (they meet in the difference of differences), used two kernel sets."""
    groups = [(f"inside fraction {fraction_name(f)}", sets) for f, sets in sorted(kernels.items())]
    if SMALL in kernels and LARGE in kernels:
        groups.append(("between 1 % and 10 % (they meet in the difference of differences)",
                       {k: kernels[SMALL].get(k, []) + kernels[LARGE].get(k, [])
                        for k in kernels[SMALL].keys() | kernels[LARGE].keys()}))
    for where, sets in groups:
        if len(sets) > 1:
            # name a file of the rarer set: the exception, beside a file of the commonest
            ordered = sorted(sets.items(), key=lambda item: (-len(item[1]), item[0]))
            (most, usual), (rare, odd) = ordered[0], ordered[-1]
            raise CourseInputError(f"{odd[0]}: provenance.cpu_capability {rare!r} differs from {usual[0]}'s "
                                   f"{most!r} {where}: a contrast would pair runs of two kernel sets "
                                   "(--mixed-kernels reads them and prints the mix)")


def kernel_sets(study: Study) -> dict[Path, str]:
    """``{file: provenance.cpu_capability}`` for every run the study read (:data:`NOT_RECORDED` where
    the file has none), read again from the files: what a reading with ``mixed_kernels`` prints."""
    return {run.source: _kernel_set(ExperimentResult.load(run.source)) for run in study.runs}


def format_kernel_sets(kernels: Mapping[Path, str]) -> str:
    """One line per folder: how many files used each kernel set, naming the files of a set used by
    at most three of them (the exceptions a reader must see)."""
    by_folder: dict[str, dict[str, list[str]]] = {}
    root = Path(os.path.commonpath([p.parent for p in kernels])) if kernels else Path()
    for path, kernel in sorted(kernels.items()):
        folder = path.parent.relative_to(root).as_posix()
        by_folder.setdefault(folder, {}).setdefault(kernel, []).append(path.stem)
    lines = ["CPU kernel sets (provenance.cpu_capability) of the files read:"]
    for folder, sets in by_folder.items():
        parts = []
        for kernel, names in sorted(sets.items(), key=lambda item: -len(item[1])):
            few = len(sets) > 1 and len(names) <= 3
            parts.append(f"{kernel} {len(names)}" + (f" ({', '.join(names)})" if few else ""))
        lines.append(f"  {folder + '/':<16} " + ", ".join(parts))
    return "\n".join(lines)


def _check_planned(path: Path, run: StudyRun) -> None:
    """One line naming the file when its fraction or seed is not one the plan names (:data:`PLAN_SEEDS`):
    such a file would enter the curve and the tables beside the plan's runs as if it were one of them."""
    if run.fraction not in PLAN_SEEDS:
        planned = ", ".join(fraction_name(f) for f in PLAN_SEEDS)
        raise CourseInputError(f"{path}: config.train_fraction {float(run.fraction):g} is not one of the plan's fractions "
                               f"({planned}; results/lcqmc/PLAN.md); --unplanned reads a folder that is not the plan's")
    seeds = PLAN_SEEDS[run.fraction]
    if run.seed not in seeds:
        which = f"{seeds[0]}" if len(seeds) == 1 else f"{seeds[0]}–{seeds[-1]}"
        raise CourseInputError(f"{path}: runs[0].seed {run.seed} is not one of the plan's seeds at "
                               f"{fraction_name(run.fraction)} ({which}); --unplanned reads a folder that is not the plan's")


def load_study(folder: str | Path, expected_sha256: Mapping[str, str] | None = None, partial: bool = False,
               unplanned: bool = False, mixed_kernels: bool = False) -> Study:
    """Read every ``*.json`` under ``folder`` (curve and controls) into a :class:`Study`.

    Every file is read by :func:`~lessons_lib.ablation.results.load_results` (calls, accuracies
    and probabilities that contradict each other are refused there). Refused besides, in one line
    naming the file and the field: other splits than the first file's (or than ``expected_sha256``),
    another training subset for one (fraction, seed), two files for one (fraction, arm, seed),
    modified code, another commit or device inside one fraction (or between 1 % and 10 %, whose
    difference is a contrast), missing probabilities, a learned run without the chosen epoch's
    ``bias_max_abs``; unless ``mixed_kernels``, two CPU kernel sets (``provenance.cpu_capability``)
    inside one fraction or between 1 % and 10 % (a file without the field counts as
    :data:`NOT_RECORDED`, which agrees only with itself).

    Args:
        partial: keep only the seeds of a fraction that have all of none, learned and hard_mask
            (taken in seed order); without it, a seed lacking one of them is refused.
        unplanned: the folder is not the plan's: read fractions and seeds the plan does not name
            (without it, a file at any other fraction or seed than :data:`PLAN_SEEDS` is refused).
        mixed_kernels: read contrasts whose runs used different kernel sets; the reader must then
            print :func:`format_kernel_sets` beside every result it reports.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise CourseInputError(f"{folder}: not a folder of study results")
    paths = results_paths(folder, recursive=True)
    if not paths:
        raise CourseInputError(f"{folder}: a folder without results files (*.json)")
    runs: dict[tuple[Fraction, Arm, int], StudyRun] = {}
    subsets: dict[tuple[Fraction, int], tuple[str | None, Path]] = {}
    made: dict[Fraction, tuple[tuple, Path]] = {}
    kernels: dict[Fraction, dict[str, list[Path]]] = {}
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
                                   f"{float(run.fraction):g}, seed {run.seed}")
        where = made.setdefault(run.fraction, (_where_made(result), path))
        if where[0] != _where_made(result):
            raise CourseInputError(f"{path}: provenance (code_commit, device, device_name) {_where_made(result)} differs "
                                   f"from {where[1]}'s {where[0]} inside one fraction")
        kernels.setdefault(run.fraction, {}).setdefault(_kernel_set(result), []).append(path)
        if (run.fraction, run.arm, run.seed) in runs:
            raise CourseInputError(f"{path}: fraction {float(run.fraction):g} / {run.arm} / seed {run.seed} is also in "
                                   f"{runs[run.fraction, run.arm, run.seed].source}")
        runs[run.fraction, run.arm, run.seed] = run
    if SMALL in made and LARGE in made and made[SMALL][0] != made[LARGE][0]:
        raise CourseInputError(f"{made[LARGE][1]}: provenance (code_commit, device, device_name) differs from "
                               f"{made[SMALL][1]}'s: the 1 % and 10 % runs meet in one contrast")
    if not mixed_kernels:
        _check_one_kernel_set(kernels)
    unfinished = {} if partial else _set_aside_unfinished(runs)
    complete: dict[Fraction, list[int]] = {}
    for fraction in sorted({f for f, _, _ in runs}):
        seeds = sorted({s for f, a, s in runs if f == fraction and a in CURVE_ARMS})
        for seed in seeds:
            missing = [a for a in CURVE_ARMS if (fraction, a, seed) not in runs]
            if missing and not partial:
                raise CourseInputError(f"{folder}: fraction {float(fraction):g}, seed {seed} has no run of "
                                       f"{', '.join(a.label for a in missing)} "
                                       "(use --partial to read only complete seeds)")
        kept = [s for s in seeds if all((fraction, a, s) in runs for a in CURVE_ARMS)]
        if kept:
            complete[fraction] = kept
    if not complete:
        raise CourseInputError(f"{folder}: no seed has all of {', '.join(a.label for a in CURVE_ARMS)}")
    if not partial:
        for fraction in PRIMARY_FRACTIONS:
            if complete.get(fraction, []) != PLAN_SEEDS[fraction]:
                raise CourseInputError(f"{folder}: fraction {float(fraction):g} has seeds {complete.get(fraction, [])}, the plan's "
                                       f"are {PLAN_SEEDS[fraction][0]}–{PLAN_SEEDS[fraction][-1]} "
                                       "(use --partial to read only complete seeds)")
    assert first is not None  # paths is not empty
    return Study(list(runs.values()), complete, partial, len(first[1].test_labels), unfinished)


def _set_aside_unfinished(runs: dict[tuple[Fraction, Arm, int], StudyRun]) -> dict[Fraction, tuple[int, int]]:
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

