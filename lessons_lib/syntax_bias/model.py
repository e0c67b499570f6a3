"""The syntax-biased pair classifier and the per-batch bucket matrices it reads.

- :class:`SyntaxBiasedPairClassifier` — :class:`lessons_lib.pairs.classifier.PairClassifier`
  whose attention gets a bias module's output (:mod:`lessons_lib.syntax_bias.variants`)
  through the encoder's ``attn_bias``. With no bias module it *is* the baseline: same
  layers, same random draws.
- :func:`bucket_extras` — the ``extras_fn`` that puts each batch's bucket matrices
  ``batch.extras["syntax_buckets"]`` ``(B, L, L)`` next to its tokens, from the parses of
  the two sentences (:mod:`lessons_lib.syntax.buckets`).
- :func:`position_extras` — the same for relative-position buckets (the non-syntactic
  control), from the strings (and, with ``unit="word"``, the segmentation) alone. The bias
  modules cannot tell the two apart: only the bucket matrices differ.
- :func:`extras_for` — the ``extras_fn`` a registry variant reads (``None`` for the baseline).
- :func:`check_parse_alignment` — a parse must spell its sentence's characters, or the
  character-to-word alignment would silently be wrong.
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

import torch

from lessons_lib.errors import CourseInputError
from lessons_lib.pairs.classifier import PairClassifier
from lessons_lib.pairs.config import PairClassifierConfig
from lessons_lib.pairs.data import PairExample
from lessons_lib.pairs.encoding import ExtrasFn, PairBatch
from lessons_lib.pairs.vocab import tokenize_chars
from lessons_lib.syntax.buckets import (PAD_BUCKET, POSITION_UNITS, BucketScheme, batch_pair_distance_buckets,
                                        batch_pair_position_buckets)
from lessons_lib.syntax.parser import Parse
from lessons_lib.syntax_bias.registry import variant as registry_entry
from lessons_lib.syntax_bias.variants import BucketBias
from lessons_lib.validation import check_choice

__all__ = ["BUCKETS_KEY", "SyntaxBiasedPairClassifier", "bucket_extras", "position_extras", "extras_for",
           "check_parse_alignment"]

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


def _memoised_extras(compute: Callable[[list[tuple[str, str]]], torch.Tensor], scheme: BucketScheme) -> ExtrasFn:
    """An ``extras_fn`` that computes each pair's bucket matrix once (``compute(text pairs) -> (N, L, L)``) and keeps it.

    The matrices do not change during an experiment, and recomputing them for every batch
    would cost more than the attention itself; they are kept as int8, cut to the pair's length.
    """
    if scheme.n_buckets > 127:
        raise CourseInputError(f"{scheme.n_buckets} buckets do not fit the int8 memo; use max_distance ≤ 124")
    memo: dict[tuple[str, str], torch.Tensor] = {}

    def extras(chunk: Sequence[PairExample], batch: PairBatch) -> dict[str, torch.Tensor]:
        todo = list(dict.fromkeys((ex.text_a, ex.text_b) for ex in chunk if (ex.text_a, ex.text_b) not in memo))
        if todo:
            for key, matrix in zip(todo, compute(todo)):
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


def _parse_of(parses: Mapping[str, Parse], text: str) -> Parse:
    if text not in parses:
        raise CourseInputError(f"no parse for {text!r}; pre-parse the data first")
    return parses[text]


def bucket_extras(parses: Mapping[str, Parse], scheme: BucketScheme, max_len: int) -> ExtrasFn:
    """An ``extras_fn`` for :func:`lessons_lib.pairs.encoding.make_batches` adding the tree-distance bucket matrices.

    A pair's matrix is computed once (the first time the pair is seen, in either order)
    and kept for later epochs and evaluations.

    Args:
        parses: sentence text → its :class:`Parse` (every sentence of the batches must be there).
        scheme: the bucket scheme (max distance, log buckets).
        max_len: the same ``max_len`` the batches are made with (truncation must agree).

    Returns:
        ``fn(pairs, batch) -> {"syntax_buckets": (B, L, L) long}``, ``-1`` at padding.
    """
    def compute(todo: list[tuple[str, str]]) -> torch.Tensor:
        rows = []
        for text_a, text_b in todo:
            pa, pb = _parse_of(parses, text_a), _parse_of(parses, text_b)
            rows.append((pa.words, pa.heads, pb.words, pb.heads))
        return batch_pair_distance_buckets(rows, max_len=max_len, scheme=scheme)

    return _memoised_extras(compute, scheme)


def position_extras(scheme: BucketScheme, max_len: int, unit: str = "char",
                    parses: Mapping[str, Parse] | None = None) -> ExtrasFn:
    """An ``extras_fn`` adding relative-position bucket matrices under the same key (the non-syntactic control).

    Args:
        scheme: the bucket scheme applied to ``|i − j|``.
        max_len: the batches' ``max_len``.
        unit: ``"char"`` (from the text alone) or ``"word"`` (the parses' words; needs ``parses``).
        parses: sentence text → :class:`Parse`, for ``unit="word"``.

    Returns:
        ``fn(pairs, batch) -> {"syntax_buckets": (B, L, L) long}``, ``-1`` at padding.
    """
    check_choice(unit, "`unit`", POSITION_UNITS)
    if unit == "word" and parses is None:
        raise CourseInputError("relative-position buckets in words need `parses` (for the segmentation)")

    def words(text: str) -> Sequence[str]:
        return tokenize_chars(text) if unit == "char" else _parse_of(parses, text).words

    def compute(todo: list[tuple[str, str]]) -> torch.Tensor:
        pairs = [(words(a), words(b)) for a, b in todo]
        return batch_pair_position_buckets(pairs, max_len=max_len, scheme=scheme, unit=unit)

    return _memoised_extras(compute, scheme)


def extras_for(variant: str, parses: Mapping[str, Parse], scheme: BucketScheme, max_len: int,
               options: object = None) -> ExtrasFn | None:
    """The ``extras_fn`` of registry variant ``variant``: tree buckets, position buckets, or ``None`` (the baseline).

    Args:
        options: the variant's options dataclass (``position_unit`` for the position variants).
    """
    source = registry_entry(variant).buckets
    if source is None:
        return None
    if source == "tree":
        return bucket_extras(parses, scheme, max_len)
    return position_extras(scheme, max_len, getattr(options, "position_unit", "char"), parses)
