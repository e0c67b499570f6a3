"""The syntax-biased translator: the course's encoder–decoder whose encoder self-attention adds a
syntax bias (:mod:`lessons_lib.syntax_bias.variants`), exactly as the pair classifier's does.

With no bias module it *is* the plain :class:`~lessons_lib.transformer.decoder.EncoderDecoder`:
the bias modules draw no random numbers, so the same seed gives the same weights.
"""

from __future__ import annotations

import torch
from torch import nn

from lessons_lib.errors import CourseInputError
from lessons_lib.syntax.buckets import DEFAULT_SCHEME, BucketScheme
from lessons_lib.syntax_bias.variants import BucketBias, check_buckets, make_bias
from lessons_lib.transformer.config import EncoderConfig
from lessons_lib.transformer.decoder import EncoderDecoder, beam_search, greedy_decode, smoothed_cross_entropy
from lessons_lib.translation.encoding import BOS_ID, EOS_ID, PAD_ID, TranslationBatch

__all__ = ["SyntaxBiasedTranslator", "build_translator"]


class SyntaxBiasedTranslator(nn.Module):
    """An :class:`EncoderDecoder` plus an optional bias on its encoder's self-attention.

    Args:
        config: the encoder's (and decoder's) sizes; ``vocab_size`` is the source vocabulary.
        target_vocab_size: the English vocabulary.
        bias: a :class:`~lessons_lib.syntax_bias.variants.BucketBias` over source buckets, or ``None``.
    """

    def __init__(self, config: EncoderConfig, target_vocab_size: int, bias: BucketBias | None = None) -> None:
        super().__init__()
        self.transformer = EncoderDecoder(config, target_vocab_size=target_vocab_size, tie_output=True)
        if bias is not None and bias.n_layers != config.n_layers:
            raise CourseInputError(f"the bias serves {bias.n_layers} blocks but the encoder has {config.n_layers}")
        self.syntax_bias = bias

    def source_bias(self, batch: TranslationBatch) -> list[torch.Tensor | None] | None:
        """One ``(B, 1 or H, S, S)`` bias per encoder block from ``batch.buckets`` (``None`` without a bias)."""
        if self.syntax_bias is None:
            return None
        if batch.buckets is None:
            raise CourseInputError("this translator has a syntax bias: its batches need source buckets")
        check_buckets(batch.buckets, self.syntax_bias.n_buckets)
        real = batch.source_mask[:, :, None] & batch.source_mask[:, None, :]
        if batch.buckets.shape != real.shape or not torch.equal(batch.buckets >= 0, real):
            raise CourseInputError(f"source buckets {tuple(batch.buckets.shape)} do not line up with the batch's "
                                   f"characters {tuple(real.shape)}")
        return list(self.syntax_bias.biases(batch.buckets))

    def epoch_summary(self) -> dict:
        """``{"bias_max_abs": …}``, the largest |entry| of a learned table's effective values, so that a
        table that never moved is told from one that moved and did not help; ``{}`` without one."""
        if self.syntax_bias is None or not any(p.requires_grad for p in self.syntax_bias.parameters()):
            return {}
        return {"bias_max_abs": float(self.syntax_bias.bias_per_bucket().abs().max())}

    def forward(self, batch: TranslationBatch) -> torch.Tensor:
        """Teacher-forced logits ``(B, T, V)``."""
        return self.transformer(batch.source_ids, batch.source_mask, batch.target_in, batch.target_mask,
                                self.source_bias(batch))

    def loss(self, batch: TranslationBatch, label_smoothing: float) -> torch.Tensor:
        """Label-smoothed cross-entropy per real target token (padding ignored)."""
        return smoothed_cross_entropy(self(batch), batch.target_out, PAD_ID, label_smoothing)

    @torch.no_grad()
    def translate(self, batch: TranslationBatch, max_len: int, beam_size: int = 1) -> list[list[int]]:
        """Target ids of each source (no BOS/EOS): greedy with ``beam_size=1``, else beam search."""
        bias = self.source_bias(batch)
        if beam_size == 1:
            return greedy_decode(self.transformer, batch.source_ids, batch.source_mask, BOS_ID, EOS_ID, max_len,
                                 attn_bias=bias)
        return beam_search(self.transformer, batch.source_ids, batch.source_mask, BOS_ID, EOS_ID, max_len,
                           beam_size=beam_size, attn_bias=bias)


def build_translator(config: EncoderConfig, target_vocab_size: int, variant: str, seed: int,
                     scheme: BucketScheme = DEFAULT_SCHEME, options: object = None) -> SyntaxBiasedTranslator:
    """A translator with the bias of registry ``variant`` (``"none"``: no bias), weights drawn from ``seed``."""
    torch.manual_seed(seed)
    bias = make_bias(variant, scheme, config.n_heads, config.n_layers, options)
    return SyntaxBiasedTranslator(config, target_vocab_size, bias)
