"""Checkers for the encoder–decoder attention exercises (bilinear and additive scores, the
parameter count of both, and the width at which an unscaled dot score saturates).

The learner gets raw weight matrices, not modules, so that the formula itself is what is
written (``seed``: fresh ones of the same shapes); the checkers compare with :mod:`lessons_lib.attention.functional`'s score modules loaded
with the same weights.
"""

from __future__ import annotations

import numbers
from typing import Callable

import torch

from lessons_lib.attention.functional import AdditiveScore, BilinearScore
from lessons_lib.exercises import ExerciseCheckError, KnownMistake, call_learner, check_generator, compare_tensor, passed

_SEED = 2025
_B, _S, _D_DEC, _D_ENC, _D_HID = 2, 5, 6, 4, 3


def _query_and_keys(seed: int | None) -> tuple[torch.Tensor, torch.Tensor, torch.Generator]:
    g = check_generator(seed, _SEED)
    query = torch.randn(_B, _D_DEC, generator=g)
    keys = torch.randn(_B, _S, _D_ENC, generator=g)
    return query, keys, g


def check_bilinear_scores(fn: Callable[..., torch.Tensor], *, seed: int | None = None) -> None:
    """Exercise 02-1: ``fn(query (B, d_dec), keys (B, S, d_enc), W (d_dec, d_enc))`` → scores ``(B, S)``."""
    exercise = "练习 02-1 双线性打分"
    query, keys, g = _query_and_keys(seed)
    weight = torch.randn(_D_DEC, _D_ENC, generator=g)
    got = call_learner(exercise, fn, query.clone(), keys.clone(), weight.clone())
    score = BilinearScore(_D_DEC, _D_ENC)
    with torch.no_grad():
        score.key_to_query.weight.copy_(weight)
        expected = score(query[:, None, :], keys)[:, 0]
    compare_tensor(
        exercise, got, expected,
        mistakes=[
            KnownMistake(torch.softmax(expected, dim=-1),
                         "你返回的是 softmax 之后的权重 (weights)；这个函数只要打分 (scores)，归一化是下一步。"),
            KnownMistake(expected / _D_ENC ** 0.5,
                         "你除以了 √d：Luong 的 general 打分不做缩放（本练习要求不缩放）。"),
        ],
        what="分数 (scores)",
    )
    passed(exercise)


def check_additive_scores(fn: Callable[..., torch.Tensor], *, seed: int | None = None) -> None:
    """Exercise 02-2: ``fn(query, keys, W_q (h, d_dec), W_k (h, d_enc), v (h,))`` → ``vᵀ tanh(W_q q + W_k k)``, ``(B, S)``."""
    exercise = "练习 02-2 加性打分"
    query, keys, g = _query_and_keys(seed)
    w_q = torch.randn(_D_HID, _D_DEC, generator=g)
    w_k = torch.randn(_D_HID, _D_ENC, generator=g)
    v = torch.randn(_D_HID, generator=g)
    got = call_learner(exercise, fn, query.clone(), keys.clone(), w_q.clone(), w_k.clone(), v.clone())
    score = AdditiveScore(_D_DEC, _D_ENC, _D_HID)
    with torch.no_grad():
        score.query_proj.weight.copy_(w_q)
        score.key_proj.weight.copy_(w_k)
        score.key_proj.bias.zero_()
        score.v.weight.copy_(v[None, :])
        expected = score(query[:, None, :], keys)[:, 0]
    inner = (query @ w_q.T)[:, None, :] + keys @ w_k.T  # (B, S, h)
    compare_tensor(
        exercise, got, expected,
        mistakes=[
            KnownMistake(inner @ v, "你漏掉了 tanh：没有非线性，加性打分就退化成 q 与 k 两个线性函数之和，"
                                     "对同一个查询，各个键的排序与查询无关。"),
            KnownMistake(torch.softmax(expected, dim=-1), "你返回的是 softmax 之后的权重；这里只要打分。"),
            KnownMistake(torch.tanh(inner).sum(-1), "你把隐藏层直接求和了，忘了乘以向量 v（vᵀ tanh(...)）。"),
        ],
        what="分数 (scores)",
    )
    passed(exercise)


