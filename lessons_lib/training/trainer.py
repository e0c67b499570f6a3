"""Training pair classifiers: optimiser, schedule, the loop, resumable checkpoints.

The loop is generic: a model is any ``nn.Module`` whose ``forward(batch)`` takes a
:class:`lessons_lib.pairs.encoding.PairBatch` and returns ``(B, n_classes)`` logits (a model
with a ``training_loss(batch)`` method is trained on that loss instead of cross-entropy); per-batch
tensors a variant needs (a syntax distance matrix, ...) come from an ``extras_fn`` hook
into ``batch.extras``.

- :func:`parameter_groups` / :func:`build_optimizer`: AdamW with weight decay on weight
  matrices and embeddings only (``p.dim() >= 2``) — decaying a bias or a LayerNorm gain towards
  0 only fights the normalisation, it does not regularise anything — and never on a
  zero-initialised bias table (a module's ``no_weight_decay``).
- :func:`build_scheduler`: optional linear warm-up, then constant or linear decay.
- :func:`train_pair_classifier`: seeded, clipped, tqdm progress, a checkpoint after every
  epoch, resumable (a resumed run ends bit-identical to an uninterrupted one: the batch
  order of epoch ``e`` depends only on ``(seed, e)`` and the RNG state is checkpointed).
  Its steps are named: resume, one epoch, evaluate, save. A checkpoint is resumed only by a
  run of the same identity (training and model options, vocabulary, parameter shapes, and
  whatever the caller adds: the data's fingerprints, limits); a loss that is not finite
  stops the run with an error naming the epoch and step.

Scoring lives in :mod:`lessons_lib.evaluation.metrics`; the run folder in :mod:`lessons_lib.training.runs`.
"""

from __future__ import annotations

import hashlib
import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import torch
from torch import nn

from lessons_lib.errors import CourseInputError, FieldName, input_error
from lessons_lib.pairs.classifier import classification_loss
from lessons_lib.pairs.config import TrainConfig
from lessons_lib.pairs.data import PairExample, examples_fingerprint
from lessons_lib.pairs.encoding import ExtrasFn, make_batches
from lessons_lib.evaluation.metrics import EvalResult, evaluate
from lessons_lib.training.runs import (CHECKPOINT_NAME, RunFolder, load_checkpoint, load_weights, save_checkpoint,
                                    save_metrics, save_vocab)
from lessons_lib.pairs.vocab import Vocabulary

__all__ = [
    "parameter_groups",
    "build_optimizer",
    "build_scheduler",
    "EpochMetrics",
    "TrainResult",
    "best_dev_epoch",
    "resolve_device",
    "train_pair_classifier",
]


def parameter_groups(model: nn.Module, weight_decay: float, lr: float | None = None) -> list[dict]:
    """AdamW groups: decayed (weight matrices, embeddings) and not decayed (biases, norm gains, bias tables).

    The rule is nanoGPT's, ``p.dim() >= 2``, with one addition: a module may name parameters
    in a ``no_weight_decay`` attribute. That is what the rule alone would get wrong here: the
    syntax-bias table is 3-D ``(tables, heads, buckets)`` and zero-initialised, and decay would
    pull it back to the baseline, confounding the ablation. (On every preset and bias variant
    this groups the parameters exactly as a bias / norm-layer rule does.)
    A module with a ``param_lr_multiplier`` attribute (a small side network that must learn
    within the steps the task gives it, such as the distance predictor) puts its parameters
    in groups of their own whose learning rate is ``lr × multiplier`` (``lr`` required then).
    Every trainable parameter lands in exactly one group; with no multiplier there are two.
    """
    decayed: dict[int, bool] = {}
    multiplier: dict[int, float] = {}
    for module in model.modules():
        exempt = getattr(module, "no_weight_decay", ())
        for name, param in module.named_parameters(recurse=False):
            decayed[id(param)] = param.dim() >= 2 and name not in exempt
        factor = getattr(module, "param_lr_multiplier", None)
        if factor is not None and float(factor) != 1.0:
            multiplier.update({id(param): float(factor) for param in module.parameters()})
    if multiplier and lr is None:
        raise CourseInputError("a module asks for its own learning rate (param_lr_multiplier): pass `lr`")
    groups: dict[tuple[bool, float], list[nn.Parameter]] = {(True, 1.0): [], (False, 1.0): []}
    for param in model.parameters():
        if param.requires_grad:
            groups.setdefault((decayed[id(param)], multiplier.get(id(param), 1.0)), []).append(param)
    out = []
    for (decays, factor), params in groups.items():
        group = {"params": params, "weight_decay": weight_decay if decays else 0.0}
        if factor != 1.0:
            assert lr is not None  # checked above: a multiplier needs `lr`
            group["lr"] = lr * factor
        out.append(group)
    return out


