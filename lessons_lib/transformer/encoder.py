"""The Transformer encoder: embeddings, the encoder block and a stack of blocks.

- :class:`Embeddings`: token · √D + sinusoidal position + segment → LayerNorm → dropout.
- :class:`PositionwiseFeedForward`: ``Linear(D, d_ff) → activation → dropout → Linear(d_ff, D)``,
  the same small network applied to every position on its own.
- :class:`EncoderBlock`: multi-head self-attention → Add&Norm → FFN → Add&Norm (Post-LN), or
  the Pre-LN order ``x + f(LayerNorm(x))`` when ``config.norm_first``.
- :class:`Encoder`: embeddings and ``n_layers`` blocks (plus a final LayerNorm for Pre-LN).

The block's parameter layout mirrors ``torch.nn.TransformerEncoderLayer`` so that weights
can be copied across (:func:`load_torch_encoder_layer_weights`) and the outputs compared.
"""

from __future__ import annotations

import math
from typing import Callable, Sequence, cast

import torch
from torch import nn
from torch.nn import functional as F

from lessons_lib.errors import CourseInputError, FieldName, input_error
from lessons_lib.attention.multihead import MultiHeadAttention, load_torch_multihead_weights
from lessons_lib.transformer.config import ACTIVATIONS, EncoderConfig
from lessons_lib.validation import check_bias
from lessons_lib.transformer.positional import sinusoidal_encoding

__all__ = [
    "Embeddings",
    "PositionwiseFeedForward",
    "EncoderBlock",
    "Encoder",
    "load_torch_encoder_layer_weights",
    "feed_forward_as_conv1d",
    "block_gradient_norms",
    "gelu",
]

_SQRT_HALF = 0.5 ** 0.5


def gelu(x: torch.Tensor) -> torch.Tensor:
    """The exact GELU, ``x · Φ(x) = x/2 · (1 + erf(x / √2))``, element-wise on any shape.

    The same function as ``F.gelu`` (within a float's last bit), written with ``torch.erf``:
    in the course's numeric mode ``F.gelu``'s kernel still gives other bits on CPUs with other
    vector units, ``torch.erf``'s does not (CONTRIBUTING.md, "Digits that travel").
    """
    return 0.5 * x * (1.0 + torch.erf(x * _SQRT_HALF))


_ACTIVATIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {"relu": F.relu, "gelu": gelu}
assert set(_ACTIVATIONS) == set(ACTIVATIONS), "transformer.config.ACTIVATIONS and the functions here must agree"


def _check_ids(name: str, ids: torch.Tensor, upper: int, upper_name: str) -> None:
    if not isinstance(ids, torch.Tensor) or ids.dim() != 2 or ids.dtype != torch.long:
        got = f"shape {tuple(ids.shape)}, dtype {ids.dtype}" if isinstance(ids, torch.Tensor) else type(ids).__name__
        raise input_error(FieldName(name), f" must be a (B, L) torch.long tensor, got {got}")
    if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= upper):
        raise input_error(
            FieldName(name), f" holds ids in [{int(ids.min())}, {int(ids.max())}], outside [0, {upper}) ({upper_name})"
        )


def _check_key_mask(key_mask: torch.Tensor, shape: tuple[int, ...]) -> None:
    if not isinstance(key_mask, torch.Tensor) or key_mask.dtype != torch.bool or tuple(key_mask.shape) != tuple(shape):
        got = (f"shape {tuple(key_mask.shape)}, dtype {key_mask.dtype}"
               if isinstance(key_mask, torch.Tensor) else type(key_mask).__name__)
        raise input_error(FieldName("key_mask"), f" must be a (B, L) bool tensor like `token_ids` (True = real token), got {got}")


