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

from lessons_lib.errors import CourseInputError, FieldName, input_error
from lessons_lib.validation import (check_attention_inputs, check_int, check_lengths, check_mask,
                                    check_scores_and_values, check_tensor)

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


def attention_scores(query: torch.Tensor, key: torch.Tensor, scale: bool = True) -> torch.Tensor:
    """Similarity of every query with every key: ``Q Kᵀ / √d_k`` (or ``Q Kᵀ`` unscaled).

    Args:
        query: ``(..., L_q, d_k)``.
        key: ``(..., L_k, d_k)``; leading dimensions must broadcast with ``query``'s.
        scale: divide by ``√d_k`` (the Transformer's choice); ``False`` gives raw dot products.

    Returns:
        Scores of shape ``(..., L_q, L_k)``.
    """
    check_attention_inputs(query, key)
    return _scores(query, key, scale)


def _scores(query: torch.Tensor, key: torch.Tensor, scale: bool = True) -> torch.Tensor:
    """:func:`attention_scores` on inputs already checked (the package's own callers)."""
    scores = query @ key.transpose(-2, -1)  # (..., L_q, d_k) @ (..., d_k, L_k) -> (..., L_q, L_k)
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
    checked, length = check_lengths(lengths, max_len)
    return torch.arange(length, device=checked.device)[None, :] < checked[:, None]


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
    check_tensor(scores, "scores")
    if mask is not None:
        check_mask(mask, scores.shape)
    return _masked_softmax(scores, mask)


def _masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """:func:`masked_softmax` on a checked ``(..., L_q, L_k)`` and a mask that broadcasts to it."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
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
    check_attention_inputs(query, key, value, mask)
    scores = _scores(query, key, scale)  # (..., L_q, L_k)
    weights = _masked_softmax(scores, mask)
    return weights @ value, weights  # (..., L_q, d_v), (..., L_q, L_k)


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
        check_int(d_query, FieldName("d_query"))
        check_int(d_key, FieldName("d_key"))
        self.d_query, self.d_key = d_query, d_key
        self.key_to_query = torch.nn.Linear(d_key, d_query, bias=False)

    def forward(self, query: torch.Tensor, key: torch.Tensor) -> torch.Tensor:
        """``(..., L_q, d_query)`` and ``(..., L_k, d_key)`` → ``(..., L_q, L_k)``."""
        check_tensor(query, "query", min_dim=2, width=self.d_query)
        check_tensor(key, "key", min_dim=2, width=self.d_key)
        return query @ self.key_to_query(key).transpose(-2, -1)


class AdditiveScore(torch.nn.Module):
    """Bahdanau's additive score ``score(q, k) = vᵀ tanh(W_q q + W_k k)``.

    Both sides are projected to a common width ``d_hidden`` and compared by a one-layer
    network instead of a dot product; the widths of query and key are free.
    """

    def __init__(self, d_query: int, d_key: int, d_hidden: int) -> None:
        super().__init__()
        for name, value in (("d_query", d_query), ("d_key", d_key), ("d_hidden", d_hidden)):
            check_int(value, FieldName(name))
        self.d_query, self.d_key = d_query, d_key
        self.query_proj = torch.nn.Linear(d_query, d_hidden, bias=False)
        self.key_proj = torch.nn.Linear(d_key, d_hidden, bias=True)
        self.v = torch.nn.Linear(d_hidden, 1, bias=False)

    def forward(self, query: torch.Tensor, key: torch.Tensor) -> torch.Tensor:
        """``(..., L_q, d_query)`` and ``(..., L_k, d_key)`` → ``(..., L_q, L_k)``."""
        check_tensor(query, "query", min_dim=2, width=self.d_query)
        check_tensor(key, "key", min_dim=2, width=self.d_key)
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
    raise input_error(FieldName("kind"), f" must be 'dot', 'general' or 'additive', got {kind!r}")


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
    check_scores_and_values(scores, value, mask)
    weights = _masked_softmax(scores, mask)
    return weights @ value, weights
