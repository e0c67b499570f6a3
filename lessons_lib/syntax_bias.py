"""Syntax-biased attention: a tree-distance bucket → an additive bias on the attention logits.

The seed article's soft syntactic constraint, for the character tokens of a pair
``[CLS] s1 [SEP] s2 [SEP]``: every (query, key) pair of positions has a **bucket id** —
the clamped (optionally log-bucketed) tree distance between the words the two characters
belong to, or one of the kinds "same word", "different sentences", "special token" — and
``-1`` where either position is padding. A table holds one scalar per bucket; the
scalar of a pair's bucket is added to its scaled dot-product score before the softmax::

    scores[b, h, i, j] = q_i · k_j / √d + scale · table[h, bucket[b, i, j]]

It enters :class:`lessons_lib.encoder.Encoder` through ``attn_bias`` (added before the
key-padding mask, so a masked key stays at ``-inf`` whatever its bias).

The variants of the ablation are all modules with the same call, ``(B, L, L)`` bucket
ids → one bias per encoder block:

- :class:`LearnedBucketBias` — the article's method: learnable scalars, zero-initialised
  (so the model starts as the baseline, exactly), shared across heads by default
  (per-head as an option), an optional learnable global scale initialised to 1, one
  table for all blocks by default (per block as an option).
- :class:`FixedDecayBias` — not learned: ``-decay · distance`` for within-sentence
  pairs, 0 for same-word, cross-sentence and special-token pairs.
- :class:`HardMaskBias` — only tree-near pairs (distance ≤ ``max_distance``) may attend
  within a sentence; ``[CLS]``/``[SEP]`` and cross-sentence pairs stay open, or a single
  block could not compare the two questions at all.
- ``"none"`` — no module: the baseline, ``attn_bias=None``.

Bucket ids are defined by :class:`BucketLayout`, which says what each id means (a tree
distance, or one of the three other kinds); the fixed and hard variants read the
distances from it, the learned one only needs the number of buckets.

A pitfall this module guards against: ``table[-1]`` is *the last bucket* in PyTorch, not
an error, so looking up padding ids directly would give padding a real bias. Padding ids
are looked up as bucket 0 and then replaced by an exact 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import torch
from torch import nn

from lessons_lib.errors import CourseInputError
from lessons_lib.presets import SYNTAX_BIAS_VARIANTS

__all__ = [
    "PAD_BUCKET",
    "BUCKET_KINDS",
    "VARIANTS",
    "BucketLayout",
    "check_buckets",
    "lookup_bias",
    "BucketBias",
    "LearnedBucketBias",
    "FixedDecayBias",
    "HardMaskBias",
    "make_bias",
]

PAD_BUCKET = -1
BUCKET_KINDS = ("distance", "same_word", "cross_sentence", "special")
VARIANTS = SYNTAX_BIAS_VARIANTS


@dataclass(frozen=True)
class BucketLayout:
    """What each bucket id means.

    Attributes:
        kinds: ``kinds[b]`` is one of :data:`BUCKET_KINDS` for bucket id ``b``.
        distances: ``distances[b]`` is the (smallest) tree distance that bucket ``b``
            stands for when it is a ``"distance"`` bucket, ``nan`` otherwise.
        names: short labels for plots and JSON (``"d=1"``, ``"same word"``, ...).
    """

    kinds: tuple[str, ...]
    distances: tuple[float, ...]
    names: tuple[str, ...]

    def __post_init__(self) -> None:
        n = len(self.kinds)
        if n == 0 or len(self.distances) != n or len(self.names) != n:
            raise CourseInputError(
                f"BucketLayout needs one kind, distance and name per bucket, got "
                f"{len(self.kinds)}, {len(self.distances)}, {len(self.names)}"
            )
        for b, (kind, dist) in enumerate(zip(self.kinds, self.distances)):
            if kind not in BUCKET_KINDS:
                raise CourseInputError(f"BucketLayout bucket {b}: kind {kind!r} is not one of {BUCKET_KINDS}")
            if (kind == "distance") == math.isnan(dist):
                raise CourseInputError(f"BucketLayout bucket {b}: a distance bucket needs a distance, other kinds nan")

    @property
    def n_buckets(self) -> int:
        return len(self.kinds)

    def index(self, kind: str) -> list[int]:
        """Bucket ids of one kind, in id order."""
        if kind not in BUCKET_KINDS:
            raise CourseInputError(f"`kind` must be one of {BUCKET_KINDS}, got {kind!r}")
        return [b for b, k in enumerate(self.kinds) if k == kind]

    @classmethod
    def from_distances(cls, distances: Sequence[int], same_word: int, cross_sentence: int, special: int) -> "BucketLayout":
        """A layout from the distance of every distance bucket and the ids of the three other kinds.

        Args:
            distances: ``{bucket id: distance}`` as a sequence over the distance buckets'
                ids, i.e. ``distances[k]`` is the distance of the ``k``-th id that is not
                one of the three special ids (ids run from 0 to ``len(distances) + 2``).
            same_word, cross_sentence, special: the ids of those kinds.
        """
        n = len(distances) + 3
        others = {same_word: "same_word", cross_sentence: "cross_sentence", special: "special"}
        if len(others) != 3 or any(not 0 <= b < n for b in others):
            raise CourseInputError(f"same_word/cross_sentence/special ids must be distinct and in [0, {n}), got {sorted(others)}")
        kinds, dists, names = [], [], []
        remaining = iter(distances)
        for b in range(n):
            if b in others:
                kinds.append(others[b])
                dists.append(float("nan"))
                names.append(others[b].replace("_", " "))
            else:
                d = float(next(remaining))
                kinds.append("distance")
                dists.append(d)
                names.append(f"d={int(d)}")
        return cls(tuple(kinds), tuple(dists), tuple(names))


def check_buckets(buckets: torch.Tensor, n_buckets: int, name: str = "buckets") -> None:
    """Raise :class:`CourseInputError` unless ``buckets`` is a ``(B, L, L)`` long tensor of ids in ``[-1, n_buckets)``."""
    if not isinstance(buckets, torch.Tensor):
        raise CourseInputError(f"`{name}` must be a (B, L, L) torch.long tensor, got {type(buckets).__name__}")
    if buckets.dtype != torch.long or buckets.dim() != 3 or buckets.shape[1] != buckets.shape[2]:
        raise CourseInputError(
            f"`{name}` must be a (B, L, L) torch.long tensor of bucket ids, got shape {tuple(buckets.shape)}, dtype {buckets.dtype}"
        )
    if buckets.numel():
        low, high = int(buckets.min()), int(buckets.max())
        if low < PAD_BUCKET or high >= n_buckets:
            raise CourseInputError(
                f"`{name}` holds ids in [{low}, {high}], outside [-1, {n_buckets}) (-1 = padding, {n_buckets} buckets)"
            )


def lookup_bias(table: torch.Tensor, buckets: torch.Tensor) -> torch.Tensor:
    """Look up one scalar per (query, key) pair; padding pairs get exactly 0.

    Args:
        table: ``(h, n_buckets)`` float, ``h`` = 1 (shared by the heads) or ``H``.
        buckets: ``(B, L, L)`` long bucket ids, ``-1`` = padding.

    Returns:
        ``(B, h, L, L)`` bias, broadcastable to the scores ``(B, H, L, L)``.
    """
    is_pad = buckets < 0
    safe = buckets.clamp(min=0)  # table[..., -1] would silently read the last bucket
    values = table[:, safe]  # (h, B, L, L)
    values = torch.where(is_pad, torch.zeros((), dtype=table.dtype, device=table.device), values)
    return values.transpose(0, 1)


class BucketBias(nn.Module):
    """Common part of the variants: checks, per-block tables, lookup.

    Subclasses provide ``tables()``: ``(n_tables, h, n_buckets)`` with ``n_tables`` = 1
    (one table for all blocks) or ``n_layers``.
    """

    def __init__(self, n_buckets: int, n_layers: int) -> None:
        super().__init__()
        for name, value in (("n_buckets", n_buckets), ("n_layers", n_layers)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise CourseInputError(f"`{name}` must be a positive int, got {value!r}")
        self.n_buckets = n_buckets
        self.n_layers = n_layers

    def tables(self) -> torch.Tensor:
        raise NotImplementedError

    def forward(self, buckets: torch.Tensor) -> list[torch.Tensor]:
        """``(B, L, L)`` bucket ids → a list of ``n_layers`` biases, each ``(B, h, L, L)``.

        When one table serves every block, the list holds the same tensor ``n_layers`` times
        (computed once).
        """
        check_buckets(buckets, self.n_buckets)
        tables = self.tables()
        biases = [lookup_bias(table, buckets) for table in tables]
        return biases * self.n_layers if len(biases) == 1 else biases

    def bias_per_bucket(self) -> torch.Tensor:
        """The effective scalar per bucket (scale applied), ``(n_tables, h, n_buckets)``, detached."""
        return self.tables().detach().clone()


class LearnedBucketBias(BucketBias):
    """The article's learnable bias: one scalar per bucket, zero at initialisation.

    Args:
        n_buckets: number of bucket ids (distance buckets plus the three other kinds).
        n_heads: the encoder's heads ``H`` (used when ``per_head``).
        n_layers: the encoder's blocks.
        per_head: one table row per head (``(H, n_buckets)``) instead of one shared row.
        learn_scale: multiply the table by a learnable scalar initialised to 1 (one per table).
        share_layers: one table for every block (default) instead of one per block.
        lr_multiplier: the effective table is ``lr_multiplier · table``. With Adam, whose step
            size does not depend on the gradient's scale, this multiplies the table's
            learning rate by ``lr_multiplier`` without touching the optimiser (zero stays zero).
    """

    # Both are biases in the optimiser's sense: decay would pull the table back to the
    # baseline (zero) and the scale towards 0, confounding the ablation.
    no_weight_decay = ("table", "scale")

    def __init__(self, n_buckets: int, n_heads: int = 1, n_layers: int = 1, *, per_head: bool = False,
                 learn_scale: bool = False, share_layers: bool = True, lr_multiplier: float = 1.0) -> None:
        super().__init__(n_buckets, n_layers)
        if not isinstance(n_heads, int) or n_heads < 1:
            raise CourseInputError(f"`n_heads` must be a positive int, got {n_heads!r}")
        if not (isinstance(lr_multiplier, (int, float)) and math.isfinite(lr_multiplier) and lr_multiplier > 0):
            raise CourseInputError(f"`lr_multiplier` must be a finite number > 0, got {lr_multiplier!r}")
        self.lr_multiplier = float(lr_multiplier)
        n_tables = 1 if share_layers else n_layers
        rows = n_heads if per_head else 1
        # Zero: at step 0 the bias adds exactly 0.0 to every score, so the model is the baseline.
        self.table = nn.Parameter(torch.zeros(n_tables, rows, n_buckets))
        self.scale = nn.Parameter(torch.ones(n_tables)) if learn_scale else None
        self.per_head, self.share_layers = per_head, share_layers

    def tables(self) -> torch.Tensor:
        table = self.table if self.lr_multiplier == 1.0 else self.table * self.lr_multiplier
        if self.scale is None:
            return table
        return table * self.scale[:, None, None]

    def extra_repr(self) -> str:
        n_tables, rows, n = self.table.shape
        return (f"n_buckets={n}, rows={rows} ({'per head' if self.per_head else 'shared by heads'}), "
                f"tables={n_tables}, learn_scale={self.scale is not None}, lr_multiplier={self.lr_multiplier}")


class _FixedTableBias(BucketBias):
    """A bias from a fixed (non-learned) table, shared by heads and blocks."""

    def __init__(self, values: Sequence[float], n_layers: int) -> None:
        super().__init__(len(values), n_layers)
        self.register_buffer("table", torch.tensor([[list(values)]], dtype=torch.float32))

    def tables(self) -> torch.Tensor:
        return self.table


class FixedDecayBias(_FixedTableBias):
    """A fixed decay with distance: ``-decay · d`` for within-sentence pairs at tree distance ``d``.

    Same-word, cross-sentence and special-token buckets get 0 (no preference), so this
    variant only reshapes attention *within* a question, as the learned one may.
    """

    def __init__(self, layout: BucketLayout, decay: float = 0.5, n_layers: int = 1) -> None:
        if not (isinstance(decay, (int, float)) and math.isfinite(decay) and decay >= 0):
            raise CourseInputError(f"`decay` must be a finite number ≥ 0, got {decay!r}")
        values = [-decay * d if k == "distance" else 0.0 for k, d in zip(layout.kinds, layout.distances)]
        super().__init__(values, n_layers)
        self.decay = float(decay)


class HardMaskBias(_FixedTableBias):
    """Only tree-near pairs attend within a sentence: bias ``-inf`` beyond ``max_distance``.

    Same-word pairs (a character and its own word, itself included), special tokens and
    cross-sentence pairs stay open (bias 0). A query row always keeps itself (same word),
    so no real row is ever fully masked.
    """

    def __init__(self, layout: BucketLayout, max_distance: float = 1, n_layers: int = 1) -> None:
        if not (isinstance(max_distance, (int, float)) and max_distance >= 0):
            raise CourseInputError(f"`max_distance` must be a number ≥ 0, got {max_distance!r}")
        values = [float("-inf") if k == "distance" and d > max_distance else 0.0
                  for k, d in zip(layout.kinds, layout.distances)]
        super().__init__(values, n_layers)
        self.max_distance = max_distance


def make_bias(variant: str, layout: BucketLayout, n_heads: int, n_layers: int, *, per_head: bool = False,
              learn_scale: bool = False, share_layers: bool = True, lr_multiplier: float = 1.0,
              decay: float = 0.5, max_distance: float = 1) -> BucketBias | None:
    """The bias module of an ablation variant (see :data:`VARIANTS`); ``None`` for ``"none"``."""
    if variant == "none":
        return None
    if variant == "learned":
        return LearnedBucketBias(layout.n_buckets, n_heads, n_layers, per_head=per_head,
                                 learn_scale=learn_scale, share_layers=share_layers, lr_multiplier=lr_multiplier)
    if variant == "fixed_decay":
        return FixedDecayBias(layout, decay, n_layers)
    if variant == "hard_mask":
        return HardMaskBias(layout, max_distance, n_layers)
    raise CourseInputError(f"`variant` must be one of {VARIANTS}, got {variant!r}")
