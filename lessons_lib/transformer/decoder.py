"""The other half of the Transformer: a decoder that writes one token after another while it
attends to the encoder's reading of the source.

- :func:`causal_mask` and :func:`target_self_mask`: a target position may attend to itself and the
  positions before it (the look-ahead mask), and never to padding; combined and checked once per
  forward pass, as the encoder checks its key mask.
- :class:`DecoderBlock`: masked self-attention → Add&Norm → cross-attention over the encoder's
  output (the *memory*) → Add&Norm → FFN → Add&Norm, Post-LN or Pre-LN like
  :class:`~lessons_lib.transformer.encoder.EncoderBlock`; :func:`load_torch_decoder_layer_weights`
  copies a ``torch.nn.TransformerDecoderLayer`` into it so the two can be compared.
- :class:`EncoderDecoder`: the course's :class:`~lessons_lib.transformer.encoder.Encoder` (so its
  ``attn_bias`` hook, the syntax bias of the later lessons, works unchanged), target embeddings
  (shared with the source or separate) and a stack of decoder blocks; the output projection can
  reuse the target embedding table (weight tying).
- Training: :func:`shift_right` (teacher forcing: the decoder reads the reference shifted by one)
  and :func:`smoothed_cross_entropy` (padding ignored, label smoothing written out).
- Decoding: :func:`greedy_decode` and :func:`beam_search` (length-normalised; beam 1 is greedy),
  both with a key/value cache (:class:`DecoderCache`) whose outputs equal decoding without it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import torch
from torch import nn
from torch.nn import functional as F

from lessons_lib.attention.multihead import MultiHeadAttention, load_torch_multihead_weights
from lessons_lib.errors import CourseInputError, FieldName, input_error
from lessons_lib.transformer.config import EncoderConfig
from lessons_lib.transformer.encoder import Embeddings, Encoder, PositionwiseFeedForward
from lessons_lib.validation import check_int, check_mask, check_number

__all__ = [
    "causal_mask",
    "target_self_mask",
    "DecoderBlock",
    "load_torch_decoder_layer_weights",
    "LayerCache",
    "DecoderCache",
    "EncoderDecoder",
    "shift_right",
    "smoothed_cross_entropy",
    "greedy_decode",
    "beam_search",
]


def causal_mask(length: int, device: torch.device | str | None = None) -> torch.Tensor:
    """``(L, L)`` bool, ``True`` where query ``i`` may attend to key ``j``: ``j ≤ i`` (never the future)."""
    check_int(length, FieldName("length"))
    return torch.ones(length, length, dtype=torch.bool, device=device).tril()


def target_self_mask(target_key_mask: torch.Tensor) -> torch.Tensor:
    """The decoder's self-attention mask: causal and padding together, ``(B, T)`` → ``(B, 1, T, T)``.

    ``target_key_mask`` is ``True`` at real target tokens. A padded position's own row still
    sees the real positions before it; its output is ignored by the loss.
    """
    check_mask(target_key_mask, torch_hint=True)
    if target_key_mask.dim() != 2:
        raise input_error(FieldName("target_key_mask"), f" must be (B, T), got shape {tuple(target_key_mask.shape)}")
    causal = causal_mask(target_key_mask.shape[1], target_key_mask.device)
    return causal[None, None] & target_key_mask[:, None, None, :]


@dataclass
class LayerCache:
    """What one decoder block keeps between generation steps.

    Attributes:
        keys, values: the self-attention's projected keys and values of the tokens generated so
            far, ``(B, H, t, d_head)`` (``None`` before the first step).
        memory_keys, memory_values: the cross-attention's projections of the memory,
            ``(B, H, S, d_head)``, computed at the first step and reused at every other.
    """

    keys: torch.Tensor | None = None
    values: torch.Tensor | None = None
    memory_keys: torch.Tensor | None = None
    memory_values: torch.Tensor | None = None

    def select(self, rows: torch.Tensor) -> "LayerCache":
        """The cache of batch rows ``rows`` ``(B',)`` (a beam keeps the hypotheses it extends)."""
        def pick(t: torch.Tensor | None) -> torch.Tensor | None:
            return None if t is None else t.index_select(0, rows)
        return LayerCache(pick(self.keys), pick(self.values), pick(self.memory_keys), pick(self.memory_values))


@dataclass
class DecoderCache:
    """One :class:`LayerCache` per decoder block, and how many target positions were generated."""

    layers: list[LayerCache]
    length: int = 0

    def select(self, rows: torch.Tensor) -> "DecoderCache":
        return DecoderCache([layer.select(rows) for layer in self.layers], self.length)


class DecoderBlock(nn.Module):
    """Masked self-attention, cross-attention and FFN sub-layers, each with a residual and a LayerNorm.

    Post-LN (``norm_first=False``): ``x = LN₁(x + Drop(SelfAttn(x)))``,
    ``x = LN₂(x + Drop(CrossAttn(x, memory)))``, ``x = LN₃(x + Drop(FFN(x)))``.
    Pre-LN: ``x = x + Drop(SelfAttn(LN₁(x)))``, ``x = x + Drop(CrossAttn(LN₂(x), memory))``,
    ``x = x + Drop(FFN(LN₃(x)))``. The memory is the encoder's output, used as it is.
    """

    def __init__(self, config: EncoderConfig) -> None:
        super().__init__()
        self.norm_first = config.norm_first
        width = config.d_model
        self.self_attention = MultiHeadAttention(width, config.n_heads, config.dropout, config.attention)
        self.cross_attention = MultiHeadAttention(width, config.n_heads, config.dropout, config.attention)
        self.ffn = PositionwiseFeedForward(width, config.d_ff, config.dropout, config.activation)
        self.norm1 = nn.LayerNorm(width, eps=config.layer_norm_eps)
        self.norm2 = nn.LayerNorm(width, eps=config.layer_norm_eps)
        self.norm3 = nn.LayerNorm(width, eps=config.layer_norm_eps)
        self.dropout1 = nn.Dropout(config.dropout)
        self.dropout2 = nn.Dropout(config.dropout)
        self.dropout3 = nn.Dropout(config.dropout)

    def forward(self, x: torch.Tensor, memory: torch.Tensor, self_mask: torch.Tensor,
                memory_mask: torch.Tensor) -> torch.Tensor:
        """Every target position at once (training, or decoding without a cache).

        Args:
            x: ``(B, T, D)`` target states.
            memory: ``(B, S, D)`` the encoder's output.
            self_mask: ``(B, 1, T, T)`` bool from :func:`target_self_mask`.
            memory_mask: ``(B, 1, 1, S)`` bool, ``True`` at real source tokens.

        Returns:
            ``(B, T, D)``.
        """
        def self_attention(h: torch.Tensor) -> torch.Tensor:
            return self.self_attention.attend(h, h, h, self_mask, None)

        def cross_attention(h: torch.Tensor) -> torch.Tensor:
            return self.cross_attention.attend(h, memory, memory, memory_mask, None)

        return self._sublayers(x, self_attention, cross_attention)

    def step(self, x: torch.Tensor, memory: torch.Tensor, memory_mask: torch.Tensor, cache: LayerCache) -> torch.Tensor:
        """The next position only, ``x`` ``(B, 1, D)`` → ``(B, 1, D)``, reading and extending ``cache``.

        Equal to the last row of :meth:`forward` on all positions so far: the new token's keys and
        values join the cached ones, and every cached position is in its past (no mask needed).
        """
        def self_attention(h: torch.Tensor) -> torch.Tensor:
            queries = self.self_attention.query_heads(h)
            keys, values = self.self_attention.key_value_heads(h, h)
            if cache.keys is not None and cache.values is not None:
                keys, values = torch.cat([cache.keys, keys], dim=2), torch.cat([cache.values, values], dim=2)
            cache.keys, cache.values = keys, values
            return self.self_attention.attend_projected(queries, keys, values, None, None)

        def cross_attention(h: torch.Tensor) -> torch.Tensor:
            queries = self.cross_attention.query_heads(h)
            if cache.memory_keys is None or cache.memory_values is None:
                cache.memory_keys, cache.memory_values = self.cross_attention.key_value_heads(memory, memory)
            return self.cross_attention.attend_projected(queries, cache.memory_keys, cache.memory_values, memory_mask,
                                                         None)

        return self._sublayers(x, self_attention, cross_attention)

    def _sublayers(self, x: torch.Tensor, self_attention, cross_attention) -> torch.Tensor:
        if self.norm_first:
            x = x + self.dropout1(self_attention(self.norm1(x)))
            x = x + self.dropout2(cross_attention(self.norm2(x)))
            return x + self.dropout3(self.ffn(self.norm3(x)))
        x = self.norm1(x + self.dropout1(self_attention(x)))
        x = self.norm2(x + self.dropout2(cross_attention(x)))
        return self.norm3(x + self.dropout3(self.ffn(x)))


@torch.no_grad()
def load_torch_decoder_layer_weights(ours: DecoderBlock, theirs: nn.TransformerDecoderLayer) -> DecoderBlock:
    """Copy a ``torch.nn.TransformerDecoderLayer``'s weights into ``ours`` (in place; returns ``ours``).

    They must agree on width, heads, FFN width and ``norm_first``, and torch's layer must be
    ``batch_first``; the activation is not a weight, so check it yourself (torch's default is ReLU).
    """
    if not isinstance(theirs, nn.TransformerDecoderLayer):
        raise input_error(FieldName("theirs"), f" must be torch.nn.TransformerDecoderLayer, got {type(theirs).__name__}")
    if theirs.norm_first != ours.norm_first:
        raise CourseInputError(f"norm_first differs: ours {ours.norm_first}, torch's {theirs.norm_first}")
    if theirs.linear1.out_features != ours.ffn.linear1.out_features:
        raise CourseInputError(f"d_ff differs: ours {ours.ffn.linear1.out_features}, torch's {theirs.linear1.out_features}")
    if not theirs.self_attn.batch_first:
        raise CourseInputError("build torch's layer with batch_first=True so that both take (B, T, D)")
    load_torch_multihead_weights(ours.self_attention, theirs.self_attn)
    load_torch_multihead_weights(ours.cross_attention, theirs.multihead_attn)
    for mine, other in ((ours.ffn.linear1, theirs.linear1), (ours.ffn.linear2, theirs.linear2),
                        (ours.norm1, theirs.norm1), (ours.norm2, theirs.norm2), (ours.norm3, theirs.norm3)):
        mine.weight.copy_(other.weight)
        mine.bias.copy_(other.bias)
    return ours


class EncoderDecoder(nn.Module):
    """A Transformer for translation: the course's encoder, a decoder stack and an output projection.

    Args:
        config: the encoder's sizes (``vocab_size`` is the source vocabulary); the decoder uses
            the same width, heads, FFN, dropout, norm placement and ``n_layers`` unless
            ``decoder_layers`` says otherwise. Segments are not used (``n_segments`` may be 1).
        target_vocab_size: the target vocabulary (``None``: one vocabulary shared with the source,
            and one embedding table for both sides).
        tie_output: the output projection reuses the target embedding table (the 2017 paper's
            weight tying), so ``logits = h · Eᵀ``; else a separate ``Linear(D, V)``.
        decoder_layers: the number of decoder blocks (default ``config.n_layers``).

    A Pre-LN decoder ends with one more LayerNorm, as the encoder does.
    """

    def __init__(self, config: EncoderConfig, target_vocab_size: int | None = None, tie_output: bool = True,
                 decoder_layers: int | None = None) -> None:
        super().__init__()
        self.config = config
        self.encoder = Encoder(config)
        if target_vocab_size is None:
            self.target_embeddings = self.encoder.embeddings
        else:
            check_int(target_vocab_size, FieldName("target_vocab_size"))
            target_config = EncoderConfig(**{**config.to_dict(), "vocab_size": target_vocab_size})
            self.target_embeddings = Embeddings(target_config)
        n_layers = config.n_layers if decoder_layers is None else check_int(decoder_layers, FieldName("decoder_layers"))
        self.blocks = nn.ModuleList(DecoderBlock(config) for _ in range(n_layers))
        self.final_norm = nn.LayerNorm(config.d_model, eps=config.layer_norm_eps) if config.norm_first else nn.Identity()
        vocab = self.target_embeddings.token.num_embeddings
        self.output = nn.Linear(config.d_model, vocab, bias=False)
        if tie_output:
            self.output.weight = self.target_embeddings.token.weight

    @property
    def target_vocab_size(self) -> int:
        return self.target_embeddings.token.num_embeddings

    def block_list(self) -> list[DecoderBlock]:
        """The decoder blocks, first first."""
        return [cast(DecoderBlock, block) for block in self.blocks]

    def encode(self, source_ids: torch.Tensor, source_key_mask: torch.Tensor,
               attn_bias: torch.Tensor | list[torch.Tensor | None] | None = None) -> torch.Tensor:
        """``(B, S)`` source ids and key mask → the memory ``(B, S, D)``. ``attn_bias`` reaches the
        encoder's self-attention exactly as in :class:`~lessons_lib.transformer.encoder.Encoder`."""
        return self.encoder(source_ids, torch.zeros_like(source_ids), source_key_mask, attn_bias)

    def decode(self, target_in: torch.Tensor, target_key_mask: torch.Tensor, memory: torch.Tensor,
               source_key_mask: torch.Tensor) -> torch.Tensor:
        """Logits ``(B, T, V)`` for every target position at once (teacher forcing).

        Args:
            target_in: ``(B, T)`` the decoder's input, e.g. :func:`shift_right` of the reference.
            target_key_mask: ``(B, T)`` ``True`` at real tokens of ``target_in``.
            memory: ``(B, S, D)`` from :meth:`encode`.
            source_key_mask: ``(B, S)``.
        """
        x = self.target_embeddings(target_in, torch.zeros_like(target_in))
        return self.output(self.run_decoder_blocks(x, target_key_mask, memory, source_key_mask))

    def run_decoder_blocks(self, x: torch.Tensor, target_key_mask: torch.Tensor, memory: torch.Tensor,
                           source_key_mask: torch.Tensor) -> torch.Tensor:
        """The decoder blocks (and the final LayerNorm) on embedded targets ``x`` ``(B, T, D)`` → ``(B, T, D)``;
        the masks are checked once here for every block."""
        self_mask = target_self_mask(target_key_mask)
        memory_mask = check_mask(source_key_mask, (memory.shape[0], memory.shape[1]))[:, None, None, :]
        for block in self.block_list():
            x = block(x, memory, self_mask, memory_mask)
        return self.final_norm(x)

    def forward(self, source_ids: torch.Tensor, source_key_mask: torch.Tensor, target_in: torch.Tensor,
                target_key_mask: torch.Tensor,
                attn_bias: torch.Tensor | list[torch.Tensor | None] | None = None) -> torch.Tensor:
        """:meth:`encode` then :meth:`decode`: logits ``(B, T, V)``."""
        memory = self.encode(source_ids, source_key_mask, attn_bias)
        return self.decode(target_in, target_key_mask, memory, source_key_mask)

    def new_cache(self) -> DecoderCache:
        """An empty :class:`DecoderCache` for :meth:`decode_step`."""
        return DecoderCache([LayerCache() for _ in self.blocks])

    def decode_step(self, last_tokens: torch.Tensor, memory: torch.Tensor, source_key_mask: torch.Tensor,
                    cache: DecoderCache) -> torch.Tensor:
        """Logits ``(B, V)`` of the next token, from the last generated tokens ``(B,)`` and ``cache``
        (extended in place): equal to the last row of :meth:`decode` on the whole prefix."""
        memory_mask = source_key_mask[:, None, None, :]
        x = self.target_embeddings(last_tokens[:, None], torch.zeros_like(last_tokens[:, None]), start=cache.length)
        for block, layer in zip(self.block_list(), cache.layers):
            x = block.step(x, memory, memory_mask, layer)
        cache.length += 1
        return self.output(self.final_norm(x))[:, 0]


def shift_right(targets: torch.Tensor, bos_id: int) -> torch.Tensor:
    """Teacher forcing's input: ``[BOS, y₀, …, y_{T−2}]`` from targets ``(B, T)`` ``[y₀, …, EOS, PAD…]``.

    The decoder reads the reference up to position ``t − 1`` and is scored on ``y_t``; the last
    target token has nothing after it to predict, so it is dropped from the input (where it is
    padding nothing changes: the positions after EOS are scored against padding, which the loss
    ignores).
    """
    if targets.dim() != 2:
        raise input_error(FieldName("targets"), f" must be (B, T), got shape {tuple(targets.shape)}")
    start = torch.full_like(targets[:, :1], bos_id)
    return torch.cat([start, targets[:, :-1]], dim=1)


def smoothed_cross_entropy(logits: torch.Tensor, targets: torch.Tensor, pad_id: int,
                           smoothing: float = 0.0) -> torch.Tensor:
    """Mean over real target tokens of ``(1 − ε) · (−log p_y) + ε · mean_c(−log p_c)``.

    Label smoothing moves ``ε`` of the target's probability mass evenly onto every class (the
    2017 paper used ε = 0.1); padding positions add nothing. The same number as
    ``F.cross_entropy(…, ignore_index=pad_id, label_smoothing=ε)``.

    Args:
        logits: ``(B, T, V)``.
        targets: ``(B, T)`` long, ``pad_id`` at padding.
    """
    check_number(smoothing, FieldName("smoothing"), minimum=0.0, maximum=1.0)
    if logits.dim() != 3 or logits.shape[:2] != targets.shape:
        raise input_error(FieldName("logits"), f" (B, T, V) and `targets` (B, T) disagree: {tuple(logits.shape)}, "
                               f"{tuple(targets.shape)}")
    real = targets != pad_id
    if not real.any():
        raise CourseInputError("every target token is padding: nothing to score")
    log_p = F.log_softmax(logits.float(), dim=-1)
    nll = -log_p.gather(-1, targets.clamp(min=0)[..., None])[..., 0]  # (B, T)
    uniform = -log_p.mean(dim=-1)  # (B, T): cross-entropy against the even spread
    per_token = (1.0 - smoothing) * nll + smoothing * uniform
    return per_token[real].mean()


def greedy_decode(model: EncoderDecoder, source_ids: torch.Tensor, source_key_mask: torch.Tensor, bos_id: int,
                  eos_id: int, max_len: int, use_cache: bool = True,
                  attn_bias: list[torch.Tensor | None] | None = None) -> list[list[int]]:
    """The most probable next token at every step, for each source sentence, until ``eos_id``
    or ``max_len`` tokens (the returned ids exclude BOS and EOS).

    ``use_cache=False`` runs the whole decoder on the prefix at every step: slower, the same tokens.
    ``attn_bias``: one ``(B, 1 or H, S, S)`` bias per encoder block (a syntax bias), as :meth:`EncoderDecoder.encode`.
    """
    check_int(max_len, FieldName("max_len"))
    with torch.no_grad():
        memory = model.encode(source_ids, source_key_mask, attn_bias)
        batch = source_ids.shape[0]
        generated = torch.full((batch, 1), bos_id, dtype=torch.long, device=source_ids.device)
        finished = torch.zeros(batch, dtype=torch.bool, device=source_ids.device)
        cache = model.new_cache()
        for _ in range(max_len):
            logits = _next_logits(model, generated, memory, source_key_mask, cache if use_cache else None)
            next_tokens = logits.argmax(dim=-1).masked_fill(finished, eos_id)
            generated = torch.cat([generated, next_tokens[:, None]], dim=1)
            finished |= next_tokens == eos_id
            if finished.all():
                break
    return [_strip(row[1:].tolist(), eos_id) for row in generated]


def _next_logits(model: EncoderDecoder, generated: torch.Tensor, memory: torch.Tensor, source_key_mask: torch.Tensor,
                 cache: DecoderCache | None) -> torch.Tensor:
    """``(B, V)`` logits of the token after ``generated`` ``(B, t)``: one cached step, or the whole prefix."""
    if cache is not None:
        return model.decode_step(generated[:, -1], memory, source_key_mask, cache)
    every = torch.ones_like(generated, dtype=torch.bool)
    return model.decode(generated, every, memory, source_key_mask)[:, -1]


def _strip(tokens: list[int], eos_id: int) -> list[int]:
    return tokens[:tokens.index(eos_id)] if eos_id in tokens else tokens


def beam_search(model: EncoderDecoder, source_ids: torch.Tensor, source_key_mask: torch.Tensor, bos_id: int,
                eos_id: int, max_len: int, beam_size: int = 4, length_alpha: float = 1.0,
                use_cache: bool = True, attn_bias: list[torch.Tensor | None] | None = None) -> list[list[int]]:
    """Keep the ``beam_size`` best prefixes of each sentence; return, per sentence, the finished
    hypothesis with the best length-normalised score ``log P / len^α`` (``len`` counts EOS).

    ``α = 0`` ranks by total log-probability (short hypotheses win); ``α = 1`` by the mean per
    token. With ``beam_size=1`` the search is :func:`greedy_decode`. A hypothesis that reaches
    ``max_len`` tokens without EOS competes as it is. ``attn_bias`` as in :func:`greedy_decode`.
    """
    check_int(beam_size, FieldName("beam_size"))
    check_number(length_alpha, FieldName("length_alpha"), minimum=0.0)
    def rows_of(i: int) -> list[torch.Tensor | None] | None:
        return None if attn_bias is None else [None if b is None else b[i:i + 1] for b in attn_bias]

    return [_beam_one(model, source_ids[i:i + 1], source_key_mask[i:i + 1], bos_id, eos_id, max_len, beam_size,
                      length_alpha, use_cache, rows_of(i)) for i in range(source_ids.shape[0])]


def _beam_one(model: EncoderDecoder, source_ids: torch.Tensor, source_key_mask: torch.Tensor, bos_id: int,
              eos_id: int, max_len: int, beam_size: int, alpha: float, use_cache: bool,
              attn_bias: list[torch.Tensor | None] | None) -> list[int]:
    """:func:`beam_search` on one sentence (``(1, S)`` inputs)."""
    check_int(max_len, FieldName("max_len"))
    with torch.no_grad():
        memory = model.encode(source_ids, source_key_mask, attn_bias)
        prefixes = torch.full((1, 1), bos_id, dtype=torch.long, device=source_ids.device)
        scores = torch.zeros(1, device=source_ids.device)  # total log-probability of each live prefix
        cache: DecoderCache | None = model.new_cache() if use_cache else None
        finished: list[tuple[float, list[int]]] = []
        for step in range(1, max_len + 1):
            live = prefixes.shape[0]
            logits = _next_logits(model, prefixes, memory.expand(live, -1, -1),
                                  source_key_mask.expand(live, -1), cache)
            totals = (scores[:, None] + F.log_softmax(logits.float(), dim=-1)).flatten()
            # twice the beam: however many of the best end here, beam_size live prefixes remain
            best = totals.topk(min(2 * beam_size, totals.numel())).indices
            rows, tokens = best // logits.shape[-1], best % logits.shape[-1]
            keep: list[int] = []
            for rank, (row, token) in enumerate(zip(rows.tolist(), tokens.tolist())):
                if token == eos_id and rank < beam_size:  # an ending among the beam's best
                    finished.append((totals[best[rank]].item() / step ** alpha, prefixes[row, 1:].tolist()))
                elif token != eos_id and len(keep) < beam_size:
                    keep.append(rank)
            if len(finished) >= beam_size or not keep:
                break
            chosen = torch.tensor(keep, device=source_ids.device)
            prefixes = torch.cat([prefixes[rows[chosen]], tokens[chosen][:, None]], dim=1)
            scores = totals[best[chosen]]
            if cache is not None:
                cache = cache.select(rows[chosen])
        else:  # max_len reached: the live prefixes compete without EOS
            finished += [(s / max_len ** alpha, p[1:]) for s, p in zip(scores.tolist(), prefixes.tolist())]
    return max(finished, key=lambda item: item[0])[1]
