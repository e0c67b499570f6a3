"""Syntax-biased attention: a tree-distance bucket → an additive bias on the attention logits.

The syntax-bias article's soft syntactic constraint, for the character tokens of a pair
``[CLS] s1 [SEP] s2 [SEP]``: every (query, key) pair of positions has a **bucket id** —
the clamped (optionally log-bucketed) tree distance between the words the two characters
belong to, or one of the kinds "same word", "different sentences", "special token" — and
``-1`` where either position is padding (:mod:`lessons_lib.syntax.buckets`). A table holds
one scalar per bucket; the scalar of a pair's bucket is added to its scaled dot-product
score before the softmax::

    scores[b, h, i, j] = q_i · k_j / √d + scale · table[h, bucket[b, i, j]]

It enters :class:`lessons_lib.transformer.encoder.Encoder` through ``attn_bias`` (added before the
key-padding mask, so a masked key stays at ``-inf`` whatever its bias).

The variants of the ablation are all modules with the same constructor
``(scheme, n_heads, n_layers, options)`` and the same call, ``(B, L, L)`` bucket ids → one
bias per encoder block; :mod:`lessons_lib.syntax_bias.registry` names them and their options:

- :class:`LearnedBucketBias` — the article's method: learnable scalars, zero-initialised
  (so the model starts as the baseline, exactly), shared across heads by default
  (per-head as an option), an optional learnable global scale initialised to 1, one
  table for all blocks by default (per block as an option). The registry's
  ``relative_position`` variant is this very class on relative-position buckets (the
  non-syntactic control): only the bucket matrices it is given differ.
- :class:`FixedDecayBias` — not learned: ``-decay · distance`` for within-sentence
  pairs, 0 for same-word, cross-sentence and special-token pairs.
- :class:`HardMaskBias` — only tree-near pairs (distance ≤ ``hard_max_distance``) may attend
  within a sentence; ``[CLS]``/``[SEP]`` and cross-sentence pairs stay open, or a single
  block could not compare the two questions at all.
  The registry's ``window_mask`` variant is this very class on relative-position buckets
  counted in words (the hard mask's non-syntactic control): the same radius, the same open
  kinds, only the distance is the sequence's instead of the tree's.
- ``"none"`` — no module: the baseline, ``attn_bias=None``.

A pitfall this module guards against: ``table[-1]`` is *the last bucket* in PyTorch, not
an error, so looking up padding ids directly would give padding a real bias. Padding ids
are looked up as bucket 0 and then replaced by an exact 0.
"""

from __future__ import annotations

import importlib
from typing import Sequence

import torch
from torch import nn

from lessons_lib.errors import CourseInputError, FieldName, input_error
from lessons_lib.syntax.buckets import PAD_BUCKET, BucketScheme
from lessons_lib.syntax_bias.registry import FixedDecayOptions, HardMaskOptions, LearnedOptions, variant
from lessons_lib.validation import check_int

__all__ = [
    "check_buckets",
    "lookup_bias",
    "BucketBias",
    "LearnedBucketBias",
    "FixedDecayBias",
    "HardMaskBias",
    "make_bias",
]


