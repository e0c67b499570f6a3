"""The syntax-biased pair classifier and the per-batch bucket matrices it reads.

- :class:`SyntaxBiasedPairClassifier` — :class:`lessons_lib.pairs.classifier.PairClassifier`
  whose attention gets a bias module's output (:mod:`lessons_lib.syntax_bias.variants`)
  through the encoder's ``attn_bias``. With no bias module it *is* the baseline: same
  layers, same random draws.
- :func:`bucket_extras` — the ``extras_fn`` that puts each batch's bucket matrices
  ``batch.extras["syntax_buckets"]`` ``(B, L, L)`` next to its tokens, from the parses of
  the two sentences (:mod:`lessons_lib.syntax.buckets`).
- :func:`check_parse_alignment` — a parse must spell its sentence's characters, or the
  character-to-word alignment would silently be wrong.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import torch

from lessons_lib.errors import CourseInputError
from lessons_lib.pairs.classifier import PairClassifier
from lessons_lib.pairs.config import PairClassifierConfig
from lessons_lib.pairs.data import PairExample
from lessons_lib.pairs.encoding import ExtrasFn, PairBatch
from lessons_lib.pairs.vocab import tokenize_chars
from lessons_lib.syntax.buckets import PAD_BUCKET, BucketScheme, batch_pair_distance_buckets
from lessons_lib.syntax.parser import Parse
from lessons_lib.syntax_bias.variants import BucketBias

__all__ = ["BUCKETS_KEY", "SyntaxBiasedPairClassifier", "bucket_extras", "check_parse_alignment"]

BUCKETS_KEY = "syntax_buckets"


class SyntaxBiasedPairClassifier(PairClassifier):
    """A pair classifier whose every attention block adds a syntax bias to its scores.

    Args:
        config: the classifier's sizes and switches.
        bias: a :class:`lessons_lib.syntax_bias.variants.BucketBias` (``None``: the plain baseline).
    """

    def __init__(self, config: PairClassifierConfig, bias: BucketBias | None) -> None:
        super().__init__(config)
        if bias is not None and bias.n_layers != config.encoder.n_layers:
            raise CourseInputError(f"the bias serves {bias.n_layers} blocks but the encoder has {config.encoder.n_layers}")
        self.syntax_bias = bias

    def attention_bias(self, batch: PairBatch) -> list[torch.Tensor] | None:
        """One ``(B, 1 or H, L, L)`` bias per block from ``batch.extras["syntax_buckets"]``."""
        if self.syntax_bias is None:
            return None
        buckets = batch.extras.get(BUCKETS_KEY)
        if buckets is None:
            raise CourseInputError(
                f"this model needs `batch.extras[{BUCKETS_KEY!r}]`: pass `extras_fn=bucket_extras(...)` "
                "when making batches (or use the variant 'none')"
            )
        pairs_real = batch.key_mask[:, :, None] & batch.key_mask[:, None, :]
        if buckets.shape != pairs_real.shape or not torch.equal(buckets >= 0, pairs_real):
            raise CourseInputError(
                f"`{BUCKETS_KEY}` {tuple(buckets.shape)} does not line up with the batch's tokens "
                f"{tuple(pairs_real.shape)}: its -1 (padding) entries must be exactly the pairs with a padding position"
            )
        return self.syntax_bias(buckets)


def check_parse_alignment(text: str, parse: Parse) -> None:
    """The parse's words must spell the sentence's characters (whitespace left out), as the model reads it."""
    chars = tokenize_chars(text)
    spelled = [ch for word in parse.words for ch in word if not ch.isspace()]
    if spelled != chars:
        raise CourseInputError(
            f"the parse of {text!r} has words {list(parse.words)} that do not spell its characters; "
            "the character-to-word alignment would be wrong"
        )


def bucket_extras(parses: Mapping[str, Parse], scheme: BucketScheme, max_len: int) -> ExtrasFn:
    """An ``extras_fn`` for :func:`lessons_lib.pairs.encoding.make_batches` adding the bucket matrices.

    A pair's matrix is computed once (the first time the pair is seen, in either order)
    and kept, as int8, for later epochs and evaluations: the parses do not change during
    an experiment, and recomputing tree distances for every batch would cost more than the
    attention itself.

    Args:
        parses: sentence text → its :class:`Parse` (every sentence of the batches must be there).
        scheme: the bucket scheme (max distance, log buckets).
        max_len: the same ``max_len`` the batches are made with (truncation must agree).

    Returns:
        ``fn(pairs, batch) -> {"syntax_buckets": (B, L, L) long}``, ``-1`` at padding.
    """
    if scheme.n_buckets > 127:
        raise CourseInputError(f"{scheme.n_buckets} buckets do not fit the int8 memo; use max_distance ≤ 124")
    memo: dict[tuple[str, str], torch.Tensor] = {}

    def extras(chunk: Sequence[PairExample], batch: PairBatch) -> dict[str, torch.Tensor]:
        todo = [(ex.text_a, ex.text_b) for ex in chunk if (ex.text_a, ex.text_b) not in memo]
        todo = list(dict.fromkeys(todo))
        if todo:
            rows = []
            for text_a, text_b in todo:
                missing = [t for t in (text_a, text_b) if t not in parses]
                if missing:
                    raise CourseInputError(f"no parse for {missing[0]!r}; pre-parse the data first")
                pa, pb = parses[text_a], parses[text_b]
                rows.append((pa.words, pa.heads, pb.words, pb.heads))
            fresh = batch_pair_distance_buckets(rows, max_len=max_len, scheme=scheme)
            for key, matrix in zip(todo, fresh):
                n = int((matrix[0] >= 0).sum())  # the pair's own length
                memo[key] = matrix[:n, :n].to(torch.int8)
        length = batch.token_ids.shape[1]
        out = torch.full((len(chunk), length, length), PAD_BUCKET, dtype=torch.long)
        for row, ex in enumerate(chunk):
            matrix = memo[(ex.text_a, ex.text_b)]
            n = matrix.shape[0]
            if n > length:
                raise CourseInputError(f"the pair on line {ex.line} has {n} positions but its batch only {length}")
            out[row, :n, :n] = matrix
        return {BUCKETS_KEY: out}

    return extras