def check_score_parameter_counts(fn: Callable[[], dict], *, seed: int | None = None) -> None:
    """Exercise 02-3: ``fn()`` → ``{"bilinear": n, "additive": m}`` learnable numbers for d_dec=96, d_enc=128, d_attn=64.

    ``seed`` (the grader's) is accepted and unused: a prediction has no inputs to redraw.
    """
    exercise = "练习 02-3 打分函数的参数个数"
    d_dec, d_enc, d_attn = 96, 128, 64
    got = call_learner(exercise, fn)
    if not isinstance(got, dict) or set(got) != {"bilinear", "additive"}:
        raise ExerciseCheckError(f"{exercise}: 请返回 {{\"bilinear\": 整数, \"additive\": 整数}}，你返回的是 {got!r}")
    counts = {"bilinear": sum(p.numel() for p in BilinearScore(d_dec, d_enc).parameters()),
              "additive": sum(p.numel() for p in AdditiveScore(d_dec, d_enc, d_attn).parameters())}
    hints = {
        "bilinear": {d_dec * d_enc + d_dec: "双线性打分 s^T W h 里只有 W，库的实现没有偏置项。",
                     d_dec + d_enc: "W 是一个矩阵 (d_dec × d_enc)，不是两个向量。"},
        "additive": {d_attn * (d_dec + d_enc): "少了一样东西：除了 W_q、W_k，还有把 d_attn 维压成一个数的向量 v，"
                                               "以及 W_k 那一层的偏置。",
                     d_attn * (d_dec + d_enc) + d_attn: "算上 v 之后还差一项：键的投影 W_k h + b 带一个偏置。",
                     d_attn * (d_dec + d_enc + 3): "偏置只在键的投影上有一份（查询的投影没有），不是两份。"},
    }
    for name, expected in counts.items():
        value = got[name]
        if value != expected:
            hint = hints[name].get(value, "逐项写出每个投影矩阵的形状（输出宽 × 输入宽），再加上偏置与向量 v。")
            raise ExerciseCheckError(f"{exercise}: {name} 的参数个数不对（你的是 {value!r}）。{hint}")
    passed(exercise, f"双线性 = d_dec·d_enc = {counts['bilinear']}；加性 = d_attn·d_dec + d_attn·d_enc + d_attn（偏置）"
                     f" + d_attn（v）= {counts['additive']}。加性打分的参数随 d_attn 变化，双线性则固定为两边宽度之积。")


SATURATION_WIDTHS = tuple(2 ** k for k in range(11))
"""The widths ``d`` of exercise 02-4: 1, 2, 4, …, 1024."""
SATURATION_THRESHOLD = 0.7
"""Exercise 02-4 asks from which width the mean largest weight reaches this value."""
NEIGHBOUR_MARGIN = 0.02
"""Exercise 02-4 also accepts a neighbouring width when the mean at the boundary is this close to the
threshold: the largest weight's spread is about 0.2 per draw, so a learner's mean over 1,000 draws has
a standard error of about 0.0065, and 0.02 is three of them."""
_SATURATION_KEYS = 10


def mean_largest_weight(width: int, *, scaled: bool = False, n_draws: int = 4000, seed: int = _SEED) -> float:
    """Mean largest attention weight of a dot-product score between a query and 10 keys.

    Every entry of the query ``(d,)`` and of the keys ``(10, d)`` is drawn independently and
    uniformly from (−1, 1), as a GRU state's entries lie in (−1, 1); ``scaled`` divides the
    scores by √d. Averaged over ``n_draws`` draws.
    """
    g = torch.Generator().manual_seed(seed)
    query = torch.rand(n_draws, 1, width, generator=g) * 2 - 1
    keys = torch.rand(n_draws, _SATURATION_KEYS, width, generator=g) * 2 - 1
    scores = (query * keys).sum(-1)                                  # (n_draws, 10)
    if scaled:
        scores = scores / width ** 0.5
    return float(torch.softmax(scores, dim=-1).max(-1).values.mean())


