"""Scoring pair classifiers: predictions, accuracy/F1/confusion, and the exact McNemar test.

- :func:`predict` / :func:`evaluate` / :func:`metrics_from_logits`: logits, loss, accuracy,
  F1 of label 1 and the confusion matrix of a model on labelled pairs.
- :func:`mcnemar_exact`: are two models' errors on the same test set different by more
  than chance? The test every comparison of the course reports (its p-value, and what it
  can detect on a test set of a given size: :mod:`lessons_lib.evaluation.significance`).
- :func:`rank_auc`, :func:`dev_tuned_threshold`, :func:`accuracy_at_threshold`,
  :func:`label_one_share`: what stored probabilities say beside plain accuracy (plain lists,
  no torch): ranking, a threshold tuned on dev, and a shift of the calls towards one label.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field
from typing import Sequence

import torch
from torch import nn
from torch.nn import functional as F

from lessons_lib.errors import CourseInputError
from lessons_lib.pairs.data import PairExample
from lessons_lib.pairs.encoding import ExtrasFn, encoded_length, length_sorted_order, make_batches
from lessons_lib.evaluation.significance import NO_DIFFERENCE, better, mcnemar_p_value
from lessons_lib.pairs.vocab import Vocabulary

__all__ = ["EvalResult", "predict", "metrics_from_logits", "evaluate", "McNemarResult", "mcnemar_exact",
           "rank_auc", "accuracy_at_threshold", "dev_tuned_threshold", "label_one_share"]


@dataclass
class EvalResult:
    """Metrics of one evaluation. ``confusion[t][p]`` counts pairs of true label t predicted p.

    ``probabilities``: per pair, the softmax probability of label 1 (what a threshold other
    than the argmax, or a ranking measure such as AUC, is computed from).
    """

    loss: float
    accuracy: float
    f1: float
    confusion: list[list[int]]
    predictions: list[int] = field(repr=False, default_factory=list)
    probabilities: list[float] = field(repr=False, default_factory=list)

    @property
    def correct(self) -> int:
        """How many pairs were predicted right (an integer, for exact comparisons)."""
        return sum(self.confusion[label][label] for label in range(len(self.confusion)))

    def to_dict(self, with_predictions: bool = False) -> dict:
        data = {"loss": self.loss, "accuracy": self.accuracy, "f1": self.f1, "confusion": self.confusion}
        if with_predictions:
            data["predictions"] = self.predictions
        return data


@torch.no_grad()
def predict(
    model: nn.Module, examples: Sequence[PairExample], vocab: Vocabulary, *, batch_size: int = 256,
    max_len: int = 64, device: str | torch.device = "cpu", extras_fn: ExtrasFn | None = None,
    sort_by_length: bool = True,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Logits ``(N, C)`` and labels ``(N,)`` of ``examples``, in order, in eval mode.

    With ``sort_by_length`` the batches are formed from the pairs sorted by length (little
    padding, so faster) and the rows put back in the order of ``examples``; padded keys get
    exactly zero weight, so the logits equal those of the given order up to float rounding.
    """
    if len(examples) == 0:
        raise CourseInputError("`examples` is empty: nothing to evaluate")
    order = length_sorted_order([encoded_length(ex, max_len) for ex in examples]) if sort_by_length \
        else list(range(len(examples)))
    was_training = model.training
    model.eval()
    logits, labels = [], []
    for batch in make_batches([examples[i] for i in order], vocab, batch_size, max_len=max_len, extras_fn=extras_fn):
        logits.append(model(batch.to(device)).float().cpu())
        labels.append(batch.required_labels())
    model.train(was_training)
    restore = torch.empty(len(order), dtype=torch.long)
    restore[torch.tensor(order)] = torch.arange(len(order))  # row i of the batches is pair order[i]
    return torch.cat(logits)[restore], torch.cat(labels)[restore]


def metrics_from_logits(logits: torch.Tensor, labels: torch.Tensor) -> EvalResult:
    """Accuracy, F1 of label 1 and the confusion matrix from ``(N, C)`` logits and ``(N,)`` labels."""
    predictions = logits.argmax(dim=1)
    confusion = [[int(((labels == t) & (predictions == p)).sum()) for p in (0, 1)] for t in (0, 1)]
    tp, fp, fn = confusion[1][1], confusion[0][1], confusion[1][0]
    f1 = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
    return EvalResult(
        loss=float(F.cross_entropy(logits, labels)),
        accuracy=float((predictions == labels).float().mean()),
        f1=f1,
        confusion=confusion,
        predictions=predictions.tolist(),
        probabilities=logits.softmax(dim=1)[:, 1].tolist() if logits.shape[1] > 1 else [],
    )


def evaluate(
    model: nn.Module, examples: Sequence[PairExample], vocab: Vocabulary, *, batch_size: int = 256,
    max_len: int = 64, device: str | torch.device = "cpu", extras_fn: ExtrasFn | None = None,
) -> EvalResult:
    """Loss, accuracy, F1 (of label 1) and confusion matrix on ``examples``."""
    logits, labels = predict(model, examples, vocab, batch_size=batch_size, max_len=max_len,
                             device=device, extras_fn=extras_fn)
    return metrics_from_logits(logits, labels)


@dataclass
class McNemarResult:
    """Exact McNemar test. ``only_a``: pairs model A gets right and B wrong; ``only_b`` the reverse."""

    only_a: int
    only_b: int
    p_value: float

    def verdict(self, a: str = "A", b: str = "B", alpha: float = 0.05) -> str:
        """The reading a lesson states: ``"<a> better"``, ``"<b> better"`` (p < ``alpha``) or
        :data:`~lessons_lib.evaluation.significance.NO_DIFFERENCE`.

        Printed beside the counts, it is what a cell asserts and what the prose may say, so a run whose
        numbers would read otherwise stops at that cell instead of sitting under stale prose.
        """
        if self.p_value >= alpha:
            return NO_DIFFERENCE
        return better(a) if self.only_a > self.only_b else better(b)


def mcnemar_exact(predictions_a: Sequence[int], predictions_b: Sequence[int], labels: Sequence[int]) -> McNemarResult:
    """Exact (binomial) McNemar test on two models' predictions for the same pairs.

    Only the discordant pairs carry information; under "equally good" each of them is
    A's win with probability 1/2, so the two-sided p-value is
    ``min(1, 2 · P[Binomial(n, 1/2) ≤ min(only_a, only_b)])`` with ``n = only_a + only_b``.
    """
    if not len(predictions_a) == len(predictions_b) == len(labels):
        raise CourseInputError(
            f"predictions and labels must have one entry per pair: {len(predictions_a)}, "
            f"{len(predictions_b)}, {len(labels)}"
        )
    right_a = [int(p) == int(y) for p, y in zip(predictions_a, labels)]
    right_b = [int(p) == int(y) for p, y in zip(predictions_b, labels)]
    only_a = sum(a and not b for a, b in zip(right_a, right_b))
    only_b = sum(b and not a for a, b in zip(right_a, right_b))
    return McNemarResult(only_a, only_b, mcnemar_p_value(only_a, only_b))


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