def build_optimizer(model: nn.Module, config: TrainConfig) -> torch.optim.AdamW:
    """AdamW over :func:`parameter_groups`.

    ``fused=True``: one kernel updates every parameter. Its square root is the kernel's own,
    so the weights are the same bits on every x86-64 CPU in the course's numeric mode; the
    default (``foreach``) path takes its square root from MKL's vector math, which is not
    correctly rounded and whose last bit depends on the CPU's vector units (tested in
    ``tests/test_numerics.py``; CONTRIBUTING.md, "Digits that travel").
    """
    return torch.optim.AdamW(parameter_groups(model, config.weight_decay, config.lr), lr=config.lr, fused=True)


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
    # The model's own numbers after the epoch (its ``epoch_summary()``, e.g. how far a learned table moved).
    model_summary: dict | None = None


@dataclass
class TrainResult:
    """Per-epoch metrics and the predictions on dev and test of the weights the model ends with.

    Attributes:
        chosen_epoch: the epoch whose weights the model holds: the last, or with
            ``keep_best_dev`` the one with the most correct dev pairs.
        optimizer_steps: the optimizer steps made in all (resumed ones included).
    """

    history: list[EpochMetrics]
    dev: EvalResult
    test: EvalResult | None
    resumed_from_epoch: int = 0
    chosen_epoch: int = 0
    optimizer_steps: int = 0


def _correct(metrics: Mapping[str, Any]) -> int:
    """The correct pairs of an evaluation's ``to_dict()``: the diagonal of its confusion matrix."""
    confusion = metrics["confusion"]
    return sum(int(confusion[label][label]) for label in range(len(confusion)))


def best_dev_epoch(history: Sequence[EpochMetrics]) -> int:
    """The epoch with the most correct dev pairs (the earliest on ties): model selection by dev, never by test.

    Compared as integers, so that no rounding of an accuracy decides a tie.
    """
    if not history:
        raise CourseInputError("`history` is empty")
    return max(history, key=lambda h: (_correct(h.dev), -h.epoch)).epoch


def resolve_device(device: str | torch.device) -> torch.device:
    """``device`` as a ``torch.device``; CUDA only when torch sees a CUDA device."""
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError):
        raise CourseInputError(f"`device` must be 'cpu' or 'cuda', got {device!r}") from None
    if resolved.type not in ("cpu", "cuda"):
        raise CourseInputError(f"`device` must be 'cpu' or 'cuda', got {device!r}")
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise input_error(FieldName("device"), " is cuda but torch sees no CUDA device; use --device cpu")
    return resolved


