"""Multi-head attention: split the width into heads, attend in each, merge back.

``MultiHeadAttention`` follows the layout of ``torch.nn.MultiheadAttention`` (separate
query/key/value projections with biases, one output projection, dropout on the attention
weights) so that weights can be copied between the two and the outputs compared
(:func:`load_torch_multihead_weights`). It keeps this course's mask convention — boolean,
``True`` = may attend — and has one extra input, ``attn_bias``: a float tensor added to
the scaled scores before the softmax, the hook through which later lessons inject
syntactic distances.

Two ways to compute the same thing (``implementation``): ``"course"``, the from-scratch
scores → bias → mask → softmax → weights · V that the lessons teach (and the only one that can
keep the weights for a heatmap), and ``"sdpa"``, torch's fused
``torch.nn.functional.scaled_dot_product_attention`` with the boolean mask, or with the bias
and the mask folded into one float mask. Which kernel torch picks on CPU (torch 2.13,
``torch._fused_sdp_choice``): its flash-attention kernel without attention dropout (eval mode,
or ``dropout=0``) for a boolean mask or a bias that needs no gradient; its math fallback —
the same operations as the course path, in one call — with attention dropout (training with
every preset: dropout 0.1) or a learned bias (``learned``, ``relative_position``). The two
paths agree within 1e-5 in outputs and gradients (the tests check every mask and bias case,
fully masked rows included), in training too: on CPU the math fallback drops the attention
weights with the same random draws as ``nn.Dropout`` (tested), so a seeded run takes the same
steps on both paths up to float rounding. A GPU's fused kernels draw their own dropout masks.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from lessons_lib.attention import IMPLEMENTATIONS
from lessons_lib.attention.functional import _masked_softmax, _scores
from lessons_lib.errors import CourseInputError, FieldName, input_error
from lessons_lib.validation import check_bias, check_choice, check_divisible, check_int, check_mask

__all__ = [
    "split_heads",
    "merge_heads",
    "expand_mask",
    "MultiHeadAttention",
    "load_torch_multihead_weights",
]


def split_heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    """``(B, L, D)`` → ``(B, H, L, D / H)``: each head sees its own slice of the features."""
    if x.dim() != 3:
        raise input_error(FieldName("x"), f" must be (B, L, D), got shape {tuple(x.shape)}")
    check_divisible(x.shape[-1], "width D", n_heads, "n_heads")
    return _split_heads(x, n_heads)


def _split_heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    """:func:`split_heads` on a ``(B, L, D)`` whose ``D`` is known to be a multiple of ``n_heads``."""
    batch, length, width = x.shape
    return x.reshape(batch, length, n_heads, width // n_heads).transpose(1, 2)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """``(B, H, L, d_head)`` → ``(B, L, H · d_head)``, the inverse of :func:`split_heads`."""
    if x.dim() != 4:
        raise input_error(FieldName("x"), f" must be (B, H, L, d_head), got shape {tuple(x.shape)}")
    batch, heads, length, d_head = x.shape
    return x.transpose(1, 2).reshape(batch, length, heads * d_head)


def expand_mask(mask: torch.Tensor, batch: int, len_q: int, len_k: int) -> torch.Tensor:
    """Bring a boolean mask (``True`` = may attend) to a shape that broadcasts to ``(B, H, L_q, L_k)``.

    Accepted shapes: ``(B, L_k)`` (a key-padding mask, the common case) → ``(B, 1, 1, L_k)``;
    ``(B, L_q, L_k)`` → ``(B, 1, L_q, L_k)``; a 4-D mask broadcastable to ``(B, H, L_q, L_k)``
    is returned unchanged.
    """
    check_mask(mask, torch_hint=True)
    if mask.dim() == 2:
        if tuple(mask.shape) != (batch, len_k):
            raise CourseInputError(
                f"a 2-D `mask` is read as a key mask (B, L_k) = {(batch, len_k)}, got {tuple(mask.shape)}"
            )
        return mask[:, None, None, :]
    if mask.dim() == 3:
        if tuple(mask.shape) != (batch, len_q, len_k):
            raise CourseInputError(
                f"a 3-D `mask` must be (B, L_q, L_k) = {(batch, len_q, len_k)}, got {tuple(mask.shape)}"
            )
        return mask[:, None, :, :]
    if mask.dim() == 4:
        return mask
    raise input_error(FieldName("mask"), f" must have 2, 3 or 4 dimensions, got shape {tuple(mask.shape)}")


class MultiHeadAttention(nn.Module):
    """Multi-head scaled dot-product attention.

    Args:
        d_model: model width ``D`` (input and output).
        n_heads: number of heads ``H``; ``D`` must be divisible by it.
        dropout: dropout on the attention weights (as in ``torch.nn.MultiheadAttention``).
        implementation: ``"course"`` (from scratch) or ``"sdpa"`` (torch's fused function); see the module.

    Attributes:
        keep_attention: when ``True``, each forward stores its attention weights
            ``(B, H, L_q, L_k)`` (detached, before dropout) in ``last_attention``; it takes the
            course path whatever ``implementation`` says (the fused function returns no weights).
    """

    def __init__(self, d_model: int, n_heads: int, dropout: float = 0.0, implementation: str = "course") -> None:
        super().__init__()
        check_int(d_model, FieldName("d_model"))
        check_int(n_heads, FieldName("n_heads"))
        check_divisible(d_model, FieldName("d_model"), n_heads, FieldName("n_heads"))
        self.d_model = d_model
        self.n_heads = n_heads
        self.d_head = d_model // n_heads
        self.implementation = check_choice(implementation, FieldName("implementation"), IMPLEMENTATIONS)
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)
        self.keep_attention = False
        self.last_attention: torch.Tensor | None = None

    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        mask: torch.Tensor | None = None,
        attn_bias: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Attend from every query position to the key/value positions.

        Args:
            query: ``(B, L_q, D)``.
            key: ``(B, L_k, D)``.
            value: ``(B, L_k, D)``.
            mask: boolean, ``True`` = may attend; ``(B, L_k)``, ``(B, L_q, L_k)`` or
                broadcastable to ``(B, H, L_q, L_k)`` (see :func:`expand_mask`).
            attn_bias: float, broadcastable to ``(B, H, L_q, L_k)``; added to the scaled
                scores before masking, so masked keys keep exactly zero weight whatever it holds.

        Returns:
            ``(B, L_q, D)``.
        """
        self._check_inputs(query, key, value)
        batch, len_q, len_k = query.shape[0], query.shape[1], key.shape[1]
        if attn_bias is not None:
            check_bias(attn_bias, (batch, self.n_heads, len_q, len_k))
        if mask is not None:  # brought to 4-D, then checked to broadcast to (B, H, L_q, L_k)
            mask = check_mask(expand_mask(mask, batch, len_q, len_k), (batch, self.n_heads, len_q, len_k))
        return self.attend(query, key, value, mask, attn_bias)

    def attend(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, mask: torch.Tensor | None,
               attn_bias: torch.Tensor | None) -> torch.Tensor:
        """:meth:`forward` without its checks, for a caller that checked its inputs once for many calls (an
        encoder, once per forward pass for all its blocks): ``mask`` already broadcasts to ``(B, H, L_q, L_k)``."""
        # queries first, then keys and values: the order autograd sums the input's gradients in (training bits)
        q = self.query_heads(query)
        k, v = self.key_value_heads(key, value)
        return self.attend_projected(q, k, v, mask, attn_bias)

    def query_heads(self, query: torch.Tensor) -> torch.Tensor:
        """The projected queries, split into heads: ``(B, L_q, D)`` → ``(B, H, L_q, d_head)``."""
        return _split_heads(self.q_proj(query), self.n_heads)

    def key_value_heads(self, key: torch.Tensor, value: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The projected keys and values, split into heads: ``(B, L_k, D)`` each → two ``(B, H, L_k, d_head)``.

        A decoder generating one token at a time keeps these for the positions it has seen (its
        key/value cache) instead of projecting them again at every step."""
        return _split_heads(self.k_proj(key), self.n_heads), _split_heads(self.v_proj(value), self.n_heads)

    def attend_projected(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None,
                         attn_bias: torch.Tensor | None) -> torch.Tensor:
        """Attend with queries ``(B, H, L_q, d_head)`` from :meth:`query_heads` to keys and values
        ``(B, H, L_k, d_head)`` from :meth:`key_value_heads`; unchecked, like :meth:`attend`. → ``(B, L_q, D)``."""
        if self.implementation == "sdpa" and not self.keep_attention:
            context = _fused_attention(q, k, v, mask, attn_bias, self.dropout.p if self.training else 0.0)
        else:
            context = self._course_attention(q, k, v, mask, attn_bias)
        return self.out_proj(merge_heads(context))

    def _course_attention(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None,
                          attn_bias: torch.Tensor | None) -> torch.Tensor:
        """The lessons' attention on ``(B, H, L, d_head)`` heads: scores, bias, masked softmax, dropout, · V."""
        scores = _scores(q, k)  # (B, H, L_q, L_k), already divided by √d_head
        if attn_bias is not None:
            scores = scores + attn_bias
        weights = _masked_softmax(scores, mask)
        if self.keep_attention:
            self.last_attention = weights.detach()
        return self.dropout(weights) @ v  # (B, H, L_q, d_head)

    def _check_inputs(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor) -> None:
        """Each of query ``(B, L_q, D)``, key and value ``(B, L_k, D)`` with this module's ``D``, one batch."""
        for name, x in (("query", query), ("key", key), ("value", value)):
            if x.dim() != 3 or x.shape[-1] != self.d_model:
                raise input_error(FieldName(name), f" must be (B, L, {self.d_model}), got shape {tuple(x.shape)}")
        if key.shape[:2] != value.shape[:2] or key.shape[0] != query.shape[0]:
            raise CourseInputError(
                f"batch/length mismatch: query {tuple(query.shape)}, key {tuple(key.shape)}, value {tuple(value.shape)}"
            )

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, n_heads={self.n_heads}, d_head={self.d_head}"


def _fused_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None,
                     attn_bias: torch.Tensor | None, dropout_p: float) -> torch.Tensor:
    """``scaled_dot_product_attention`` on ``(B, H, L, d_head)`` heads, as :meth:`_course_attention` computes it.

    ``mask`` is boolean (``True`` = may attend, torch's convention too) broadcastable to
    ``(B, H, L_q, L_k)``; a bias is folded in as a float mask (``-inf`` where masked). A query
    row with no key to attend gets zeros, as :func:`masked_softmax` gives it (torch's kernels
    would give NaN or garbage there).
    """
    attn_mask = mask
    if attn_bias is not None:
        attn_mask = attn_bias if mask is None else torch.where(mask, attn_bias, float("-inf"))
    context = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, dropout_p=dropout_p)
    if mask is not None:
        context = torch.where(mask.any(dim=-1, keepdim=True), context, torch.zeros((), dtype=context.dtype))
    return context