def check_buckets(buckets: torch.Tensor, n_buckets: int, name: str = "buckets") -> None:
    """Raise :class:`CourseInputError` unless ``buckets`` is a ``(B, L, L)`` long tensor of ids in ``[-1, n_buckets)``."""
    if not isinstance(buckets, torch.Tensor):
        raise input_error(FieldName(name), f" must be a (B, L, L) torch.long tensor, got {type(buckets).__name__}")
    if buckets.dtype != torch.long or buckets.dim() != 3 or buckets.shape[1] != buckets.shape[2]:
        raise input_error(
            FieldName(name), f" must be a (B, L, L) torch.long tensor of bucket ids, got shape {tuple(buckets.shape)}, dtype {buckets.dtype}"
        )
    if buckets.numel():
        low, high = (int(v) for v in torch.aminmax(buckets))  # one pass over the matrix
        if low < PAD_BUCKET or high >= n_buckets:
            raise input_error(
                FieldName(name), f" holds ids in [{low}, {high}], outside [-1, {n_buckets}) (-1 = padding, {n_buckets} buckets)"
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
        self.n_buckets = check_int(n_buckets, FieldName("n_buckets"))
        self.n_layers = check_int(n_layers, FieldName("n_layers"))

    def tables(self) -> torch.Tensor:
        raise NotImplementedError

    def forward(self, buckets: torch.Tensor) -> list[torch.Tensor]:
        """``(B, L, L)`` bucket ids → a list of ``n_layers`` biases, each ``(B, h, L, L)``.

        When one table serves every block, the list holds the same tensor ``n_layers`` times
        (computed once).
        """
        check_buckets(buckets, self.n_buckets)
        return self.biases(buckets)

    def biases(self, buckets: torch.Tensor) -> list[torch.Tensor]:
        """:meth:`forward` on buckets its caller has already checked (the biased classifier checks
        each batch's once, with their padding)."""
        biases = [lookup_bias(table, buckets) for table in self.tables()]
        return biases * self.n_layers if len(biases) == 1 else biases

    def bias_per_bucket(self) -> torch.Tensor:
        """The effective scalar per bucket (scale applied), ``(n_tables, h, n_buckets)``, detached."""
        return self.tables().detach().clone()


class LearnedBucketBias(BucketBias):
    """The article's learnable bias: one scalar per bucket, zero at initialisation.

    Args:
        scheme: the bucket scheme (only its number of buckets matters here).
        n_heads: the encoder's heads ``H`` (used when ``options.per_head``).
        n_layers: the encoder's blocks.
        options: see :class:`~lessons_lib.syntax_bias.registry.LearnedOptions`. With Adam,
            whose step size does not depend on the gradient's scale, ``bias_lr_multiplier``
            multiplies the table's learning rate without touching the optimiser.
    """

    # Both are biases in the optimiser's sense: decay would pull the table back to the
    # baseline (zero) and the scale towards 0, confounding the ablation.
    no_weight_decay = ("table", "scale")

    def __init__(self, scheme: BucketScheme, n_heads: int = 1, n_layers: int = 1,
                 options: LearnedOptions | None = None) -> None:
        super().__init__(scheme.n_buckets, n_layers)
        options = options or LearnedOptions()
        check_int(n_heads, FieldName("n_heads"))
        self.options = options
        self.lr_multiplier = float(options.bias_lr_multiplier)
        n_tables = n_layers if options.per_layer_tables else 1
        rows = n_heads if options.per_head else 1
        # Zero: at step 0 the bias adds exactly 0.0 to every score, so the model is the baseline.
        self.table = nn.Parameter(torch.zeros(n_tables, rows, scheme.n_buckets))
        self.scale = nn.Parameter(torch.ones(n_tables)) if options.learn_scale else None

    def tables(self) -> torch.Tensor:
        table = self.table if self.lr_multiplier == 1.0 else self.table * self.lr_multiplier
        if self.scale is None:
            return table
        return table * self.scale[:, None, None]

    def extra_repr(self) -> str:
        n_tables, rows, n = self.table.shape
        return (f"n_buckets={n}, rows={rows} ({'per head' if self.options.per_head else 'shared by heads'}), "
                f"tables={n_tables}, learn_scale={self.scale is not None}, lr_multiplier={self.lr_multiplier}")


class _FixedTableBias(BucketBias):
    """A bias from a fixed (non-learned) table, shared by heads and blocks."""

    table: torch.Tensor  # a buffer: (1, 1, n_buckets)

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

    def __init__(self, scheme: BucketScheme, n_heads: int = 1, n_layers: int = 1,
                 options: FixedDecayOptions | None = None) -> None:
        options = options or FixedDecayOptions()
        values = [-options.decay * d if k == "distance" else 0.0 for k, d in zip(scheme.kinds, scheme.distances)]
        super().__init__(values, n_layers)
        self.decay = options.decay


class HardMaskBias(_FixedTableBias):
    """Only tree-near pairs attend within a sentence: bias ``-inf`` beyond ``hard_max_distance``.

    Same-word pairs (a character and its own word, itself included), special tokens and
    cross-sentence pairs stay open (bias 0). A query row always keeps itself (same word),
    so no real row is ever fully masked.
    """

    def __init__(self, scheme: BucketScheme, n_heads: int = 1, n_layers: int = 1,
                 options: HardMaskOptions | None = None) -> None:
        options = options or HardMaskOptions()
        radius = options.hard_max_distance
        values = [float("-inf") if k == "distance" and d > radius else 0.0
                  for k, d in zip(scheme.kinds, scheme.distances)]
        super().__init__(values, n_layers)
        self.max_distance = radius


def make_bias(name: str, scheme: BucketScheme, n_heads: int, n_layers: int,
              options: object = None) -> BucketBias | None:
    """The bias module of variant ``name`` (see :data:`lessons_lib.syntax_bias.registry.VARIANTS`);
    ``None`` for the baseline.

    Args:
        options: the variant's options dataclass (``None``: its defaults).
    """
    entry = variant(name)
    if entry.module is None:
        return None
    options = entry.options() if options is None else options
    if not isinstance(options, entry.options):
        raise CourseInputError(f"variant {name!r} takes {entry.options.__name__}, got {type(options).__name__}")
    module_name, class_name = entry.module.split(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    return cls(scheme, n_heads, n_layers, options)
