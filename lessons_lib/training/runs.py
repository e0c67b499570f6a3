"""A training run on disk: what a run folder holds, who writes it, and how to read a finished run back.

This module owns the run folder: the names of its files, the one writer of each (atomic,
see :mod:`lessons_lib.files`), its lock and which of its files may be removed. A run folder (``lessons train --out DIR``, or one run of ``lessons experiment``) holds:

- ``checkpoint.pt`` — after every epoch: weights, optimiser, scheduler and RNG states,
  the per-epoch history, the training and model configs, the vocabulary's fingerprint and
  the run's *identity* (below);
- ``vocab.json`` — the vocabulary the weights were trained with;
- ``metrics.json`` — the per-epoch metrics, readable without torch, with the run's identity and
  the command that ran it;
- ``predictions.json`` — dev/test predictions and labels, each with the fingerprint of the
  pairs they were made on (written by ``lessons train`` when the run has finished);
- ``skipped_lines.tsv`` — with ``--lenient``, every malformed line that was skipped;
- ``.lessons-files.json`` — the SHA-256 of every file above as the course wrote it, and, while
  a run writes there, ``.lessons.lock`` (locked with ``flock``; its holder's process id): one
  run at a time per folder.

A run folder and how one run treats it (resume or start afresh, the caller's part of the run's
identity, the command that ran it, how to start afresh) are one value, :class:`RunFolder`: it is
checked, locked, resumed or cleared there, and nowhere else.

Every file is written to a temporary name and renamed (:func:`save_checkpoint`,
:func:`save_metrics`, :func:`save_vocab`, :func:`save_predictions`, :func:`save_skipped_lines`),
so an interruption or a full disk never leaves half a file. A run that starts afresh
removes only the files the course wrote (:func:`clear_run_folder`): a file of one of these
names that the user wrote, or edited since, is refused, never removed or overwritten.

A run's identity is a nested dict of everything that shapes it (the data's fingerprints,
the model and training options, limits, the vocabulary): a checkpoint is only resumed by a
run with the same identity, and :func:`identity_differences` names the fields that differ.
Predictions are only compared (``lessons compare``) when they were made on the same pairs.

Checkpoints are read with ``torch.load(weights_only=True)``: a checkpoint holds tensors,
numbers, strings, lists and dicts only, so a crafted file cannot run code when it is
loaded. :func:`load_run` gives everything needed to rebuild the model.
"""

from __future__ import annotations

import contextlib
import io
import json
import pickle
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

import torch

from lessons_lib.errors import CourseInputError, file_errors
from lessons_lib.files import folder_lock, record_written, written_by_course
from lessons_lib.pairs.classifier import PairClassifier
from lessons_lib.pairs.config import PairClassifierConfig, TrainConfig
from lessons_lib.pairs.data import FINGERPRINT_DIGITS, check_pairs_sha256, format_skipped_lines
from lessons_lib.pairs.vocab import Vocabulary
from lessons_lib.validation import check_not_a_file

__all__ = [
    "CHECKPOINT_NAME",
    "METRICS_NAME",
    "VOCAB_NAME",
    "PREDICTIONS_NAME",
    "SKIPPED_LINES_NAME",
    "RUN_FILES",
    "TRAINER_FILES",
    "DEFAULT_RESTART_HINT",
    "RunFolder",
    "clear_run_folder",
    "load_metrics",
    "shown_command",
    "refuse_foreign_files",
    "run_folder_lock",
    "save_metrics",
    "save_vocab",
    "save_skipped_lines",
    "identity_differences",
    "save_predictions",
    "load_predictions",
    "save_checkpoint",
    "load_checkpoint",
    "load_weights",
    "FinishedRun",
    "load_run",
    "load_pair_classifier",
]

