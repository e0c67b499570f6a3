"""Sentence pairs as model input: ``[CLS] s1 [SEP] s2 [SEP]``, segment ids, truncation, batches.

Encoding a pair (BERT's layout, the textbook's too)::

    tokens   [CLS] 什 么 花 … [SEP] 什 么 花 … [SEP]
    segment    0   0  0  0  …   0    1  1  1  …   1

Segment 0 covers ``[CLS]``, the first sentence and the first ``[SEP]``; segment 1 covers the
second sentence and the last ``[SEP]``. A pair longer than ``max_len`` is truncated by
removing characters from the end of the *longer* sentence, one at a time, so both
sentences keep as much as possible (cutting only the tail of the concatenation could
delete the second sentence entirely, and the pair would no longer be a pair).

A batch pads every pair to the batch's longest one (not to a global maximum: LCQMC
questions are short, and padding to 512 would multiply the work). Which pairs share a batch
is :func:`batch_indices`' job: in a plain shuffled order a batch of 32 LCQMC pairs is padded
to about twice its real positions (the long tail of pair lengths), so training can instead
group pairs of similar length (``batching="bucketed"``) and evaluation sorts by length
(:func:`length_sorted_order`). It carries three
tensors — token ids, segment ids and the key mask — plus labels, and an ``extras`` dict
for per-pair tensors that a model variant may need (e.g. a syntax distance matrix).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Callable, Iterator, Sequence, TypeVar

import torch

from lessons_lib.errors import CourseInputError, FieldName, input_error
from lessons_lib.validation import check_choice, check_int, check_probability
from lessons_lib.pairs.config import BATCHING
from lessons_lib.pairs.data import PairExample
from lessons_lib.pairs.vocab import Vocabulary, tokenize_chars

Token = TypeVar("Token", int, str)  # ids, or the characters they stand for

__all__ = [
    "EncodedPair",
    "PairBatch",
    "truncate_pair",
    "encode_pair",
    "collate_pairs",
    "ExtrasFn",
    "encoded_length",
    "batch_indices",
    "length_sorted_order",
    "padded_positions",
    "make_batches",
    "swap_pair",
]


@dataclass(frozen=True)
class EncodedPair:
    """One encoded pair: ids and segment ids of equal length ``L = len(a) + len(b) + 3``."""

    token_ids: tuple[int, ...]
    segment_ids: tuple[int, ...]

    def __len__(self) -> int:
        return len(self.token_ids)


def truncate_pair(ids_a: Sequence[Token], ids_b: Sequence[Token], max_tokens: int) -> tuple[list[Token], list[Token]]:
    """Shorten two token lists so that ``len(a) + len(b) <= max_tokens``, longer one first.

    Each list keeps at least one token (so ``max_tokens`` must be ≥ 2).
    """
    check_int(max_tokens, "`max_tokens` (one token per sentence at least)", minimum=2)
    a, b = list(ids_a), list(ids_b)
    while len(a) + len(b) > max_tokens:
        if len(a) >= len(b):  # ties cut the first sentence, as BERT's reference code does
            a.pop()
        else:
            b.pop()
    return a, b


def encode_pair(vocab: Vocabulary, text_a: str, text_b: str, max_len: int = 64) -> EncodedPair:
    """``[CLS] a [SEP] b [SEP]`` as ids, with segment ids, at most ``max_len`` positions.

    Raises:
        CourseInputError: an empty sentence, or ``max_len`` < 5 (3 special tokens + 1 + 1).
    """
    check_int(max_len, "`max_len` (3 special tokens + 1 character per sentence)", minimum=5)
    ids_a, ids_b = vocab.encode(text_a), vocab.encode(text_b)
    if not ids_a or not ids_b:
        which = "text_a" if not ids_a else "text_b"
        raise input_error(FieldName(which), f" has no characters to encode: {text_a!r} / {text_b!r}")
    ids_a, ids_b = truncate_pair(ids_a, ids_b, max_len - 3)
    token_ids = (vocab.cls_id, *ids_a, vocab.sep_id, *ids_b, vocab.sep_id)
    segment_ids = (0,) * (len(ids_a) + 2) + (1,) * (len(ids_b) + 1)
    return EncodedPair(token_ids, segment_ids)


@dataclass
class PairBatch:
    """A padded batch. ``B`` pairs, ``L`` = the longest pair's length.

    Attributes:
        token_ids: ``(B, L)`` long, ``[PAD]`` = 0 after each pair's end.
        segment_ids: ``(B, L)`` long, 0/1 (0 at padding, which the mask hides anyway).
        key_mask: ``(B, L)`` bool, ``True`` at real tokens (the course's mask convention).
        labels: ``(B,)`` long, or ``None`` for unlabelled pairs.
        extras: further per-batch tensors keyed by name, for model variants (first dim ``B``).
        pairs: the :class:`PairExample` s the batch was made from, in batch order.
    """

    token_ids: torch.Tensor
    segment_ids: torch.Tensor
    key_mask: torch.Tensor
    labels: torch.Tensor | None = None
    extras: dict[str, torch.Tensor] = field(default_factory=dict)
    pairs: list[PairExample] = field(default_factory=list)

    def __len__(self) -> int:
        return int(self.token_ids.shape[0])

    def required_labels(self) -> torch.Tensor:
        """``(B,)`` the labels, where a loss or an accuracy needs them (unlabelled pairs have none)."""
        if self.labels is None:
            raise CourseInputError("this batch was made without labels: a loss or an accuracy needs labelled pairs")
        return self.labels

    def to(self, device: str | torch.device) -> "PairBatch":
        """The same batch on ``device``."""
        return PairBatch(
            self.token_ids.to(device),
            self.segment_ids.to(device),
            self.key_mask.to(device),
            None if self.labels is None else self.labels.to(device),
            {name: value.to(device) for name, value in self.extras.items()},
            self.pairs,
        )


def collate_pairs(encoded: Sequence[EncodedPair], labels: Sequence[int] | None = None, pad_id: int = 0) -> PairBatch:
    """Pad encoded pairs to the longest one and stack them into a :class:`PairBatch`."""
    if len(encoded) == 0:
        raise input_error(FieldName("encoded"), " is empty: a batch needs at least one pair")
    if labels is not None and len(labels) != len(encoded):
        raise CourseInputError(f"{len(labels)} labels for {len(encoded)} pairs")
    longest = max(len(pair) for pair in encoded)
    token_ids = torch.full((len(encoded), longest), pad_id, dtype=torch.long)
    segment_ids = torch.zeros((len(encoded), longest), dtype=torch.long)
    key_mask = torch.zeros((len(encoded), longest), dtype=torch.bool)
    for row, pair in enumerate(encoded):
        n = len(pair)
        token_ids[row, :n] = torch.tensor(pair.token_ids)
        segment_ids[row, :n] = torch.tensor(pair.segment_ids)
        key_mask[row, :n] = True
    label_tensor = None if labels is None else torch.tensor([int(y) for y in labels], dtype=torch.long)
    return PairBatch(token_ids, segment_ids, key_mask, label_tensor)


# A hook computing extra tensors for a batch: (the batch's pairs, the batch) -> {name: tensor}.
ExtrasFn = Callable[[Sequence[PairExample], PairBatch], dict[str, torch.Tensor]]


def swap_pair(example: PairExample) -> PairExample:
    """The same pair with its sentences in the other order (the label does not change)."""
    return PairExample(example.text_b, example.text_a, example.label, example.line)


# Pairs per bucketing pool, in batches: enough for batches of near-equal length, few enough
# that the order stays random (a pool is a random slice of the shuffled split).
POOL_BATCHES = 50


def encoded_length(example: PairExample, max_len: int = 64) -> int:
    """Positions ``[CLS] a [SEP] b [SEP]`` takes after truncation to ``max_len`` (what a batch pads to)."""
    return min(len(tokenize_chars(example.text_a)) + len(tokenize_chars(example.text_b)) + 3, max_len)


def length_sorted_order(lengths: Sequence[int]) -> list[int]:
    """Indices of ``lengths`` from shortest to longest (ties in their original order)."""
    return sorted(range(len(lengths)), key=lengths.__getitem__)


def batch_indices(lengths: Sequence[int], batch_size: int, *, shuffle: bool = False, seed: int = 0,
                  batching: str = "plain", rng: random.Random | None = None) -> list[list[int]]:
    """Which pairs form each batch: every index of ``lengths`` exactly once.

    ``"plain"``: the indices (shuffled when ``shuffle``) cut into batches of ``batch_size``.
    ``"bucketed"``: the shuffled indices are cut into pools of :data:`POOL_BATCHES` batches,
    each pool is sorted by length and cut into batches, and the batches are shuffled — so a
    batch holds pairs of similar length (little padding) while the order stays random.
    Without ``shuffle`` it sorts the whole split by length (for evaluation).
    Both draw from ``rng`` (default ``random.Random(seed)``): the same seed gives the same batches.

    Args:
        lengths: ``(N,)`` each pair's padded length (see :func:`encoded_length`).
        batch_size: pairs per batch; only the last batch may be smaller.
    """
    check_int(batch_size, FieldName("batch_size"))
    check_choice(batching, FieldName("batching"), BATCHING)
    rng = rng if rng is not None else random.Random(seed)
    order = list(range(len(lengths)))
    if shuffle:
        rng.shuffle(order)
    if batching == "plain":
        return [order[start:start + batch_size] for start in range(0, len(order), batch_size)]
    if not shuffle:
        order = length_sorted_order(lengths)
        return [order[start:start + batch_size] for start in range(0, len(order), batch_size)]
    pool = POOL_BATCHES * batch_size  # a multiple of batch_size: only the last pool leaves a short batch
    batches = []
    for start in range(0, len(order), pool):
        ranked = sorted(order[start:start + pool], key=lengths.__getitem__)
        batches += [ranked[i:i + batch_size] for i in range(0, len(ranked), batch_size)]
    rng.shuffle(batches)
    return batches


def padded_positions(lengths: Sequence[int], batches: Sequence[Sequence[int]]) -> int:
    """Positions the batches hold once padded to their longest pair (real ones included)."""
    return sum(len(batch) * max(lengths[i] for i in batch) for batch in batches)


def make_batches(
    examples: Sequence[PairExample],
    vocab: Vocabulary,
    batch_size: int,
    *,
    max_len: int = 64,
    shuffle: bool = False,
    seed: int = 0,
    swap_probability: float = 0.0,
    extras_fn: ExtrasFn | None = None,
    batching: str = "plain",
) -> Iterator[PairBatch]:
    """Yield padded batches of ``examples``.

    Args:
        examples: labelled pairs.
        vocab: the training vocabulary.
        batch_size: pairs per batch (the last batch may be smaller).
        max_len: positions per pair, special tokens included (longer pairs are truncated).
        shuffle: visit the pairs in an order drawn from ``seed`` (same seed → same order).
        seed: seed of the order and of the swaps.
        swap_probability: chance of presenting a pair as (b, a) — pair-order augmentation,
            since "a means b" and "b means a" have the same label.
        extras_fn: optional hook adding tensors to ``batch.extras``.
        batching: ``"plain"`` or ``"bucketed"`` (pairs of similar length share a batch; see
            :func:`batch_indices`); plain batches are what the lessons train on.
    """
    check_int(batch_size, FieldName("batch_size"))
    check_probability(swap_probability, FieldName("swap_probability"))
    rng = random.Random(seed)
    # Only bucketed batches read the lengths: the plain order does not measure every pair.
    lengths = [encoded_length(ex, max_len) for ex in examples] if batching == "bucketed" else [0] * len(examples)
    for indices in batch_indices(lengths, batch_size, shuffle=shuffle, batching=batching, rng=rng):
        chunk = [examples[i] for i in indices]
        if swap_probability > 0.0:
            chunk = [swap_pair(ex) if rng.random() < swap_probability else ex for ex in chunk]
        encoded = [encode_pair(vocab, ex.text_a, ex.text_b, max_len) for ex in chunk]
        batch = collate_pairs(encoded, [ex.label for ex in chunk], pad_id=vocab.pad_id)
        batch.pairs = chunk
        if extras_fn is not None:
            batch.extras.update(extras_fn(chunk, batch))
        yield batch
