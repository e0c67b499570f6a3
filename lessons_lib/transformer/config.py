"""The encoder's configuration, kept free of torch so the command line can read it cheaply."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from lessons_lib.attention import IMPLEMENTATIONS
from lessons_lib.errors import FieldName, input_error
from lessons_lib.validation import check_choice, check_divisible, check_int, check_number, strict_from_dict

# The FFN non-linearities :mod:`lessons_lib.transformer.encoder` knows.
ACTIVATIONS = ("gelu", "relu")

__all__ = ["ACTIVATIONS", "EncoderConfig"]


@dataclass
class EncoderConfig:
    """Sizes and switches of a :class:`lessons_lib.transformer.encoder.Encoder`.

    Attributes:
        vocab_size: number of token ids (including the special tokens).
        d_model: width ``D``.
        n_heads: attention heads ``H`` (``D`` divisible by ``H``).
        n_layers: number of encoder blocks.
        d_ff: hidden width of the position-wise FFN.
        dropout: dropout after the embeddings, on the attention weights, inside the FFN
            and on each sub-layer's output before the residual addition.
        max_positions: longest sequence the position table covers.
        n_segments: number of segment ids (2: sentence A and sentence B).
        norm_first: ``False`` = Post-LN (the original Transformer, BERT), ``True`` = Pre-LN.
        pad_id: the padding token id (its embedding is zero and receives no gradient).
        activation: the FFN's non-linearity, ``"gelu"`` (BERT) or ``"relu"`` (the 2017 paper
            and torch's default).
        layer_norm_eps: epsilon of every LayerNorm (torch's default 1e-5).
        attention: ``"course"`` (the lessons' from-scratch scores, mask and softmax) or ``"sdpa"``
            (``torch.nn.functional.scaled_dot_product_attention``: the same parameters, equal outputs and
            gradients within 1e-5, on CPU the same dropout draws; which kernel it takes on CPU:
            :mod:`lessons_lib.attention.multihead`). ``lessons train``
            and ``lessons experiment`` use ``"sdpa"`` unless told otherwise.
    """

    vocab_size: int
    d_model: int = 256
    n_heads: int = 4
    n_layers: int = 1
    d_ff: int = 1024
    dropout: float = 0.1
    max_positions: int = 512
    n_segments: int = 2
    norm_first: bool = False
    pad_id: int = 0
    activation: str = field(default="gelu", metadata={"choices": ACTIVATIONS})
    layer_norm_eps: float = 1e-5
    attention: str = field(default="course", metadata={"choices": IMPLEMENTATIONS})

    def __post_init__(self) -> None:
        for name in ("vocab_size", "d_model", "n_heads", "n_layers", "d_ff", "max_positions", "n_segments"):
            check_int(getattr(self, name), FieldName(name, "EncoderConfig"))
        check_divisible(self.d_model, FieldName("d_model", "EncoderConfig"), self.n_heads, FieldName("n_heads", "EncoderConfig"))
        if self.d_model % 2:
            raise input_error(FieldName("d_model", "EncoderConfig"), f"={self.d_model} must be even (sin/cos pairs)")
        if not 0.0 <= check_number(self.dropout, FieldName("dropout", "EncoderConfig")) < 1.0:
            raise input_error(FieldName("dropout", "EncoderConfig"), f" must be in [0, 1), got {self.dropout!r}")
        check_int(self.pad_id, FieldName("pad_id", "EncoderConfig"), minimum=0, maximum=self.vocab_size - 1)
        check_choice(self.activation, FieldName("activation", "EncoderConfig"), ACTIVATIONS)
        check_choice(self.attention, FieldName("attention", "EncoderConfig"), IMPLEMENTATIONS)
        check_number(self.layer_norm_eps, FieldName("layer_norm_eps", "EncoderConfig"), minimum=0.0, strict_minimum=True)
        if not isinstance(self.norm_first, bool):
            raise input_error(FieldName("norm_first", "EncoderConfig"), f" must be True or False, got {self.norm_first!r}")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "EncoderConfig":
        return strict_from_dict(cls, data)