CHECKPOINT_NAME = "checkpoint.pt"
METRICS_NAME = "metrics.json"
VOCAB_NAME = "vocab.json"
PREDICTIONS_NAME = "predictions.json"
SKIPPED_LINES_NAME = "skipped_lines.tsv"
# The files of a run that the trainer owns: a run that starts afresh removes them first.
TRAINER_FILES = (CHECKPOINT_NAME, METRICS_NAME, VOCAB_NAME, PREDICTIONS_NAME)
# Every file a run folder may hold.
RUN_FILES = (*TRAINER_FILES, SKIPPED_LINES_NAME)
_PREDICTIONS_FORMAT = "lessons-predictions/1"
# How a library caller starts afresh; the command line says it with its own flags.
DEFAULT_RESTART_HINT = "another output folder, or start afresh (resume=False)"
# How many differing fields a refused resume names before it counts the rest.
_SHOWN_DIFFERENCES = 6


def run_folder_lock(directory: str | Path):
    """A context manager holding ``directory``'s lock: one run at a time writes a run folder.

    Raises:
        CourseInputError: another running command holds it (naming the folder).
    """
    return folder_lock(directory)


def refuse_foreign_files(directory: str | Path, names: Sequence[str]) -> None:
    """Refuse to go on when one of ``names`` in ``directory`` is a file the course did not write (or that was edited).

    Raises:
        CourseInputError: naming the folder and the files; nothing was removed or written.
    """
    directory = Path(directory)
    foreign = [name for name in names if (directory / name).exists() and not written_by_course(directory / name)]
    if foreign:
        one = len(foreign) == 1
        raise CourseInputError(
            f"{directory} holds {', '.join(foreign)}, which the course did not write (or which {'was' if one else 'were'} "
            f"changed since): the course removes or overwrites only its own files. Move {'it' if one else 'them'} "
            "elsewhere, or use another output folder (nothing was removed)")


def clear_run_folder(directory: str | Path, names: Sequence[str] = RUN_FILES) -> list[Path]:
    """Delete the run files ``names`` in ``directory`` that the course wrote there; returns the deleted paths.

    Other files are left alone. A file among ``names`` that the course did not write, or that
    was changed since, is refused (:func:`refuse_foreign_files`) before anything is deleted.
    """
    refuse_foreign_files(directory, names)
    removed = []
    for name in names:
        path = Path(directory) / name
        if path.is_file():
            with file_errors(path, "delete"):
                path.unlink()
            removed.append(path)
    return removed


