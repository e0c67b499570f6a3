"""Sentence-pair classifier: the encoder plus the ``[CLS]`` head of the textbook chapter.

``[CLS] s1 [SEP] s2 [SEP]`` → :class:`lessons_lib.encoder.Encoder` → the ``[CLS]`` vector
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

from dataclasses import asdict, dataclass

import torch
from torch import nn

from lessons_lib.encoder import Encoder, EncoderConfig
from lessons_lib.configs import strict_from_dict
from lessons_lib.errors import CourseInputError
from lessons_lib.pairs import PairBatch

__all__ = ["PairClassifierConfig", "PairClassifier", "match_flags", "overlap_features", "N_SPECIAL_IDS"]

# Ids below this are [PAD], [UNK], [CLS], [SEP] (see lessons_lib.vocab); they never "match".
N_SPECIAL_IDS = 4


@dataclass
class PairClassifierConfig:
    """Encoder sizes (see :class:`EncoderConfig`) and the head's switches."""

    vocab_size: int
    d_model: int = 256
    n_heads: int = 4
    n_layers: int = 1
    d_ff: int = 1024
    dropout: float = 0.1
    max_len: int = 128
    norm_first: bool = False
    activation: str = "gelu"
    match_flags: bool = False
    overlap_features: bool = False
    n_classes: int = 2

    def encoder_config(self) -> EncoderConfig:
        return EncoderConfig(
            vocab_size=self.vocab_size, d_model=self.d_model, n_heads=self.n_heads, n_layers=self.n_layers,
            d_ff=self.d_ff, dropout=self.dropout, max_len=self.max_len, norm_first=self.norm_first,
            n_segments=4 if self.match_flags else 2, activation=self.activation,
        )

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "PairClassifierConfig":
        return strict_from_dict(cls, data)


def match_flags(token_ids: torch.Tensor, segment_ids: torch.Tensor, key_mask: torch.Tensor) -> torch.Tensor:
    """``(B, L)`` bool: the token is a real character that also occurs in the other segment.

    Args:
        token_ids, segment_ids: ``(B, L)`` long; key_mask: ``(B, L)`` bool, ``True`` = real.
    """
    is_char = key_mask & (token_ids >= N_SPECIAL_IDS)
    same_token = token_ids[:, :, None] == token_ids[:, None, :]  # (B, L, L)
    other_segment = segment_ids[:, :, None] != segment_ids[:, None, :]
    return (same_token & other_segment & is_char[:, None, :]).any(dim=-1) & is_char


def overlap_features(token_ids: torch.Tensor, segment_ids: torch.Tensor, key_mask: torch.Tensor) -> torch.Tensor:
    """``(B, 3)`` float: share of A's characters found in B, of B's found in A, length difference."""
    matched = match_flags(token_ids, segment_ids, key_mask).float()
    is_char = (key_mask & (token_ids >= N_SPECIAL_IDS)).float()
    in_a, in_b = is_char * (segment_ids == 0), is_char * (segment_ids == 1)
    len_a, len_b = in_a.sum(1).clamp(min=1), in_b.sum(1).clamp(min=1)
    share_a = (matched * in_a).sum(1) / len_a
    share_b = (matched * in_b).sum(1) / len_b
    length_gap = (len_a - len_b).abs() / torch.maximum(len_a, len_b)
    return torch.stack([share_a, share_b, length_gap], dim=1)


class PairClassifier(nn.Module):
    """Encoder + ``[CLS]`` → dense + tanh → dropout → ``n_classes`` scores."""

    def __init__(self, config: PairClassifierConfig) -> None:
        super().__init__()
        self.config = config
        self.encoder = Encoder(config.encoder_config())
        n_extra = 3 if config.overlap_features else 0
        self.pooler = nn.Linear(config.d_model + n_extra, config.d_model)
        self.dropout = nn.Dropout(config.dropout)
        self.classifier = nn.Linear(config.d_model, config.n_classes)

    def attention_bias(self, batch: PairBatch) -> torch.Tensor | None:
        """Hook for variants: an attention bias broadcastable to ``(B, H, L, L)``; none here."""
        return None

    def encode(self, batch: PairBatch) -> torch.Tensor:
        """``(B, L, D)`` hidden states of the batch."""
        segment_ids = batch.segment_ids
        if self.config.match_flags:
            flags = match_flags(batch.token_ids, batch.segment_ids, batch.key_mask)
            segment_ids = segment_ids + 2 * flags.long()
        return self.encoder(batch.token_ids, segment_ids, batch.key_mask, attn_bias=self.attention_bias(batch))

    def forward(self, batch: PairBatch) -> torch.Tensor:
        """``(B, n_classes)`` logits for a :class:`PairBatch`."""
        if not isinstance(batch, PairBatch):
            raise CourseInputError(f"PairClassifier takes a PairBatch (see lessons_lib.pairs), got {type(batch).__name__}")
        cls_vector = self.encode(batch)[:, 0]  # (B, D): position 0 is [CLS]
        if self.config.overlap_features:
            cls_vector = torch.cat([cls_vector, overlap_features(batch.token_ids, batch.segment_ids, batch.key_mask)], 1)
        pooled = torch.tanh(self.pooler(cls_vector))
        return self.classifier(self.dropout(pooled))

    def set_keep_attention(self, keep: bool = True) -> None:
        """Store every block's attention weights on the next forward (for heatmaps)."""
        self.encoder.set_keep_attention(keep)

    def attention_maps(self) -> list[torch.Tensor]:
        """Each block's last attention weights ``(B, H, L, L)``."""
        return self.encoder.attention_maps()
