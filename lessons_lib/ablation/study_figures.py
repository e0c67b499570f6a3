"""The data-size study's figures; the forest plot also draws a grid's contrasts (matplotlib imported inside).

- :func:`gain_curve`: per biased arm, the mean test gain over ``none`` against the training
  fraction (log x axis), with the seed-level 95 % t-interval and each seed's gain as a faint point;
- :func:`table_movement`: the learned table's largest |entry| after every epoch against the
  optimizer steps, per fraction (a table that never moved is no evidence against the bias);
- :func:`forest_plot`: one row per contrast (:class:`ForestRow`; :func:`study_rows` for the
  study's contrasts, :func:`grid_rows` for a grid's), its per-seed differences and its seed-level
  interval, with a line at 0.

Each takes an optional ``ax`` to draw on and returns the axes it drew on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from lessons_lib.errors import CourseInputError
from lessons_lib.ablation.grid import Contrast, SeedLevel
from lessons_lib.ablation.study_analysis import (BARELY_MOVED, BIASED_ARMS, FULL, NONE, PRIMARY_FRACTIONS, Study,
                                                 StudyContrast, fraction_name)

__all__ = ["gain_curve", "table_movement", "ForestRow", "study_rows", "grid_rows", "forest_plot"]


def _axes(ax):
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(6, 4))
    return ax


def gain_curve(study: Study, ax=None):
    """Test accuracy gain over ``none`` (y, accuracy units) against the training fraction (x, log scale).

    One colour per arm for its mean, its seed-level 95 % t-interval and its seeds (faint points);
    the two arms sit slightly left and right of each fraction so that neither hides the other. The
    primary fractions are joined by a solid line; a fraction read after the curve (30 %, outside the
    tested family) has an open marker and a dashed link. The full split's single seed (A43) is not
    a point of this curve.
    """
    ax = _axes(ax)
    for i, arm in enumerate(BIASED_ARMS):
        colour, nudge = f"C{i}", 1.06 ** (i - (len(BIASED_ARMS) - 1) / 2)
        contrasts = [study.contrast(f, arm, NONE) for f in study.fractions() if f != FULL]
        for c in contrasts:
            ax.scatter([c.fraction * nudge] * len(c.wins), [w / study.n_test for w in c.wins], alpha=0.3, s=10,
                       color=colour)
        primary = [c for c in contrasts if c.fraction in PRIMARY_FRACTIONS]
        beyond = [c for c in contrasts if c.fraction not in PRIMARY_FRACTIONS]
        _mean_and_interval(ax, primary, nudge, colour, arm.label)
        if beyond:
            link = primary[-1:] + beyond
            ax.plot([c.fraction * nudge for c in link], [c.mean for c in link], linestyle="--", color=colour)
            _mean_and_interval(ax, beyond, nudge, colour, f"{arm}: outside the family", open_marker=True)
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.set_xscale("log")
    fractions = [f for f in study.fractions() if f != FULL]
    ax.set_xticks([float(f) for f in fractions], [fraction_name(f) for f in fractions])
    ax.minorticks_off()
    ax.set_xlabel("training fraction")
    ax.set_ylabel("test accuracy − none's (seed-level 95 % interval)")
    ax.legend(title="partial" if study.partial else None)
    return ax


def _mean_and_interval(ax, contrasts: Sequence[StudyContrast], nudge: float, colour: str, label: str,
                       open_marker: bool = False) -> None:
    """The contrasts' means with their seed-level intervals as error bars; one line through the means
    unless ``open_marker`` (then the markers are hollow and unjoined)."""
    lower = [c.mean - c.low if c.low == c.low else 0.0 for c in contrasts]
    upper = [c.high - c.mean if c.high == c.high else 0.0 for c in contrasts]
    fractions = [c.fraction for c in contrasts if c.fraction is not None]
    if len(fractions) < len(contrasts):
        raise CourseInputError("only contrasts within one fraction have a place on the curve")
    ax.errorbar([f * nudge for f in fractions], [c.mean for c in contrasts], yerr=[lower, upper],
                marker="o", capsize=3, color=colour, label=label,
                **({"markerfacecolor": "white", "linestyle": "none"} if open_marker else {}))


def table_movement(study: Study, ax=None):
    """The learned table's largest |entry| (y; median over seeds) after every epoch, against the
    optimizer steps made (x), one line per fraction; a dashed line at the plan's "barely moved" level."""
    ax = _axes(ax)
    for fraction, (steps, medians) in study.movement_by_epoch().items():
        xs = [steps * (e + 1) for e in range(len(medians))] if steps else list(range(1, len(medians) + 1))
        ax.plot(xs, medians, marker=".", label=fraction_name(fraction))
    ax.axhline(BARELY_MOVED, color="grey", linestyle="--", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("optimizer steps")
    ax.set_ylabel("learned table: largest |entry| (median over seeds)")
    ax.legend(title="partial" if study.partial else "training fraction")
    return ax


@dataclass(frozen=True)
class ForestRow:
    """One row of a forest plot, in accuracy units.

    Attributes:
        label: the contrast's name (the row's tick label).
        per_seed: each seed's difference (drawn as points just above the row; empty: none drawn).
        mean, low, high: the mean difference and its interval (``nan`` ends: no interval drawn).
    """

    label: str
    per_seed: Sequence[float]
    mean: float
    low: float
    high: float


def study_rows(contrasts: Sequence[StudyContrast], n_test: int) -> list[ForestRow]:
    """The study's contrasts as rows; ``n_test`` turns whole-pair wins into accuracy differences.

    A difference of differences has no per-seed points (its two fractions' seeds are not paired).
    """
    return [ForestRow(c.name, [w / n_test for w in c.wins] if c.fraction is not None else [], c.mean, c.low, c.high)
            for c in contrasts]


def grid_rows(contrasts: Sequence[Contrast], levels: Sequence[SeedLevel]) -> list[ForestRow]:
    """A grid's contrasts as rows, each with its seed-level interval (``levels``: from
    :func:`~lessons_lib.ablation.grid.seed_level_verdicts`)."""
    return [ForestRow(f"{c.recipe}: {c.a} − {c.b}", [d.difference for d in c.per_seed], level.mean, level.low,
                      level.high) for c, level in zip(contrasts, levels, strict=True)]


def forest_plot(rows: Sequence[ForestRow], ax=None,
                xlabel: str = "accuracy difference (seed-level 95 % t-interval)"):
    """One row per contrast, the first on top: the per-seed differences, the mean, its interval, a line at 0."""
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(7, 0.36 * len(rows) + 1.2), layout="constrained")
    heights = list(range(len(rows)))[::-1]
    for height, row in zip(heights, rows):
        if row.low == row.low:
            ax.plot([row.low, row.high], [height, height], color="tab:blue", linewidth=1.5)
        ax.plot([row.mean], [height], marker="o", color="black", zorder=3)
        # the seeds just above the row, so that the interval's line does not hide them
        ax.scatter(row.per_seed, [height + 0.18] * len(row.per_seed), s=12, color="tab:orange", zorder=4)
    ax.axvline(0.0, color="grey", linewidth=0.8)
    ax.set_yticks(heights, [row.label for row in rows], fontsize=8)
    ax.set_xlabel(xlabel)
    return ax
