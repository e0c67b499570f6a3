"""Scoring pair classifiers: predictions, accuracy/F1/confusion, and the exact McNemar test.

- :func:`predict` / :func:`evaluate` / :func:`metrics_from_logits`: logits, loss, accuracy,
  F1 of label 1 and the confusion matrix of a model on labelled pairs.
- :func:`mcnemar_exact`: are two models' errors on the same test set different by more
  than chance? The test every comparison of the course reports (its p-value, and what it
  can detect on a test set of a given size: :mod:`lessons_lib.evaluation.significance`).
- :func:`rank_auc`, :func:`dev_tuned_threshold`, :func:`accuracy_at_threshold`,
  :func:`label_one_share`: what stored probabilities say beside plain accuracy.

The last two kinds read plain lists and need no torch: they live in
:mod:`lessons_lib.evaluation.pair_tests` and :mod:`lessons_lib.evaluation.probabilities` (named
here too); reading a results file imports those, never this module.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import torch
from torch import nn
from torch.nn import functional as F

from lessons_lib.errors import FieldName, input_error
from lessons_lib.pairs.data import PairExample
from lessons_lib.pairs.encoding import ExtrasFn, encoded_length, length_sorted_order, make_batches
from lessons_lib.evaluation.pair_tests import McNemarResult, mcnemar_exact
from lessons_lib.evaluation.probabilities import accuracy_at_threshold, dev_tuned_threshold, label_one_share, rank_auc
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
        raise input_error(FieldName("examples"), " is empty: nothing to evaluate")
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
