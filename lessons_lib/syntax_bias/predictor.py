"""A distance predictor: the buckets of a pair's character pairs guessed from embeddings, no parser.

The syntax-bias article's third way to do without a parser at inference: a small network,
trained together with the classifier on the parser's buckets, that predicts them from the
characters. Design choices:

- **Input: the encoder's embeddings** ``(B, L, D)`` (token + position + segment, after
  LayerNorm), not the token states after attention: the bias enters the *first* block, so
  buckets predicted from the blocks' output would need a second pass through the encoder.
  Embeddings carry no context, so two 1-D convolutions (kernel 3) give each position its
  neighbours — enough to see where a word starts and ends.
- **Only what the layout leaves open is predicted.** Padding, special tokens, two different
  sentences and a character with itself have fixed ids
  (:func:`lessons_lib.syntax.buckets.layout_buckets`); the predictor chooses among "same
  word" and the distances, and only for pairs of two characters of the same sentence.
  Padding is therefore never predicted, and never biased (its id stays ``-1``).
- **Pair scores: one low-rank bilinear form per class** plus a learned score per clamped
  offset ``j − i``: ``score[i, j, c] = q_c(h_i) · k_c(h_j) / √r + rel[c, j − i] + b_c``.
- **At inference** the most likely class of each open pair becomes its bucket id, so every
  bias variant (learned, fixed decay, hard mask) reads predicted buckets unchanged.

Trained jointly: :class:`lessons_lib.syntax_bias.model.SyntaxBiasedPairClassifier` adds
``predictor_weight`` × the predictor's cross-entropy (:func:`predictor_loss`) to the task
loss, and the gradient reaches the shared embeddings, as the article describes.
"""

from __future__ import annotations

import math
from typing import Sequence

import torch
from torch import nn
from torch.nn import functional as F

from lessons_lib.errors import CourseInputError, FieldName, input_error
from lessons_lib.syntax.buckets import BucketScheme
from lessons_lib.transformer.encoder import gelu
from lessons_lib.validation import check_int, check_number

__all__ = ["DistancePredictor", "predictor_loss", "bucket_confusion", "open_pairs", "offset_baseline_accuracy"]


class DistancePredictor(nn.Module):
    """Predicts the bucket of every open character pair from the embeddings.

    Args:
        scheme: the bucket scheme; the classes are its "same word" and distance ids.
        d_model: the embeddings' width ``D``.
        width: the hidden width of the convolutions.
        rank: the rank ``r`` of each class's bilinear form.
        max_offset: offsets ``j − i`` beyond ± this share one learned score.
        lr_multiplier: its parameters learn at this multiple of the model's learning rate
            (read by :func:`lessons_lib.training.trainer.parameter_groups`): trained jointly, it
            gets only the task's few hundred steps, and at the task's rate its zero-initialised
            offset scores would barely move in that time.
    """

    class_ids: torch.Tensor  # buffers: (C,) the buckets it predicts, and bucket -> class index
    to_class: torch.Tensor

    def __init__(self, scheme: BucketScheme, d_model: int, width: int = 32, rank: int = 8,
                 max_offset: int = 16, lr_multiplier: float = 1.0) -> None:
        super().__init__()
        self.param_lr_multiplier = check_number(lr_multiplier, FieldName("lr_multiplier"), minimum=0.0, strict_minimum=True)
        check_int(d_model, FieldName("d_model"))
        self.scheme = scheme
        self.width, self.rank = check_int(width, FieldName("width")), check_int(rank, FieldName("rank"))
        self.max_offset = check_int(max_offset, FieldName("max_offset"))
        class_ids = scheme.index("same_word") + scheme.index("distance")
        self.register_buffer("class_ids", torch.tensor(class_ids, dtype=torch.long), persistent=False)
        # bucket id -> class index (-1: not a class: cross sentence, special, padding)
        to_class = torch.full((scheme.n_buckets,), -1, dtype=torch.long)
        to_class[self.class_ids] = torch.arange(len(class_ids))
        self.register_buffer("to_class", to_class, persistent=False)
        n_classes = len(class_ids)
        self.context = nn.ModuleList([nn.Conv1d(d_model, width, 3, padding=1), nn.Conv1d(width, width, 3, padding=1)])
        self.query = nn.Linear(width, n_classes * rank)
        self.key = nn.Linear(width, n_classes * rank)
        self.relative = nn.Parameter(torch.zeros(2 * max_offset + 1, n_classes))

    @property
    def n_classes(self) -> int:
        return int(self.class_ids.numel())

    def forward(self, embeddings: torch.Tensor, key_mask: torch.Tensor) -> torch.Tensor:
        """Class scores of every pair.

        Args:
            embeddings: ``(B, L, D)`` the encoder's embeddings.
            key_mask: ``(B, L)`` bool, ``True`` at real tokens (padding is zeroed before each
                convolution, so it never leaks into a real position's context).

        Returns:
            ``(B, L, L, C)`` logits over the :attr:`n_classes` classes (meaningful only where
            :func:`~lessons_lib.syntax.buckets.layout_buckets` says a tree is needed).
        """
        batch, length, _ = embeddings.shape
        if key_mask.shape != (batch, length):
            raise input_error(FieldName("key_mask"), f" {tuple(key_mask.shape)} must be (B, L) = {(batch, length)}")
        padding = ~key_mask[:, None, :]  # (B, 1, L)
        h = embeddings.transpose(1, 2)  # (B, D, L)
        for conv in self.context:  # padding is zeroed before every convolution, never after
            h = gelu(conv(h.masked_fill(padding, 0.0)))
        h = h.transpose(1, 2)  # (B, L, W)
        q = self.query(h).view(batch, length, self.n_classes, self.rank)
        k = self.key(h).view(batch, length, self.n_classes, self.rank)
        scores = torch.einsum("bicr,bjcr->bijc", q, k) / math.sqrt(self.rank)
        positions = torch.arange(length, device=embeddings.device)
        offset = (positions[None, :] - positions[:, None]).clamp(-self.max_offset, self.max_offset) + self.max_offset
        return scores + self.relative[offset][None]

    def fill(self, logits: torch.Tensor, layout: torch.Tensor, needs_tree: torch.Tensor) -> torch.Tensor:
        """``(B, L, L)`` bucket ids: the layout's ids, and the most likely class where a tree is needed."""
        predicted = self.class_ids[logits.argmax(dim=-1)]
        return torch.where(needs_tree, predicted, layout)