@dataclass
class RunFolder:
    """One training run's folder and how the run treats it.

    Attributes:
        path: the folder (created when the run starts).
        resume: continue from its ``checkpoint.pt`` when there is one (only a run of the same
            identity may); ``False`` starts afresh, removing the previous run's files first.
        identity: what shapes the run besides what the trainer adds (JSON-like: limits, data
            options, ...); compared field by field before resuming.
        command: the command line that started the run, written into ``metrics.json`` beside the
            identity (not part of it: resuming with other flags, such as ``--no-progress``, is allowed).
        restart_hint: how the caller starts afresh: the end of the message refusing a checkpoint of
            another run.
    """

    path: Path
    resume: bool = True
    identity: Mapping[str, Any] | None = None
    command: Sequence[str] | None = None
    restart_hint: str = DEFAULT_RESTART_HINT
    # Whether a block of :meth:`locked` holds the folder now: a block inside it takes nothing again.
    _held: bool = field(default=False, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.path = Path(self.path)

    @classmethod
    def checked(cls, path: str | Path, name: str, **options: Any) -> "RunFolder":
        """A run folder for ``path`` (the argument ``name``), checked before anything is read: a file there is an error."""
        return cls(check_not_a_file(path, name), **options)

    @property
    def checkpoint(self) -> Path:
        """Where the run's checkpoint is written after every epoch."""
        return self.path / CHECKPOINT_NAME

    @contextlib.contextmanager
    def locked(self) -> Iterator[Path]:
        """Create the folder and hold its lock while the block writes there: one run at a time per folder.

        Inside a block that already holds it (a command that writes its own files after training
        holds the folder while the trainer runs) the folder is neither created nor locked again.

        Raises:
            CourseInputError: another running command holds the folder (naming it), or it cannot be created.
        """
        if self._held:
            yield self.path
            return
        with file_errors(self.path, "create the folder"):
            self.path.mkdir(parents=True, exist_ok=True)
        with run_folder_lock(self.path):
            self._held = True
            try:
                yield self.path
            finally:
                self._held = False

    def check_identity(self, saved: Any, current: Any) -> None:
        """Refuse to resume the checkpoint of a run whose identity ``saved`` differs from ``current``.

        Raises:
            CourseInputError: naming the fields that differ and how to start afresh.
        """
        differences = identity_differences(saved, current)
        if not differences:
            return
        shown = "; ".join(differences[:_SHOWN_DIFFERENCES])
        if len(differences) > _SHOWN_DIFFERENCES:
            shown += f"; and {len(differences) - _SHOWN_DIFFERENCES} more"
        raise CourseInputError(f"cannot resume from {self.checkpoint}: it was written by another run ({shown}). Use the "
                               f"same data and options, {self.restart_hint}")

    def settle(self, resume_from: Callable[[Path], None], log: Callable[[str], None] | None) -> None:
        """Resume from the checkpoint (``resume_from(checkpoint)``) or clear the previous run's files.

        Only files the course wrote are removed or overwritten: any other file of a run file's
        name is refused before anything changes (see :func:`clear_run_folder`). A resumed run
        loses its ``predictions.json``: a finished command writes it again.
        """
        if self.resume and self.checkpoint.is_file():
            resume_from(self.checkpoint)
            refuse_foreign_files(self.path, TRAINER_FILES)  # the run writes every one of them again
            clear_run_folder(self.path, [PREDICTIONS_NAME])
            return
        removed = clear_run_folder(self.path, TRAINER_FILES)
        if removed and log:
            log(f"starting afresh: removed {', '.join(p.name for p in removed)} of the previous run in {self.path}")


def save_metrics(directory: str | Path, train_config: dict, model_config: Any, best_epoch: int,
                 epochs: Sequence[dict], run_identity: Mapping[str, Any] | None = None,
                 command: Sequence[str] | None = None) -> Path:
    """Write ``metrics.json`` (the per-epoch metrics, readable without torch) into the run folder.

    With the run's identity (the fingerprints of its pairs among it) and the command that ran it,
    the file alone says what it measured: :func:`load_metrics` refuses it against other data.
    """
    payload = {"command": None if command is None else list(command), "run_identity": run_identity,
               "train_config": train_config, "model_config": model_config, "best_dev_epoch": best_epoch,
               "epochs": list(epochs)}
    return record_written(Path(directory) / METRICS_NAME, json.dumps(payload, indent=2, ensure_ascii=False) + "\n")


def load_metrics(path: str | Path, expected_sha256: Mapping[str, str] | None = None) -> dict:
    """Read a ``metrics.json`` of :func:`save_metrics`.

    Args:
        expected_sha256: ``{"train": …, "dev": …, "test": …}`` (e.g. ``LCQMC_SHA256``): refuse, in
            one line, a file whose run read other pairs. The file records each split's
            :func:`~lessons_lib.pairs.data.examples_fingerprint`, the start of that SHA-256.
    """
    path = Path(path)
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        found = dict(record["run_identity"]["data"])
        for epoch in record["epochs"]:
            float(epoch["dev"]["accuracy"])
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, ValueError) as error:
        raise CourseInputError(f"{path}: not a metrics.json of a training run with its data's fingerprints "
                               f"({type(error).__name__}: {error})") from None
    if expected_sha256 is not None:
        check_pairs_sha256(path, found, {split: sha[:FINGERPRINT_DIGITS] for split, sha in expected_sha256.items()})
    return record


def shown_command(argv: Sequence[str]) -> str:
    """A recorded command as one line for a reader: each absolute path cut to ``…/`` and its last name.

    The folders of the machine that ran it say nothing to a reader and would tie a lesson's
    output to that machine; the last name still says which file or folder it was.
    """
    return " ".join(f"…/{Path(arg).name}" if arg.startswith("/") else arg for arg in argv)


