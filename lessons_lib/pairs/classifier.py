"""Sentence-pair classifier: the encoder plus the ``[CLS]`` head of the textbook chapter.

``[CLS] s1 [SEP] s2 [SEP]`` → :class:`lessons_lib.transformer.encoder.Encoder` → the ``[CLS]`` vector
``(B, D)`` → ``dense + tanh`` (BERT's "pooler") → dropout → ``Linear(D, 2)`` → two scores
(logits) for "different meaning" (0) and "same meaning" (1).

Two optional lexical-overlap signals, off in the textbook configuration:

- ``match_flags``: every character is marked by whether it also occurs in the *other*
  sentence (an "exact match" feature, as in DrQA and ESIM-style matchers). The encoder's
  segment table already adds one learned vector per segment id, so the flag rides on it:
  the segment id becomes ``segment + 2 · matched`` (4 segment ids), with no change to the
  encoder. One block of attention can find matching characters by itself, but only after
  it has learned embeddings where equal characters have large dot products; the flag gives
  the signal from the first step.
- ``overlap_features``: three numbers per pair appended to the ``[CLS]`` vector before the
  dense layer — the share of sentence A's characters found in B, the share of B's found in
  A, and the length difference ``|L_a − L_b| / max(L_a, L_b)``.

Model variants (e.g. syntax-biased attention) override :meth:`PairClassifier.attention_bias`
to turn a batch's extras into an attention bias; the rest stays the same.
"""

from __future__ import annotations

from typing import Sequence

import torch
from torch import nn
from torch.nn import functional as F

from lessons_lib.errors import CourseInputError
from lessons_lib.pairs.config import PairClassifierConfig
from lessons_lib.pairs.encoding import PairBatch
from lessons_lib.pairs.vocab import SPECIAL_TOKENS
from lessons_lib.transformer.encoder import Encoder

__all__ = ["PairClassifier", "classification_loss", "match_flags", "overlap_features"]

# Ids below this are [PAD], [UNK], [CLS], [SEP]: special tokens never "match".
_FIRST_CHARACTER_ID = len(SPECIAL_TOKENS)


def classification_loss(logits: torch.Tensor, batch: PairBatch) -> torch.Tensor:
    """The task's loss, the one place it is written: cross-entropy of ``(B, n_classes)`` logits against ``batch.labels``."""
    return F.cross_entropy(logits, batch.required_labels())


def match_flags(token_ids: torch.Tensor, segment_ids: torch.Tensor, key_mask: torch.Tensor) -> torch.Tensor:
    """``(B, L)`` bool: the token is a real character that also occurs in the other segment.

    Args:
        token_ids, segment_ids: ``(B, L)`` long; key_mask: ``(B, L)`` bool, ``True`` = real.
    """
    is_char = key_mask & (token_ids >= _FIRST_CHARACTER_ID)
    same_token = token_ids[:, :, None] == token_ids[:, None, :]  # (B, L, L)
    other_segment = segment_ids[:, :, None] != segment_ids[:, None, :]
    return (same_token & other_segment & is_char[:, None, :]).any(dim=-1) & is_char


def overlap_features(token_ids: torch.Tensor, segment_ids: torch.Tensor, key_mask: torch.Tensor) -> torch.Tensor:
    """``(B, 3)`` float: share of A's characters found in B, of B's found in A, length difference."""
    matched = match_flags(token_ids, segment_ids, key_mask).float()
    is_char = (key_mask & (token_ids >= _FIRST_CHARACTER_ID)).float()
    in_a, in_b = is_char * (segment_ids == 0), is_char * (segment_ids == 1)
    len_a, len_b = in_a.sum(1).clamp(min=1), in_b.sum(1).clamp(min=1)
    share_a = (matched * in_a).sum(1) / len_a
    share_b = (matched * in_b).sum(1) / len_b
    length_gap = (len_a - len_b).abs() / torch.maximum(len_a, len_b)
    return torch.stack([share_a, share_b, length_gap], dim=1)


def _check_batch(batch: object) -> None:
    if not isinstance(batch, PairBatch):
        raise CourseInputError(f"PairClassifier takes a PairBatch (see lessons_lib.pairs.encoding), got {type(batch).__name__}")


class PairClassifier(nn.Module):
    """Encoder + ``[CLS]`` → dense + tanh → dropout → ``n_classes`` scores."""

    def __init__(self, config: PairClassifierConfig) -> None:
        super().__init__()
        self.config = config
        self.encoder = Encoder(config.encoder)
        n_extra = 3 if config.overlap_features else 0
        d_model = config.encoder.d_model
        self.pooler = nn.Linear(d_model + n_extra, d_model)
        self.dropout = nn.Dropout(config.encoder.dropout)
        self.classifier = nn.Linear(d_model, config.n_classes)

    def attention_bias(self, batch: PairBatch) -> torch.Tensor | Sequence[torch.Tensor | None] | None:
        """Hook for variants: an attention bias broadcastable to ``(B, H, L, L)``; none here."""
        return None

    def segment_ids(self, batch: PairBatch) -> torch.Tensor:
        """``(B, L)`` segment ids the encoder reads: the sentence, plus 2 · matched with ``match_flags``."""
        if not self.config.match_flags:
            return batch.segment_ids
        flags = match_flags(batch.token_ids, batch.segment_ids, batch.key_mask)
        return batch.segment_ids + 2 * flags.long()

    def encode(self, batch: PairBatch) -> torch.Tensor:
        """``(B, L, D)`` hidden states of the batch."""
        return self.encoder(batch.token_ids, self.segment_ids(batch), batch.key_mask,
                            attn_bias=self.attention_bias(batch))

    def classify(self, states: torch.Tensor, batch: PairBatch) -> torch.Tensor:
        """The head: ``(B, L, D)`` hidden states → ``(B, n_classes)`` logits from the ``[CLS]`` position."""
        cls_vector = states[:, 0]  # (B, D): position 0 is [CLS]
        if self.config.overlap_features:
            cls_vector = torch.cat([cls_vector, overlap_features(batch.token_ids, batch.segment_ids, batch.key_mask)], 1)
        pooled = torch.tanh(self.pooler(cls_vector))
        return self.classifier(self.dropout(pooled))

    def forward(self, batch: PairBatch) -> torch.Tensor:
        """``(B, n_classes)`` logits for a :class:`PairBatch`."""
        _check_batch(batch)
        return self.classify(self.encode(batch), batch)

    def training_loss(self, batch: PairBatch) -> torch.Tensor:
        """The loss the trainer minimises: cross-entropy of the logits against ``batch.labels``.

        Variants with an auxiliary objective (a distance predictor) add their term here.
        """
        return classification_loss(self(batch), batch)

    def set_keep_attention(self, keep: bool = True) -> None:
        """Store every block's attention weights on the next forward (for heatmaps)."""
        self.encoder.set_keep_attention(keep)

    def attention_maps(self) -> list[torch.Tensor]:
        """Each block's last attention weights ``(B, H, L, L)``."""
        return self.encoder.attention_maps()
