"""Checkers for the decoder exercises (the causal mask, one step of beam search, label-smoothed
cross-entropy, and the floor label smoothing puts under the loss).

Each checker runs the learner's function on the lesson's fixed inputs (or, with ``seed``, on
fresh ones of the same kind) and compares it with :mod:`lessons_lib.transformer.decoder`
(:func:`~lessons_lib.transformer.decoder.causal_mask`,
:func:`~lessons_lib.transformer.decoder.smoothed_cross_entropy`) or with the search step written
out here; the mistakes a learner is likely to make get their own explanation.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Callable

import torch
from torch.nn import functional as F

from lessons_lib.exercises import (ExerciseCheckError, KnownMistake, call_learner, check_generator, check_random,
                                   compare_number, compare_tensor, passed)
from lessons_lib.transformer.decoder import causal_mask, smoothed_cross_entropy

__all__ = [
    "check_causal_mask",
    "check_beam_step",
    "check_smoothed_loss",
    "smoothed_loss_floor",
    "check_smoothing_floor",
    "FLOOR_VOCAB",
    "FLOOR_EPSILON",
]

_SEED = 2031


def _mask_answer(exercise: str, got: Any, length: int) -> torch.Tensor:
    """The learner's mask as a bool tensor; a float or 0/1 integer mask is refused with its reason."""
    if got is None:
        raise ExerciseCheckError(f"{exercise}: 你的函数没有返回值 (returned None)，是不是忘了 `return`？")
    try:
        mask = torch.as_tensor(got)
    except Exception as error:
        raise ExerciseCheckError(f"{exercise}: 遮蔽应当是张量 (tensor)，收到的是 {type(got).__name__}") from error
    if mask.is_floating_point():
        raise ExerciseCheckError(f"{exercise}: 你返回的是浮点张量（{mask.dtype}），像是加到分数上的 0 / -inf；"
                                 "本课程的遮蔽是布尔张量，True = 可以关注。")
    if mask.dtype != torch.bool:
        raise ExerciseCheckError(f"{exercise}: 遮蔽应当是布尔张量 (torch.bool)，你的是 {mask.dtype}："
                                 "masked_fill 和课程的注意力只接受布尔遮蔽（0/1 整数可以用 .bool() 转换）。")
    return mask


def check_causal_mask(fn: Callable[[int], Any], *, seed: int | None = None) -> None:
    """Exercise 12-1: ``fn(length)`` → ``(L, L)`` bool, ``True`` where query ``i`` may attend to key ``j`` (``j ≤ i``)."""
    exercise = "练习 12-1 因果遮蔽"
    # length 1 last: there several mistakes give the same [[False]], each explained better on a longer one
    lengths = (4, 7, 1) if seed is None else (*sorted(check_random(seed).sample(range(2, 12), 2)), 1)
    for length in lengths:
        got = _mask_answer(exercise, call_learner(exercise, fn, length), length)
        expected = causal_mask(length)
        ones = torch.ones(length, length, dtype=torch.bool)
        compare_tensor(
            exercise, got, expected,
            mistakes=[
                KnownMistake(ones.tril(-1), "对角线被排除了：每个位置必须能看见自己（j ≤ i，不是 j < i），"
                                            "否则第一个位置整行都被遮蔽，什么也看不见。"),
                KnownMistake(ones.triu(), "方向反了：这是上三角，位置 i 看见的是它自己和之后的位置（未来），"
                                          "应当是下三角 (tril)。"),
                KnownMistake(ones.triu(1), "你返回的是 PyTorch 的约定（True = 不许看，tgt_mask 那样）；"
                                           "本课程的遮蔽 True = 可以关注，取反即可。"),
                KnownMistake(ones, "全是 True：没有遮住任何未来的位置，模型会在训练时直接读到答案。"),
            ],
            what=f"长度 {length} 的因果遮蔽",
            steps="行是查询 i、列是键 j；j ≤ i 时为 True",
        )
    passed(exercise)


def _beam_inputs(seed: int | None) -> tuple[torch.Tensor, torch.Tensor, int]:
    """``(prefix_scores (k,), next_log_probs (k, V), k)``, drawn again until every known mistake of
    :func:`_beam_mistakes` picks another set of continuations than the right step (deterministic per seed)."""
    g = check_generator(seed, _SEED)
    rng = check_random(_SEED if seed is None else seed)
    beams, vocab = (3, 6) if seed is None else (rng.randint(2, 4), rng.randint(5, 9))
    while True:
        gaps = torch.rand(beams, generator=g) * 2 + 0.5
        prefix = -(torch.rand(1, generator=g) * 2 + 1) - torch.cat([torch.zeros(1), gaps[1:]]).cumsum(0)
        log_probs = F.log_softmax(torch.randn(beams, vocab, generator=g) * 2, dim=-1)
        if _telling(prefix, log_probs, beams):
            return prefix, log_probs, beams


