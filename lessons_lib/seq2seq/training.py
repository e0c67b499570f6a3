"""Training the lesson-02 seq2seq model and scoring it by exact match.

- :func:`train_seq2seq`: Adam with teacher forcing, gradient clipping, one loss and one
  gradient norm recorded per step (:class:`Seq2SeqHistory`).
- :func:`exact_match`: share of held-out pairs whose greedy output is the target string.
- :func:`run_trial`: one seeded build → train → score run, for comparing configurations.
- :func:`compare_seed_groups`: two configurations' scores over seeds, as a difference in
  standard errors and an exact permutation test (:class:`SeedComparison`).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Sequence

import torch
from torch import nn

from lessons_lib.errors import FieldName, input_error
from lessons_lib.seq2seq.model import Seq2Seq, Seq2SeqConfig
from lessons_lib.validation import check_int, check_number

__all__ = ["Seq2SeqHistory", "train_seq2seq", "exact_match", "TrialResult", "run_trial", "SeedComparison",
           "compare_seed_groups"]


@dataclass
class Seq2SeqHistory:
    """What :func:`train_seq2seq` measured: the loss of every step and the largest gradient norm."""

    losses: list[float]
    grad_norms: list[float]


def train_seq2seq(
    model: Seq2Seq,
    pairs: list[tuple[str, str]],
    source_vocab,
    target_vocab,
    steps: int,
    batch_size: int = 64,
    lr: float = 3e-3,
    clip: float = 1.0,
    generator: torch.Generator | None = None,
) -> Seq2SeqHistory:
    """Train with Adam and teacher forcing on random mini-batches of ``pairs``.

    Args:
        model: the model, trained in place.
        pairs: ``(source text, target text)``.
        source_vocab, target_vocab: :class:`lessons_lib.seq2seq.numerals.SymbolTable`-like encoders.
        steps: number of optimiser steps.
        batch_size: pairs per step, drawn with ``generator``.
        lr: Adam learning rate.
        clip: gradient-norm clipping threshold (the norm before clipping is recorded).
        generator: torch generator for the batch draw (reproducible order).

    Returns:
        A :class:`Seq2SeqHistory` with one loss and one gradient norm per step.
    """
    if not pairs:
        raise input_error(FieldName("pairs"), " is empty")
    check_int(steps, FieldName("steps"))
    check_int(batch_size, FieldName("batch_size"))
    check_number(clip, FieldName("clip"), minimum=0.0, strict_minimum=True)
    # fused: the same bits on every x86-64 CPU (see training.trainer.build_optimizer)
    optimiser = torch.optim.Adam(model.parameters(), lr=lr, fused=True)
    loss_fn = nn.CrossEntropyLoss(ignore_index=target_vocab.pad_id)
    device = next(model.parameters()).device
    model.train()
    result = Seq2SeqHistory([], [])
    for _ in range(steps):
        index = torch.randint(len(pairs), (batch_size,), generator=generator).tolist()
        src, lengths = source_vocab.batch([pairs[i][0] for i in index])
        tgt, _ = target_vocab.batch([pairs[i][1] for i in index], bos=True, eos=True)
        src, lengths, tgt = src.to(device), lengths.to(device), tgt.to(device)
        logits = model(src, lengths, tgt[:, :-1])
        loss = loss_fn(logits.reshape(-1, logits.shape[-1]), tgt[:, 1:].reshape(-1))
        optimiser.zero_grad()
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimiser.step()
        result.losses.append(float(loss.detach()))
        result.grad_norms.append(float(norm))
    model.eval()
    return result


def exact_match(model: Seq2Seq, pairs: list[tuple[str, str]], source_vocab, target_vocab, batch_size: int = 512) -> float:
    """Fraction of ``pairs`` whose greedy output equals the target string exactly."""
    if not pairs:
        raise input_error(FieldName("pairs"), " is empty")
    max_steps = max(len(t) for _, t in pairs) + 1
    device = next(model.parameters()).device
    correct = 0
    for start in range(0, len(pairs), batch_size):
        chunk = pairs[start:start + batch_size]
        src, lengths = source_vocab.batch([s for s, _ in chunk])
        ids, _ = model.greedy_decode(src.to(device), lengths.to(device), max_steps)
        correct += sum(target_vocab.decode(row) == t for row, (_, t) in zip(ids.tolist(), chunk))
    return correct / len(pairs)


@dataclass
class TrialResult:
    """One seeded training run of :func:`run_trial`."""

    exact_match: float
    final_loss: float
    max_grad_norm: float
    losses: list[float]
    grad_norms: list[float]


def run_trial(
    config: Seq2SeqConfig, split, steps: int, seed: int, batch_size: int = 64, lr: float = 3e-3, device: str = "cpu",
    clip: float = 1.0,
) -> TrialResult:
    """Build a model from ``config`` with seed ``seed``, train it on ``split.train``, score ``split.test``.

    Args:
        config: the model to build.
        split: a :class:`lessons_lib.seq2seq.numerals.NumeralSplit` (train, test and both vocabularies).
        steps, batch_size, lr, clip: as in :func:`train_seq2seq`.
        seed: seeds both the initial weights and the batch order.
        device: where the model is trained (``"cpu"`` or ``"cuda"``).

    Returns:
        Held-out exact match, the mean loss of the last 10 % of steps, the largest gradient
        norm seen (before clipping), the loss curve and every step's gradient norm (before clipping).
    """
    torch.manual_seed(seed)
    model = Seq2Seq(config).to(device)
    generator = torch.Generator().manual_seed(seed)
    result = train_seq2seq(model, split.train, split.source_vocab, split.target_vocab, steps, batch_size, lr,
                           generator=generator, clip=clip)
    tail = result.losses[-max(1, steps // 10):]
    return TrialResult(
        exact_match=exact_match(model, split.test, split.source_vocab, split.target_vocab),
        final_loss=sum(tail) / len(tail),
        max_grad_norm=max(result.grad_norms),
        losses=result.losses,
        grad_norms=result.grad_norms,
    )


@dataclass(frozen=True)
class SeedComparison:
    """Two groups of per-seed scores compared by :func:`compare_seed_groups`.

    Attributes:
        difference: mean of ``b`` minus mean of ``a``.
        standard_error: the standard error of that difference, ``sqrt(s_a²/n_a + s_b²/n_b)``
            with ``s`` the sample standard deviation (n − 1) of each group.
        standard_errors: ``difference / standard_error`` (Welch's t statistic).
        p_value: two-sided exact permutation p: the share of all ways of splitting the
            pooled scores into groups of ``n_a`` and ``n_b`` whose difference of means is at
            least as large in absolute value as the observed one.
        smallest_p: the smallest p the test can give with these group sizes (two splits out
            of ``C(n_a + n_b, n_a)`` when the sizes are equal, one otherwise).
    """

    difference: float
    standard_error: float
    standard_errors: float
    p_value: float
    smallest_p: float


def compare_seed_groups(a: Sequence[float], b: Sequence[float]) -> SeedComparison:
    """Compare the scores of two configurations, one score per seed in each group.

    The permutation test assumes nothing about the scores' distribution, so it is valid for
    three seeds a side, where a t-distribution is a poor guess; with so few seeds it simply
    cannot give a small p (see ``smallest_p``).

    Raises:
        CourseInputError: a group with fewer than 2 scores, or a score that is not finite.
    """
    groups = [[float(x) for x in group] for group in (a, b)]
    for name, group in zip("ab", groups):
        if len(group) < 2:
            raise input_error(FieldName(name), f" needs at least 2 scores (one per seed), got {len(group)}")
        if not all(math.isfinite(x) for x in group):
            raise input_error(FieldName(name), f" holds a score that is not finite: {group}")
    first, second = groups

    def mean(values: Sequence[float]) -> float:
        return sum(values) / len(values)

    def variance(values: Sequence[float]) -> float:
        centre = mean(values)
        return sum((x - centre) ** 2 for x in values) / (len(values) - 1)

    difference = mean(second) - mean(first)
    standard_error = math.sqrt(variance(first) / len(first) + variance(second) / len(second))
    pooled, n_a = first + second, len(first)
    total, extreme, splits = sum(pooled), 0, 0
    for chosen in itertools.combinations(range(len(pooled)), n_a):
        sum_a = sum(pooled[i] for i in chosen)
        split_difference = (total - sum_a) / len(second) - sum_a / n_a
        extreme += abs(split_difference) >= abs(difference) - 1e-12  # ties count as extreme
        splits += 1
    return SeedComparison(
        difference=difference,
        standard_error=standard_error,
        standard_errors=difference / standard_error if standard_error > 0 else math.copysign(math.inf, difference),
        p_value=extreme / splits,
        smallest_p=(2 if len(first) == len(second) else 1) / splits,
    )
