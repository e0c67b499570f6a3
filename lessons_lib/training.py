"""Training and evaluating pair classifiers: optimiser, loop, checkpoints, metrics, tests.

The loop is generic: a model is any ``nn.Module`` whose ``forward(batch)`` takes a
:class:`lessons_lib.pairs.PairBatch` and returns ``(B, n_classes)`` logits; per-batch
tensors a variant needs (a syntax distance matrix, ...) come from an ``extras_fn`` hook
into ``batch.extras``.

- :func:`parameter_groups` / :func:`build_optimizer`: AdamW with weight decay on weight
  matrices and embeddings only — decaying a bias or a LayerNorm gain towards 0 only fights
  the normalisation, it does not regularise anything.
- :func:`build_scheduler`: optional linear warm-up, then constant or linear decay.
- :func:`train_pair_classifier`: seeded, clipped, tqdm progress, a checkpoint after every
  epoch, resumable (a resumed run ends bit-identical to an uninterrupted one: the batch
  order of epoch ``e`` depends only on ``(seed, e)`` and the RNG state is checkpointed).
- :func:`evaluate`: loss, accuracy, F1 and the confusion matrix.
- :func:`mcnemar_exact`: are two models' errors on the same test set different by more than chance?
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import torch
from torch import nn
from torch.nn import functional as F

from lessons_lib.errors import CourseInputError
from lessons_lib.lcqmc import PairExample
from lessons_lib.pairs import ExtrasFn, make_batches
from lessons_lib.presets import PRESETS, Preset, TrainConfig
from lessons_lib.vocab import Vocabulary

__all__ = [
    "TrainConfig",
    "Preset",
    "PRESETS",
    "parameter_groups",
    "build_optimizer",
    "build_scheduler",
    "EvalResult",
    "evaluate",
    "metrics_from_logits",
    "predict",
    "McNemarResult",
    "mcnemar_exact",
    "EpochMetrics",
    "TrainResult",
    "best_dev_epoch",
    "train_pair_classifier",
    "CHECKPOINT_NAME",
    "load_checkpoint",
]

CHECKPOINT_NAME = "checkpoint.pt"
METRICS_NAME = "metrics.json"
VOCAB_NAME = "vocab.json"


def parameter_groups(model: nn.Module, weight_decay: float) -> list[dict]:
    """Two AdamW groups: decayed (weight matrices, embeddings) and not decayed (biases, norm weights).

    A parameter is "not decayed" when it is a bias, belongs to a normalisation layer
    (``LayerNorm``, ``BatchNorm``, ``GroupNorm``, ...), or is named in its module's
    ``no_weight_decay`` attribute (e.g. the syntax-bias table, an additive attention bias).
    Every trainable parameter lands in exactly one group.
    """
    norm_types = (nn.LayerNorm, nn.GroupNorm, nn.modules.batchnorm._BatchNorm, nn.RMSNorm)
    no_decay: set[int] = set()
    for module in model.modules():
        for name, param in module.named_parameters(recurse=False):
            exempt = name in getattr(module, "no_weight_decay", ())
            if exempt or isinstance(module, norm_types) or name == "bias" or name.endswith("bias"):
                no_decay.add(id(param))
    decay_params, no_decay_params = [], []
    for param in model.parameters():
        if param.requires_grad:
            (no_decay_params if id(param) in no_decay else decay_params).append(param)
    return [
        {"params": decay_params, "weight_decay": weight_decay},
        {"params": no_decay_params, "weight_decay": 0.0},
    ]


def build_optimizer(model: nn.Module, config: TrainConfig) -> torch.optim.AdamW:
    """AdamW over :func:`parameter_groups`."""
    return torch.optim.AdamW(parameter_groups(model, config.weight_decay), lr=config.lr)


def build_scheduler(optimizer: torch.optim.Optimizer, config: TrainConfig, total_steps: int) -> torch.optim.lr_scheduler.LambdaLR:
    """Multiplier of the lr per step: ``step/warmup`` during warm-up, then 1 or a linear decay to 0."""
    warmup = int(round(config.warmup_ratio * total_steps))

    def factor(step: int) -> float:
        if warmup and step < warmup:
            return (step + 1) / warmup
        if config.schedule == "linear":
            return max(0.0, (total_steps - step) / max(1, total_steps - warmup))
        return 1.0

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


@dataclass
class EvalResult:
    """Metrics of one evaluation. ``confusion[t][p]`` counts pairs of true label t predicted p."""

    loss: float
    accuracy: float
    f1: float
    confusion: list[list[int]]
    predictions: list[int] = field(repr=False, default_factory=list)

    def to_dict(self, with_predictions: bool = False) -> dict:
        data = {"loss": self.loss, "accuracy": self.accuracy, "f1": self.f1, "confusion": self.confusion}
        if with_predictions:
            data["predictions"] = self.predictions
        return data


@torch.no_grad()
def predict(
    model: nn.Module, examples: Sequence[PairExample], vocab: Vocabulary, *, batch_size: int = 256,
    max_len: int = 64, device: str | torch.device = "cpu", extras_fn: ExtrasFn | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Logits ``(N, C)`` and labels ``(N,)`` of ``examples``, in order, in eval mode."""
    was_training = model.training
    model.eval()
    logits, labels = [], []
    for batch in make_batches(examples, vocab, batch_size, max_len=max_len, extras_fn=extras_fn):
        logits.append(model(batch.to(device)).float().cpu())
        labels.append(batch.labels)
    model.train(was_training)
    if not logits:
        raise CourseInputError("`examples` is empty: nothing to evaluate")
    return torch.cat(logits), torch.cat(labels)


