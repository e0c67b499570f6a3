"""What a translation run is made of, without torch (the command line reads it for its flags).

- :class:`TranslatorSizes` — the encoder–decoder's sizes.
- :class:`TranslationTrainConfig` — the knobs of one training run.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lessons_lib.errors import FieldName, input_error
from lessons_lib.validation import check_choice, check_divisible, check_int, check_number

EPOCH_CHOICES = ("best_dev", "last")

__all__ = ["EPOCH_CHOICES", "TranslatorSizes", "TranslationTrainConfig"]


@dataclass(frozen=True)
class TranslatorSizes:
    """The sizes of the course's small translator (the decoder has as many blocks as the encoder).

    Attributes:
        d_model: the width of every block.
        n_heads: attention heads per block.
        n_layers: encoder blocks, and decoder blocks.
        d_ff: the hidden width of the position-wise FFN.
        dropout: dropout on embeddings, attention weights and sublayer outputs.
    """

    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2
    d_ff: int = 128
    dropout: float = 0.1

    def __post_init__(self) -> None:
        for name in ("d_model", "n_heads", "n_layers", "d_ff"):
            check_int(getattr(self, name), FieldName(name))
        check_number(self.dropout, FieldName("dropout"), minimum=0.0, maximum=0.99)
        # The encoder and decoder refuse these too, but only once the run has started.
        check_divisible(self.d_model, FieldName("d_model"), self.n_heads, FieldName("n_heads"))
        if self.d_model % 2:
            raise input_error(FieldName("d_model"), f"={self.d_model} must be even (sin/cos pairs)")


@dataclass(frozen=True)
class TranslationTrainConfig:
    """One run's training knobs.

    Attributes:
        epochs: passes over the training pairs.
        epoch_choice: which epoch's weights translate test: ``"best_dev"`` (the best dev BLEU,
            greedy; the earliest on a tie) or ``"last"``.
        batch_size: pairs per step (batches of similar source length, shuffled per epoch).
        lr: AdamW's peak learning rate, reached after ``warmup_ratio`` of the steps, then constant.
        warmup_ratio: the share of all steps spent warming up linearly.
        weight_decay: on weight matrices and embeddings only (never on a bias table).
        label_smoothing: ε of the smoothed cross-entropy.
        clip_norm: gradients are clipped to this global norm.
        max_target_len: the most tokens a translation may have.
        test_beam: 1 = greedy decoding of test, else the beam size (dev is always greedy).
    """

    epochs: int = 20
    epoch_choice: str = field(default="best_dev", metadata={"choices": EPOCH_CHOICES})
    batch_size: int = 64
    lr: float = 1e-3
    warmup_ratio: float = 0.1
    weight_decay: float = 0.01
    label_smoothing: float = 0.1
    clip_norm: float = 1.0
    max_target_len: int = 32
    test_beam: int = 1

    def __post_init__(self) -> None:
        for name in ("epochs", "batch_size", "max_target_len", "test_beam"):
            check_int(getattr(self, name), FieldName(name))
        check_choice(self.epoch_choice, FieldName("epoch_choice"), EPOCH_CHOICES)
        check_number(self.lr, FieldName("lr"), minimum=0.0, strict_minimum=True)
        check_number(self.warmup_ratio, FieldName("warmup_ratio"), minimum=0.0, maximum=1.0)
        check_number(self.weight_decay, FieldName("weight_decay"), minimum=0.0)
        check_number(self.label_smoothing, FieldName("label_smoothing"), minimum=0.0, maximum=1.0)
        check_number(self.clip_norm, FieldName("clip_norm"), minimum=0.0, strict_minimum=True)