def saturation_width(*, seed: int = _SEED) -> int:
    """The smallest width of :data:`SATURATION_WIDTHS` whose unscaled mean largest weight reaches the threshold."""
    return next(d for d in SATURATION_WIDTHS if mean_largest_weight(d, seed=seed) >= SATURATION_THRESHOLD)


def check_unscaled_saturation_width(fn: Callable[[], int], *, seed: int | None = None) -> None:
    """Exercise 02-4: ``fn()`` → the width ``d`` the learner measured (one of :data:`SATURATION_WIDTHS`).

    The checker measures it again on draws of its own (``seed``: the grader's) and accepts the
    measured width; a neighbouring width (a factor of 2) only when the checker's mean at the
    boundary lies within :data:`NEIGHBOUR_MARGIN` of the threshold, so that a learner's sample
    could land on the other side of it. Any integer type (``numpy.int64`` too) is accepted.
    """
    exercise = "练习 02-4 不缩放的点积从多宽开始饱和"
    got = call_learner(exercise, fn)
    if isinstance(got, bool) or not isinstance(got, numbers.Integral) or int(got) not in SATURATION_WIDTHS:
        raise ExerciseCheckError(f"{exercise}: 请返回 1, 2, 4, …, 1024 中的一个整数宽度 d，你返回的是 {got!r}")
    got = int(got)
    seed = _SEED if seed is None else seed
    measured = saturation_width(seed=seed)
    below, reached = measured // 2, mean_largest_weight(measured, seed=seed)
    near = {below: mean_largest_weight(below, seed=seed) >= SATURATION_THRESHOLD - NEIGHBOUR_MARGIN,
            measured * 2: reached < SATURATION_THRESHOLD + NEIGHBOUR_MARGIN}
    if got * 8 == measured or got * 16 == measured:
        raise ExerciseCheckError(f"{exercise}: 宽度 {got} 偏小很多。查询与键的分量应当均匀分布在 (−1, 1)（方差 1/3），"
                                 "不是标准正态分布（方差 1）：分量越大，分数的方差越大，饱和来得越早。")
    if got < measured and not near.get(got, False):
        raise ExerciseCheckError(f"{exercise}: 宽度 {got} 偏小：在这个宽度，最大权重的平均值还没有达到 "
                                 f"{SATURATION_THRESHOLD}（差得比抽样误差大）。是否每种宽度只抽了很少几次，"
                                 "或者用了“最大值的最大值”而不是平均？多抽一些再取平均。")
    if got > measured and not near.get(got, False):
        raise ExerciseCheckError(f"{exercise}: 宽度 {got} 偏大：更窄的宽度就已经达到 {SATURATION_THRESHOLD} 了。"
                                 "分数是否除以了 √d？题目问的是不缩放的点积（Luong 的 dot）。")
    unscaled, scaled = mean_largest_weight(measured), mean_largest_weight(measured, scaled=True)
    widest = SATURATION_WIDTHS[-1]
    passed(exercise, f"实测从 d = {measured} 起，不缩放的点积注意力的最大权重平均达到 {unscaled:.2f}；"
                     f"同样的状态除以 √d 后只有 {scaled:.2f}，到 d = {widest} 也只有 "
                     f"{mean_largest_weight(widest, scaled=True):.2f}。分数的方差随 d 线性增长（每个分量乘积的方差是 1/9），"
                     "不缩放时越宽越接近 one-hot；缩放把方差固定在 1/9，宽度就不再起作用。")