def metrics_from_logits(logits: torch.Tensor, labels: torch.Tensor) -> EvalResult:
    """Accuracy, F1 of label 1 and the confusion matrix from ``(N, C)`` logits and ``(N,)`` labels."""
    predictions = logits.argmax(dim=1)
    confusion = [[int(((labels == t) & (predictions == p)).sum()) for p in (0, 1)] for t in (0, 1)]
    tp, fp, fn = confusion[1][1], confusion[0][1], confusion[1][0]
    f1 = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
    return EvalResult(
        loss=float(F.cross_entropy(logits, labels)),
        accuracy=float((predictions == labels).float().mean()),
        f1=f1,
        confusion=confusion,
        predictions=predictions.tolist(),
    )


def evaluate(
    model: nn.Module, examples: Sequence[PairExample], vocab: Vocabulary, *, batch_size: int = 256,
    max_len: int = 64, device: str | torch.device = "cpu", extras_fn: ExtrasFn | None = None,
) -> EvalResult:
    """Loss, accuracy, F1 (of label 1) and confusion matrix on ``examples``."""
    logits, labels = predict(model, examples, vocab, batch_size=batch_size, max_len=max_len,
                             device=device, extras_fn=extras_fn)
    return metrics_from_logits(logits, labels)


@dataclass
class McNemarResult:
    """Exact McNemar test. ``only_a``: pairs model A gets right and B wrong; ``only_b`` the reverse."""

    only_a: int
    only_b: int
    p_value: float


def mcnemar_exact(predictions_a: Sequence[int], predictions_b: Sequence[int], labels: Sequence[int]) -> McNemarResult:
    """Exact (binomial) McNemar test on two models' predictions for the same pairs.

    Only the discordant pairs carry information; under "equally good" each of them is
    A's win with probability 1/2, so the two-sided p-value is
    ``min(1, 2 · P[Binomial(n, 1/2) ≤ min(only_a, only_b)])`` with ``n = only_a + only_b``.
    """
    if not len(predictions_a) == len(predictions_b) == len(labels):
        raise CourseInputError(
            f"predictions and labels must have one entry per pair: {len(predictions_a)}, "
            f"{len(predictions_b)}, {len(labels)}"
        )
    right_a = [int(p) == int(y) for p, y in zip(predictions_a, labels)]
    right_b = [int(p) == int(y) for p, y in zip(predictions_b, labels)]
    only_a = sum(a and not b for a, b in zip(right_a, right_b))
    only_b = sum(b and not a for a, b in zip(right_a, right_b))
    n = only_a + only_b
    if n == 0:
        return McNemarResult(0, 0, 1.0)
    tail = sum(math.comb(n, k) for k in range(min(only_a, only_b) + 1))
    return McNemarResult(only_a, only_b, min(1.0, 2 * tail / 2**n))