def _rng_state() -> dict:
    state: dict[str, torch.Tensor | list[torch.Tensor]] = {"torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def _set_rng_state(state: dict) -> None:
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def _training_loss(model: nn.Module, batch) -> torch.Tensor:
    """The model's own ``training_loss(batch)`` when it has one (an auxiliary term), else the task's cross-entropy."""
    own = getattr(model, "training_loss", None)
    return own(batch) if callable(own) else classification_loss(model(batch), batch)


class _Trainer:
    """The state of one training run and its named steps (see :func:`train_pair_classifier`)."""

    def __init__(self, model: nn.Module, vocab: Vocabulary, config: TrainConfig, device: torch.device,
                 steps_per_epoch: int, extras_fn: ExtrasFn | None, model_config: dict | None,
                 run_identity: Mapping[str, Any] | None = None, folder: RunFolder | None = None,
                 keep_best_dev: bool = False) -> None:
        self.model, self.vocab, self.config, self.device = model, vocab, config, device
        self.folder = folder
        self.extras_fn, self.model_config = extras_fn, model_config
        self.steps_per_epoch = steps_per_epoch
        # The thread count and the CPU's kernel set are part of the identity: torch's CPU kernels sum
        # in another order with another count or other vector units, so a run resumed with another
        # ends with other weights.
        self.identity = {**(run_identity or {}), "train_config": config.to_dict(), "model_config": model_config,
                         "vocabulary": vocab.fingerprint(), "parameters": _parameter_fingerprint(model),
                         "threads": torch.get_num_threads()}
        if device.type == "cpu":
            self.identity["cpu_capability"] = torch.backends.cpu.get_cpu_capability()
        # The weights of the best dev epoch so far ({"epoch", "correct", "model_state"}), kept only when asked.
        self.keep_best_dev = keep_best_dev
        if keep_best_dev:
            self.identity["keep_best_dev"] = True
        self.best_dev: dict | None = None
        model.to(device)
        self.optimizer = build_optimizer(model, config)
        self.scheduler = build_scheduler(self.optimizer, config, steps_per_epoch * config.epochs)
        self.history: list[EpochMetrics] = []
        self.epoch = 0

    def resume(self, checkpoint_path: Path, log: Callable[[str], None] | None) -> None:
        """Continue from a checkpoint written by a run of the same identity (else an error naming the fields)."""
        checkpoint = load_checkpoint(checkpoint_path)
        assert self.folder is not None  # a checkpoint is only ever resumed from a run folder
        self.folder.check_identity(checkpoint.get("run_identity", {}), self.identity)
        load_weights(self.model, checkpoint["model_state"], checkpoint_path)
        try:
            self.optimizer.load_state_dict(checkpoint["optimizer_state"])
            self.scheduler.load_state_dict(checkpoint["scheduler_state"])
            _set_rng_state(checkpoint["rng_state"])
            self.history = [EpochMetrics(**h) for h in checkpoint["history"]]
            self.epoch = int(checkpoint["epoch"])
            if self.keep_best_dev and self.history:
                self.best_dev = checkpoint["best_dev"]
                int(self.best_dev["epoch"]), int(self.best_dev["correct"]), dict(self.best_dev["model_state"])
        except (KeyError, TypeError, ValueError, RuntimeError) as error:
            raise CourseInputError(f"{checkpoint_path}: its training state is incomplete or malformed "
                                   f"({type(error).__name__}: {error})") from None
        if log:
            log(f"resuming from {checkpoint_path.name} after epoch {self.epoch}")

    def train_epoch(self, examples: Sequence[PairExample], epoch: int, progress: bool) -> tuple[float, int, float]:
        """One pass over ``examples`` in epoch ``epoch``'s order; returns (mean loss, pairs, seconds)."""
        from lessons_lib.progress import progress_bar_class

        tqdm = progress_bar_class()  # imported here: tqdm is not needed to import the package

        config = self.config
        self.model.train()
        batches = make_batches(
            examples, self.vocab, config.batch_size, max_len=config.max_len, shuffle=True,
            seed=config.seed * 100_003 + epoch, swap_probability=config.swap_probability, extras_fn=self.extras_fn,
            batching=config.batching,
        )
        bar = tqdm(batches, total=self.steps_per_epoch, desc=f"epoch {epoch}/{config.epochs}", disable=not progress,
                   unit="batch", leave=False)
        started, loss_sum, seen = time.perf_counter(), 0.0, 0
        for step, batch in enumerate(bar, start=1):
            batch = batch.to(self.device)
            loss = _training_loss(self.model, batch)
            loss_value = float(loss.detach())
            if not math.isfinite(loss_value):
                raise CourseInputError(
                    f"training diverged: the loss is {loss_value} at epoch {epoch}, step {step} of "
                    f"{self.steps_per_epoch} (learning rate {self.optimizer.param_groups[0]['lr']:.3g}); "
                    "try a smaller --lr, or gradient clipping (--clip-norm)"
                )
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if config.clip_norm > 0:
                nn.utils.clip_grad_norm_(self.model.parameters(), config.clip_norm)
            self.optimizer.step()
            self.scheduler.step()
            loss_sum += loss_value * len(batch)
            seen += len(batch)
            bar.set_postfix(loss=f"{loss_sum / seen:.4f}")
        return loss_sum / seen, seen, time.perf_counter() - started

    def run_epoch(self, train: Sequence[PairExample], dev: Sequence[PairExample],
                  test: Sequence[PairExample] | None, epoch: int, progress: bool) -> tuple[EvalResult, EvalResult | None]:
        """Train epoch ``epoch``, evaluate dev and test, record the epoch's metrics; returns (dev, test)."""
        train_loss, seen, train_seconds = self.train_epoch(train, epoch, progress)
        started = time.perf_counter()
        dev_result, test_result = self.evaluate_dev(dev), self.evaluate(test)
        summary = getattr(self.model, "epoch_summary", None)
        self.history.append(EpochMetrics(
            epoch=epoch, train_loss=train_loss, dev=dev_result.to_dict(),
            test=None if test_result is None else test_result.to_dict(),
            train_seconds=train_seconds, eval_seconds=time.perf_counter() - started,
            pairs_per_second=seen / train_seconds, lr_end=self.optimizer.param_groups[0]["lr"],
            model_summary=summary() if callable(summary) else None,
        ))
        self.epoch = epoch
        if self.keep_best_dev and (self.best_dev is None or dev_result.correct > self.best_dev["correct"]):
            # Strictly more: the earliest epoch wins a tie, as in best_dev_epoch.
            state = {name: tensor.detach().clone() for name, tensor in self.model.state_dict().items()}
            self.best_dev = {"epoch": epoch, "correct": dev_result.correct, "model_state": state}
        return dev_result, test_result

    def restore_best_dev(self) -> None:
        """Load the weights of the best dev epoch into the model (``keep_best_dev`` runs)."""
        if self.best_dev is None:
            raise CourseInputError("no best dev epoch is kept: this run was not started with keep_best_dev")
        load_weights(self.model, self.best_dev["model_state"], "the best dev epoch's weights")

    def evaluate(self, examples: Sequence[PairExample] | None) -> EvalResult | None:
        """Metrics on ``examples`` (``None`` when there are none)."""
        if not examples:
            return None
        return self.evaluate_dev(examples)

    def evaluate_dev(self, examples: Sequence[PairExample]) -> EvalResult:
        """Metrics on the dev split, which a run always has (its epochs are chosen on it)."""
        return evaluate(self.model, examples, self.vocab, batch_size=self.config.eval_batch_size,
                        max_len=self.config.max_len, device=self.device, extras_fn=self.extras_fn)

    def save(self, out_path: Path) -> None:
        """The checkpoint and ``metrics.json`` after the last finished epoch (each written atomically)."""
        config = self.config.to_dict()
        save_checkpoint({
            "epoch": self.epoch,
            "model_state": self.model.state_dict(),
            "optimizer_state": self.optimizer.state_dict(),
            "scheduler_state": self.scheduler.state_dict(),
            "rng_state": _rng_state(),
            "history": [asdict(h) for h in self.history],
            "train_config": config,
            "model_config": self.model_config,
            "vocab_fingerprint": self.vocab.fingerprint(),
            "run_identity": self.identity,
            **({"best_dev": self.best_dev} if self.keep_best_dev else {}),
        }, out_path / CHECKPOINT_NAME)
        self.save_metrics(out_path)

    def save_metrics(self, out_path: Path) -> None:
        """``metrics.json`` of the epochs so far."""
        save_metrics(out_path, self.config.to_dict(), self.model_config, best_dev_epoch(self.history),
                     [asdict(h) for h in self.history], self.identity, None if self.folder is None else self.folder.command)


def _parameter_fingerprint(model: nn.Module) -> str:
    """A short hash of the model's parameter and buffer names and shapes (not their values)."""
    shapes = [(name, tuple(t.shape)) for name, t in model.state_dict().items()]
    return hashlib.sha256(repr(shapes).encode()).hexdigest()[:16]


def _epoch_line(metrics: "EpochMetrics", test: EvalResult | None) -> str:
    test_text = "" if test is None else f", test acc {test.accuracy:.4f}"
    return (f"epoch {metrics.epoch}: train loss {metrics.train_loss:.4f}, dev acc {metrics.dev['accuracy']:.4f}"
            f"{test_text}, {metrics.pairs_per_second:.0f} pairs/s")


def _run_identity(splits: tuple, extra: Mapping[str, Any] | None) -> dict:
    """The fingerprints of the (train, dev, test) pairs (``None`` for a missing test split), with ``extra``."""
    names = ("train", "dev", "test")
    return {"data": {name: None if split is None else examples_fingerprint(split) for name, split in zip(names, splits)},
            **(extra or {})}


def train_pair_classifier(
    model: nn.Module,
    train_examples: Sequence[PairExample],
    dev_examples: Sequence[PairExample],
    vocab: Vocabulary,
    config: TrainConfig,
    *,
    test_examples: Sequence[PairExample] | None = None,
    run_folder: RunFolder | None = None,
    device: str | torch.device = "cpu",
    progress: bool = True,
    stop_after_epoch: int | None = None,
    extras_fn: ExtrasFn | None = None,
    model_config: dict | None = None,
    on_start: Callable[[], None] | None = None,
    log: Callable[[str], None] | None = print,
    keep_best_dev: bool = False,
) -> TrainResult:
    """Train ``model`` on ``train_examples``, evaluating on dev (and test) after every epoch.

    Args:
        model: ``forward(PairBatch) -> (B, C)`` logits; build it after seeding for a repeatable init.
        train_examples, dev_examples, test_examples: labelled pairs.
        vocab: the training vocabulary (saved to the run folder's ``vocab.json``, fingerprint in the checkpoint).
        config: see :class:`TrainConfig`.
        run_folder: where ``checkpoint.pt`` (every epoch), ``metrics.json`` and ``vocab.json`` go, whether
            to resume from its checkpoint, the caller's part of the run's identity and the command
            (see :class:`~lessons_lib.training.runs.RunFolder`); ``None`` keeps everything in memory.
            The run's identity adds the fingerprints of the three splits' pairs, the options, the
            vocabulary, the parameter shapes and the torch thread count to the folder's own.
            Starting afresh removes the previous run's files from the folder first; resuming
            removes its ``predictions.json`` (a finished command writes it again).
        device: ``"cpu"`` or ``"cuda"``; a ``torch.device`` is taken as already resolved
            (by :func:`resolve_device`).
        progress: show a tqdm bar per epoch.
        stop_after_epoch: end after this epoch (to simulate an interruption in tests).
        extras_fn: per-batch hook filling ``batch.extras`` (see :func:`lessons_lib.pairs.encoding.make_batches`).
        model_config: stored in the checkpoint so that the model can be rebuilt from it.
        on_start: called once the run folder is settled (resumed, or cleared for a fresh
            start), before the first epoch: the place to write files of one's own there.
        log: where one-line epoch summaries go (``None``: nowhere).
        keep_best_dev: keep the weights of the epoch with the most correct dev pairs (the earliest
            on ties; kept in the checkpoint too) and, once the last epoch is done, end with them:
            the returned dev and test results are then that epoch's. The whole schedule still runs.

    While it runs, the run folder is locked (:meth:`~lessons_lib.training.runs.RunFolder.locked`):
    a second run on the same folder is refused.

    Raises:
        CourseInputError: empty splits, a checkpoint of another run, another run writing
            the folder, a file there that the course did not write, or a loss that is not finite.
    """
    if len(train_examples) == 0 or len(dev_examples) == 0:
        raise CourseInputError("training needs non-empty train and dev splits")
    splits = (train_examples, dev_examples, test_examples)
    trainer = _Trainer(model, vocab, config, device if isinstance(device, torch.device) else resolve_device(device),
                       math.ceil(len(train_examples) / config.batch_size), extras_fn, model_config,
                       _run_identity(splits, None if run_folder is None else run_folder.identity), run_folder,
                       keep_best_dev)
    last_epoch = config.epochs if stop_after_epoch is None else min(config.epochs, stop_after_epoch)
    if run_folder is None:
        if on_start is not None:
            on_start()
        return _finish(trainer, _train_until(trainer, last_epoch, splits, None, progress, log), splits, 0)
    with run_folder.locked():
        run_folder.settle(lambda checkpoint: trainer.resume(checkpoint, log), log)
        save_vocab(run_folder.path, vocab)
        if on_start is not None:
            on_start()
        resumed_from = trainer.epoch
        results = _train_until(trainer, last_epoch, splits, run_folder.path, progress, log)
    return _finish(trainer, results, splits, resumed_from)


def _finish(trainer: _Trainer, results: tuple[EvalResult, EvalResult | None], splits: tuple,
            resumed_from: int) -> TrainResult:
    """The run's result; a finished ``keep_best_dev`` run ends with its best dev epoch's weights, scored again."""
    dev_result, test_result = results
    chosen = trainer.epoch
    if trainer.keep_best_dev and trainer.epoch == trainer.config.epochs and trainer.best_dev is not None:
        chosen = int(trainer.best_dev["epoch"])
        if chosen != trainer.epoch:
            trainer.restore_best_dev()
            dev_result, test_result = trainer.evaluate_dev(splits[1]), trainer.evaluate(splits[2])
    return TrainResult(trainer.history, dev_result, test_result, resumed_from, chosen,
                       int(trainer.scheduler.last_epoch))


def _train_until(trainer: _Trainer, last_epoch: int, splits: tuple, out_path: Path | None, progress: bool,
                 log: Callable[[str], None] | None) -> tuple[EvalResult, EvalResult | None]:
    """Train the epochs after ``trainer.epoch`` up to ``last_epoch`` (checkpointing each); the last (dev, test) results."""
    train_examples, dev_examples, test_examples = splits
    dev_result: EvalResult | None = None
    test_result: EvalResult | None = None
    for epoch in range(trainer.epoch + 1, last_epoch + 1):
        dev_result, test_result = trainer.run_epoch(train_examples, dev_examples, test_examples, epoch, progress)
        if log:
            log(_epoch_line(trainer.history[-1], test_result))
        if out_path is not None:
            trainer.save(out_path)
    if dev_result is None:  # nothing left to train (resumed a finished run): evaluate once
        dev_result, test_result = trainer.evaluate_dev(dev_examples), trainer.evaluate(test_examples)
        if out_path is not None and trainer.history:  # a finished run's metrics.json may be gone: written again
            trainer.save_metrics(out_path)
    return dev_result, test_result
