"""How a pair classifier is built and trained: its configs, the named recipes, and overrides.

- :class:`PairClassifierConfig` — an :class:`~lessons_lib.transformer.config.EncoderConfig`
  plus the head's switches (composed, not repeated).
- :class:`TrainConfig` — the optimiser, schedule, batching and truncation.
- :data:`PRESETS` — named recipes (why each is what it is: the README's "Presets").
- :data:`COMMAND_LINE_DEFAULTS` — the fast paths ``lessons train`` and ``lessons experiment`` take
  unless told otherwise (the lessons keep the library's defaults).
- :func:`resolve_recipe` — a preset plus flat overrides (``{"d_model": 64, "epochs": 2}``)
  → a checked :class:`Recipe`, before any data is read; :func:`resolve_configs` → both configs
  once the vocabulary's size is known. Every command and notebook that starts from a preset
  goes through them, so an override means the same everywhere and an unknown name is an error.

No torch here: the command line lists presets and options without importing it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, Mapping

from lessons_lib.errors import CourseInputError, FieldName, input_error
from lessons_lib.pairs.vocab import SPECIAL_TOKENS, Vocabulary
from lessons_lib.transformer.config import EncoderConfig
from lessons_lib.validation import check_choice, check_int, check_number, check_probability, strict_from_dict

__all__ = [
    "TrainConfig",
    "PairClassifierConfig",
    "Preset",
    "PRESETS",
    "MODEL_OPTIONS",
    "TRAIN_OPTIONS",
    "Recipe",
    "resolve_recipe",
    "resolve_configs",
]

SCHEDULES = ("constant", "linear")
# Batch orders of training (see :func:`lessons_lib.pairs.encoding.batch_indices`).
BATCHING = ("plain", "bucketed")


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
        max_len: positions per pair, special tokens included (longer pairs are truncated).
        swap_probability: pair-order augmentation (present (b, a) instead of (a, b)).
        eval_batch_size: pairs per batch when evaluating.
        batching: training batch order: ``"plain"`` (a shuffled order cut into batches, what the
            lessons use) or ``"bucketed"`` (shuffle, sort pools of 50 batches by length, cut, then
            shuffle the batches: far less padding, so faster; ``lessons train`` and
            ``lessons experiment`` use it unless told otherwise).
    """

    epochs: int = 3
    batch_size: int = 32
    lr: float = 5e-5
    weight_decay: float = 0.01
    warmup_ratio: float = 0.0
    schedule: str = field(default="constant", metadata={"choices": SCHEDULES})
    clip_norm: float = 1.0
    seed: int = 0
    max_len: int = 64
    swap_probability: float = 0.0
    eval_batch_size: int = 256
    batching: str = field(default="plain", metadata={"choices": BATCHING})

    def __post_init__(self) -> None:
        for name in ("epochs", "batch_size", "eval_batch_size"):
            check_int(getattr(self, name), FieldName(name, "TrainConfig"))
        check_int(self.max_len, FieldName("max_len", "TrainConfig"), minimum=5)  # [CLS] a [SEP] b [SEP]
        check_int(self.seed, FieldName("seed", "TrainConfig"), minimum=0)
        check_number(self.lr, FieldName("lr", "TrainConfig"), minimum=0.0, strict_minimum=True)
        check_number(self.weight_decay, FieldName("weight_decay", "TrainConfig"), minimum=0.0)
        check_number(self.clip_norm, FieldName("clip_norm", "TrainConfig"), minimum=0.0)
        if not 0.0 <= check_number(self.warmup_ratio, FieldName("warmup_ratio", "TrainConfig")) < 1.0:
            raise input_error(FieldName("warmup_ratio", "TrainConfig"), f" must be in [0, 1), got {self.warmup_ratio!r}")
        check_choice(self.schedule, FieldName("schedule", "TrainConfig"), SCHEDULES)
        check_choice(self.batching, FieldName("batching", "TrainConfig"), BATCHING)
        check_probability(self.swap_probability, FieldName("swap_probability", "TrainConfig"))

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "TrainConfig":
        return strict_from_dict(cls, data)


