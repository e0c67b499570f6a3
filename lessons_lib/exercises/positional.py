"""Checkers for the sinusoidal positional-encoding exercises (the table, the shift matrix)."""

from __future__ import annotations

from typing import Callable

import torch

from lessons_lib.exercises import KnownMistake, call_learner, check_random, compare_number, compare_tensor, passed
from lessons_lib.transformer.positional import angular_frequencies, shift_matrix, sinusoidal_encoding


def _even_width(rng) -> int:
    return 2 * rng.randint(2, 8)


def check_sinusoidal_table(fn: Callable[[int, int], torch.Tensor], *, seed: int | None = None) -> None:
    """Exercise 04-1: ``fn(max_len, d_model)`` → the ``(max_len, d_model)`` table, sines in even columns."""
    exercise = "练习 04-1 正弦位置编码表"
    if seed is None:
        max_len, d_model = 20, 8
    else:
        rng = check_random(seed)
        max_len, d_model = rng.randint(5, 40), _even_width(rng)
    got = call_learner(exercise, fn, max_len, d_model)
    expected = sinusoidal_encoding(max_len, d_model)
    angles = torch.arange(max_len, dtype=torch.float64)[:, None] * angular_frequencies(d_model)[None, :]
    swapped = torch.empty(max_len, d_model, dtype=torch.float64)
    swapped[:, 0::2], swapped[:, 1::2] = torch.cos(angles), torch.sin(angles)
    wrong_exponent = torch.arange(max_len, dtype=torch.float64)[:, None] * 10000 ** (
        -torch.arange(0, d_model, 2, dtype=torch.float64) / (d_model // 2))[None, :]
    halves = torch.cat([torch.sin(angles), torch.cos(angles)], dim=1)
    compare_tensor(
        exercise, got, expected, atol=1e-5,
        mistakes=[
            KnownMistake(swapped, "sin 与 cos 放反了：偶数维 (0, 2, 4, …) 是 sin，奇数维是 cos。"),
            KnownMistake(halves, "你把所有 sin 放在前一半、所有 cos 放在后一半；本课程（与 Transformer 论文一致）是交错排列：2i 放 sin，2i+1 放 cos。"),
            KnownMistake(torch.stack([torch.sin(wrong_exponent), torch.cos(wrong_exponent)], -1).flatten(1),
                         "频率的指数不对：ω_i = 10000^(-2i/D)，分母是 D（d_model），不是 D/2。"),
        ],
        what="位置编码表",
    )
    passed(exercise)


def check_shift_matrix(fn: Callable[[int, int], torch.Tensor], *, seed: int | None = None) -> None:
    """Exercise 04-2: ``fn(k, d_model)`` → ``M_k`` with ``PE[t + k] = M_k @ PE[t]``."""
    exercise = "练习 04-2 平移矩阵 M_k"
    if seed is None:
        offset, d_model = 3, 8
    else:
        rng = check_random(seed)
        offset, d_model = rng.randint(1, 12), _even_width(rng)
    got = call_learner(exercise, fn, offset, d_model)
    expected = shift_matrix(offset, d_model)
    compare_tensor(
        exercise, got, expected, atol=1e-5,
        mistakes=[KnownMistake(expected.T, "你的矩阵是 M_k 的转置，也就是 M_{-k}：它把位置往回移了 k 步。"
                                            "检查 2×2 块中 sin 的符号：sin 的新值 = sin·cos(kω) + cos·sin(kω)。")],
        what="平移矩阵",
    )
    passed(exercise)


def default_init_ratio(d_model: int, vocab_size: int = 2000, seed: int = 2028) -> float:
    """Mean ``|√D · token| / |PE|`` for a ``torch.nn.Embedding`` left at PyTorch's default N(0, 1) initialisation."""
    torch.manual_seed(seed)
    token = torch.nn.Embedding(vocab_size, d_model).weight.detach()
    pe_norm = float(sinusoidal_encoding(512, d_model).norm(dim=1).mean())
    return float((token * d_model ** 0.5).norm(dim=1).mean()) / pe_norm


def check_default_init_ratio(fn: Callable[[], float], *, seed: int | None = None) -> None:
    """Exercise 04-3: ``fn()`` predicts ``|√D·token| / |PE|`` at D = 1024 when the embedding keeps PyTorch's N(0, 1) init.

    ``seed`` (the grader's) is accepted and unused: a prediction has no inputs to redraw.
    """
    exercise = "练习 04-3 默认初始化、D = 1024 时字与位置的比例"
    got = call_learner(exercise, fn)
    measured = default_init_ratio(1024)
    compare_number(exercise, got, measured, rel_tol=0.1, what="比值 |√D·字向量| / |PE|",
                   too_low="N(0, 1) 的 D 维向量范数约为 √D，乘以 √D 之后是多少？位置向量的范数是 √(D/2)。",
                   too_high="位置向量的范数是 √(D/2)，不是 1；两者相除再化简。")
    passed(exercise, f"实测 {measured:.1f}：字向量范数 ≈ √D，乘 √D 后 ≈ D，除以 |PE| = √(D/2) 得 √(2D) ≈ {(2 * 1024) ** 0.5:.1f}。"
                     "√D 缩放只在嵌入按标准差 1/√D 初始化时才让两者同量级。")