@torch.no_grad()
def load_torch_multihead_weights(ours: MultiHeadAttention, theirs: nn.MultiheadAttention) -> MultiHeadAttention:
    """Copy the weights of a ``torch.nn.MultiheadAttention`` into ``ours`` (in place; returns ``ours``).

    Torch stores the three input projections stacked in ``in_proj_weight`` ``(3D, D)``
    (query rows first, then key, then value) and ``in_proj_bias`` ``(3D,)``.
    """
    if not isinstance(theirs, nn.MultiheadAttention):
        raise input_error(FieldName("theirs"), f" must be torch.nn.MultiheadAttention, got {type(theirs).__name__}")
    if theirs.embed_dim != ours.d_model or theirs.num_heads != ours.n_heads:
        raise CourseInputError(
            f"size mismatch: ours has D={ours.d_model}, H={ours.n_heads}; "
            f"torch's has D={theirs.embed_dim}, H={theirs.num_heads}"
        )
    if theirs.in_proj_weight is None or theirs.in_proj_bias is None:
        raise CourseInputError("torch's module must use packed projections with biases (kdim = vdim = embed_dim, bias=True)")
    for index, proj in enumerate((ours.q_proj, ours.k_proj, ours.v_proj)):
        rows = slice(index * ours.d_model, (index + 1) * ours.d_model)
        proj.weight.copy_(theirs.in_proj_weight[rows])
        proj.bias.copy_(theirs.in_proj_bias[rows])
    ours.out_proj.weight.copy_(theirs.out_proj.weight)
    ours.out_proj.bias.copy_(theirs.out_proj.bias)
    return ours