@dataclass
class PairClassifierConfig:
    """The encoder and the head of a :class:`lessons_lib.pairs.classifier.PairClassifier`.

    Attributes:
        encoder: the encoder's sizes; with ``match_flags`` it needs 4 segment ids
            (sentence × matched), else 2 — :meth:`from_options` sets this for you.
        match_flags: mark each character that also occurs in the other sentence.
        overlap_features: append three overlap numbers to the ``[CLS]`` vector.
        n_classes: number of scores (2: different / same meaning).
    """

    encoder: EncoderConfig
    match_flags: bool = False
    overlap_features: bool = False
    n_classes: int = 2

    def __post_init__(self) -> None:
        if isinstance(self.encoder, dict):
            self.encoder = EncoderConfig.from_dict(self.encoder)
        if not isinstance(self.encoder, EncoderConfig):
            raise input_error(FieldName("encoder", "PairClassifierConfig"), f" must be an EncoderConfig, got {type(self.encoder).__name__}")
        check_int(self.n_classes, FieldName("n_classes", "PairClassifierConfig"), minimum=2)
        segments = 4 if self.match_flags else 2
        if self.encoder.n_segments != segments:
            raise CourseInputError(
                f"PairClassifierConfig: match_flags={self.match_flags} needs encoder.n_segments={segments} "
                f"(sentence{' × matched' if self.match_flags else ''}), got {self.encoder.n_segments}"
            )

    @classmethod
    def from_options(cls, vocab_size: int, **options: Any) -> "PairClassifierConfig":
        """Build from flat options: encoder fields and head switches in one namespace.

        ``from_options(5000, d_model=64, n_layers=2, match_flags=True)``; the segment count
        follows from ``match_flags``. An unknown name is an error.
        """
        unknown = sorted(set(options) - set(MODEL_OPTIONS))
        if unknown:
            raise CourseInputError(f"unknown model options {unknown}; known: {', '.join(MODEL_OPTIONS)}")
        head = {name: options.pop(name) for name in _HEAD_FIELDS if name in options}
        segments = 4 if head.get("match_flags", False) else 2
        return cls(EncoderConfig(vocab_size=vocab_size, n_segments=segments, **options), **head)

    def options(self) -> dict:
        """The flat options :meth:`from_options` takes (vocab size and segment count left out)."""
        encoder = {k: v for k, v in self.encoder.to_dict().items() if k in MODEL_OPTIONS}
        return {**encoder, **{name: getattr(self, name) for name in _HEAD_FIELDS}}

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "PairClassifierConfig":
        return strict_from_dict(cls, data)


_HEAD_FIELDS = tuple(f.name for f in fields(PairClassifierConfig) if f.name != "encoder")
# Flat option names: a model option is an encoder field (but the two the data decides) or a head switch.
MODEL_OPTIONS = tuple(f.name for f in fields(EncoderConfig) if f.name not in ("vocab_size", "n_segments")) + _HEAD_FIELDS
TRAIN_OPTIONS = tuple(f.name for f in fields(TrainConfig))
assert not set(MODEL_OPTIONS) & set(TRAIN_OPTIONS), "model and training options must have distinct names"

# The command line trains with less padding and torch's fused attention unless a flag says otherwise
# (``--batching plain --attention course`` gives the lessons' path, draw for draw): the same model and
# recipe, about twice the pairs per second on LCQMC's lengths (benchmarks/bench_training.py, the
# README's cost estimates). The library's defaults stay the lessons' plain order and from-scratch
# attention, which the lessons teach and whose printed results they discuss.
COMMAND_LINE_DEFAULTS: dict[str, str] = {"batching": "bucketed", "attention": "sdpa"}
assert set(COMMAND_LINE_DEFAULTS) <= set(MODEL_OPTIONS) | set(TRAIN_OPTIONS)


@dataclass(frozen=True)
class Preset:
    """A named recipe: flat model options (see :data:`MODEL_OPTIONS`) and training options."""

    name: str
    description: str
    model: Mapping[str, Any]
    train: Mapping[str, Any] = field(default_factory=dict)


