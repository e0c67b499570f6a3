"""The Transformer: its encoder (lessons 04–05) and its decoder.

- :mod:`~lessons_lib.transformer.positional` — sinusoidal positional encoding and the
  fixed rotation that shifts it.
- :mod:`~lessons_lib.transformer.config` — :class:`EncoderConfig` (no torch import).
- :mod:`~lessons_lib.transformer.encoder` — embeddings, the position-wise FFN, the
  Post-LN/Pre-LN encoder block and the stack of blocks.
- :mod:`~lessons_lib.transformer.decoder` — the causal mask, the decoder block with cross-attention,
  the encoder–decoder model, teacher forcing and label smoothing, greedy and beam decoding with a
  key/value cache.
- :mod:`~lessons_lib.transformer.reversal` — the digit-reversal toy task for encoder stacks.
"""
