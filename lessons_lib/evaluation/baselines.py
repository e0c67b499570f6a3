"""The two baselines every pair classifier is read against: the majority class and character overlap.

- *Majority class* (:func:`majority_label`): the more frequent label of the **training**
  split, predicted for every pair; a tie goes to label 1. It is what a model that learned
  nothing scores.
- *Character-Jaccard rule* (:class:`JaccardRule`, :func:`tune_jaccard_rule`): predict 1
  ("same meaning") exactly when ``J(a, b) > t``, where ``J`` is :func:`~lessons_lib.pairs.data.char_overlap`, the
  Jaccard overlap of the two questions' character sets. The threshold ``t`` is tuned on
  **dev** only. The candidates are ``-1`` (every pair "same") and every distinct ``J``
  value of the dev pairs, so each labelling of dev that the rule can produce is tried
  exactly once; the candidate with the most correct dev pairs wins, and a tie goes to the
  **smallest** ``t``. The test split is never looked at while tuning.

:func:`compute_baselines` runs both on train/dev/test and keeps their predictions, so that
a model's predictions can be read against them with the exact McNemar test
(:meth:`Baselines.read_against`). Nothing here imports torch (the McNemar test is
:mod:`lessons_lib.evaluation.pair_tests`'s).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from lessons_lib.errors import CourseInputError, FieldName, input_error
from lessons_lib.files import record_written
from lessons_lib.evaluation.pair_tests import mcnemar_exact
from lessons_lib.pairs.data import PairExample, char_overlap, check_pairs_sha256

# What a file of `lessons baseline --out` is, in its folder's manifest (only such a file is replaced without --force).
BASELINES_KIND = "baselines file"

__all__ = [
    "is_baselines_file",
    "majority_label",
    "JaccardRule",
    "tune_jaccard_rule",
    "accuracy",
    "Baselines",
    "compute_baselines",
    "save_baselines",
    "load_baselines",
]

EVAL_SPLITS = ("dev", "test")


def _require_pairs(examples: Sequence[PairExample], name: str) -> None:
    if len(examples) == 0:
        raise input_error(FieldName(name), " is empty: a baseline needs at least one labelled pair")


def majority_label(train: Sequence[PairExample]) -> int:
    """The more frequent label of ``train`` (1 on a tie)."""
    _require_pairs(train, "train")
    ones = sum(example.label for example in train)
    return 1 if 2 * ones >= len(train) else 0


def accuracy(predictions: Sequence[int], examples: Sequence[PairExample]) -> float:
    """Share of ``examples`` whose label equals the prediction at the same position."""
    if len(predictions) != len(examples):
        raise CourseInputError(f"{len(predictions)} predictions for {len(examples)} pairs")
    _require_pairs(examples, "examples")
    return sum(int(p) == e.label for p, e in zip(predictions, examples)) / len(examples)


@dataclass(frozen=True)
class JaccardRule:
    """Predict 1 exactly when the character Jaccard overlap is above ``threshold``."""

    threshold: float

    def predict(self, examples: Sequence[PairExample]) -> list[int]:
        return [int(char_overlap(e.text_a, e.text_b) > self.threshold) for e in examples]


def tune_jaccard_rule(dev: Sequence[PairExample]) -> JaccardRule:
    """The rule with the best dev accuracy; candidates and tie rule as in the module docstring."""
    _require_pairs(dev, "dev")
    scored = [(char_overlap(e.text_a, e.text_b), e.label) for e in dev]
    best_threshold, best_correct = -1.0, -1
    for threshold in [-1.0] + sorted({overlap for overlap, _ in scored}):
        correct = sum((overlap > threshold) == bool(label) for overlap, label in scored)
        if correct > best_correct:  # strictly better only: the smallest threshold keeps a tie
            best_threshold, best_correct = threshold, correct
    return JaccardRule(best_threshold)


@dataclass
class Baselines:
    """Both baselines on one data set.

    Attributes:
        majority: the training split's majority label.
        jaccard: the rule tuned on dev.
        predictions: ``predictions[name][split]`` for ``name`` in ``("majority", "jaccard")``
            and ``split`` in ``("dev", "test")``, one 0/1 per pair in file order.
        labels: ``labels[split]``, the true labels in the same order.
    """

    majority: int
    jaccard: JaccardRule
    predictions: dict[str, dict[str, list[int]]]
    labels: dict[str, list[int]]

    def accuracy(self, name: str, split: str) -> float:
        predicted, labels = self.predictions[name][split], self.labels[split]
        return sum(p == y for p, y in zip(predicted, labels)) / len(labels)

    def report(self) -> str:
        """Each baseline's dev and test accuracy, and the Jaccard rule against the majority class on test."""
        lines = []
        for name, label in (("majority", f"majority class (label {self.majority}, from train)"),
                            ("jaccard", f"character Jaccard > {self.jaccard.threshold:.4f} (tuned on dev)")):
            lines.append(f"{label}: dev accuracy {self.accuracy(name, 'dev'):.4f}, "
                         f"test accuracy {self.accuracy(name, 'test'):.4f}")
        lines.append(self._paired_line("test", "jaccard", self.predictions["jaccard"]["test"], "majority"))
        return "\n".join(lines)

    def _paired_line(self, split: str, model: str, predictions: Sequence[int], name: str) -> str:

        labels = self.labels[split]
        mine = sum(int(p) == y for p, y in zip(predictions, labels)) / len(labels)
        test = mcnemar_exact(predictions, self.predictions[name][split], labels)
        return (f"{split}: {model} {mine:.4f} vs {name} {self.accuracy(name, split):.4f}: "
                f"only {model} right {test.only_a}, only {name} right {test.only_b}, "
                f"exact McNemar p = {test.p_value:.2g}")

    def read_against(self, split: str, predictions: Sequence[int], model: str = "model") -> str:
        """One line per baseline: the model against it on ``split``, with the exact McNemar test."""
        if split not in EVAL_SPLITS:
            raise input_error(FieldName("split"), f" must be one of {EVAL_SPLITS}, got {split!r}")
        if len(predictions) != len(self.labels[split]):
            raise CourseInputError(f"{len(predictions)} {model} predictions for {len(self.labels[split])} {split} pairs")
        return "\n".join(self._paired_line(split, model, predictions, name) for name in ("majority", "jaccard"))


