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

from lessons_lib.errors import CourseInputError
from lessons_lib.syntax.buckets import BucketScheme
from lessons_lib.validation import check_int

__all__ = ["DistancePredictor", "predictor_loss", "bucket_confusion"]


class DistancePredictor(nn.Module):
    """Predicts the bucket of every open character pair from the embeddings.

    Args:
        scheme: the bucket scheme; the classes are its "same word" and distance ids.
        d_model: the embeddings' width ``D``.
        width: the hidden width of the convolutions.
        rank: the rank ``r`` of each class's bilinear form.
        max_offset: offsets ``j − i`` beyond ± this share one learned score.
    """

    def __init__(self, scheme: BucketScheme, d_model: int, width: int = 32, rank: int = 8,
                 max_offset: int = 16) -> None:
        super().__init__()
        check_int(d_model, "`d_model`")
        self.scheme = scheme
        self.width, self.rank = check_int(width, "`width`"), check_int(rank, "`rank`")
        self.max_offset = check_int(max_offset, "`max_offset`")
        class_ids = scheme.index("same_word") + scheme.index("distance")
        self.register_buffer("class_ids", torch.tensor(class_ids, dtype=torch.long), persistent=False)
        # bucket id -> class index (-1: not a class: cross sentence, special, padding)
        to_class = torch.full((scheme.n_buckets,), -1, dtype=torch.long)
        to_class[self.class_ids] = torch.arange(len(class_ids))
        self.register_buffer("to_class", to_class, persistent=False)
        n_classes = len(class_ids)
        self.context = nn.Sequential(nn.Conv1d(d_model, width, 3, padding=1), nn.GELU(),
                                     nn.Conv1d(width, width, 3, padding=1), nn.GELU())
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
            key_mask: ``(B, L)`` bool, ``True`` at real tokens (padding is zeroed before the
                convolutions, so it never leaks into a real position's context).

        Returns:
            ``(B, L, L, C)`` logits over the :attr:`n_classes` classes (meaningful only where
            :func:`~lessons_lib.syntax.buckets.layout_buckets` says a tree is needed).
        """
        batch, length, _ = embeddings.shape
        if key_mask.shape != (batch, length):
            raise CourseInputError(f"`key_mask` {tuple(key_mask.shape)} must be (B, L) = {(batch, length)}")
        x = embeddings.masked_fill(~key_mask[:, :, None], 0.0).transpose(1, 2)  # (B, D, L)
        h = self.context(x).transpose(1, 2)  # (B, L, W)
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
    to_class = torch.full((int(ids.max()) + 1,), -1, dtype=torch.long)
    to_class[ids] = torch.arange(len(ids))
    confusion = torch.zeros(len(ids), len(ids), dtype=torch.long)
    for gold, guess, mask in zip(parser_buckets, predicted_buckets, needs_tree, strict=True):
        rows, cols = to_class[gold[mask].cpu()], to_class[guess[mask].cpu()]
        if bool((rows < 0).any()) or bool((cols < 0).any()):
            raise CourseInputError("an open pair holds a bucket id that is not one of `class_ids`")
        confusion += torch.bincount(rows * len(ids) + cols, minlength=len(ids) ** 2).view(len(ids), len(ids))
    return confusion
