"""A training run on disk: what a run folder holds, and how to read a finished run back.

A run folder (``lessons train --out DIR``, or one run of ``lessons experiment``) holds:

- ``checkpoint.pt`` — after every epoch: weights, optimiser, scheduler and RNG states,
  the per-epoch history, the training and model configs, the vocabulary's fingerprint;
- ``vocab.json`` — the vocabulary the weights were trained with;
- ``metrics.json`` — the per-epoch metrics, readable without torch;
- ``predictions.json`` — dev/test predictions and labels (written by ``lessons train``).

Checkpoints are read with ``torch.load(weights_only=True)``: a checkpoint holds tensors,
numbers, strings, lists and dicts only, so a crafted file cannot run code when it is
loaded. :func:`load_run` gives everything needed to rebuild the model.
"""

from __future__ import annotations

import pickle
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from lessons_lib.errors import CourseInputError
from lessons_lib.pairs.classifier import PairClassifier
from lessons_lib.pairs.config import PairClassifierConfig, TrainConfig
from lessons_lib.pairs.vocab import Vocabulary

__all__ = [
    "CHECKPOINT_NAME",
    "METRICS_NAME",
    "VOCAB_NAME",
    "PREDICTIONS_NAME",
    "save_checkpoint",
    "load_checkpoint",
    "FinishedRun",
    "load_run",
    "load_pair_classifier",
]

CHECKPOINT_NAME = "checkpoint.pt"
METRICS_NAME = "metrics.json"
VOCAB_NAME = "vocab.json"
PREDICTIONS_NAME = "predictions.json"


def save_checkpoint(state: dict, path: str | Path) -> Path:
    """Write ``state`` to ``path`` atomically: an interrupted save never leaves half a file behind."""
    path = Path(path)
    tmp = path.with_suffix(path.suffix + ".tmp")
    torch.save(state, tmp)
    tmp.replace(path)
    return path


def load_checkpoint(path: str | Path, vocab: Vocabulary | None = None) -> dict:
    """Read a checkpoint safely; with ``vocab``, check it is the vocabulary the checkpoint was made with.

    Raises:
        CourseInputError: a missing, truncated or foreign file (naming it), or a
            vocabulary mismatch.
    """
    path = Path(path)
    if not path.is_file():
        raise CourseInputError(f"checkpoint not found: {path}")
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    except (pickle.UnpicklingError, zipfile.BadZipFile, EOFError, RuntimeError, ValueError) as error:
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise CourseInputError(f"{path} is not a readable course checkpoint ({first_line[:200]})") from None
    if not isinstance(checkpoint, dict) or "model_state" not in checkpoint:
        raise CourseInputError(f"{path} is not a checkpoint written by lessons_lib.pairs.trainer")
    if vocab is not None:
        vocab.check_fingerprint(checkpoint.get("vocab_fingerprint"), where=f"checkpoint {path}")
    return checkpoint


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
    model.load_state_dict(run.model_state)
    return model.eval(), run.vocab, run
