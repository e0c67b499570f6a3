"""The attention-bias variants of the ablation, by name: what each is and which options it takes.

One entry of :data:`VARIANTS` per variant. Everything else is derived from it: the bias
module the runner builds (:func:`lessons_lib.syntax_bias.variants.make_bias`), the
command-line flags of ``lessons experiment`` (one per options field), the order and the
descriptions of the results table. No torch here, so the command line can list the
variants and their flags cheaply.

Options that hold for every biased variant (bias dropout, the distance predictor) are not a
variant's: they are :class:`SyntaxModelOptions`, also flags of ``lessons experiment``.

Adding a variant: write its module in :mod:`lessons_lib.syntax_bias.variants` (the
constructor takes ``(scheme, n_heads, n_layers, options)``), its options dataclass here
(fields named so no other variant uses the name: they become flags), and one entry in
:data:`VARIANTS` saying which bucket matrices it reads (``buckets``: ``"tree"``, the
distance buckets of the parses, or ``"position"``, the relative-position buckets of the
strings; the runner builds them). A variant may share another's options by subclassing
its dataclass: an inherited field is one flag that sets both variants.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, Mapping

from lessons_lib.errors import CourseInputError, FieldName, input_error
from lessons_lib.validation import check_choice, check_int, check_number, check_probability

__all__ = [
    "BASELINE",
    "BUCKET_SOURCES",
    "DEFAULT_BIAS_LR_MULTIPLIER",
    "EPOCH_CHOICES",
    "NoOptions",
    "LearnedOptions",
    "RelativePositionOptions",
    "FixedDecayOptions",
    "HardMaskOptions",
    "WindowMaskOptions",
    "SyntaxModelOptions",
    "Variant",
    "VARIANTS",
    "variant",
    "option_owners",
    "options_for",
    "check_bias_options",
    "describe_options",
]

BASELINE = "none"

# Which epoch's weights score the test split (see ExperimentConfig.epoch_choice); here, beside the
# variants, so that the command line can offer them without importing torch.
EPOCH_CHOICES = ("last", "best_dev")
# Which bucket matrices a variant reads: tree distances of the parses, or sequence distances of the strings.
BUCKET_SOURCES = ("tree", "position")
# The units of lessons_lib.syntax.buckets.POSITION_UNITS (kept equal by a test; that module imports torch).
_POSITION_UNITS = ("char", "word")
# The learned tables' default learning-rate multiplier (see LearnedOptions).
DEFAULT_BIAS_LR_MULTIPLIER = 30.0


@dataclass(frozen=True)
class NoOptions:
    """A variant without options."""


@dataclass(frozen=True)
class LearnedOptions:
    """Options of the learned bias (see :class:`lessons_lib.syntax_bias.variants.LearnedBucketBias`).

    Why the learning-rate multiplier defaults to 30: the table starts at zero and gets a
    small gradient until the rest of the model uses it, and Adam moves a parameter by about
    the learning rate per step whatever its gradient's size. At the textbook's lr 5e-5 and
    the few thousand steps of a CPU run, a table at ×1 can move by a few tenths at most
    (measured on LCQMC: it stays within ±0.03 and changes no prediction significantly);
    a table that must reach ±5 never gets there. The syntax-bias article used the model's
    rate or twice it, with full-size training; ×30 is the course's choice for short runs.

    Attributes:
        per_head: one table row per head instead of one row shared by the heads.
        learn_scale: multiply the table by a learnable scalar initialised to 1.
        per_layer_tables: one table per encoder block instead of one for all.
        bias_lr_multiplier: the effective table is ``multiplier · table``; with Adam this
            multiplies the table's learning rate (zero stays exactly zero). Default 30:
            at ×1 the zero-initialised table barely moves in a short run.
    """

    per_head: bool = False
    learn_scale: bool = False
    per_layer_tables: bool = False
    bias_lr_multiplier: float = DEFAULT_BIAS_LR_MULTIPLIER

    def __post_init__(self) -> None:
        check_number(self.bias_lr_multiplier, "bias_lr_multiplier", minimum=0.0, strict_minimum=True)


@dataclass(frozen=True)
class RelativePositionOptions(LearnedOptions):
    """Options of the relative-position control: the learned table's (inherited: the same flags
    set both tables) and the unit in which ``|i − j|`` is counted.

    Attributes:
        position_unit: ``"char"`` (characters; bucket 0 = the same position) or ``"word"`` (the
            words of the segmentation; bucket 0 = the same word, so only the tree differs from
            the learned syntax bias).
    """

    position_unit: str = field(default="char", metadata={"choices": _POSITION_UNITS})

    def __post_init__(self) -> None:
        super().__post_init__()
        check_choice(self.position_unit, "position_unit", _POSITION_UNITS)


@dataclass(frozen=True)
class FixedDecayOptions:
    """Options of the fixed decay: bias ``-decay · d`` for within-sentence pairs at tree distance ``d``.

    Attributes:
        decay: the slope, ≥ 0 (0 is the baseline).
    """

    decay: float = 0.5

    def __post_init__(self) -> None:
        check_number(self.decay, "decay", minimum=0.0)


@dataclass(frozen=True)
class HardMaskOptions:
    """Options of the hard mask: within a sentence only pairs at tree distance ≤ ``hard_max_distance`` attend.

    Attributes:
        hard_max_distance: the largest tree distance that may attend within a sentence.
    """

    hard_max_distance: int = 1

    def __post_init__(self) -> None:
        check_int(self.hard_max_distance, "hard_max_distance", minimum=0)


@dataclass(frozen=True)
class WindowMaskOptions(HardMaskOptions):
    """Options of the sequence-window mask: the hard mask's radius (inherited: one flag sets
    both), counted in words of the segmentation instead of arcs of the tree.

    Within a sentence only pairs at most ``hard_max_distance`` words apart attend. Counted in
    words, "same word" means the same thing for both masks and only the tree differs, so the
    pair of runs asks whether the hard mask helps by its tree or by closing far pairs.
    """

    @property
    def position_unit(self) -> str:
        """The unit of ``|i − j|``: always words (a property, not an option)."""
        return "word"


@dataclass(frozen=True)
class SyntaxModelOptions:
    """Options of the syntax-biased classifier that hold for every bias variant (the baseline ignores them).

    Attributes:
        bias_dropout: during training, leave out the whole syntax bias of a pair with this
            probability, so that the model also learns to do without a tree (0 = never: the
            plain model bit for bit; 1 = always: the baseline's forward pass bit for bit).
        distance_predictor: train a distance predictor next to the model, on the parser's
            buckets, so that at test time the buckets can come from it instead of a parser.
        predictor_weight: weight of the predictor's cross-entropy in the training loss.
        predictor_width: hidden width of the predictor's convolutions.
        predictor_lr_multiplier: the predictor learns at this multiple of the learning rate
            (it must learn within the task's steps).
    """

    bias_dropout: float = 0.0
    distance_predictor: bool = False
    predictor_weight: float = 1.0
    predictor_width: int = 32
    predictor_lr_multiplier: float = 30.0

    def __post_init__(self) -> None:
        check_probability(self.bias_dropout, FieldName("bias_dropout"))
        if not isinstance(self.distance_predictor, bool):
            raise input_error(FieldName("distance_predictor"), f" must be True or False, got {self.distance_predictor!r}")
        check_number(self.predictor_weight, FieldName("predictor_weight"), minimum=0.0)
        check_int(self.predictor_width, FieldName("predictor_width"))
        check_number(self.predictor_lr_multiplier, FieldName("predictor_lr_multiplier"), minimum=0.0, strict_minimum=True)


@dataclass(frozen=True)
class Variant:
    """One variant of the ablation.

    Attributes:
        name: its name on the command line and in results.
        description: one line for tables and ``--help``.
        options: its options dataclass.
        module: ``"module:Class"`` of its bias module; ``None`` for the baseline (no bias).
        learned: whether it has a learned table worth reporting per bucket.
        buckets: the bucket matrices it reads, one of :data:`BUCKET_SOURCES` (``None``: the baseline).
    """

    name: str
    description: str
    options: type = NoOptions
    module: str | None = None
    learned: bool = False
    buckets: str | None = None

    def __post_init__(self) -> None:
        if (self.module is None) != (self.buckets is None):
            raise CourseInputError(f"variant {self.name!r}: a bias module needs a bucket source and the baseline none")
        if self.buckets is not None:
            check_choice(self.buckets, f"variant {self.name!r} buckets", BUCKET_SOURCES)


VARIANTS: dict[str, Variant] = {v.name: v for v in (
    Variant(BASELINE, "no bias (the baseline every variant is tested against)"),
    Variant("learned", "one learnable scalar per tree-distance bucket, zero at step 0 (the syntax-bias article's method)",
            LearnedOptions, "lessons_lib.syntax_bias.variants:LearnedBucketBias", learned=True, buckets="tree"),
    Variant("relative_position", "the same learned table on sequence distance |i-j| instead of the tree "
            "(the non-syntactic control)", RelativePositionOptions, "lessons_lib.syntax_bias.variants:LearnedBucketBias",
            learned=True, buckets="position"),
    Variant("fixed_decay", "fixed -decay · tree distance within a sentence, not learned",
            FixedDecayOptions, "lessons_lib.syntax_bias.variants:FixedDecayBias", buckets="tree"),
    Variant("hard_mask", "within a sentence only tree-near pairs attend (-inf beyond the radius)",
            HardMaskOptions, "lessons_lib.syntax_bias.variants:HardMaskBias", buckets="tree"),
    Variant("window_mask", "within a sentence only pairs at most the hard mask's radius apart in words attend "
            "(the hard mask's non-syntactic control)", WindowMaskOptions,
            "lessons_lib.syntax_bias.variants:HardMaskBias", buckets="position"),
)}



def _declared_by(cls: type, name: str) -> type:
    """The class of ``cls``'s MRO that declares the dataclass field ``name``."""
    return next(k for k in cls.__mro__ if name in k.__dict__.get("__annotations__", {}))


def option_owners() -> dict[str, tuple[str, ...]]:
    """``{option name: the variants it sets}``, in registry order.

    Several variants share an option only by inheriting it from one options dataclass
    (one flag then sets all of them); the same name declared twice is an error.
    """
    owners: dict[str, tuple[str, ...]] = {}
    declared: dict[str, type] = {}
    for entry in VARIANTS.values():
        for spec in fields(entry.options):
            home = _declared_by(entry.options, spec.name)
            if spec.name in declared and declared[spec.name] is not home:
                raise CourseInputError(f"option {spec.name!r} of variant {entry.name!r} is also an option of "
                                       f"{owners[spec.name][0]!r}: option names become flags and must be unique "
                                       "(share an option by subclassing the other variant's options)")
            declared[spec.name] = home
            owners[spec.name] = owners.get(spec.name, ()) + (entry.name,)
    return owners


def variant(name: str) -> Variant:
    """The registry entry of ``name``."""
    if name not in VARIANTS:
        raise CourseInputError(f"unknown variant {name!r}; known: {', '.join(VARIANTS)}")
    return VARIANTS[name]


def check_bias_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """Flat bias options (``{"decay": 0.3, "per_head": True}``) validated by their variants' dataclasses."""
    owners = option_owners()
    unknown = sorted(set(options) - set(owners))
    if unknown:
        raise CourseInputError(f"unknown bias options {unknown}; known: {', '.join(owners)}")
    for name in VARIANTS:
        options_for(name, options)
    return dict(options)


def options_for(name: str, options: Mapping[str, Any]):
    """The options dataclass of variant ``name`` from flat ``options`` (other variants' keys ignored)."""
    entry = variant(name)
    own = {f.name for f in fields(entry.options)}
    return entry.options(**{k: v for k, v in options.items() if k in own})


def describe_options(name: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """Variant ``name``'s options with defaults filled in, as a dict (for results)."""
    return asdict(options_for(name, options))
