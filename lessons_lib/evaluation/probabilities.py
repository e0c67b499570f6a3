"""What stored probabilities and predictions say beside plain accuracy: plain lists in, no torch.

- :func:`rank_auc`: the area under the ROC curve of P(label = 1) (ranking, whatever the threshold).
- :func:`dev_tuned_threshold` / :func:`accuracy_at_threshold`: a threshold tuned on dev, and the
  accuracy a threshold gives.
- :func:`label_one_share`: how many calls say label 1 (a shift of the calls towards one label).

These read a results file's lists as they are stored (:mod:`lessons_lib.ablation.results`), so
reading one needs no torch; scoring a model (:mod:`lessons_lib.evaluation.metrics`) does.
"""

from __future__ import annotations

import bisect
import math
from typing import Sequence

from lessons_lib.errors import CourseInputError

__all__ = ["rank_auc", "accuracy_at_threshold", "dev_tuned_threshold", "label_one_share"]


def _check_scored(probabilities: Sequence[float], labels: Sequence[int]) -> None:
    if len(probabilities) != len(labels) or not labels:
        raise CourseInputError(f"need one probability per label, got {len(probabilities)} for {len(labels)} labels")


def rank_auc(probabilities: Sequence[float], labels: Sequence[int]) -> float:
    """The area under the ROC curve of P(label = 1): the share of (label-1, label-0) pairs ranked in
    the right order, ties counted half (Mann–Whitney, from average ranks); ``nan`` with one class only."""
    _check_scored(probabilities, labels)
    order = sorted(range(len(probabilities)), key=lambda i: probabilities[i])
    ranks = [0.0] * len(order)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and probabilities[order[end + 1]] == probabilities[order[start]]:
            end += 1
        for k in range(start, end + 1):  # ranks start + 1 … end + 1, averaged over the tie
            ranks[order[k]] = (start + end) / 2 + 1
        start = end + 1
    positives = sum(1 for y in labels if y == 1)
    negatives = len(labels) - positives
    if positives == 0 or negatives == 0:
        return math.nan
    rank_sum = sum(r for r, y in zip(ranks, labels) if y == 1)
    return (rank_sum - positives * (positives + 1) / 2) / (positives * negatives)


def accuracy_at_threshold(probabilities: Sequence[float], labels: Sequence[int], threshold: float) -> float:
    """The share of pairs right when label 1 is called for P(label = 1) > ``threshold`` (at 0.5: the argmax call)."""
    _check_scored(probabilities, labels)
    return sum((p > threshold) == (y == 1) for p, y in zip(probabilities, labels)) / len(labels)


def dev_tuned_threshold(probabilities: Sequence[float], labels: Sequence[int]) -> float:
    """The threshold with the most correct dev pairs under :func:`accuracy_at_threshold`'s rule; ties go
    to the one nearest 0.5.

    Every threshold in ``[u_i, u_{i+1})`` (``u`` the distinct probabilities, with 0 and 1 added) makes
    the same calls on these pairs. Among the ranges with the most correct pairs, the one that comes
    nearest 0.5 wins; its threshold is 0.5 when 0.5 lies in it, else its midpoint (so that test
    probabilities between two dev values are cut halfway).
    """
    _check_scored(probabilities, labels)
    bounds = sorted({0.0, 1.0, *probabilities})
    ones = sorted(p for p, y in zip(probabilities, labels) if y == 1)
    zeros = sorted(p for p, y in zip(probabilities, labels) if y != 1)

    def correct(t: float) -> int:  # label-1 pairs above t, label-0 pairs at or below it
        return len(ones) - bisect.bisect_right(ones, t) + bisect.bisect_right(zeros, t)

    best = None
    for low, high in zip(bounds, bounds[1:]):
        inside = low <= 0.5 < high
        threshold = 0.5 if inside else (low + high) / 2
        distance = 0.0 if inside else min(abs(low - 0.5), abs(high - 0.5))
        key = (correct(low), -distance, -threshold)
        if best is None or key > best[0]:
            best = (key, threshold)
    assert best is not None  # bounds hold 0 and 1: one interval at least
    return best[1]


def label_one_share(predictions: Sequence[int]) -> float:
    """The share of calls that say label 1."""
    if not predictions:
        raise CourseInputError("no predictions")
    return sum(1 for p in predictions if p == 1) / len(predictions)