PRESETS: dict[str, Preset] = {
    "textbook": Preset(
        "textbook",
        "the textbook chapter's recipe: 1 Post-LN block, 4 heads, width 256, AdamW 5e-5, "
        "3 epochs, batch 32, clipping 1.0",
        dict(d_model=256, n_heads=4, n_layers=1, d_ff=1024, dropout=0.1, norm_first=False),
        dict(epochs=3, batch_size=32, lr=5e-5, weight_decay=0.01, warmup_ratio=0.0,
             schedule="constant", clip_norm=1.0, max_len=64),
    ),
    "matchflags": Preset(
        "matchflags",
        "from scratch, designed to beat textbook: 2 Post-LN blocks, exact-match flags and overlap "
        "features, lr 3e-4 with 6% warm-up and linear decay, batch 64, pair-order swaps, 10 epochs",
        dict(d_model=256, n_heads=4, n_layers=2, d_ff=1024, dropout=0.1, norm_first=False,
             match_flags=True, overlap_features=True),
        dict(epochs=10, batch_size=64, lr=3e-4, weight_decay=0.01, warmup_ratio=0.06,
             schedule="linear", clip_norm=1.0, max_len=64, swap_probability=0.5),
    ),
    "control": Preset(
        "control",
        "the positive control's recipe (lesson 08): 2 Post-LN blocks, 4 heads, width 32, AdamW 2e-3 "
        "constant after 5% warm-up, batch 16, 3 epochs",
        dict(d_model=32, n_heads=4, n_layers=2, d_ff=64, dropout=0.1, norm_first=False),
        dict(epochs=3, batch_size=16, lr=2e-3, weight_decay=0.01, warmup_ratio=0.05,
             schedule="constant", clip_norm=1.0, max_len=64),
    ),
}


@dataclass(frozen=True)
class Recipe:
    """A preset with its overrides, checked once: the model's flat options (all of them, the
    preset's and the defaults filled in) and the training config. The vocabulary's size is not
    part of it: only the data decides it (:meth:`classifier`)."""

    preset: str
    model: Mapping[str, Any]
    train: TrainConfig

    def classifier(self, vocab_size: int) -> PairClassifierConfig:
        """The classifier's config for a vocabulary of ``vocab_size`` tokens."""
        return PairClassifierConfig.from_options(vocab_size, **self.model)


def resolve_recipe(preset: str, overrides: Mapping[str, Any] | None = None) -> Recipe:
    """A preset's recipe with ``overrides`` applied, every option checked before any data is read.

    Args:
        preset: a name of :data:`PRESETS`.
        overrides: flat options; each name is a model option (:data:`MODEL_OPTIONS`) or a
            training option (:data:`TRAIN_OPTIONS`). ``None`` values are ignored (an
            option the user did not set).

    Raises:
        CourseInputError: an unknown preset or option, or a value a config rejects.
    """
    check_choice(preset, "preset", sorted(PRESETS))
    overrides = {k: v for k, v in (overrides or {}).items() if v is not None}
    unknown = sorted(set(overrides) - set(MODEL_OPTIONS) - set(TRAIN_OPTIONS))
    if unknown:
        raise CourseInputError(f"unknown options {unknown}; model options: {', '.join(MODEL_OPTIONS)}; "
                               f"training options: {', '.join(TRAIN_OPTIONS)}")
    recipe = PRESETS[preset]
    model = {**recipe.model, **{k: v for k, v in overrides.items() if k in MODEL_OPTIONS}}
    train = TrainConfig(**{**recipe.train, **{k: v for k, v in overrides.items() if k in TRAIN_OPTIONS}})
    if model.get("pad_id", Vocabulary.pad_id) != Vocabulary.pad_id:
        raise input_error(FieldName("pad_id", "EncoderConfig"), f" must be {Vocabulary.pad_id} (the id of [PAD] in the pair "
                               f"vocabulary), got {model['pad_id']}")
    # Checked on the smallest vocabulary a pair classifier has, its special tokens: the size
    # bounds nothing but pad_id, and every vocabulary of the course holds [PAD].
    classifier = PairClassifierConfig.from_options(len(SPECIAL_TOKENS), **model)
    if classifier.encoder.max_positions < train.max_len:
        raise CourseInputError(f"max_positions={classifier.encoder.max_positions} is shorter than the "
                               f"training max_len={train.max_len}")
    if classifier.n_classes != 2:
        raise input_error(FieldName("n_classes", "PairClassifierConfig"), f" must be 2 (a pair is labelled 0, different meaning, "
                               f"or 1, same meaning), got {classifier.n_classes}")
    return Recipe(preset, classifier.options(), train)


def resolve_configs(preset: str, overrides: Mapping[str, Any] | None,
                    vocab_size: int) -> tuple[PairClassifierConfig, TrainConfig]:
    """Both configs of :func:`resolve_recipe`'s recipe, for a vocabulary of ``vocab_size`` tokens."""
    recipe = resolve_recipe(preset, overrides)
    return recipe.classifier(vocab_size), recipe.train
