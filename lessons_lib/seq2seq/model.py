"""A small GRU encoder–decoder with attention (the lesson on encoder–decoder attention).

Training and scoring it: :mod:`lessons_lib.seq2seq.training`.

The encoder reads the source into states ``H_enc`` ``(B, S, d_enc)``; at each output step
the decoder state ``s_t`` ``(B, d_dec)`` is the query that scores every encoder state, the
weights mix them into a context vector ``c_t``, and ``[s_t; c_t]`` predicts the next
token (Luong et al., 2015, with "input feeding": ``c_{t-1}`` is part of the next input).

Two places need widths to agree, and the config makes both explicit:

- the *bridge* from the encoder's final state to the decoder's first state:
  ``"identity"`` (only when ``d_enc == d_dec``) or ``"linear"`` (a learned ``tanh(W h)``);
- the *score* between ``s_t`` and ``H_enc``: ``"dot"`` (only when ``d_enc == d_dec``),
  ``"general"`` (bilinear) or ``"additive"``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from lessons_lib.attention.functional import attend, make_scorer
from lessons_lib.errors import CourseInputError, FieldName, input_error
from lessons_lib.validation import check_int

__all__ = ["Seq2SeqConfig", "GRUEncoder", "AttentionDecoder", "Seq2Seq"]


@dataclass
class Seq2SeqConfig:
    """Sizes and choices of a :class:`Seq2Seq` model.

    Attributes:
        src_vocab_size, tgt_vocab_size: vocabulary sizes (ids 0/1/2 = pad/bos/eos).
        emb_dim: width of both embedding tables.
        enc_hidden: GRU width per direction; ``d_enc = enc_hidden × (2 if bidirectional)``.
        dec_hidden: decoder GRU width ``d_dec``.
        bidirectional: read the source both ways.
        score: ``"dot"``, ``"general"`` or ``"additive"``.
        bridge: ``"linear"`` or ``"identity"`` (initial decoder state = final encoder state).
        attn_hidden: width of the additive score's hidden layer (default ``d_dec``).
    """

    src_vocab_size: int
    tgt_vocab_size: int
    emb_dim: int = 32
    enc_hidden: int = 64
    dec_hidden: int = 128
    bidirectional: bool = True
    score: str = "general"
    bridge: str = "linear"
    attn_hidden: int | None = None
    pad_id: int = 0
    bos_id: int = 1
    eos_id: int = 2
    d_enc: int = field(init=False)

    def __post_init__(self) -> None:
        for name in ("src_vocab_size", "tgt_vocab_size", "emb_dim", "enc_hidden", "dec_hidden"):
            check_int(getattr(self, name), f"Seq2SeqConfig.{name}")
        self.d_enc = self.enc_hidden * (2 if self.bidirectional else 1)
        if self.bridge not in ("linear", "identity"):
            raise CourseInputError(f"Seq2SeqConfig.bridge must be 'linear' or 'identity', got {self.bridge!r}")
        if self.bridge == "identity" and self.d_enc != self.dec_hidden:
            raise CourseInputError(
                f"bridge='identity' copies the encoder state into the decoder, so it needs d_enc == d_dec; "
                f"got d_enc={self.d_enc} (enc_hidden={self.enc_hidden}, bidirectional={self.bidirectional}) "
                f"and d_dec={self.dec_hidden}; use bridge='linear'"
            )
        if self.score not in ("dot", "general", "additive"):
            raise CourseInputError(f"Seq2SeqConfig.score must be 'dot', 'general' or 'additive', got {self.score!r}")


class GRUEncoder(nn.Module):
    """Embedding → (bi)GRU over the real tokens only (packed, so padding never enters the state)."""

    def __init__(self, config: Seq2SeqConfig) -> None:
        super().__init__()
        self.embedding = nn.Embedding(config.src_vocab_size, config.emb_dim, padding_idx=config.pad_id)
        self.gru = nn.GRU(config.emb_dim, config.enc_hidden, batch_first=True, bidirectional=config.bidirectional)

    def forward(self, src: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``src`` ``(B, S)`` long and ``lengths`` ``(B,)`` → states ``(B, S, d_enc)`` and summary ``(B, d_enc)``.

        The summary is the final state of each direction, concatenated.
        """
        packed = pack_padded_sequence(self.embedding(src), lengths.cpu(), batch_first=True, enforce_sorted=False)
        outputs, final = self.gru(packed)
        outputs, _ = pad_packed_sequence(outputs, batch_first=True, total_length=src.shape[1])
        summary = torch.cat(list(final), dim=-1)  # (directions, B, h) -> (B, directions·h)
        return outputs, summary


