"""Dot-product attention: scores, masks and the attention function itself.

Shape conventions used throughout the package:

- ``B`` batch size, ``H`` heads, ``L_q`` query positions, ``L_k`` key positions,
  ``d_k`` query/key width, ``d_v`` value width.
- Tensors may carry any number of leading batch dimensions (``...``); the last two
  dimensions are (positions, features).

Mask convention of this course: a **boolean** tensor where ``True`` means *may attend*
(keep) and ``False`` means *must not attend* (mask out). It is the opposite of
``torch.nn.MultiheadAttention``'s ``key_padding_mask`` (``True`` = ignore); lesson 03
shows the silent bug that mixing the two causes.
"""

from __future__ import annotations

import math

import torch

from lessons_lib.errors import CourseInputError
from lessons_lib.validation import check_int

__all__ = [
    "attention_scores",
    "padding_mask",
    "masked_softmax",
    "scaled_dot_product_attention",
    "DotScore",
    "BilinearScore",
    "AdditiveScore",
    "make_scorer",
    "attend",
]


def _require_tensor(name: str, value: object) -> torch.Tensor:
    if not isinstance(value, torch.Tensor):
        raise CourseInputError(f"`{name}` must be a torch.Tensor, got {type(value).__name__}")
    if not value.is_floating_point():
        raise CourseInputError(f"`{name}` must be a floating-point tensor, got dtype {value.dtype}")
    if value.dim() < 2:
        raise CourseInputError(
            f"`{name}` must have at least 2 dimensions (..., positions, features), "
            f"got shape {tuple(value.shape)}"
        )
    return value


def attention_scores(query: torch.Tensor, key: torch.Tensor, scale: bool = True) -> torch.Tensor:
    """Similarity of every query with every key: ``Q Kᵀ / √d_k`` (or ``Q Kᵀ`` unscaled).

    Args:
        query: ``(..., L_q, d_k)``.
        key: ``(..., L_k, d_k)``; leading dimensions must broadcast with ``query``'s.
        scale: divide by ``√d_k`` (the Transformer's choice); ``False`` gives raw dot products.

    Returns:
        Scores of shape ``(..., L_q, L_k)``.
    """
    _require_tensor("query", query)
    _require_tensor("key", key)
    if query.shape[-1] != key.shape[-1]:
        raise CourseInputError(
            "dot-product attention needs queries and keys of the same width: "
            f"query has d_k={query.shape[-1]} (shape {tuple(query.shape)}), "
            f"key has d_k={key.shape[-1]} (shape {tuple(key.shape)}); "
            "project one of them (bilinear or additive attention) when the widths differ"
        )
    scores = query @ key.transpose(-2, -1)
    if scale:
        scores = scores / math.sqrt(query.shape[-1])
    return scores


def padding_mask(lengths: torch.Tensor | list[int], max_len: int | None = None) -> torch.Tensor:
    """Boolean key mask from sequence lengths: ``True`` at real positions, ``False`` at padding.

    Args:
        lengths: ``(B,)`` integer lengths, each in ``[0, max_len]``.
        max_len: padded length ``L``; defaults to ``max(lengths)``.

    Returns:
        ``(B, L)`` boolean tensor. Add dimensions (``mask[:, None, :]``) to broadcast it
        over query positions and heads.
    """
    lengths = torch.as_tensor(lengths)
    if lengths.dim() != 1 or lengths.dtype.is_floating_point or lengths.dtype == torch.bool:
        raise CourseInputError(
            f"`lengths` must be a 1-D integer tensor or list, got shape {tuple(lengths.shape)} "
            f"and dtype {lengths.dtype}"
        )
    if lengths.numel() and int(lengths.min()) < 0:
        raise CourseInputError(f"`lengths` must be non-negative, got {lengths.tolist()}")
    longest = int(lengths.max()) if lengths.numel() else 0
    if max_len is None:
        max_len = longest
    if max_len < longest:
        raise CourseInputError(f"`max_len`={max_len} is shorter than the longest length {longest}")
    return torch.arange(max_len, device=lengths.device)[None, :] < lengths[:, None]