def save_vocab(directory: str | Path, vocab: Vocabulary) -> Path:
    """Write the run's ``vocab.json``."""
    return record_written(Path(directory) / VOCAB_NAME, vocab.to_json())


def save_skipped_lines(directory: str | Path, splits: Sequence) -> tuple[Path, int]:
    """Write ``skipped_lines.tsv`` (every line lenient reading skipped); returns (its path, how many)."""
    text, count = format_skipped_lines(splits)
    return record_written(Path(directory) / SKIPPED_LINES_NAME, text), count


def identity_differences(saved: Any, current: Any, prefix: str = "") -> list[str]:
    """The fields of two run identities that differ, as ``"name: saved → current"`` lines.

    Nested dicts are compared field by field (``model_config.encoder.d_model``); a field
    present on one side only differs too.
    """
    if isinstance(saved, Mapping) and isinstance(current, Mapping):
        out = []
        for key in sorted(set(saved) | set(current), key=str):
            name = f"{prefix}.{key}" if prefix else str(key)
            if key not in saved:
                out.append(f"{name}: missing in the checkpoint, {_short(current[key])} now")
            elif key not in current:
                out.append(f"{name}: {_short(saved[key])} in the checkpoint, missing now")
            else:
                out.extend(identity_differences(saved[key], current[key], name))
        return out
    if saved == current:
        return []
    return [f"{prefix or 'identity'}: {_short(saved)} in the checkpoint, {_short(current)} now"]


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def save_predictions(path: str | Path, splits: Mapping[str, tuple[Sequence[int], Sequence[int], str]]) -> Path:
    """Write ``{split: (predictions, labels, fingerprint of the pairs)}`` as ``predictions.json``."""
    path = Path(path)
    saved: dict[str, object] = {"format": _PREDICTIONS_FORMAT}
    for split, (predictions, labels, fingerprint) in splits.items():
        if len(predictions) != len(labels):
            raise CourseInputError(f"{split}: {len(predictions)} predictions for {len(labels)} labels")
        saved[split] = {"predictions": [int(p) for p in predictions], "labels": [int(y) for y in labels],
                        "fingerprint": fingerprint}
    return record_written(path, json.dumps(saved) + "\n")


def load_predictions(path: str | Path, split: str) -> dict:
    """The ``split`` entry of a ``predictions.json``: ``{"predictions", "labels", "fingerprint"}``, checked.

    Raises:
        CourseInputError: a missing, unreadable or malformed file, or no ``split`` in it.
    """
    path = Path(path)
    if not path.is_file():
        raise CourseInputError(f"no {path.name} in {path.parent}: finish a `lessons train` run there first")
    with file_errors(path):
        text = path.read_text(encoding="utf-8", errors="replace")
    try:
        saved = json.loads(text)
    except json.JSONDecodeError as error:
        raise CourseInputError(f"{path}: not valid JSON ({error})") from None
    if not isinstance(saved, dict) or saved.get("format") != _PREDICTIONS_FORMAT:
        raise CourseInputError(f"{path}: not predictions written by `lessons train` (expected format "
                               f"{_PREDICTIONS_FORMAT!r}); train the run again")
    entry = saved.get(split)
    if entry is None:
        raise CourseInputError(f"{path} holds no {split} predictions")
    if not (isinstance(entry, dict) and isinstance(entry.get("fingerprint"), str)
            and all(isinstance(entry.get(key), list) and all(type(v) is int and v in (0, 1) for v in entry[key])
                    for key in ("predictions", "labels"))
            and len(entry["predictions"]) == len(entry["labels"])):
        raise CourseInputError(f"{path}: its {split} entry is malformed (expected equally long lists of 0/1 "
                               "predictions and labels and a fingerprint)")
    return entry


def save_checkpoint(state: dict, path: str | Path) -> Path:
    """Write ``state`` to ``path`` atomically: an interrupted save or a full disk never leaves half a file behind.

    The state is serialised in memory first, so that every failure to write is an ``OSError``
    (an error naming the file), not one of torch's own.
    """
    buffer = io.BytesIO()
    torch.save(state, buffer)
    return record_written(path, buffer.getvalue())


