"""Lesson-12 checkers: the right answers pass (in other containers and dtypes too), the plausible
wrong ones are refused with their own explanation, in one line."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.nn import functional as F

from lessons_lib.exercises import ExerciseCheckError
from lessons_lib.exercises.decoder import (check_beam_step, check_causal_mask, check_smoothed_loss,
                                           check_smoothing_floor, smoothed_loss_floor)


def _one_line(error: pytest.ExceptionInfo) -> str:
    message = str(error.value)
    assert "\n" not in message and "Traceback" not in message, message
    return message


# --- 12-1 the causal mask -------------------------------------------------------------------------

def _mask(length):
    return torch.ones(length, length, dtype=torch.bool).tril()


@pytest.mark.parametrize("answer", [
    _mask,
    lambda n: np.tril(np.ones((n, n), dtype=bool)),                       # a NumPy bool array
    lambda n: torch.arange(n)[None, :] <= torch.arange(n)[:, None],      # built by comparison
    lambda n: [[j <= i for j in range(n)] for i in range(n)],            # nested lists of bools
])
def test_the_causal_mask_passes_in_any_container(answer, capsys):
    check_causal_mask(answer)
    check_causal_mask(answer, seed=5)
    assert capsys.readouterr().out.count("✅") == 2


@pytest.mark.parametrize("wrong, message", [
    (lambda n: torch.ones(n, n, dtype=torch.bool).tril(-1), "对角线"),           # the diagonal excluded
    (lambda n: torch.ones(n, n, dtype=torch.bool).triu(), "上三角"),             # transposed
    (lambda n: torch.ones(n, n, dtype=torch.bool).triu(1), "PyTorch 的约定"),    # True = masked, torch's tgt_mask
    (lambda n: torch.ones(n, n, dtype=torch.bool), "读到答案"),                  # no mask at all
    (lambda n: torch.ones(n, n).tril(), "浮点"),                                 # a float mask
    (lambda n: torch.zeros(n, n).masked_fill(~_mask(n), float("-inf")), "浮点"),  # an additive mask
    (lambda n: torch.ones(n, n, dtype=torch.long).tril(), "布尔"),               # 0/1 integers
    (lambda n: np.tril(np.ones((n, n), dtype=np.int64)), "布尔"),               # 0/1 NumPy integers
    (lambda n: _mask(n + 1), "形状"),
    (lambda n: None, "return"),
])
def test_causal_mask_mistakes_are_explained(wrong, message):
    with pytest.raises(ExerciseCheckError, match=message) as error:
        check_causal_mask(wrong)
    _one_line(error)


def test_a_transposed_mask_is_refused_on_fresh_lengths_too():
    with pytest.raises(ExerciseCheckError, match="上三角"):
        check_causal_mask(lambda n: _mask(n).T, seed=11)


# --- 12-2 one step of beam search -----------------------------------------------------------------

def _beam_step(prefix_scores, next_log_probs, k):
    totals = prefix_scores[:, None] + next_log_probs
    best = totals.flatten().topk(k)
    vocab = next_log_probs.shape[1]
    return best.indices // vocab, best.indices % vocab, best.values


def _beam_step_numpy(prefix_scores, next_log_probs, k):
    totals = (prefix_scores[:, None] + next_log_probs).numpy().astype(np.float64)
    order = np.argsort(-totals, axis=None)[:k]
    rows, tokens = np.unravel_index(order, totals.shape)
    return rows.astype(np.int32), tokens, totals.flatten()[order]


def _beam_step_lists(prefix_scores, next_log_probs, k):
    rows, tokens, scores = _beam_step(prefix_scores, next_log_probs, k)
    return [int(r) for r in rows], [np.int64(t) for t in tokens], [float(s) for s in scores]


@pytest.mark.parametrize("answer", [_beam_step, _beam_step_numpy, _beam_step_lists])
def test_the_beam_step_passes_as_tensors_numpy_or_lists(answer, capsys):
    for seed in (None, 1, 2, 3, 1000):
        check_beam_step(answer, seed=seed)
    assert capsys.readouterr().out.count("✅") == 5


def _per_beam_best(prefix_scores, next_log_probs, k):
    best = next_log_probs.max(dim=-1)
    order = (prefix_scores + best.values).argsort(descending=True)
    return torch.arange(k)[order], best.indices[order], (prefix_scores + best.values)[order]


def _per_beam_top_k(prefix_scores, next_log_probs, k):
    best = next_log_probs.topk(k, dim=-1)                       # k per beam: k * k continuations
    rows = torch.arange(k)[:, None].expand(k, k)
    return rows.flatten(), best.indices.flatten(), (prefix_scores[:, None] + best.values).flatten()


def _no_prefix(prefix_scores, next_log_probs, k):
    best = next_log_probs.flatten().topk(k)
    vocab = next_log_probs.shape[1]
    return best.indices // vocab, best.indices % vocab, best.values


def _scores_without_prefix(prefix_scores, next_log_probs, k):
    rows, tokens, _ = _beam_step(prefix_scores, next_log_probs, k)
    return rows, tokens, next_log_probs[rows, tokens]


def _worst(prefix_scores, next_log_probs, k):
    best = (prefix_scores[:, None] + next_log_probs).flatten().topk(k, largest=False)
    vocab = next_log_probs.shape[1]
    return best.indices // vocab, best.indices % vocab, best.values


def _ascending(prefix_scores, next_log_probs, k):
    rows, tokens, scores = _beam_step(prefix_scores, next_log_probs, k)
    return rows.flip(0), tokens.flip(0), scores.flip(0)


def _divided_by_k(prefix_scores, next_log_probs, k):
    best = (prefix_scores[:, None] + next_log_probs).flatten().topk(k)
    return best.indices // k, best.indices % k, best.values


def _swapped(prefix_scores, next_log_probs, k):
    rows, tokens, scores = _beam_step(prefix_scores, next_log_probs, k)
    return tokens, rows, scores


@pytest.mark.parametrize("wrong, message", [
    (_per_beam_best, "每条束各自"),
    (_per_beam_top_k, "每条束各取了 k 个"),
    (_no_prefix, "忘了加前缀"),
    (_scores_without_prefix, "分数要累加前缀"),
    (_worst, "总分最低"),
    (_ascending, "顺序不对"),
    (_divided_by_k, "词表大小 V"),
    (_swapped, "弄反了"),
    (lambda p, q, k: _beam_step(p, q, k)[:2], "三样东西"),
])
def test_beam_step_mistakes_are_explained(wrong, message):
    with pytest.raises(ExerciseCheckError, match=message) as error:
        check_beam_step(wrong)
    _one_line(error)


def test_per_beam_and_prefixless_steps_are_refused_on_fresh_inputs():
    for seed in (1, 2, 3, 1000):
        for wrong in (_per_beam_best, _no_prefix):
            with pytest.raises(ExerciseCheckError):
                check_beam_step(wrong, seed=seed)


# --- 12-3 label-smoothed cross-entropy ------------------------------------------------------------

def _smoothed(logits, targets, pad_id, epsilon):
    log_p = torch.log_softmax(logits, dim=-1)
    nll = -log_p.gather(1, targets[:, None])[:, 0]
    uniform = -log_p.mean(dim=-1)
    real = targets != pad_id
    return ((1 - epsilon) * nll + epsilon * uniform)[real].mean()


@pytest.mark.parametrize("answer", [
    _smoothed,
    lambda x, y, pad, eps: F.cross_entropy(x, y, ignore_index=pad, label_smoothing=eps),   # torch's own
    lambda x, y, pad, eps: float(_smoothed(x, y, pad, eps)),                                 # a Python float
    lambda x, y, pad, eps: np.float32(_smoothed(x, y, pad, eps)),                            # a NumPy float32
    lambda x, y, pad, eps: _smoothed(x.double(), y, pad, eps)[None],                         # float64, shape (1,)
])
def test_the_smoothed_loss_passes_as_any_number(answer, capsys):
    for seed in (None, 1, 2, 3, 1000):
        check_smoothed_loss(answer, seed=seed)
    assert capsys.readouterr().out.count("✅") == 5


def _over_v_minus_1(logits, targets, pad_id, epsilon):
    log_p = torch.log_softmax(logits, dim=-1)
    nll = -log_p.gather(1, targets[:, None])[:, 0]
    others = -log_p.sum(dim=-1) - nll
    real = targets != pad_id
    return ((1 - epsilon) * nll + epsilon / (logits.shape[1] - 1) * others)[real].mean()


def _padding_included(logits, targets, pad_id, epsilon):
    no_padding = -1  # an id no target has: every position, padding too, enters the mean
    return _smoothed(logits, targets, no_padding, epsilon)


@pytest.mark.parametrize("wrong, message", [
    (_over_v_minus_1, "V−1"),
    (_padding_included, "填充位置"),
    (lambda x, y, pad, eps: F.cross_entropy(x, y, ignore_index=pad), "ε 没有用上"),
    (lambda x, y, pad, eps: _smoothed(x, y, pad, eps) * int((y != pad).sum()), "和，不是平均"),
    (lambda x, y, pad, eps: F.cross_entropy(x, y), "把填充也算进去"),
    (lambda x, y, pad, eps: _smoothed(x, y, pad, eps) + 0.05, "逐步检查"),
    (lambda x, y, pad, eps: torch.full((2,), 1.0), "形状"),
])
def test_smoothed_loss_mistakes_are_explained(wrong, message):
    with pytest.raises(ExerciseCheckError, match=message) as error:
        check_smoothed_loss(wrong)
    _one_line(error)


def test_smoothing_over_v_minus_1_and_padding_are_refused_on_fresh_inputs():
    for seed in (1, 2, 3, 1000):
        for wrong in (_over_v_minus_1, _padding_included):
            with pytest.raises(ExerciseCheckError):
                check_smoothed_loss(wrong, seed=seed)


# --- 12-4 the floor of the smoothed loss ----------------------------------------------------------

def test_the_measured_floor_is_the_entropy_of_the_smoothed_target(capsys):
    import math

    loss, probability = smoothed_loss_floor()
    top, rest = 1 - 0.1 + 0.1 / 8, 0.1 / 8
    entropy = -(top * math.log(top) + 7 * rest * math.log(rest))
    assert abs(loss - entropy) < 1e-3 and abs(probability - top) < 1e-3
    check_smoothing_floor(lambda: entropy)
    check_smoothing_floor(lambda: np.float32(entropy))
    out = capsys.readouterr().out
    assert out.count("✅") == 2 and "为什么" in out


@pytest.mark.parametrize("wrong, message", [
    (lambda: 0.0, "不会降到 0"),
    (lambda: 0.1, "不会降到 0"),
    (lambda: 2.0794, "分布的熵"),   # ln 8: the uniform distribution
    (lambda: "0.5", "一个数"),
])
def test_smoothing_floor_mistakes_are_explained(wrong, message):
    with pytest.raises(ExerciseCheckError, match=message) as error:
        check_smoothing_floor(wrong)
    _one_line(error)