def _telling(prefix: torch.Tensor, log_probs: torch.Tensor, k: int) -> bool:
    """Whether these inputs tell the right step and the known mistakes all apart (and have no tied totals)."""
    rows, tokens, _ = _step(prefix, log_probs, k)
    right = sorted(zip(rows.tolist(), tokens.tolist()))
    vocab = log_probs.shape[1]
    flat = [r * vocab + t for r, t in right]
    others = [sorted(zip(m_rows.tolist(), m_tokens.tolist())) for (m_rows, m_tokens), _ in _beam_mistakes(prefix, log_probs, k)]
    others += [sorted((i // k, i % k) for i in flat), sorted((t, r) for r, t in right)]
    totals = (prefix[:, None] + log_probs).flatten()
    picked = {tuple(choice) for choice in [right, *others]}
    return len(picked) == 1 + len(others) and totals.unique().numel() == totals.numel()


def _beam_answer(exercise: str, got: Any, k: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The learner's ``(rows, tokens, scores)`` as tensors (lists, numpy arrays and tensors alike)."""
    if not isinstance(got, (tuple, list)) or len(got) != 3:
        raise ExerciseCheckError(f"{exercise}: 应当返回三样东西 (rows, tokens, scores)，你返回的是 {type(got).__name__}"
                                 + (f"，长度 {len(got)}" if isinstance(got, (tuple, list)) else ""))
    parts = []
    for value, name in zip(got, ("rows", "tokens", "scores")):
        try:
            part = torch.as_tensor(value).detach().reshape(-1)
        except Exception as error:
            raise ExerciseCheckError(f"{exercise}: {name} 应当是张量或数的列表，收到的是 {type(value).__name__}") from error
        if part.numel() != k:
            raise ExerciseCheckError(f"{exercise}: {name} 应当有 k = {k} 个元素（全局最好的 k 个延续），你的有 {part.numel()} 个。"
                                     + ("是不是每条束各取了 k 个？" if part.numel() == k * k else ""))
        parts.append(part)
    rows, tokens, scores = parts
    if rows.is_floating_point() or tokens.is_floating_point():
        if not (torch.equal(rows, rows.round()) and torch.equal(tokens, tokens.round())):
            raise ExerciseCheckError(f"{exercise}: rows 与 tokens 是下标，应当是整数。")
    return rows.long(), tokens.long(), scores.to(torch.float64)


def _step(prefix: torch.Tensor, log_probs: torch.Tensor, k: int, totals: torch.Tensor | None = None
          ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The ``k`` best (row, token, total) of ``totals`` (default prefix + log p), best first."""
    totals = prefix[:, None] + log_probs if totals is None else totals
    best = totals.flatten().topk(k)
    vocab = log_probs.shape[1]
    return best.indices // vocab, best.indices % vocab, best.values.to(torch.float64)


def check_beam_step(fn: Callable[[torch.Tensor, torch.Tensor, int], Any], *, seed: int | None = None) -> None:
    """Exercise 12-2: ``fn(prefix_scores (k,), next_log_probs (k, V), k)`` → ``(rows, tokens, scores)``:
    the ``k`` best continuations over all beams, best first; ``scores`` are totals (prefix + next)."""
    exercise = "练习 12-2 束搜索的一步"
    prefix, log_probs, k = _beam_inputs(seed)
    rows, tokens, scores = _beam_answer(exercise, call_learner(exercise, fn, prefix.clone(), log_probs.clone(), k), k)
    expected = _step(prefix, log_probs, k)
    got_pairs = list(zip(rows.tolist(), tokens.tolist()))
    expected_pairs = list(zip(expected[0].tolist(), expected[1].tolist()))
    if got_pairs == expected_pairs:
        compare_tensor(exercise, scores, expected[2], atol=1e-5,
                       mistakes=[KnownMistake(log_probs[expected[0], expected[1]].to(torch.float64),
                                              "选对了延续，但分数只是这一步的 log p：分数要累加前缀的总分。")],
                       what="scores", steps="每个延续的总分 = 它所在束的前缀分 + 这一步的 log p")
        passed(exercise)
        return
    for (m_rows, m_tokens), explanation in _beam_mistakes(prefix, log_probs, k):
        if sorted(zip(m_rows.tolist(), m_tokens.tolist())) == sorted(got_pairs):
            raise ExerciseCheckError(f"{exercise}: {explanation}")
    if sorted(got_pairs) == sorted(expected_pairs):
        raise ExerciseCheckError(f"{exercise}: 选对了这 {k} 个延续，但顺序不对：按总分从高到低排列。")
    vocab = log_probs.shape[1]
    flat = [r * vocab + t for r, t in expected_pairs]
    if [(i // k, i % k) for i in flat] == got_pairs:
        raise ExerciseCheckError(f"{exercise}: 从展平的下标还原行号和词号时要用词表大小 V：row = i // V，token = i % V。")
    if [(t, r) for r, t in expected_pairs] == got_pairs:
        raise ExerciseCheckError(f"{exercise}: rows 与 tokens 弄反了：先返回束的行号，再返回词号。")
    raise ExerciseCheckError(f"{exercise}: 选出的 {k} 个 (行号, 词号) 与期望不符。逐步检查：总分 = 前缀分 + log p（形状 (k, V)），"
                             "在展平的 k × V 个总分里取最大的 k 个，再还原行号与词号。")


def _beam_mistakes(prefix: torch.Tensor, log_probs: torch.Tensor, k: int
                   ) -> list[tuple[tuple[torch.Tensor, torch.Tensor], str]]:
    """The (rows, tokens) each known wrong step picks, with its explanation."""
    no_prefix = _step(prefix, log_probs, k, totals=log_probs)
    worst = _step(prefix, log_probs, k, totals=-(prefix[:, None] + log_probs))
    return [
        ((no_prefix[0], no_prefix[1]),
         "你忘了加前缀的分数：排序要按总分（前缀 + 这一步的 log p），否则一条很差的束会凭一个好词挤进来。"),
        ((torch.arange(k), log_probs.argmax(dim=-1)),
         "你让每条束各自取了最好的词（按束取 top-k）；束搜索要在全部 k × V 个延续里一起选最好的 k 个，"
         "一条好束可以留下好几个延续，一条差束可以一个也不留。"),
        ((worst[0], worst[1]), "你选的是总分最低的 k 个：log p 越大（越接近 0）越好，topk 默认取最大的。"),
    ]


def _loss_inputs(seed: int | None) -> tuple[torch.Tensor, torch.Tensor, int, float]:
    """``(logits (N, V), targets (N,), pad_id, epsilon)``; two or more targets are padding."""
    g = check_generator(seed, _SEED)
    rng = check_random(_SEED if seed is None else seed)
    n, vocab, epsilon = (8, 6, 0.1) if seed is None else (rng.randint(6, 10), rng.randint(5, 9), rng.choice((0.1, 0.2, 0.3)))
    pad_id = 0
    logits = torch.randn(n, vocab, generator=g) * 2
    targets = torch.randint(1, vocab, (n,), generator=g)
    targets[-2:] = pad_id
    logits[-2:, pad_id] -= 4.0  # what the model says at padding must not count; make it count a lot if it does
    return logits, targets, pad_id, epsilon


def _loss_mistakes(logits: torch.Tensor, targets: torch.Tensor, pad_id: int, epsilon: float) -> list[KnownMistake]:
    log_p = F.log_softmax(logits.double(), dim=-1)
    vocab = log_p.shape[1]
    nll = -log_p.gather(1, targets[:, None])[:, 0]
    total = -log_p.sum(dim=1)
    real = targets != pad_id
    every_v_minus_1 = (1 - epsilon) * nll + epsilon / (vocab - 1) * (total - nll)
    others_only = (1 - epsilon) * nll + epsilon / vocab * (total - nll)
    right = (1 - epsilon) * nll + epsilon / vocab * total
    return [
        KnownMistake(every_v_minus_1[real].mean(),
                     "你把 ε 分给了真实类以外的 V−1 个类；本课（与 PyTorch 的 label_smoothing）把 ε 均匀分给全部 V 个类，"
                     "真实类也分到 ε/V。"),
        KnownMistake(others_only[real].mean(),
                     "真实类的目标概率应是 1 − ε + ε/V：ε/V 也要分给真实类，你只分给了其他类。"),
        KnownMistake(right.mean(), "填充位置也算进了平均：只对目标不是 pad_id 的位置取平均。"),
        KnownMistake(nll[real].mean(), "这是不做标签平滑的交叉熵：ε 没有用上。"),
        KnownMistake(right[real].sum(), "你求的是和，不是平均：除以真实（非填充）位置的个数。"),
        KnownMistake(nll.mean(), "这是不做标签平滑、且把填充也算进去的交叉熵。"),
    ]


def check_smoothed_loss(fn: Callable[[torch.Tensor, torch.Tensor, int, float], Any], *, seed: int | None = None) -> None:
    """Exercise 12-3: ``fn(logits (N, V), targets (N,), pad_id, epsilon)`` → the mean over non-padding targets
    of ``(1 − ε)(−log p_y) + ε · mean_c(−log p_c)``, a number (a 0-d tensor, float or NumPy float)."""
    exercise = "练习 12-3 标签平滑的交叉熵"
    logits, targets, pad_id, epsilon = _loss_inputs(seed)
    got = call_learner(exercise, fn, logits.clone(), targets.clone(), pad_id, epsilon)
    if isinstance(got, torch.Tensor) and got.numel() == 1:
        got = got.reshape(())
    expected = smoothed_cross_entropy(logits[None], targets[None], pad_id, epsilon).double()
    compare_tensor(exercise, got, expected, atol=1e-5, mistakes=_loss_mistakes(logits, targets, pad_id, epsilon),
                   what="损失", steps="log_softmax、真实类的 −log p、全部 V 个类的 −log p 的平均、按 1 − ε 与 ε 相加、只在非填充位置取平均")
    passed(exercise)


FLOOR_VOCAB = 8
"""Exercise 12-4's vocabulary size."""
FLOOR_EPSILON = 0.1
"""Exercise 12-4's smoothing."""


def smoothed_loss_floor(vocab: int = FLOOR_VOCAB, epsilon: float = FLOOR_EPSILON, steps: int = 300) -> tuple[float, float]:
    """Measured: the smallest label-smoothed loss free logits reach for one target, by gradient descent.

    Returns ``(loss, probability of the target)`` after ``steps`` Adam steps from zero logits.
    """
    logits = torch.zeros(1, 1, vocab, dtype=torch.float64, requires_grad=True)
    target = torch.tensor([[1]])
    optimiser = torch.optim.Adam([logits], lr=0.1)
    for _ in range(steps):
        loss = smoothed_cross_entropy(logits, target, pad_id=0, smoothing=epsilon)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    with torch.no_grad():
        final = float(smoothed_cross_entropy(logits, target, pad_id=0, smoothing=epsilon))
        probability = float(torch.softmax(logits[0, 0].float(), dim=-1)[1])
    return final, probability


def check_smoothing_floor(fn: Callable[[], float], *, seed: int | None = None) -> None:
    """Exercise 12-4: ``fn()`` predicts the smallest label-smoothed loss (``V = 8``, ``ε = 0.1``) a model can reach
    on one target; the checker measures it by training free logits.

    ``seed`` (the grader's) is accepted and unused: a prediction has no inputs to redraw.
    """
    exercise = "练习 12-4 标签平滑下损失的下限"
    got = call_learner(exercise, fn)
    if isinstance(got, torch.Tensor) and got.numel() == 1:
        got = float(got)
    if isinstance(got, numbers.Real) and not isinstance(got, bool):
        got = float(got)
    measured, probability = smoothed_loss_floor()
    compare_number(exercise, got, measured, rel_tol=0.02, what="损失的下限",
                   too_low="损失不会降到 0：目标分布不再是 one-hot，模型给出的分布最多与它相同，两者的交叉熵就是目标分布的熵。",
                   too_high="最好的模型恰好输出平滑后的目标分布：真实类 1 − ε + ε/V，其余每类 ε/V；算这个分布的熵。")
    smoothed = 1 - FLOOR_EPSILON + FLOOR_EPSILON / FLOOR_VOCAB
    passed(exercise, f"对自由的 logits 做 300 步梯度下降，损失停在 {measured:.4f}，此时真实类的概率是 {probability:.4f}"
                     f"（平滑后的目标 1 − ε + ε/V = {smoothed:.4f}）。损失的下限是目标分布的熵 "
                     f"{-(smoothed * math.log(smoothed) + (FLOOR_VOCAB - 1) * FLOOR_EPSILON / FLOOR_VOCAB * math.log(FLOOR_EPSILON / FLOOR_VOCAB)):.4f}："
                     "标签平滑让模型不再把真实类推向概率 1。")