def load_checkpoint(path: str | Path, vocab: Vocabulary | None = None) -> dict:
    """Read a checkpoint safely; with ``vocab``, check it is the vocabulary the checkpoint was made with.

    Raises:
        CourseInputError: a missing, truncated or foreign file (naming it), or a
            vocabulary mismatch.
    """
    path = Path(path)
    if not path.is_file():
        raise CourseInputError(f"checkpoint not found: {path}")
    with file_errors(path):
        try:
            checkpoint = torch.load(path, map_location="cpu", weights_only=True)
        except pickle.UnpicklingError:
            # torch's own message suggests loading with weights_only=False, which would run the file's code
            _unreadable_checkpoint(path, "damaged, or holding objects other than tensors, numbers, strings, lists "
                                         "and dicts, which a course checkpoint never holds; it was not loaded")
        except (zipfile.BadZipFile, EOFError, RuntimeError, ValueError) as error:
            _unreadable_checkpoint(path, f"truncated or damaged: {type(error).__name__}")
    if not isinstance(checkpoint, dict) or "model_state" not in checkpoint:
        raise CourseInputError(f"{path} is not a checkpoint written by lessons_lib.training.trainer")
    if vocab is not None:
        vocab.check_fingerprint(checkpoint.get("vocab_fingerprint"), where=f"checkpoint {path}")
    return checkpoint


def _unreadable_checkpoint(path: Path, reason: str) -> None:
    raise CourseInputError(f"{path} is not a readable course checkpoint ({reason}); move it away or delete it to "
                           "start afresh, or use another output folder")


@dataclass
class FinishedRun:
    """What a run folder says about its run.

    Attributes:
        directory: the run folder.
        epoch: the last finished epoch.
        train_config: how it was trained.
        model_config: the dict the trainer was given to rebuild the model (its form
            depends on the model: see :func:`load_pair_classifier`).
        vocab: the training vocabulary (checked against the checkpoint).
        model_state: the weights (a ``state_dict``).
        history: per-epoch metrics, as in ``metrics.json``.
    """

    directory: Path
    epoch: int
    train_config: TrainConfig
    model_config: Any
    vocab: Vocabulary
    model_state: dict
    history: list[dict]


def load_run(directory: str | Path) -> FinishedRun:
    """Read a run folder's checkpoint and vocabulary (and check that they belong together)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise CourseInputError(f"run folder not found: {directory}")
    vocab = Vocabulary.load(directory / VOCAB_NAME)
    checkpoint = load_checkpoint(directory / CHECKPOINT_NAME, vocab)
    return FinishedRun(directory, int(checkpoint["epoch"]), TrainConfig.from_dict(checkpoint["train_config"]),
                       checkpoint.get("model_config"), vocab, checkpoint["model_state"], list(checkpoint["history"]))


def load_pair_classifier(directory: str | Path) -> tuple[PairClassifier, Vocabulary, FinishedRun]:
    """Rebuild the trained :class:`~lessons_lib.pairs.classifier.PairClassifier` of a ``lessons train`` run.

    Returns:
        ``(model in eval mode, vocabulary, the FinishedRun)``.
    """
    run = load_run(directory)
    try:
        config = PairClassifierConfig.from_dict(run.model_config)
    except CourseInputError as error:
        raise CourseInputError(f"{run.directory}: the checkpoint's model config is not a pair classifier's ({error})") from None
    model = PairClassifier(config)
    load_weights(model, run.model_state, run.directory / CHECKPOINT_NAME)
    return model.eval(), run.vocab, run


def load_weights(model: torch.nn.Module, state: Mapping[str, Any], where: str | Path) -> None:
    """``model.load_state_dict(state)``; weights of another shape or name are an error naming ``where``."""
    try:
        model.load_state_dict(state)
    except (RuntimeError, TypeError, KeyError) as error:
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise CourseInputError(f"{where}: its weights do not fit this model ({first_line[:300]})") from None