class Embeddings(nn.Module):
    """Token, position and segment embeddings, summed, normalised and dropped out.

    ``LayerNorm(token_emb · √D + PE + segment_emb)``, then dropout. The token table is
    initialised with standard deviation ``1/√D`` (the course's choice: the Transformer paper
    does not state its initialisation), so a token vector has norm ≈ 1; multiplying by √D gives it norm ≈ √D, the same order as a
    sinusoidal position vector (norm √(D/2)). Without the factor the position would
    drown the token. Segment embeddings start at PyTorch's default N(0, 1) (norm ≈ √D).
    """

    position: torch.Tensor  # a buffer: (max_positions, D)

    def __init__(self, config: EncoderConfig) -> None:
        super().__init__()
        self.config = config
        self.token = nn.Embedding(config.vocab_size, config.d_model, padding_idx=config.pad_id)
        self.segment = nn.Embedding(config.n_segments, config.d_model)
        self.register_buffer("position", sinusoidal_encoding(config.max_positions, config.d_model), persistent=False)
        self.norm: nn.Module = nn.LayerNorm(config.d_model, eps=config.layer_norm_eps)  # an exercise swaps in nn.Identity
        self.dropout = nn.Dropout(config.dropout)
        self.scale = math.sqrt(config.d_model)
        nn.init.normal_(self.token.weight, std=config.d_model ** -0.5)
        with torch.no_grad():
            self.token.weight[config.pad_id].zero_()

    def forward(self, token_ids: torch.Tensor, segment_ids: torch.Tensor, start: int = 0) -> torch.Tensor:
        """``(B, L)`` token ids and ``(B, L)`` segment ids → ``(B, L, D)``; the tokens stand at positions
        ``start … start + L − 1`` (a decoder generating one token at a time passes its step)."""
        _check_ids("token_ids", token_ids, self.config.vocab_size, "vocab_size")
        _check_ids("segment_ids", segment_ids, self.config.n_segments, "n_segments")
        if segment_ids.shape != token_ids.shape:
            raise input_error(
                FieldName("segment_ids"), f" {tuple(segment_ids.shape)} must have the shape of `token_ids` {tuple(token_ids.shape)}"
            )
        end = start + token_ids.shape[1]
        if end > self.config.max_positions:
            raise CourseInputError(f"sequence length {end} exceeds max_positions={self.config.max_positions}")
        summed = self.token(token_ids) * self.scale + self.position[start:end] + self.segment(segment_ids)
        return self.dropout(self.norm(summed))