@dataclass
class EpochMetrics:
    """One epoch's numbers, as written to ``metrics.json``."""

    epoch: int
    train_loss: float
    dev: dict
    test: dict | None
    train_seconds: float
    eval_seconds: float
    pairs_per_second: float
    lr_end: float


@dataclass
class TrainResult:
    """Per-epoch metrics and the final predictions on dev and test."""

    history: list[EpochMetrics]
    dev: EvalResult
    test: EvalResult | None
    resumed_from_epoch: int = 0


def best_dev_epoch(history: Sequence[EpochMetrics]) -> int:
    """The epoch with the highest dev accuracy (the earliest on ties): model selection by dev, never by test."""
    if not history:
        raise CourseInputError("`history` is empty")
    return max(history, key=lambda h: (h.dev["accuracy"], -h.epoch)).epoch


def _rng_state() -> dict:
    state = {"torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def _set_rng_state(state: dict) -> None:
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def load_checkpoint(path: str | Path, vocab: Vocabulary | None = None) -> dict:
    """Read a checkpoint; with ``vocab``, check it is the vocabulary the checkpoint was made with."""
    path = Path(path)
    if not path.is_file():
        raise CourseInputError(f"checkpoint not found: {path}")
    checkpoint = torch.load(path, map_location="cpu", weights_only=False)
    if not isinstance(checkpoint, dict) or "model_state" not in checkpoint:
        raise CourseInputError(f"{path} is not a checkpoint written by lessons_lib.training")
    if vocab is not None:
        vocab.check_fingerprint(checkpoint["vocab_fingerprint"], where=f"checkpoint {path}")
    return checkpoint


def _save_atomically(obj: dict, path: Path) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    torch.save(obj, tmp)
    tmp.replace(path)  # an interrupted save never leaves a half-written checkpoint behind


def train_pair_classifier(
    model: nn.Module,
    train_examples: Sequence[PairExample],
    dev_examples: Sequence[PairExample],
    vocab: Vocabulary,
    config: TrainConfig,
    *,
    test_examples: Sequence[PairExample] | None = None,
    out_dir: str | Path | None = None,
    resume: bool = True,
    device: str | torch.device = "cpu",
    progress: bool = True,
    stop_after_epoch: int | None = None,
    extras_fn: ExtrasFn | None = None,
    model_config: dict | None = None,
    log: Callable[[str], None] | None = print,
) -> TrainResult:
    """Train ``model`` on ``train_examples``, evaluating on dev (and test) after every epoch.

    Args:
        model: ``forward(PairBatch) -> (B, C)`` logits; build it after seeding for a repeatable init.
        train_examples, dev_examples, test_examples: labelled pairs.
        vocab: the training vocabulary (saved to ``out_dir/vocab.json``, fingerprint in the checkpoint).
        config: see :class:`TrainConfig`.
        out_dir: where ``checkpoint.pt`` (every epoch), ``metrics.json`` and ``vocab.json`` go;
            ``None`` keeps everything in memory.
        resume: continue from ``out_dir/checkpoint.pt`` when there is one (same config and vocabulary required).
        device: ``"cpu"`` or ``"cuda"``.
        progress: show a tqdm bar per epoch.
        stop_after_epoch: end after this epoch (to simulate an interruption in tests).
        extras_fn: per-batch hook filling ``batch.extras`` (see :func:`lessons_lib.pairs.make_batches`).
        model_config: stored in the checkpoint so that the model can be rebuilt from it.
        log: where one-line epoch summaries go (``None``: nowhere).
    """
    from tqdm.auto import tqdm  # imported here: tqdm is not needed to import the package

    if len(train_examples) == 0 or len(dev_examples) == 0:
        raise CourseInputError("training needs non-empty train and dev splits")
    device = torch.device(device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise CourseInputError("`device` is cuda but torch sees no CUDA device; use --device cpu")
    model.to(device)
    optimizer = build_optimizer(model, config)
    steps_per_epoch = math.ceil(len(train_examples) / config.batch_size)
    scheduler = build_scheduler(optimizer, config, steps_per_epoch * config.epochs)
    history: list[EpochMetrics] = []
    start_epoch = 0
    out_path = Path(out_dir) if out_dir is not None else None
    if out_path is not None:
        out_path.mkdir(parents=True, exist_ok=True)
        checkpoint_path = out_path / CHECKPOINT_NAME
        if resume and checkpoint_path.is_file():
            checkpoint = load_checkpoint(checkpoint_path, vocab)
            if checkpoint["train_config"] != config.to_dict():
                raise CourseInputError(
                    f"{checkpoint_path} was written with other training options "
                    f"({checkpoint['train_config']}); resume with the same options or use another output directory"
                )
            model.load_state_dict(checkpoint["model_state"])
            optimizer.load_state_dict(checkpoint["optimizer_state"])
            scheduler.load_state_dict(checkpoint["scheduler_state"])
            _set_rng_state(checkpoint["rng_state"])
            history = [EpochMetrics(**h) for h in checkpoint["history"]]
            start_epoch = checkpoint["epoch"]
            if log:
                log(f"resuming from {checkpoint_path.name} after epoch {start_epoch}")
        vocab.save(out_path / VOCAB_NAME)
    resumed_from = start_epoch
    eval_kwargs = dict(batch_size=config.eval_batch_size, max_len=config.max_len, device=device, extras_fn=extras_fn)
    dev_result = test_result = None
    last_epoch = config.epochs if stop_after_epoch is None else min(config.epochs, stop_after_epoch)
    for epoch in range(start_epoch + 1, last_epoch + 1):
        model.train()
        batches = make_batches(
            train_examples, vocab, config.batch_size, max_len=config.max_len, shuffle=True,
            seed=config.seed * 100_003 + epoch, swap_probability=config.swap_probability, extras_fn=extras_fn,
        )
        bar = tqdm(batches, total=steps_per_epoch, desc=f"epoch {epoch}/{config.epochs}", disable=not progress,
                   unit="batch", leave=False)
        started, loss_sum, seen = time.perf_counter(), 0.0, 0
        for batch in bar:
            batch = batch.to(device)
            loss = F.cross_entropy(model(batch), batch.labels)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if config.clip_norm > 0:
                nn.utils.clip_grad_norm_(model.parameters(), config.clip_norm)
            optimizer.step()
            scheduler.step()
            loss_sum += float(loss.detach()) * len(batch)
            seen += len(batch)
            bar.set_postfix(loss=f"{loss_sum / seen:.4f}")
        train_seconds = time.perf_counter() - started
        started = time.perf_counter()
        dev_result = evaluate(model, dev_examples, vocab, **eval_kwargs)
        test_result = evaluate(model, test_examples, vocab, **eval_kwargs) if test_examples else None
        metrics = EpochMetrics(
            epoch=epoch, train_loss=loss_sum / seen, dev=dev_result.to_dict(),
            test=None if test_result is None else test_result.to_dict(),
            train_seconds=train_seconds, eval_seconds=time.perf_counter() - started,
            pairs_per_second=seen / train_seconds, lr_end=optimizer.param_groups[0]["lr"],
        )
        history.append(metrics)
        if log:
            test_text = "" if test_result is None else f", test acc {test_result.accuracy:.4f}"
            log(f"epoch {epoch}: train loss {metrics.train_loss:.4f}, dev acc {dev_result.accuracy:.4f}"
                f"{test_text}, {metrics.pairs_per_second:.0f} pairs/s")
        if out_path is not None:
            _save_atomically({
                "epoch": epoch,
                "model_state": model.state_dict(),
                "optimizer_state": optimizer.state_dict(),
                "scheduler_state": scheduler.state_dict(),
                "rng_state": _rng_state(),
                "history": [asdict(h) for h in history],
                "train_config": config.to_dict(),
                "model_config": model_config,
                "vocab_fingerprint": vocab.fingerprint(),
            }, out_path / CHECKPOINT_NAME)
            (out_path / METRICS_NAME).write_text(
                json.dumps({"train_config": config.to_dict(), "model_config": model_config,
                            "best_dev_epoch": best_dev_epoch(history),
                            "epochs": [asdict(h) for h in history]}, indent=2, ensure_ascii=False) + "\n",
                encoding="utf-8",
            )
    if dev_result is None:  # nothing left to train (resumed a finished run): evaluate once
        dev_result = evaluate(model, dev_examples, vocab, **eval_kwargs)
        test_result = evaluate(model, test_examples, vocab, **eval_kwargs) if test_examples else None
    return TrainResult(history, dev_result, test_result, resumed_from)