def _check_mask(mask: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
    if not isinstance(mask, torch.Tensor):
        raise CourseInputError(f"`mask` must be a boolean torch.Tensor, got {type(mask).__name__}")
    if mask.dtype != torch.bool:
        raise CourseInputError(
            f"`mask` must have dtype torch.bool (True = may attend), got {mask.dtype}; "
            "convert a 0/1 mask with `mask == 1` — not `mask == 0`, which inverts it"
        )
    try:
        torch.broadcast_shapes(mask.shape, scores.shape)
    except RuntimeError:
        raise CourseInputError(
            f"`mask` of shape {tuple(mask.shape)} does not broadcast to the scores' shape "
            f"{tuple(scores.shape)} (..., L_q, L_k); a key-padding mask (B, L_k) needs "
            "`mask[:, None, :]` (and one more `None` for heads)"
        ) from None
    if torch.broadcast_shapes(mask.shape, scores.shape) != scores.shape:
        raise CourseInputError(
            f"`mask` of shape {tuple(mask.shape)} would enlarge the scores' shape "
            f"{tuple(scores.shape)}; it must broadcast *to* it"
        )
    return mask


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Softmax over the last dimension that gives masked keys exactly zero weight.

    Masked scores are set to ``-inf`` (not a large negative number, which still leaks
    weight onto padding, and overflows to ``-inf`` anyway in float16). A row whose keys
    are *all* masked would be ``softmax([-inf, ..., -inf]) = NaN``; here such a row gets
    all-zero weights instead, so the attention output there is the zero vector.

    Args:
        scores: ``(..., L_q, L_k)`` float scores.
        mask: boolean, broadcastable to ``scores``; ``True`` = may attend.

    Returns:
        Weights of the same shape as ``scores``; each row sums to 1, or to 0 when fully masked.
    """
    if not isinstance(scores, torch.Tensor) or not scores.is_floating_point():
        raise CourseInputError("`scores` must be a floating-point torch.Tensor")
    if mask is None:
        return torch.softmax(scores, dim=-1)
    mask = _check_mask(mask, scores)
    filled = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(filled, dim=-1)
    # Fully masked rows are NaN after the softmax; zero them without touching gradients
    # of the other rows (torch.where, not in-place nan_to_num).
    any_key = mask.any(dim=-1, keepdim=True)
    return torch.where(any_key, weights, torch.zeros_like(weights))


def scaled_dot_product_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    mask: torch.Tensor | None = None,
    scale: bool = True,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``softmax(Q Kᵀ / √d_k) V`` with an optional boolean mask.

    Args:
        query: ``(..., L_q, d_k)``.
        key: ``(..., L_k, d_k)``.
        value: ``(..., L_k, d_v)``.
        mask: boolean, broadcastable to ``(..., L_q, L_k)``; ``True`` = may attend.
        scale: divide the scores by ``√d_k``.

    Returns:
        ``(output, weights)``: output ``(..., L_q, d_v)``, weights ``(..., L_q, L_k)``.
    """
    _require_tensor("value", value)
    if key.shape[-2] != value.shape[-2]:
        raise CourseInputError(
            f"`key` and `value` must have the same number of positions: key has "
            f"L_k={key.shape[-2]} (shape {tuple(key.shape)}), value has "
            f"{value.shape[-2]} (shape {tuple(value.shape)})"
        )
    scores = attention_scores(query, key, scale=scale)
    weights = masked_softmax(scores, mask)
    return weights @ value, weights


# --- Scoring functions for encoder–decoder attention (Luong et al. 2015; Bahdanau et al. 2015)
#
# In a seq2seq model the query is the decoder state (width d_dec) and the keys are the
# encoder states (width d_enc). A plain dot product needs d_dec == d_enc; the bilinear
# ("general") and additive scores learn a projection and work for any pair of widths.


class DotScore(torch.nn.Module):
    """``score(q, k) = q · k`` (optionally ``/ √d``); no parameters, so ``d_query`` must equal ``d_key``."""

    def __init__(self, scale: bool = False) -> None:
        super().__init__()
        self.scale = scale

    def forward(self, query: torch.Tensor, key: torch.Tensor) -> torch.Tensor:
        """``(..., L_q, d)`` and ``(..., L_k, d)`` → ``(..., L_q, L_k)``; a width mismatch raises."""
        return attention_scores(query, key, scale=self.scale)


class BilinearScore(torch.nn.Module):
    """Luong's "general" score ``score(q, k) = q W kᵀ`` with ``W`` of shape ``(d_query, d_key)``.

    ``W`` maps a key into the query's space, so the two widths may differ. With
    ``W = I`` (and equal widths) it is the plain dot product.
    """

    def __init__(self, d_query: int, d_key: int) -> None:
        super().__init__()
        check_int(d_query, "`d_query`")
        check_int(d_key, "`d_key`")
        self.d_query, self.d_key = d_query, d_key
        self.key_to_query = torch.nn.Linear(d_key, d_query, bias=False)

    def forward(self, query: torch.Tensor, key: torch.Tensor) -> torch.Tensor:
        """``(..., L_q, d_query)`` and ``(..., L_k, d_key)`` → ``(..., L_q, L_k)``."""
        _require_last_dim("query", query, self.d_query)
        _require_last_dim("key", key, self.d_key)
        return query @ self.key_to_query(key).transpose(-2, -1)


class AdditiveScore(torch.nn.Module):
    """Bahdanau's additive score ``score(q, k) = vᵀ tanh(W_q q + W_k k)``.

    Both sides are projected to a common width ``d_hidden`` and compared by a one-layer
    network instead of a dot product; the widths of query and key are free.
    """

    def __init__(self, d_query: int, d_key: int, d_hidden: int) -> None:
        super().__init__()
        for name, value in (("d_query", d_query), ("d_key", d_key), ("d_hidden", d_hidden)):
            check_int(value, f"`{name}`")
        self.d_query, self.d_key = d_query, d_key
        self.query_proj = torch.nn.Linear(d_query, d_hidden, bias=False)
        self.key_proj = torch.nn.Linear(d_key, d_hidden, bias=True)
        self.v = torch.nn.Linear(d_hidden, 1, bias=False)

    def forward(self, query: torch.Tensor, key: torch.Tensor) -> torch.Tensor:
        """``(..., L_q, d_query)`` and ``(..., L_k, d_key)`` → ``(..., L_q, L_k)``."""
        _require_last_dim("query", query, self.d_query)
        _require_last_dim("key", key, self.d_key)
        # (..., L_q, 1, h) + (..., 1, L_k, h) -> (..., L_q, L_k, h): every query meets every key.
        hidden = torch.tanh(self.query_proj(query).unsqueeze(-2) + self.key_proj(key).unsqueeze(-3))
        return self.v(hidden).squeeze(-1)


def make_scorer(kind: str, d_query: int, d_key: int, d_hidden: int | None = None) -> torch.nn.Module:
    """Build a score module by name: ``"dot"``, ``"general"`` (bilinear) or ``"additive"``.

    ``"dot"`` with ``d_query != d_key`` is rejected here, at construction, with the same
    advice the dot product itself gives at run time.
    """
    if kind == "dot":
        if d_query != d_key:
            raise CourseInputError(
                f"dot-product attention needs d_query == d_key, got d_query={d_query}, d_key={d_key}; "
                "use kind='general' (bilinear) or kind='additive'"
            )
        return DotScore()
    if kind == "general":
        return BilinearScore(d_query, d_key)
    if kind == "additive":
        return AdditiveScore(d_query, d_key, d_hidden or d_query)
    raise CourseInputError(f"`kind` must be 'dot', 'general' or 'additive', got {kind!r}")


def attend(
    scores: torch.Tensor, value: torch.Tensor, mask: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Turn scores into weights and mix the values: ``(masked_softmax(scores) @ value, weights)``.

    Args:
        scores: ``(..., L_q, L_k)`` from any score module.
        value: ``(..., L_k, d_v)``.
        mask: boolean, broadcastable to the scores; ``True`` = may attend.

    Returns:
        ``(context (..., L_q, d_v), weights (..., L_q, L_k))``.
    """
    _require_tensor("value", value)
    if scores.shape[-1] != value.shape[-2]:
        raise CourseInputError(
            f"scores cover L_k={scores.shape[-1]} keys but `value` has {value.shape[-2]} positions"
        )
    weights = masked_softmax(scores, mask)
    return weights @ value, weights


def _require_last_dim(name: str, tensor: torch.Tensor, width: int) -> None:
    _require_tensor(name, tensor)
    if tensor.shape[-1] != width:
        raise CourseInputError(
            f"`{name}` must have width {width} in its last dimension, got shape {tuple(tensor.shape)}"
        )
