"""Checkers for the dot-product attention exercises (scores, masked softmax, attention).

Each checker calls the learner's function on fixed, seeded inputs (or, with ``seed``, on
fresh ones of the same shapes) and compares the result with
:mod:`lessons_lib.attention.functional` on the same inputs; known mistakes get their own
explanation.
"""

from __future__ import annotations

import math
from typing import Callable

import torch

from lessons_lib.attention.functional import attention_scores, masked_softmax, scaled_dot_product_attention
from lessons_lib.exercises import (KnownMistake, call_learner, check_generator, compare_number, compare_tensor,
                                   global_numbers_read, passed)

_SEED = 2024


def _inputs(d_k: int = 16, seed: int | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Check inputs: q (2, 3, d_k), k (2, 5, d_k), v (2, 5, 4), mask (2, 3, 5); the lesson's, or drawn from ``seed``.

    The second batch item's last query row is fully masked, to exercise that case.
    """
    g = check_generator(seed, _SEED)
    q = torch.randn(2, 3, d_k, generator=g) * 2
    k = torch.randn(2, 5, d_k, generator=g) * 2
    v = torch.randn(2, 5, 4, generator=g)
    mask = torch.ones(2, 3, 5, dtype=torch.bool)
    mask[0, :, 3:] = False
    mask[1, :, 4:] = False
    mask[1, 2, :] = False
    return q, k, v, mask


def check_scaled_scores(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor], *, seed: int | None = None) -> None:
    """Exercise 01-1: ``fn(q, k)`` returns ``q kᵀ / √d_k`` of shape ``(B, L_q, L_k)``."""
    exercise = "练习 01-1 缩放点积分数"
    q, k, _, _ = _inputs(seed=seed)
    got = call_learner(exercise, fn, q.clone(), k.clone())
    d_k = q.shape[-1]
    raw = q @ k.transpose(-2, -1)
    mistakes = [KnownMistake(raw, "你的分数没有除以 √d_k：这正是本课测量的方差随 d_k 增长的问题。")]
    # A global d_k of the notebook (a loop leaves 256 behind) read inside the function: name it,
    # before "divided by d_k" can match a learner who wrote math.sqrt(d_k).
    for name, value in global_numbers_read(fn).items():
        if value > 0:
            mistakes.append(KnownMistake(
                raw / math.sqrt(value),
                f"你的函数用的是笔记本里的全局变量 {name}（现在是 {value:g}），而不是这次输入的维度 {d_k}："
                "在函数里从输入取它，d_k = q.shape[-1]。"))
    mistakes += [
        KnownMistake(raw / d_k, "你除以的是 d_k，而不是 √d_k（math.sqrt(d_k)）。"),
        KnownMistake(raw * math.sqrt(d_k), "你乘以了 √d_k，应该是除以。"),
    ]
    compare_tensor(exercise, got, attention_scores(q, k), mistakes=mistakes, what="分数矩阵 (scores)",
                   steps="q 与 k 的转置相乘（k.transpose(-2, -1)）、除以 √d_k")
    passed(exercise)


def check_masked_softmax(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor], *, seed: int | None = None) -> None:
    """Exercise 01-2: ``fn(scores, mask)`` gives masked keys zero weight and fully masked rows all zeros."""
    exercise = "练习 01-2 带遮蔽的 softmax"
    q, k, _, mask = _inputs(seed=seed)
    scores = attention_scores(q, k)
    got = call_learner(exercise, fn, scores.clone(), mask.clone())
    large_negative = torch.softmax(scores.masked_fill(~mask, -1e9), dim=-1)
    compare_tensor(
        exercise, got, masked_softmax(scores, mask),
        mistakes=[
            KnownMistake(large_negative,
                         "被遮蔽的位置处理对了，但整行都被遮蔽的那一行得到了均匀分布 1/L_k："
                         "用 -1e9 之类的大负数时会这样，注意力悄悄落在了填充 (padding) 上。让这样的行权重全为 0。"),
            KnownMistake(masked_softmax(scores, ~mask),
                         "遮蔽方向反了 (inverted mask)：True 表示“可以关注”，你把 True 的位置遮掉了。"),
            KnownMistake(torch.softmax(scores, dim=-1),
                         "你的结果完全没有使用 mask：被遮蔽的键也得到了权重。"),
            KnownMistake(torch.nan_to_num(torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-2)),
                         "softmax 的维度 (dim) 不对：应当在最后一维（键，L_k）上归一化，而不是在查询维上。"),
        ],
        what="注意力权重 (weights)",
        steps="遮蔽 (mask) 的方向、整行被遮蔽时的 0、softmax 所在的维度 (dim)",
    )
    passed(exercise)


def check_attention(fn: Callable[..., torch.Tensor], *, seed: int | None = None) -> None:
    """Exercise 01-3: ``fn(q, k, v, mask)`` returns the attention output ``(B, L_q, d_v)``."""
    exercise = "练习 01-3 完整的缩放点积注意力"
    q, k, v, mask = _inputs(seed=seed)
    got = call_learner(exercise, fn, q.clone(), k.clone(), v.clone(), mask.clone())
    expected, _ = scaled_dot_product_attention(q, k, v, mask)
    unscaled, _ = scaled_dot_product_attention(q, k, v, mask, scale=False)
    scores = attention_scores(q, k)
    wrong_axis = torch.nan_to_num(torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-2)) @ v
    compare_tensor(
        exercise, got, expected,
        mistakes=[
            KnownMistake(unscaled, "缺少 √d_k 缩放 (scaling)：分数过大，softmax 饱和。"),
            KnownMistake(torch.softmax(scores, dim=-1) @ v,
                         "你的函数没有使用 mask：被遮蔽的键（填充 padding）也参与了加权。先用 mask 遮蔽分数，再做 softmax。"),
            KnownMistake(scaled_dot_product_attention(q, k, v, ~mask)[0],
                         "遮蔽方向反了 (inverted mask)：True 表示“可以关注”，你把 True 的位置遮掉了。"),
            KnownMistake(torch.softmax(scores.masked_fill(~mask, -1e9), dim=-1) @ v,
                         "遮蔽处理对了，但整行都被遮蔽的查询得到了填充位置的平均值：用 -1e9 之类的大负数时会这样。"
                         "让这样的行权重全为 0（输出也为 0）。"),
            KnownMistake(wrong_axis, "softmax 的维度 (dim) 不对：每个查询在所有键上的权重之和应为 1（dim=-1）。"),
        ],
        what="注意力输出 (output)",
    )
    passed(exercise)



def measured_max_weight(d_k: int, n_keys: int = 10, n_queries: int = 400, scale: bool = True) -> float:
    """Mean largest softmax weight of ``q·k/√d_k`` (or unscaled) for standard normal q, k: the checker's measurement."""
    g = torch.Generator().manual_seed(_SEED)
    q = torch.randn(n_queries, 1, d_k, generator=g)
    k = torch.randn(n_queries, n_keys, d_k, generator=g)
    scores = (q * k).sum(-1) / (math.sqrt(d_k) if scale else 1.0)
    return float(torch.softmax(scores, dim=-1).max(-1).values.mean())


def check_scaled_max_weight(fn: Callable[[], float], *, seed: int | None = None) -> None:
    """Exercise 01-4: ``fn()`` predicts the mean largest weight of *scaled* attention at d_k = 4096, 10 keys.

    ``seed`` (the grader's) is accepted and unused: a prediction has no inputs to redraw.
    """
    exercise = "练习 01-4 预测 d_k = 4096 时的最大权重"
    got = call_learner(exercise, fn)
    measured = measured_max_weight(4096)
    compare_number(exercise, got, measured, rel_tol=0.1, what="最大权重的平均值",
                   too_low="10 个键的均匀分布最大权重是 0.1；缩放后的分数方差为 1，分布并不均匀。",
                   too_high="缩放之后分数的方差还随 d_k 增长吗？如果不增长，softmax 为什么会比 d_k = 4 时更尖？")
    unscaled = measured_max_weight(4096, scale=False)
    passed(exercise, f"实测 {measured:.3f}（不缩放则为 {unscaled:.3f}）。除以 √d_k 之后分数的方差是 1，与 d_k 无关，"
                     "所以缩放后的 softmax 统计量在任何 d_k 下都一样——这正是缩放的目的。")
