"""What a syntax-bias ablation runs: variants, seeds, recipe, data share, noise, buckets."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from typing import TYPE_CHECKING

from lessons_lib.errors import CourseInputError, FieldName, NamePhrase, input_error
from lessons_lib.pairs.data import check_train_fraction
from lessons_lib.pairs.config import PRESETS, PairClassifierConfig, TrainConfig, resolve_recipe
from lessons_lib.syntax.bucket_sizes import DEFAULT_MAX_DISTANCE, INT8_MAX_DISTANCE, check_bucket_sizes
from lessons_lib.syntax_bias.registry import (BASELINE, EPOCH_CHOICES, VARIANTS, SyntaxModelOptions, check_bias_options,
                                              options_for)
from lessons_lib.validation import check_choice, check_int, check_probability, strict_from_dict

if TYPE_CHECKING:  # the scheme's module imports torch: only a run needs it, not the flags or a results file
    from lessons_lib.syntax.buckets import BucketScheme

__all__ = ["ExperimentConfig"]


@dataclass
class ExperimentConfig:
    """What the ablation runs.

    ``lessons experiment`` has a flag per field, named, typed, defaulted and documented here (the
    noise: :func:`lessons_lib.syntax.noise.perturb_heads`, :func:`lessons_lib.syntax.noise.scrambled_parses`).

    Attributes:
        variants: names from :data:`lessons_lib.syntax_bias.registry.VARIANTS`; ``"none"``
            is the baseline the others are tested against.
        seeds: every variant is trained once per seed (same seed → same init, batch order, dropout).
        preset: a :data:`lessons_lib.pairs.config.PRESETS` name giving the model and training recipe.
        model: flat model options overriding the preset's (see
            :func:`lessons_lib.pairs.config.resolve_configs`); by default ``n_layers=2``,
            since one block cannot use the bias (see below).
        train: flat training options overriding the preset's, but ``seed``: each run's seed is
            one of :attr:`seeds`.
        train_fraction: share of the training split used (the low-resource setting), in (0, 1].
        subset_seed: which training subset (the same for every variant and seed).
        parser_noise: probability of re-attaching each non-root word to a random head.
        scramble_words: the control without any syntax: every sentence cut into random words
            (the segmentation's word lengths) with a random tree, drawn with ``noise_seed``; excludes
            ``parser_noise``.
        noise_seed: seed of the noise (and of the scrambling).
        max_distance: the bucket scheme's clamp: tree distances beyond it share one bucket.
        log_buckets: the bucket scheme's log-spaced buckets for long distances.
        bias_options: flat options of the variants (``{"bias_lr_multiplier": 30, "decay": 0.5}``),
            each routed to the variant whose options dataclass has the field.
        syntax_model: flat :class:`SyntaxModelOptions` (``{"bias_dropout": 0.5}``) for every
            variant but the baseline.
        epoch_choice: which epoch's weights score the test split: ``"last"``, or ``"best_dev"``,
            the one with the most correct dev pairs (the earliest on ties); every run trains all
            its epochs either way.
    """

    variants: list[str] = field(default_factory=lambda: list(VARIANTS))
    seeds: list[int] = field(default_factory=lambda: [0, 1, 2])
    preset: str = "textbook"
    model: dict = field(default_factory=lambda: {"n_layers": 2})
    train: dict = field(default_factory=dict)
    train_fraction: float = 1.0
    subset_seed: int = 0
    parser_noise: float = 0.0
    scramble_words: bool = False
    noise_seed: int = 0
    max_distance: int = DEFAULT_MAX_DISTANCE
    log_buckets: bool = False
    bias_options: dict = field(default_factory=dict)
    syntax_model: dict = field(default_factory=dict)
    epoch_choice: str = field(default="last", metadata={"choices": EPOCH_CHOICES})

    def __post_init__(self) -> None:
        if not self.variants or len(set(self.variants)) != len(self.variants):
            raise input_error(FieldName("variants"), f" must be a non-empty list without repeats, got {self.variants}")
        for name in self.variants:
            check_choice(name, NamePhrase("each of ", FieldName("variants")), VARIANTS)
        if not self.seeds or len(set(self.seeds)) != len(self.seeds):
            raise input_error(FieldName("seeds"), f" must be a non-empty list without repeats, got {self.seeds}")
        for seed in self.seeds:
            check_int(seed, NamePhrase("each of ", FieldName("seeds")), minimum=0)
        check_choice(self.preset, FieldName("preset"), sorted(PRESETS))
        check_train_fraction(self.train_fraction)
        check_probability(self.parser_noise, FieldName("parser_noise"))
        if not isinstance(self.scramble_words, bool):
            raise input_error(FieldName("scramble_words"), f" must be true or false, got {self.scramble_words!r}")
        if self.scramble_words and self.parser_noise > 0:
            raise input_error(FieldName("scramble_words"), " already draws every tree at random: leave ", FieldName("parser_noise"),
                              " at 0")
        check_choice(self.epoch_choice, FieldName("epoch_choice"), EPOCH_CHOICES)
        check_int(self.subset_seed, FieldName("subset_seed"), minimum=0)
        check_int(self.noise_seed, FieldName("noise_seed"), minimum=0)
        check_bias_options(self.bias_options)
        self.syntax_model_options()  # validates them
        check_bucket_sizes(self.max_distance, self.log_buckets)  # what scheme() checks, without torch
        if self.max_distance > INT8_MAX_DISTANCE:
            raise input_error(FieldName("max_distance"), f" must be ≤ {INT8_MAX_DISTANCE} (bucket ids are kept as int8), "
                                   f"got {self.max_distance}")
        if "seed" in self.train:
            raise input_error(FieldName("seed"), " does not apply to an experiment: every run takes its seed from ",
                              FieldName("seeds"))
        # Resolved once, before any data is read; the vocabulary's size comes with the data.
        self._recipe = resolve_recipe(self.preset, {**self.model, **self.train})
        if self._recipe.model["n_layers"] < 2 and any(v != BASELINE for v in self.variants):
            raise CourseInputError(
                "the syntax-bias variants need at least 2 encoder blocks (model n_layers ≥ 2): with one block "
                "only the [CLS] query row reaches the classifier, and every key of that row is in the "
                "'special' bucket, so the bias adds one constant to the row and the softmax ignores it"
            )

    def scheme(self) -> BucketScheme:
        from lessons_lib.syntax.buckets import BucketScheme

        return BucketScheme(max_distance=self.max_distance, log_buckets=self.log_buckets)

    def train_config(self, seed: int) -> TrainConfig:
        return replace(self._recipe.train, seed=seed)

    def classifier_config(self, vocab_size: int) -> PairClassifierConfig:
        return self._recipe.classifier(vocab_size)

    def variant_options(self, name: str):
        """The options dataclass of variant ``name`` (its defaults, overridden by :attr:`bias_options`)."""
        return options_for(name, self.bias_options)

    def syntax_model_options(self) -> SyntaxModelOptions:
        """:attr:`syntax_model` as its dataclass (an unknown name is an error)."""
        known = [f.name for f in fields(SyntaxModelOptions)]
        unknown = sorted(set(self.syntax_model) - set(known))
        if unknown:
            raise CourseInputError(f"unknown `syntax_model` options {unknown}; known: {', '.join(known)}")
        return SyntaxModelOptions(**self.syntax_model)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "ExperimentConfig":
        return strict_from_dict(cls, data)