class AttentionDecoder(nn.Module):
    """One GRU cell step with attention over the encoder states."""

    def __init__(self, config: Seq2SeqConfig) -> None:
        super().__init__()
        self.embedding = nn.Embedding(config.tgt_vocab_size, config.emb_dim, padding_idx=config.pad_id)
        self.cell = nn.GRUCell(config.emb_dim + config.d_enc, config.dec_hidden)
        self.scorer = make_scorer(config.score, config.dec_hidden, config.d_enc, config.attn_hidden)
        self.out = nn.Linear(config.dec_hidden + config.d_enc, config.tgt_vocab_size)

    def forward(
        self,
        prev_token: torch.Tensor,
        state: torch.Tensor,
        prev_context: torch.Tensor,
        enc_states: torch.Tensor,
        src_mask: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """One step.

        Args:
            prev_token: ``(B,)`` previous target id.
            state: ``(B, d_dec)`` previous decoder state.
            prev_context: ``(B, d_enc)`` previous context vector.
            enc_states: ``(B, S, d_enc)``.
            src_mask: ``(B, S)`` bool, ``True`` at real source tokens.

        Returns:
            ``(logits (B, V), state (B, d_dec), context (B, d_enc), weights (B, S))``.
        """
        state = self.cell(torch.cat([self.embedding(prev_token), prev_context], dim=-1), state)
        scores = self.scorer(state[:, None, :], enc_states)  # (B, 1, S)
        context, weights = attend(scores, enc_states, src_mask[:, None, :])
        context, weights = context[:, 0], weights[:, 0]
        logits = self.out(torch.cat([state, context], dim=-1))
        return logits, state, context, weights


class Seq2Seq(nn.Module):
    """GRU encoder, bridge, attention decoder; teacher-forced training and greedy decoding."""

    def __init__(self, config: Seq2SeqConfig) -> None:
        super().__init__()
        self.config = config
        self.encoder = GRUEncoder(config)
        self.bridge = nn.Identity() if config.bridge == "identity" else nn.Sequential(
            nn.Linear(config.d_enc, config.dec_hidden), nn.Tanh()
        )
        self.decoder = AttentionDecoder(config)

    def _start(self, src: torch.Tensor, lengths: torch.Tensor):
        if src.dim() != 2 or src.dtype != torch.long:
            raise input_error(FieldName("src"), f" must be a (B, S) long tensor, got shape {tuple(src.shape)}, dtype {src.dtype}")
        if lengths.shape != (src.shape[0],) or int(lengths.min()) < 1 or int(lengths.max()) > src.shape[1]:
            raise input_error(FieldName("lengths"), f" must be (B,) with values in [1, {src.shape[1]}], got {lengths.tolist()}")
        enc_states, summary = self.encoder(src, lengths)
        src_mask = torch.arange(src.shape[1], device=src.device)[None, :] < lengths[:, None]
        context = enc_states.new_zeros(src.shape[0], self.config.d_enc)
        return enc_states, src_mask, self.bridge(summary), context

    def forward(self, src: torch.Tensor, lengths: torch.Tensor, tgt_in: torch.Tensor) -> torch.Tensor:
        """Teacher forcing: ``tgt_in`` ``(B, T)`` starts with ``<bos>``; returns logits ``(B, T, V)``."""
        enc_states, src_mask, state, context = self._start(src, lengths)
        logits = []
        for t in range(tgt_in.shape[1]):
            step_logits, state, context, _ = self.decoder(tgt_in[:, t], state, context, enc_states, src_mask)
            logits.append(step_logits)
        return torch.stack(logits, dim=1)

    @torch.no_grad()
    def greedy_decode(self, src: torch.Tensor, lengths: torch.Tensor, max_steps: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Predict ids step by step, each time the most likely one.

        Returns:
            ``(ids (B, max_steps), weights (B, max_steps, S))``; read a row up to its first ``<eos>``.
        """
        enc_states, src_mask, state, context = self._start(src, lengths)
        token = torch.full((src.shape[0],), self.config.bos_id, dtype=torch.long, device=src.device)
        ids, weights = [], []
        for _ in range(max_steps):
            logits, state, context, step_weights = self.decoder(token, state, context, enc_states, src_mask)
            token = logits.argmax(dim=-1)
            ids.append(token)
            weights.append(step_weights)
        return torch.stack(ids, dim=1), torch.stack(weights, dim=1)