class PositionwiseFeedForward(nn.Module):
    """``Linear(D, d_ff) → activation → dropout → Linear(d_ff, D)`` on every position separately.

    Equivalent to two ``Conv1d`` layers with kernel size 1 over the position axis.
    """

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0, activation: str = "gelu") -> None:
        super().__init__()
        if activation not in _ACTIVATIONS:
            raise input_error(FieldName("activation"), f" must be one of {sorted(_ACTIVATIONS)}, got {activation!r}")
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)
        self.activation = _ACTIVATIONS[activation]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``(..., L, D)`` → ``(..., L, D)``."""
        return self.linear2(self.dropout(self.activation(self.linear1(x))))


class EncoderBlock(nn.Module):
    """Self-attention and FFN sub-layers, each with a residual connection and a LayerNorm.

    Post-LN (``norm_first=False``): ``x = LN(x + Drop(MHSA(x)))``, ``x = LN(x + Drop(FFN(x)))``.
    Pre-LN (``norm_first=True``): ``x = x + Drop(MHSA(LN(x)))``, ``x = x + Drop(FFN(LN(x)))``.
    """

    def __init__(self, config: EncoderConfig) -> None:
        super().__init__()
        self.norm_first = config.norm_first
        self.attention = MultiHeadAttention(config.d_model, config.n_heads, dropout=config.dropout,
                                            implementation=config.attention)
        self.ffn = PositionwiseFeedForward(config.d_model, config.d_ff, config.dropout, config.activation)
        self.norm1 = nn.LayerNorm(config.d_model, eps=config.layer_norm_eps)
        self.norm2 = nn.LayerNorm(config.d_model, eps=config.layer_norm_eps)
        self.dropout1 = nn.Dropout(config.dropout)
        self.dropout2 = nn.Dropout(config.dropout)

    def forward(self, x: torch.Tensor, key_mask: torch.Tensor | None, attn_bias: torch.Tensor | None = None) -> torch.Tensor:
        """Args:
            x: ``(B, L, D)``.
            key_mask: ``(B, L)`` boolean, ``True`` at real tokens (``None``: no padding).
            attn_bias: optional float tensor broadcastable to ``(B, H, L, L)``.

        Returns:
            ``(B, L, D)``.
        """
        return self._sublayers(x, lambda h: self.attention(h, h, h, mask=key_mask, attn_bias=attn_bias))

    def run_checked(self, x: torch.Tensor, attend: torch.Tensor, attn_bias: torch.Tensor | None) -> torch.Tensor:
        """:meth:`forward` on inputs its :class:`Encoder` checked once for all its blocks: ``attend`` is the key
        mask as ``(B, 1, 1, L)`` and ``attn_bias`` broadcasts to ``(B, H, L, L)``."""
        return self._sublayers(x, lambda h: self.attention.attend(h, h, h, attend, attn_bias))

    def _sublayers(self, x: torch.Tensor, self_attention) -> torch.Tensor:
        if self.norm_first:
            x = x + self.dropout1(self_attention(self.norm1(x)))
            return x + self.dropout2(self.ffn(self.norm2(x)))
        x = self.norm1(x + self.dropout1(self_attention(x)))
        return self.norm2(x + self.dropout2(self.ffn(x)))


class Encoder(nn.Module):
    """Embeddings followed by ``config.n_layers`` :class:`EncoderBlock` s.

    A Pre-LN stack ends with one more LayerNorm: its blocks add to an un-normalised
    residual stream, which would otherwise leave the encoder un-normalised.
    """

    def __init__(self, config: EncoderConfig) -> None:
        super().__init__()
        self.config = config
        self.embeddings = Embeddings(config)
        self.blocks = nn.ModuleList(EncoderBlock(config) for _ in range(config.n_layers))
        self.final_norm = nn.LayerNorm(config.d_model, eps=config.layer_norm_eps) if config.norm_first else nn.Identity()

    def forward(
        self,
        token_ids: torch.Tensor,
        segment_ids: torch.Tensor,
        key_mask: torch.Tensor,
        attn_bias: torch.Tensor | Sequence[torch.Tensor | None] | None = None,
    ) -> torch.Tensor:
        """Encode a batch of (padded) sequences.

        Args:
            token_ids: ``(B, L)`` long.
            segment_ids: ``(B, L)`` long, values in ``[0, n_segments)``.
            key_mask: ``(B, L)`` bool, ``True`` at real tokens, ``False`` at padding.
            attn_bias: ``None``; a float tensor broadcastable to ``(B, H, L, L)`` used by every
                block; or a list with one entry (tensor or ``None``) per block.

        Returns:
            ``(B, L, D)`` hidden states (padding positions hold values too; ignore them).
        """
        return self.run_blocks(self.embeddings(token_ids, segment_ids), key_mask, attn_bias)

    def run_blocks(
        self,
        x: torch.Tensor,
        key_mask: torch.Tensor,
        attn_bias: torch.Tensor | Sequence[torch.Tensor | None] | None = None,
    ) -> torch.Tensor:
        """The blocks (and the final LayerNorm) on embedded inputs ``x`` ``(B, L, D)``.

        :meth:`forward` is ``run_blocks(embeddings(token_ids, segment_ids), ...)``; a model
        that needs the embeddings first (to predict an attention bias from them) calls the
        two steps itself, with the same random draws as :meth:`forward`.
        """
        # Checked once here, as one (B, 1, 1, L) mask for every block (the blocks do not check again).
        _check_key_mask(key_mask, x.shape[:2])
        attend = key_mask[:, None, None, :]
        biases = self._per_layer_bias(attn_bias)
        scores_shape = (x.shape[0], self.config.n_heads, x.shape[1], x.shape[1])
        for bias in {id(b): b for b in biases if b is not None}.values():  # a shared bias once
            check_bias(bias, scores_shape)
        for block, bias in zip(self.block_list(), biases):
            x = block.run_checked(x, attend, bias)
        return self.final_norm(x)

    def block_list(self) -> list[EncoderBlock]:
        """The blocks, first first, typed as what they are (``nn.ModuleList`` yields plain modules)."""
        return [cast(EncoderBlock, block) for block in self.blocks]

    def _per_layer_bias(self, attn_bias):
        if attn_bias is None or isinstance(attn_bias, torch.Tensor):
            return [attn_bias] * len(self.blocks)
        biases = list(attn_bias)
        if len(biases) != len(self.blocks):
            raise input_error(FieldName("attn_bias"), f" list has {len(biases)} entries for {len(self.blocks)} blocks")
        return biases

    def set_keep_attention(self, keep: bool = True) -> None:
        """Make every block store its attention weights (see :meth:`attention_maps`)."""
        for block in self.block_list():
            block.attention.keep_attention = keep
            if not keep:
                block.attention.last_attention = None

    def attention_maps(self) -> list[torch.Tensor]:
        """The last stored weights of every block, each ``(B, H, L, L)``.

        Call :meth:`set_keep_attention` before the forward pass.
        """
        maps = [block.attention.last_attention for block in self.block_list()]
        stored = [m for m in maps if m is not None]
        if len(stored) < len(maps):
            raise CourseInputError("no attention stored: call `set_keep_attention(True)` before the forward pass")
        return stored


@torch.no_grad()
def load_torch_encoder_layer_weights(ours: EncoderBlock, theirs: nn.TransformerEncoderLayer) -> EncoderBlock:
    """Copy a ``torch.nn.TransformerEncoderLayer``'s weights into ``ours`` (in place; returns ``ours``).

    The two must agree on width, heads, FFN width and ``norm_first``; the activation is
    not a weight, so check it yourself (torch's default is ReLU).
    """
    if not isinstance(theirs, nn.TransformerEncoderLayer):
        raise input_error(FieldName("theirs"), f" must be torch.nn.TransformerEncoderLayer, got {type(theirs).__name__}")
    if theirs.norm_first != ours.norm_first:
        raise CourseInputError(f"norm_first differs: ours {ours.norm_first}, torch's {theirs.norm_first}")
    if theirs.linear1.out_features != ours.ffn.linear1.out_features:
        raise CourseInputError(
            f"d_ff differs: ours {ours.ffn.linear1.out_features}, torch's {theirs.linear1.out_features}"
        )
    if not theirs.self_attn.batch_first:
        raise CourseInputError("build torch's layer with batch_first=True so that both take (B, L, D)")
    load_torch_multihead_weights(ours.attention, theirs.self_attn)
    for mine, other in ((ours.ffn.linear1, theirs.linear1), (ours.ffn.linear2, theirs.linear2),
                        (ours.norm1, theirs.norm1), (ours.norm2, theirs.norm2)):
        mine.weight.copy_(other.weight)
        mine.bias.copy_(other.bias)
    return ours


class _ChannelsFirst(nn.Module):
    """Wrap a ``(B, D, L)`` module so that it takes and returns ``(B, L, D)``."""

    def __init__(self, inner: nn.Module) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.inner(x.transpose(1, 2)).transpose(1, 2)


class _Activation(nn.Module):
    def __init__(self, fn) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fn(x)


@torch.no_grad()
def feed_forward_as_conv1d(ffn: PositionwiseFeedForward) -> nn.Module:
    """The same FFN written as two ``Conv1d(kernel_size=1)`` layers, sharing no storage.

    A kernel of size 1 sees one position at a time, with the same weights at every
    position: exactly what "position-wise" means. ``Conv1d`` wants ``(B, D, L)``, so the
    returned module transposes in and out and takes ``(B, L, D)`` like ``ffn``.
    """
    if not isinstance(ffn, PositionwiseFeedForward):
        raise input_error(FieldName("ffn"), f" must be a PositionwiseFeedForward, got {type(ffn).__name__}")
    d_model, d_ff = ffn.linear1.in_features, ffn.linear1.out_features
    conv1 = nn.Conv1d(d_model, d_ff, kernel_size=1)
    conv2 = nn.Conv1d(d_ff, d_model, kernel_size=1)
    for conv, linear in ((conv1, ffn.linear1), (conv2, ffn.linear2)):
        conv.weight.copy_(linear.weight[:, :, None])  # (out, in) -> (out, in, kernel=1)
        assert conv.bias is not None  # Conv1d's default bias=True
        conv.bias.copy_(linear.bias)
    return _ChannelsFirst(nn.Sequential(conv1, _Activation(ffn.activation), nn.Dropout(ffn.dropout.p), conv2))


def block_gradient_norms(encoder: Encoder) -> list[float]:
    """The L2 norm of the gradient of all parameters of each block, first block first.

    Call after ``loss.backward()``. Used to compare Post-LN and Pre-LN stacks at
    initialisation (Xiong et al., 2020).
    """
    norms = []
    for index, block in enumerate(encoder.blocks):
        grads = [p.grad for p in block.parameters() if p.requires_grad]
        if any(g is None for g in grads):
            raise CourseInputError(f"block {index} has parameters without a gradient; call loss.backward() first")
        squares = torch.zeros((), dtype=torch.float64)
        for grad in grads:
            assert grad is not None  # checked above
            squares = squares + grad.detach().double().square().sum()
        norms.append(float(torch.sqrt(squares)))
    return norms
