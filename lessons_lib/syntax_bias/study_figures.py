"""The data-size study's two figures (matplotlib is imported inside each function).

- :func:`gain_curve`: per biased arm, the mean test gain over ``none`` against the training
  fraction (log x axis), with the seed-level 95 % t-interval and each seed's gain as a faint point;
- :func:`forest_plot`: one row per contrast of the primary family, its per-seed differences and
  its seed-level interval, with a line at 0.

Both take an optional ``ax`` to draw on and return the axes they drew on.
"""

from __future__ import annotations

from typing import Sequence

from lessons_lib.syntax_bias.registry import BASELINE
from lessons_lib.syntax_bias.study import BIASED_ARMS, Study, StudyContrast

__all__ = ["gain_curve", "forest_plot"]


def _axes(ax):
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(6, 4))
    return ax


def gain_curve(study: Study, ax=None):
    """Test accuracy gain over ``none`` (y, accuracy units) against the training fraction (x, log scale)."""
    ax = _axes(ax)
    for arm in BIASED_ARMS:
        contrasts = [study.contrast(f, arm, BASELINE) for f in study.fractions()]
        xs = [c.fraction for c in contrasts]
        for c in contrasts:
            ax.scatter([c.fraction] * len(c.wins), [w / study.n_test for w in c.wins], alpha=0.25, s=10)
        lower = [c.mean - c.low if c.low == c.low else 0.0 for c in contrasts]
        upper = [c.high - c.mean if c.high == c.high else 0.0 for c in contrasts]
        ax.errorbar(xs, [c.mean for c in contrasts], yerr=[lower, upper], marker="o", capsize=3, label=arm)
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("training fraction")
    ax.set_ylabel("test accuracy − none's (seed-level 95 % interval)")
    ax.legend(title="partial" if study.partial else None)
    return ax


def forest_plot(contrasts: Sequence[StudyContrast], n_test: int, ax=None):
    """One row per contrast (top to bottom): faint per-seed differences, the mean and its 95 % t-interval, a zero line.

    Args:
        n_test: the test pairs, to turn whole-pair wins into accuracy differences.
    """
    ax = _axes(ax)
    rows = list(range(len(contrasts)))[::-1]
    for row, c in zip(rows, contrasts):
        seeds = [w / n_test for w in c.wins] if c.fraction is not None else []
        ax.scatter(seeds, [row] * len(seeds), alpha=0.25, s=10, color="grey")
        if c.low == c.low:
            ax.plot([c.low, c.high], [row, row], color="black")
        ax.plot([c.mean], [row], marker="o", color="black")
    ax.axvline(0.0, color="grey", linewidth=0.8)
    ax.set_yticks(rows, [c.name for c in contrasts])
    ax.set_xlabel("accuracy difference (seed-level 95 % t-interval)")
    return ax