def compute_baselines(train: Sequence[PairExample], dev: Sequence[PairExample],
                      test: Sequence[PairExample]) -> Baselines:
    """The majority class of ``train`` and the Jaccard rule tuned on ``dev``, applied to dev and test."""
    _require_pairs(test, "test")
    label = majority_label(train)
    rule = tune_jaccard_rule(dev)
    splits = {"dev": dev, "test": test}
    return Baselines(
        majority=label,
        jaccard=rule,
        predictions={"majority": {s: [label] * len(ex) for s, ex in splits.items()},
                     "jaccard": {s: rule.predict(ex) for s, ex in splits.items()}},
        labels={s: [e.label for e in ex] for s, ex in splits.items()},
    )


def save_baselines(baselines: Baselines, path: str | Path, pairs_sha256: Mapping[str, str],
                   command: Sequence[str] = ()) -> Path:
    """Write both baselines' dev/test accuracy, the threshold and the test comparison as JSON.

    Numbers only: no pair's text, no prediction. ``pairs_sha256`` (``{"train": …, "dev": …,
    "test": …}``, :func:`lessons_lib.pairs.data.examples_sha256`) says which data they were
    computed on, so that :func:`load_baselines` can refuse a file made on other pairs.
    """

    test = mcnemar_exact(baselines.predictions["jaccard"]["test"], baselines.predictions["majority"]["test"],
                         baselines.labels["test"])
    record = {
        "command": list(command),
        "data": {"pairs_sha256": dict(pairs_sha256),
                 "pairs": {split: len(baselines.labels[split]) for split in EVAL_SPLITS}},
        "majority": {"label": baselines.majority,
                     **{f"{split}_accuracy": baselines.accuracy("majority", split) for split in EVAL_SPLITS}},
        "jaccard": {"threshold": baselines.jaccard.threshold,
                    **{f"{split}_accuracy": baselines.accuracy("jaccard", split) for split in EVAL_SPLITS}},
        "test_jaccard_vs_majority": {"only_jaccard_right": test.only_a, "only_majority_right": test.only_b,
                                     "p_value": test.p_value},
    }
    return record_written(path, json.dumps(record, indent=1, ensure_ascii=False) + "\n", BASELINES_KIND)


def is_baselines_file(path: str | Path) -> bool:
    """Whether ``path`` reads as a file of :func:`save_baselines` (its own format, whoever recorded it)."""
    try:
        load_baselines(path)
    except CourseInputError:
        return False
    return True


def _is_number(value) -> bool:
    # bool is an int to Python, and "0.9" converts with float(): neither is a number written by the course
    return type(value) in (int, float) and math.isfinite(value)


def _is_count(value) -> bool:
    return type(value) is int and value >= 0


# Every number of a baselines file: (its keys, whether a value is one the course writes, what it must be).
_NUMBERS = (
    *((("data", "pairs", split), lambda v: _is_count(v) and v > 0, "a whole number of pairs above 0")
      for split in EVAL_SPLITS),
    (("majority", "label"), lambda v: type(v) is int and v in (0, 1), "0 or 1"),
    *(((name, f"{split}_accuracy"), lambda v: _is_number(v) and 0 <= v <= 1, "a number in [0, 1]")
      for name in ("majority", "jaccard") for split in EVAL_SPLITS),
    # the rule's candidates are -1 (every pair "same") and Jaccard overlaps, which lie in [0, 1]
    (("jaccard", "threshold"), lambda v: _is_number(v) and -1 <= v <= 1, "a number in [-1, 1]"),
    (("test_jaccard_vs_majority", "only_jaccard_right"), _is_count, "a whole number of pairs"),
    (("test_jaccard_vs_majority", "only_majority_right"), _is_count, "a whole number of pairs"),
    (("test_jaccard_vs_majority", "p_value"), lambda v: _is_number(v) and 0 <= v <= 1, "a number in [0, 1]"),
)


def _check_numbers(path: Path, record: dict) -> None:
    """One line naming the file and the key of the first number that is not one :func:`save_baselines` writes."""
    for keys, valid, expected in _NUMBERS:
        value = record
        for key in keys:
            value = value[key]
        if not valid(value):
            raise CourseInputError(f"{path}: {'.'.join(keys)} is {value!r}, not {expected}")


def load_baselines(path: str | Path, expected_sha256: Mapping[str, str] | None = None) -> dict:
    """Read a file of :func:`save_baselines`; refuse, in one line naming the file and the key, a
    number that is not one it writes (NaN, a string, an accuracy above 1); with ``expected_sha256``,
    refuse one made on other pairs."""
    path = Path(path)
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        found = record["data"]["pairs_sha256"]
        _check_numbers(path, record)
    except CourseInputError:  # a ValueError too, but already the one line naming file and key
        raise
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, ValueError) as error:
        raise CourseInputError(f"{path}: not a baselines file of `lessons baseline --out` ({error})") from None
    if expected_sha256 is not None:
        check_pairs_sha256(path, found, expected_sha256)
    return record
