"""Named training recipes (presets), the training options they set, and the syntax-bias variants.

Kept apart from :mod:`lessons_lib.training` and :mod:`lessons_lib.syntax_bias` so that the
command line can list presets and variants without importing torch. Why each preset is what it is: see the README's "Presets" section.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from lessons_lib.configs import strict_from_dict
from lessons_lib.errors import CourseInputError

# The ablation's variants (built by lessons_lib.syntax_bias.make_bias); "none" is the baseline.
SYNTAX_BIAS_VARIANTS = ("none", "learned", "fixed_decay", "hard_mask")

__all__ = ["TrainConfig", "Preset", "PRESETS"]


@dataclass
class TrainConfig:
    """How to train.

    Attributes:
        epochs: passes over the training split.
        batch_size: pairs per optimiser step.
        lr: peak learning rate of AdamW.
        weight_decay: AdamW decay, on weight matrices and embeddings only.
        warmup_ratio: share of all steps spent raising the lr linearly from 0 (0 = none).
        schedule: ``"constant"`` or ``"linear"`` (decay to 0 at the last step) after warm-up.
        clip_norm: clip the global gradient norm to this (0 = no clipping).
        seed: seeds batch order, pair swaps and dropout.
        max_len: positions per pair, special tokens included.
        swap_probability: pair-order augmentation (present (b, a) instead of (a, b)).
        eval_batch_size: pairs per batch when evaluating.
    """

    epochs: int = 3
    batch_size: int = 32
    lr: float = 5e-5
    weight_decay: float = 0.01
    warmup_ratio: float = 0.0
    schedule: str = "constant"
    clip_norm: float = 1.0
    seed: int = 0
    max_len: int = 64
    swap_probability: float = 0.0
    eval_batch_size: int = 256

    def __post_init__(self) -> None:
        for name in ("epochs", "batch_size", "max_len", "eval_batch_size"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise CourseInputError(f"TrainConfig.{name} must be a positive int, got {value!r}")
        if not (isinstance(self.lr, (int, float)) and self.lr > 0):
            raise CourseInputError(f"TrainConfig.lr must be > 0, got {self.lr!r}")
        if not 0.0 <= self.warmup_ratio < 1.0:
            raise CourseInputError(f"TrainConfig.warmup_ratio must be in [0, 1), got {self.warmup_ratio!r}")
        if self.schedule not in ("constant", "linear"):
            raise CourseInputError(f"TrainConfig.schedule must be 'constant' or 'linear', got {self.schedule!r}")
        if self.clip_norm < 0 or self.weight_decay < 0:
            raise CourseInputError("TrainConfig.clip_norm and weight_decay must be ≥ 0")
        if not 0.0 <= self.swap_probability <= 1.0:
            raise CourseInputError(f"TrainConfig.swap_probability must be in [0, 1], got {self.swap_probability!r}")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "TrainConfig":
        return strict_from_dict(cls, data)


@dataclass(frozen=True)
class Preset:
    """A named recipe: model options (``PairClassifierConfig`` fields except vocab_size) and training."""

    name: str
    description: str
    model: dict
    train: TrainConfig


PRESETS: dict[str, Preset] = {
    "textbook": Preset(
        "textbook",
        "the textbook chapter's recipe: 1 Post-LN block, 4 heads, width 256, AdamW 5e-5, "
        "3 epochs, batch 32, clipping 1.0",
        dict(d_model=256, n_heads=4, n_layers=1, d_ff=1024, dropout=0.1, norm_first=False),
        TrainConfig(epochs=3, batch_size=32, lr=5e-5, weight_decay=0.01, warmup_ratio=0.0,
                    schedule="constant", clip_norm=1.0, max_len=64),
    ),
    "matchflags": Preset(
        "matchflags",
        "from scratch, designed to beat textbook: 2 Post-LN blocks, exact-match flags and overlap "
        "features, lr 3e-4 with 6% warm-up and linear decay, batch 64, pair-order swaps, 10 epochs",
        dict(d_model=256, n_heads=4, n_layers=2, d_ff=1024, dropout=0.1, norm_first=False,
             match_flags=True, overlap_features=True),
        TrainConfig(epochs=10, batch_size=64, lr=3e-4, weight_decay=0.01, warmup_ratio=0.06,
                    schedule="linear", clip_norm=1.0, max_len=64, swap_probability=0.5),
    ),
}