def predictor_loss(predictor: DistancePredictor, logits: torch.Tensor, target: torch.Tensor,
                   needs_tree: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of the predicted classes against the parser's buckets, over the open pairs.

    Args:
        logits: ``(B, L, L, C)`` from the predictor.
        target: ``(B, L, L)`` the parser's bucket ids.
        needs_tree: ``(B, L, L)`` bool, the pairs to score (a batch without any gives 0).
    """
    classes = predictor.to_class[target.clamp(min=0)]
    if bool((classes[needs_tree] < 0).any()):
        raise CourseInputError("a pair of two characters of one sentence has a bucket that is not 'same word' "
                               "or a distance: the parser's buckets and the batch's layout disagree")
    if not bool(needs_tree.any()):
        return logits.sum() * 0.0
    return F.cross_entropy(logits[needs_tree], classes[needs_tree])


def bucket_confusion(parser_buckets: Sequence[torch.Tensor], predicted_buckets: Sequence[torch.Tensor],
                     needs_tree: Sequence[torch.Tensor], class_ids: Sequence[int]) -> torch.Tensor:
    """Counts ``[parser's class, predicted class]`` over the open pairs of several batches.

    Args:
        parser_buckets, predicted_buckets, needs_tree: one ``(B, L, L)`` tensor per batch.
        class_ids: the bucket ids of the classes, in order (``DistancePredictor.class_ids``).

    Returns:
        ``(C, C)`` long counts; rows the parser's buckets, columns the predicted ones.
    """
    ids = torch.as_tensor(list(class_ids), dtype=torch.long)
    n = len(ids)
    confusion = torch.zeros(n, n, dtype=torch.long)
    for gold, guess, mask in zip(parser_buckets, predicted_buckets, needs_tree, strict=True):
        rows, cols = gold[mask].cpu(), guess[mask].cpu()
        if not bool(torch.isin(rows, ids).all()) or not bool(torch.isin(cols, ids).all()):
            raise CourseInputError("an open pair holds a bucket id that is not one of `class_ids`")
        rows, cols = torch.searchsorted(ids.sort().values, rows), torch.searchsorted(ids.sort().values, cols)
        order = ids.argsort()  # class index of each sorted id
        confusion += torch.bincount(order[rows] * n + order[cols], minlength=n * n).view(n, n)
    return confusion


def open_pairs(buckets: torch.Tensor, needs_tree: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The open pairs of a batch, flat: ``(offsets j − i, bucket ids)``, both ``(N,)`` long.

    Args:
        buckets: ``(B, L, L)`` bucket ids (a parser's or a predictor's).
        needs_tree: ``(B, L, L)`` bool from :func:`lessons_lib.syntax.buckets.layout_buckets`.
    """
    if buckets.shape != needs_tree.shape or buckets.dim() != 3:
        raise input_error(FieldName("buckets"), f" {tuple(buckets.shape)} and `needs_tree` {tuple(needs_tree.shape)} "
                               "must be the same (B, L, L)")
    positions = torch.arange(buckets.shape[1], device=buckets.device)
    offsets = (positions[None, :] - positions[:, None]).expand_as(buckets)
    return offsets[needs_tree], buckets[needs_tree]


def offset_baseline_accuracy(train_offsets: torch.Tensor, train_buckets: torch.Tensor,
                             test_offsets: torch.Tensor, test_buckets: torch.Tensor) -> float:
    """The predictor's yardstick: guess each open pair's bucket from its offset ``j − i`` alone.

    The rule, learned on the training pairs: the most frequent bucket at each offset (the
    smallest id on a tie); an offset never seen in training gets the most frequent bucket
    overall. Returns its accuracy on the test pairs. All arguments are ``(N,)`` long.
    """
    for name, offsets, buckets in (("train", train_offsets, train_buckets), ("test", test_offsets, test_buckets)):
        if offsets.shape != buckets.shape or offsets.dim() != 1:
            raise CourseInputError(f"the {name} offsets {tuple(offsets.shape)} and buckets {tuple(buckets.shape)} "
                                   "must be two (N,) tensors")
    if train_offsets.numel() == 0 or test_offsets.numel() == 0:
        raise CourseInputError("offset_baseline_accuracy needs at least one training and one test pair")
    n_buckets = int(max(train_buckets.max(), test_buckets.max())) + 1
    low = int(min(train_offsets.min(), test_offsets.min()))
    span = int(max(train_offsets.max(), test_offsets.max())) - low + 1
    counts = torch.zeros(span, n_buckets, dtype=torch.long)
    counts.index_put_((train_offsets - low, train_buckets), torch.ones_like(train_offsets), accumulate=True)
    overall = int(counts.sum(0).argmax())  # argmax returns the first maximum: the smallest id on a tie
    rule = torch.where(counts.sum(1) > 0, counts.argmax(1), torch.tensor(overall))
    return float((rule[test_offsets - low] == test_buckets).float().mean())
