"""The syntax-biased pair classifier and the per-batch bucket matrices it reads.

- :class:`SyntaxBiasedPairClassifier` — :class:`lessons_lib.pairs.classifier.PairClassifier`
  whose attention gets a bias module's output (:mod:`lessons_lib.syntax_bias.variants`)
  through the encoder's ``attn_bias``. With no bias module it *is* the baseline: same
  layers, same random draws. Two options hold for every variant: **bias dropout** (during
  training the whole bias of a pair is left out with probability ``bias_dropout``, so the
  model also learns to work without a tree) and a **distance predictor**
  (:mod:`lessons_lib.syntax_bias.predictor`) trained alongside; at test time the buckets
  come from the trees, from the predictor, or from nowhere (:meth:`~SyntaxBiasedPairClassifier.set_test_buckets`).
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

from lessons_lib.errors import CourseInputError, FieldName, input_error
from lessons_lib.pairs.classifier import PairClassifier, classification_loss
from lessons_lib.pairs.config import PairClassifierConfig
from lessons_lib.pairs.data import PairExample
from lessons_lib.pairs.encoding import ExtrasFn, PairBatch
from lessons_lib.pairs.vocab import tokenize_chars
from lessons_lib.syntax.buckets import (INT8_MAX_DISTANCE, PAD_BUCKET, POSITION_UNITS, BucketScheme, batch_pair_distance_buckets,
                                        batch_pair_position_buckets, layout_buckets)
from lessons_lib.syntax.parser import Parse
from lessons_lib.syntax_bias.predictor import DistancePredictor, predictor_loss
from lessons_lib.syntax_bias.registry import variant as registry_entry
from lessons_lib.syntax_bias.variants import BucketBias, check_buckets
from lessons_lib.validation import check_choice, check_number, check_probability

__all__ = ["BUCKETS_KEY", "TEST_BUCKETS", "SyntaxBiasedPairClassifier", "bucket_extras", "position_extras",
           "extras_for", "check_parse_alignment"]

BUCKETS_KEY = "syntax_buckets"
# Where the buckets come from at test time: the batch's (the trees the run was trained with:
# a parser's, gold or noisy), the distance predictor, or nowhere (the bias is left out: the
# trained weights run as a plain encoder, no parser needed).
TEST_BUCKETS = ("trees", "predicted", "none")


class SyntaxBiasedPairClassifier(PairClassifier):
    """A pair classifier whose every attention block adds a syntax bias to its scores.

    Args:
        config: the classifier's sizes and switches.
        bias: a :class:`lessons_lib.syntax_bias.variants.BucketBias` (``None``: the plain baseline).
        bias_dropout: in training mode, leave out the whole bias of each pair with this
            probability (one draw per pair and step, from torch's generator). At 0 nothing
            is drawn, so the model is exactly the one without the option; at 1 the bias is
            never used, so the forward pass is exactly the baseline's.
        predictor: a :class:`~lessons_lib.syntax_bias.predictor.DistancePredictor` trained
            on the parser's buckets next to the task (needs a bias).
        predictor_weight: the weight of its loss in :meth:`training_loss`.
    """

    def __init__(self, config: PairClassifierConfig, bias: BucketBias | None, bias_dropout: float = 0.0,
                 predictor: DistancePredictor | None = None, predictor_weight: float = 1.0) -> None:
        super().__init__(config)
        if bias is not None and bias.n_layers != config.encoder.n_layers:
            raise CourseInputError(f"the bias serves {bias.n_layers} blocks but the encoder has {config.encoder.n_layers}")
        if predictor is not None and bias is None:
            raise CourseInputError("a distance predictor predicts the buckets of a bias; the baseline has no bias")
        self.syntax_bias = bias
        self.bias_dropout = check_probability(bias_dropout, FieldName("bias_dropout"))
        self.distance_predictor = predictor
        self.predictor_weight = check_number(predictor_weight, FieldName("predictor_weight"), minimum=0.0)
        self.test_buckets = "trees"

    def set_test_buckets(self, source: str) -> "SyntaxBiasedPairClassifier":
        """Where the buckets come from in evaluation mode: ``"trees"`` (the batch's, the default),
        ``"predicted"`` (the distance predictor's; no parser needed) or ``"none"`` (no bias at all)."""
        check_choice(source, FieldName("source"), TEST_BUCKETS)
        if source == "predicted" and self.distance_predictor is None:
            raise CourseInputError("this model has no distance predictor: train it with one to use predicted buckets")
        self.test_buckets = source
        return self

    def attention_bias(self, batch: PairBatch) -> list[torch.Tensor] | None:
        """One ``(B, 1 or H, L, L)`` bias per block from ``batch.extras["syntax_buckets"]``."""
        if self.syntax_bias is None:
            return None
        return self.syntax_bias.biases(self.batch_buckets(batch))

    def batch_buckets(self, batch: PairBatch) -> torch.Tensor:
        """``batch.extras["syntax_buckets"]`` ``(B, L, L)``, checked once: ids in the bias's range and
        ``-1`` exactly at the batch's padding."""
        buckets = batch.extras.get(BUCKETS_KEY)
        if buckets is None:
            raise CourseInputError(
                f"this model needs `batch.extras[{BUCKETS_KEY!r}]`: pass `extras_fn=bucket_extras(...)` "
                "when making batches (or use the variant 'none', or `set_test_buckets('predicted' or 'none')`)"
            )
        if self.syntax_bias is not None:
            check_buckets(buckets, self.syntax_bias.n_buckets)
        pairs_real = batch.key_mask[:, :, None] & batch.key_mask[:, None, :]
        if buckets.shape != pairs_real.shape or not torch.equal(buckets >= 0, pairs_real):
            raise input_error(
                FieldName(BUCKETS_KEY), f" {tuple(buckets.shape)} does not line up with the batch's tokens "
                f"{tuple(pairs_real.shape)}: its -1 (padding) entries must be exactly the pairs with a padding position"
            )
        return buckets

    def epoch_summary(self) -> dict:
        """What the trainer records after each epoch: ``{"bias_max_abs": …}``, the largest |entry| of a
        learned table's effective values (scale and learning-rate multiplier applied), so that a table
        that never moved is told from one that moved and did not help; ``{}`` without a learned table."""
        if self.syntax_bias is None or not any(p.requires_grad for p in self.syntax_bias.parameters()):
            return {}
        return {"bias_max_abs": float(self.syntax_bias.bias_per_bucket().abs().max())}

    def encode(self, batch: PairBatch) -> torch.Tensor:
        """``(B, L, D)`` hidden states of the batch."""
        return self._encode(batch)[0]

    @torch.no_grad()
    def predicted_buckets(self, batch: PairBatch) -> tuple[torch.Tensor, torch.Tensor]:
        """The distance predictor's ``(B, L, L)`` bucket ids for ``batch`` and the ``(B, L, L)``
        bool mask of the pairs it decided (the rest come from the layout); no parser needed."""
        predictor = self.distance_predictor
        if predictor is None:
            raise CourseInputError("this model has no distance predictor")
        x = self.encoder.embeddings(batch.token_ids, self.segment_ids(batch))
        layout, needs_tree = layout_buckets(batch.token_ids, batch.segment_ids, batch.key_mask, predictor.scheme)
        return predictor.fill(predictor(x, batch.key_mask), layout, needs_tree), needs_tree

    def training_loss(self, batch: PairBatch) -> torch.Tensor:
        """Cross-entropy of the task, plus ``predictor_weight`` × the predictor's loss when it has one."""
        states, predictor_term = self._encode(batch)
        loss = classification_loss(self.classify(states, batch), batch)
        return loss if predictor_term is None else loss + self.predictor_weight * predictor_term

    def _encode(self, batch: PairBatch) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Hidden states and the predictor's loss (``None`` unless training with a predictor).

        The embeddings are computed first, once (the predictor reads them), then the blocks:
        the same random draws, in the same order, as the baseline's forward pass.
        """
        if self.syntax_bias is None:
            return super().encode(batch), None
        if self.training and self.test_buckets != "trees":
            raise CourseInputError(f"test buckets {self.test_buckets!r} are for evaluation (model.eval()); "
                                   "training reads the batch's buckets")
        x = self.encoder.embeddings(batch.token_ids, self.segment_ids(batch))
        buckets, predictor_term = self._buckets(batch, x)
        bias = None if buckets is None or self._drops_every_bias() else self._dropout(self.syntax_bias.biases(buckets))
        return self.encoder.run_blocks(x, batch.key_mask, bias), predictor_term

    def _buckets(self, batch: PairBatch, x: torch.Tensor) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        """The ``(B, L, L)`` buckets of this forward pass (``None``: no bias) and the predictor's loss."""
        if self.test_buckets == "none":
            return None, None
        predictor = self.distance_predictor
        buckets = self.batch_buckets(batch) if self.test_buckets == "trees" else None
        if predictor is None or not (self.training or self.test_buckets == "predicted"):
            return buckets, None
        layout, needs_tree = layout_buckets(batch.token_ids, batch.segment_ids, batch.key_mask, predictor.scheme)
        logits = predictor(x, batch.key_mask)
        if self.training:
            if buckets is None:
                raise CourseInputError("the distance predictor learns from the trees: train with test_buckets='trees'")
            return buckets, predictor_loss(predictor, logits, buckets, needs_tree)
        return predictor.fill(logits, layout, needs_tree), None

    def _drops_every_bias(self) -> bool:
        return self.training and self.bias_dropout == 1.0

    def _dropout(self, biases: list[torch.Tensor]) -> list[torch.Tensor]:
        """Bias dropout: in training, each pair's bias (every block's) is 0 with probability ``bias_dropout``."""
        if not self.training or self.bias_dropout == 0.0:
            return biases  # nothing drawn: bit for bit the model without the option
        first = biases[0]
        dropped = torch.rand(first.shape[0], device=first.device) < self.bias_dropout  # (B,)
        dropped = dropped[:, None, None, None]
        zero = torch.zeros((), dtype=first.dtype, device=first.device)
        out: dict[int, torch.Tensor] = {}  # one table shared by the blocks: the same tensor, computed once
        for bias in biases:
            if id(bias) not in out:
                out[id(bias)] = torch.where(dropped, zero, bias)
        return [out[id(bias)] for bias in biases]


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
    if scheme.max_distance > INT8_MAX_DISTANCE:
        raise CourseInputError(f"{scheme.n_buckets} buckets do not fit the int8 memo; use max_distance ≤ {INT8_MAX_DISTANCE}")
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
    check_choice(unit, FieldName("unit"), POSITION_UNITS)
    if unit == "word" and parses is None:
        raise CourseInputError("relative-position buckets in words need `parses` (for the segmentation)")

    def words(text: str) -> Sequence[str]:
        if unit == "char":
            return tokenize_chars(text)
        assert parses is not None  # checked above
        return _parse_of(parses, text).words

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
