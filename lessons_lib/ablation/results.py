"""The results of a syntax-bias ablation, typed, with their JSON form and a plain-text table.

:class:`ExperimentResult` is what :func:`lessons_lib.ablation.experiment.run_experiment`
returns and ``lessons experiment`` writes: per run (variant × seed) the dev/test accuracy
and test predictions, per variant the spread over seeds, per variant and seed the exact
McNemar test against the baseline of the same seed, and the learned bias per bucket; the
command that wrote it and the SHA-256 of the pairs it read. ``to_json`` / ``from_json``
round-trip exactly; the JSON keys are the field names.

Spread over seeds is reported as the mean with the smallest and largest value and the
number of seeds, not as a Student-t interval: with three to five seeds such an interval
leans on a normality that accuracies near 0 or 1, or seeds that either learn a task or do
not, do not have, and it can leave [0, 1].
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from lessons_lib.files import read_json_file
from lessons_lib.errors import CourseInputError, FieldName, file_errors, input_error, reworded
from lessons_lib.files import BOOKKEEPING_NAMES
from lessons_lib.pairs.data import check_pairs_sha256
from lessons_lib.ablation.config import ExperimentConfig
from lessons_lib.syntax_bias.registry import BASELINE, VARIANTS

# What a file of `lessons experiment --out` is, in its folder's manifest (only such a file is replaced without --force).
RESULTS_KIND = "results file of `lessons experiment`"

__all__ = [
    "is_results_file",
    "PROBABILITY_DIGITS",
    "Spread",
    "EpochRecord",
    "InferenceRecord",
    "PredictorRecord",
    "RunRecord",
    "VariantSummary",
    "PairedTest",
    "LearnedTable",
    "DataSummary",
    "ExperimentResult",
    "spread",
    "format_spread",
    "format_p",
    "results_paths",
    "load_results",
    "check_results",
]


# Probabilities are stored with this many decimals: enough to rank 12,500 pairs, a third of the file size.
PROBABILITY_DIGITS = 6


def is_results_file(path: str | Path) -> bool:
    """Whether ``path`` reads as a file of ``lessons experiment`` (its own format, whoever recorded it)."""
    try:
        ExperimentResult.load(path)
    except CourseInputError:
        return False
    return True


def results_paths(folder: str | Path, recursive: bool = False) -> list[Path]:
    """The results files of ``folder``: its ``*.json`` (with ``recursive``, its subfolders' too), sorted,
    leaving out the course's bookkeeping beside them (the manifest of the files a command wrote)."""
    found = Path(folder).rglob("*.json") if recursive else Path(folder).glob("*.json")
    return sorted(path for path in found if path.name not in BOOKKEEPING_NAMES)


def format_p(p: float) -> str:
    """Three decimals, or two significant digits below 0.001; an exact 0 (a difference without any
    spread: see :func:`~lessons_lib.evaluation.significance.welch_t_test`) prints as ``0``."""
    if p == 0.0:
        return "0"
    return f"{p:.3f}" if p >= 0.001 else f"{p:.1e}"


def format_spread(values: "Spread", signed: bool = False) -> str:
    """``0.6270 [0.6201, 0.6302] n=3`` (the mean, the range over seeds, their number)."""
    number = "{:+.4f}" if signed else "{:.4f}"
    if values.n == 1:
        return f"{number.format(values.mean)} n=1"
    return (f"{number.format(values.mean)} [{number.format(values.min)}, {number.format(values.max)}] "
            f"n={values.n}")


@dataclass
class Spread:
    """A few numbers, one per seed: their mean, sample standard deviation (0 for one), smallest,
    largest and how many (see the module docstring for why no t-interval)."""

    mean: float
    std: float
    min: float
    max: float
    n: int


def spread(values: Sequence[float]) -> Spread:
    """The :class:`Spread` of ``values``."""
    if not values:
        raise input_error(FieldName("values"), " is empty")
    return Spread(statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else 0.0,
                  min(values), max(values), len(values))


@dataclass
class EpochRecord:
    """One epoch of one run (``test_accuracy`` is ``None``: the runner scores test once, after training).

    ``bias_max_abs``: the largest |entry| of the learned table's effective values after the epoch
    (``None`` for a variant without a learned table, or in files written before it was recorded).
    """

    epoch: int
    train_loss: float
    dev_accuracy: float
    test_accuracy: float | None
    pairs_per_second: float
    bias_max_abs: float | None = None


@dataclass
class InferenceRecord:
    """A trained run scored on the test split with other buckets than the parser's.

    Attributes:
        buckets: ``"none"`` (the bias left out: no tree at all) or ``"predicted"`` (the
            distance predictor's buckets); see :data:`lessons_lib.syntax_bias.model.TEST_BUCKETS`.
    """

    buckets: str
    test_accuracy: float
    test_predictions: list[int] = field(repr=False)


@dataclass
class PredictorRecord:
    """How well a run's distance predictor reproduces the parser's buckets on the test split.

    Attributes:
        class_names: the buckets it chooses among ("same word", "d=1", ...).
        confusion: ``confusion[parser's][predicted]`` counts over the open pairs (two
            different characters of one sentence; the layout decides all others).
        bucket_accuracy: the share of open pairs whose bucket it gets right.
        parameters: its number of parameters.
    """

    class_names: list[str]
    confusion: list[list[int]]
    bucket_accuracy: float
    parameters: int


@dataclass
class RunRecord:
    """One variant trained with one seed.

    Attributes:
        dev_accuracy, dev_f1, test_accuracy, test_f1, test_predictions: those of the weights of
            ``chosen_epoch``.
        run_dir: the run's folder name under the experiment's work folder (``None`` when
            the experiment ran in memory); see :func:`lessons_lib.ablation.experiment.load_trained`.
        inference: the test split scored without the parser (biased variants only).
        predictor: the distance predictor's bucket scores (runs trained with one).
        chosen_epoch: the epoch whose weights scored test (the last, or with
            ``epoch_choice="best_dev"`` the one with the most correct dev pairs); ``None`` in files
            written before it was recorded (they scored the last epoch).
        optimizer_steps: the optimizer steps the run made.
        dev_predictions: the chosen epoch's 0/1 calls on dev, in the split's order.
        dev_probabilities, test_probabilities: per pair, P(label = 1) from the chosen epoch's
            weights, rounded to :data:`PROBABILITY_DIGITS` decimals.
    """

    variant: str
    seed: int
    dev_accuracy: float
    test_accuracy: float
    dev_f1: float
    test_f1: float
    epochs: list[EpochRecord]
    test_predictions: list[int] = field(repr=False)
    run_dir: str | None = None
    inference: list[InferenceRecord] = field(default_factory=list)
    predictor: PredictorRecord | None = None
    chosen_epoch: int | None = None
    optimizer_steps: int | None = None
    dev_predictions: list[int] = field(default_factory=list, repr=False)
    dev_probabilities: list[float] = field(default_factory=list, repr=False)
    test_probabilities: list[float] = field(default_factory=list, repr=False)


@dataclass
class VariantSummary:
    """A variant's accuracies over its seeds.

    Attributes:
        test_difference: the paired test-accuracy difference, variant minus the baseline of
            the same seed, over the seeds both ran (``None`` for the baseline, or without one).
        test_accuracy_by_buckets: test accuracy with other buckets at test time, by
            :attr:`InferenceRecord.buckets` (``"none"``, ``"predicted"``).
    """

    seeds: list[int]
    dev_accuracy: Spread
    test_accuracy: Spread
    test_difference: Spread | None = None
    test_accuracy_by_buckets: dict[str, Spread] = field(default_factory=dict)


@dataclass
class PairedTest:
    """Exact McNemar test of a variant against the baseline of the same seed, on the test split."""

    variant: str
    seed: int
    only_variant_right: int
    only_baseline_right: int
    p_value: float


@dataclass
class LearnedTable:
    """The learned bias of one run: ``bias[table][row][bucket]`` and its mean per bucket."""

    variant: str
    seed: int
    bucket_names: list[str]
    bias: list[list[list[float]]]
    mean_over_heads_and_layers: list[float]


@dataclass
class DataSummary:
    """What the experiment trained and tested on.

    Attributes:
        pairs_sha256: :func:`~lessons_lib.pairs.data.examples_sha256` of each whole split.
        train_subset_sha256: the same of the training pairs the runs used (the subset), so that
            runs of different files are shown to share it.
        word_boundaries_kept: with ``scramble_words``, the share of the segmentation's word
            boundaries the scrambled one keeps (``None`` otherwise).
    """

    source: str
    directory: str
    train_pairs: int
    train_pairs_available: int
    dev_pairs: int
    test_pairs: int
    vocab_size: int
    parsed_sentences: int
    parser_noise_words_reattached: float
    pairs_sha256: dict[str, str] = field(default_factory=dict)
    train_subset_sha256: str | None = None
    word_boundaries_kept: float | None = None


def _run_from_json(data: dict) -> RunRecord:
    predictor = data.get("predictor")
    return RunRecord(**{**data, "epochs": [EpochRecord(**e) for e in data["epochs"]],
                        "inference": [InferenceRecord(**i) for i in data.get("inference", [])],
                        "predictor": None if predictor is None else PredictorRecord(**predictor)})


@dataclass
class ExperimentResult:
    """Everything one ablation measured (see the module docstring)."""

    config: ExperimentConfig
    data: DataSummary
    buckets: dict
    runs: list[RunRecord]
    summary: dict[str, VariantSummary]
    mcnemar: list[PairedTest]
    learned_bias: list[LearnedTable]
    command: list[str] = field(default_factory=list)
    # The test split's labels in order (no text): with each run's predictions they pair runs of
    # different files (lessons_lib.ablation.grid).
    test_labels: list[int] = field(default_factory=list, repr=False)
    # The dev split's labels in order, for a threshold tuned on dev from the runs' probabilities.
    dev_labels: list[int] = field(default_factory=list, repr=False)
    # Where and with what code the runs were made (lessons_lib.provenance.run_provenance).
    provenance: dict = field(default_factory=dict)

    def run(self, variant: str, seed: int) -> RunRecord:
        """The run of ``variant`` with ``seed``."""
        for record in self.runs:
            if record.variant == variant and record.seed == seed:
                return record
        raise CourseInputError(f"no run of variant {variant!r} with seed {seed} in these results")

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> "ExperimentResult":
        if not isinstance(data, dict):
            raise CourseInputError(f"not the results of `lessons experiment` (a JSON {type(data).__name__}, "
                                   "not an object with config, runs and summary)")
        try:
            return cls(
                config=ExperimentConfig.from_dict(data["config"]),
                data=DataSummary(**data["data"]),
                buckets=dict(data["buckets"]),
                runs=[_run_from_json(r) for r in data["runs"]],
                summary={name: VariantSummary(s["seeds"], Spread(**s["dev_accuracy"]), Spread(**s["test_accuracy"]),
                                              None if s["test_difference"] is None else Spread(**s["test_difference"]),
                                              {k: Spread(**v) for k, v in s.get("test_accuracy_by_buckets", {}).items()})
                         for name, s in data["summary"].items()},
                mcnemar=[PairedTest(**m) for m in data["mcnemar"]],
                learned_bias=[LearnedTable(**t) for t in data["learned_bias"]],
                command=list(data.get("command", [])),
                test_labels=list(data.get("test_labels", [])),
                dev_labels=list(data.get("dev_labels", [])),
                provenance=dict(data.get("provenance", {})),
            )
        except KeyError as error:
            raise CourseInputError(f"not the results of `lessons experiment` (no {error} entry)") from None
        except TypeError as error:
            raise CourseInputError(f"not the results of `lessons experiment` ({type(error).__name__}: {error})") from None

    def save(self, path: str | Path) -> Path:
        """Write the results as JSON (UTF-8)."""
        path = Path(path)
        with file_errors(path, "write"):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(self.to_json(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        return path

    @classmethod
    def load(cls, path: str | Path) -> "ExperimentResult":
        """Parse results written by :meth:`save`: their shape only. :func:`load_results` reads a file
        and checks what it says (every reader of results files goes through it)."""
        path = Path(path)
        data = read_json_file(path, "results file")
        try:
            return cls.from_json(data)
        except CourseInputError as error:
            raise reworded(error, f"{path}: ") from None

    def format_table(self) -> str:
        """A plain-text table: per run the accuracies and the exact McNemar test against the
        same-seed baseline (only variant right / only baseline right, p); then per variant the
        mean test accuracy with its range over seeds and the paired difference."""
        tests = {(m.variant, m.seed): m for m in self.mcnemar}
        width = max(12, *(len(name) for name in self.summary))
        lines = [f"{'variant':<{width}} {'seed':>4} {'dev acc':>8} {'test acc':>9} {'only v / only b':>15} {'McNemar p':>10}"]
        for run in self.runs:
            m = tests.get((run.variant, run.seed))
            counts = "—" if m is None else f"{m.only_variant_right} / {m.only_baseline_right}"
            lines.append(f"{run.variant:<{width}} {run.seed:>4} {run.dev_accuracy:>8.4f} {run.test_accuracy:>9.4f} "
                         f"{counts:>15} {'—' if m is None else format_p(m.p_value):>10}")
        lines.append("")
        lines.append(f"{'variant':<{width}} {'test acc, mean [min, max] n':>32} {'minus baseline (paired)':>33}")
        for name in (v for v in VARIANTS if v in self.summary):
            summary = self.summary[name]
            difference = summary.test_difference
            lines.append(f"{name:<{width}} {format_spread(summary.test_accuracy):>32} "
                         f"{'—' if difference is None else format_spread(difference, signed=True):>33}")
        return "\n".join(lines)

    def format_without_parser(self) -> str:
        """Per biased variant, test accuracy (mean [min, max] over seeds) with the trees of training,
        without any tree (the bias left out) and with the distance predictor's buckets."""
        sources = list(dict.fromkeys(k for v in self.summary.values() for k in v.test_accuracy_by_buckets))
        if not sources:
            return "no biased variant was scored without the parser"
        labels = {"none": "no trees", "predicted": "predicted trees"}
        width = max(12, *(len(name) for name in self.summary))
        lines = [f"{'variant':<{width}} {'trees of training':>32}" + "".join(f" {labels.get(s, s):>32}" for s in sources)]
        for name in (v for v in VARIANTS if v in self.summary and v != BASELINE):
            summary = self.summary[name]
            cells = [summary.test_accuracy] + [summary.test_accuracy_by_buckets.get(s) for s in sources]
            lines.append(f"{name:<{width}}" + "".join(f" {'—' if c is None else format_spread(c):>32}" for c in cells))
        return "\n".join(lines)


# --- reading a results file, checked: the one place every reader (the grid, the study) goes through

# How far a recorded accuracy may be from the one its predictions give: float32 rounding (~1e-7),
# far below one changed prediction (1 / the test pairs, 8e-5 on LCQMC's 12,500).
ACCURACY_TOLERANCE = 1e-6


def load_results(path: str | Path, expected_sha256: Mapping[str, str] | None = None,
                 first: tuple[Path, "ExperimentResult"] | None = None) -> ExperimentResult:
    """Read a file of ``lessons experiment`` and refuse, in one line naming the file and the field,
    anything in it that cannot be what the course wrote (see :func:`check_results`).

    Args:
        expected_sha256: ``{"train": …, "dev": …, "test": …}`` its pairs must have (e.g.
            :data:`lessons_lib.pairs.data.LCQMC_SHA256`); ``None``: any pairs.
        first: ``(path, result)`` of the first file read with it: this one must share its pairs and labels.
    """
    path = Path(path)
    result = ExperimentResult.load(path)
    check_results(path, result, expected_sha256, first)
    return result


def check_results(path: Path, result: ExperimentResult, expected_sha256: Mapping[str, str] | None = None,
                  first: tuple[Path, ExperimentResult] | None = None) -> None:
    """Everything :func:`load_results` checks, on results already parsed.

    Raises:
        CourseInputError: no SHA-256 of the pairs or no test labels (an older course's file); pairs
            other than ``expected_sha256`` or than ``first``'s, or other labels than ``first``'s; a
            label or a call that is not 0/1; calls not one per label; an accuracy that is not a number
            in [0, 1] or that its calls contradict; a probability outside [0, 1] (NaN, inf) or not one
            per label; a call that disagrees with its probability (the course calls 1 exactly when
            P(label = 1) > 0.5); a chosen epoch the run does not have; a table size that is not a number.
    """
    _check_pairs(path, result, expected_sha256, first)
    for name in ("test_labels", "dev_labels"):
        if not _is_binary(getattr(result, name)):
            raise CourseInputError(f"{path}: {name} must be a list of 0 and 1")
    for index, run in enumerate(result.runs):
        _check_run(f"{path}: runs[{index}] ({run.variant}, seed {run.seed})", run, result)


def _check_pairs(path: Path, result: ExperimentResult, expected_sha256: Mapping[str, str] | None,
                 first: tuple[Path, ExperimentResult] | None) -> None:
    found = result.data.pairs_sha256
    if not found or not result.test_labels:
        raise CourseInputError(f"{path}: these results record no SHA-256 of their pairs or no test labels "
                               "(written by an older course); run its command again")
    if expected_sha256 is not None:
        check_pairs_sha256(path, found, expected_sha256)
    if first is None:
        return
    first_path, first_result = first
    if found != first_result.data.pairs_sha256:
        raise CourseInputError(f"{path}: made on other pairs than {first_path} (data.pairs_sha256 differs)")
    if result.test_labels != first_result.test_labels:
        raise CourseInputError(f"{path}: test_labels differ from {first_path}'s")
    if result.dev_labels and first_result.dev_labels and result.dev_labels != first_result.dev_labels:
        raise CourseInputError(f"{path}: dev_labels differ from {first_path}'s")


def _check_run(where: str, run: RunRecord, result: ExperimentResult) -> None:
    """One run's accuracies, calls and probabilities against each other (see :func:`check_results`)."""
    for name in ("dev_accuracy", "test_accuracy"):
        if not _is_fraction(getattr(run, name)):
            raise CourseInputError(f"{where}: {name} {getattr(run, name)!r} is not a number in [0, 1]")
    _check_calls(where, "test", run.test_predictions, result.test_labels, run.test_accuracy)
    if run.dev_predictions:  # files written before dev calls were kept have none
        _check_calls(where, "dev", run.dev_predictions, result.dev_labels, run.dev_accuracy)
    for split, calls, labels in (("dev", run.dev_predictions, result.dev_labels),
                                 ("test", run.test_predictions, result.test_labels)):
        probabilities = getattr(run, f"{split}_probabilities")
        if probabilities:  # files written before probabilities were kept have none
            _check_probabilities(where, split, probabilities, calls, labels)
    chosen = run.chosen_epoch
    if chosen is not None and (type(chosen) is not int or not 1 <= chosen <= len(run.epochs)):
        raise CourseInputError(f"{where}: chosen_epoch {chosen!r} is not one of its {len(run.epochs)} epochs")
    for index, epoch in enumerate(run.epochs):
        if epoch.bias_max_abs is not None and not _is_number(epoch.bias_max_abs):
            raise CourseInputError(f"{where}: epochs[{index}].bias_max_abs is {epoch.bias_max_abs!r}, not a number")


def _check_calls(where: str, split: str, calls: Any, labels: list[int], recorded: float) -> None:
    """0/1 calls, one per label, whose accuracy is the one recorded."""
    name = f"{split}_predictions"
    if not _is_binary(calls):
        raise CourseInputError(f"{where}: {name} must be a list of 0 and 1")
    if len(calls) != len(labels):
        raise CourseInputError(f"{where}: {name} has {len(calls)} values for {len(labels)} {split}_labels")
    accuracy = sum(c == y for c, y in zip(calls, labels)) / len(labels)
    if abs(accuracy - recorded) > ACCURACY_TOLERANCE:
        raise CourseInputError(f"{where}: {split}_accuracy {recorded} disagrees with its {name}, "
                               f"which give {accuracy:.6f}")


def _check_probabilities(where: str, split: str, probabilities: Any, calls: list[int], labels: list[int]) -> None:
    """One P(label = 1) per label, each in [0, 1], and each call 1 exactly when its P > 0.5.

    The course calls the larger of two logits (:func:`lessons_lib.evaluation.metrics.metrics_from_logits`),
    which is P > 0.5; a P stored as exactly 0.5 may be either call (it is rounded to
    :data:`PROBABILITY_DIGITS` decimals, and a tie of the logits calls 0), so only a call on the wrong
    side of 0.5 contradicts its probability.
    """
    name = f"{split}_probabilities"
    if not isinstance(probabilities, list) or len(probabilities) != len(labels):
        count = len(probabilities) if isinstance(probabilities, list) else type(probabilities).__name__
        raise CourseInputError(f"{where}: {name} has {count} values for {len(labels)} labels")
    outside = next((i for i, p in enumerate(probabilities) if not _is_fraction(p)), None)
    if outside is not None:
        raise CourseInputError(f"{where}: {name}[{outside}] is {probabilities[outside]!r}, not a probability in [0, 1]")
    for index, (p, call) in enumerate(zip(probabilities, calls)):
        if (call == 1 and p < 0.5) or (call == 0 and p > 0.5):
            raise CourseInputError(f"{where}: {split}_predictions[{index}] is {call} but {name}[{index}] is {p!r}: "
                                   "the course calls 1 exactly when P(label = 1) > 0.5")


def _is_binary(values: Any) -> bool:
    return isinstance(values, list) and all(type(v) is int and v in (0, 1) for v in values)


def _is_number(value: Any) -> bool:
    return type(value) in (int, float) and math.isfinite(value)


def _is_fraction(value: Any) -> bool:
    """A finite number in [0, 1] (an accuracy, a probability); never a bool or a string."""
    return _is_number(value) and 0.0 <= value <= 1.0
