"""Checkers for the multi-head attention exercises (splitting heads, torch's padding mask)."""

from __future__ import annotations

from typing import Callable

import torch

from lessons_lib.exercises import (ExerciseCheckError, KnownMistake, call_learner, check_generator, check_random,
                                   compare_tensor, passed)
from lessons_lib.attention.multihead import split_heads

_SEED = 2026
_ATTENTION_MASK = ((1, 1, 1, 1, 0, 0), (1, 1, 0, 0, 0, 0), (1, 1, 1, 1, 1, 1))


def _split_case(seed: int | None) -> tuple[torch.Tensor, int]:
    """``(x (B, L, D), n_heads)``: the lesson's (2, 5, 12) with 3 heads, or fresh sizes drawn from ``seed``."""
    if seed is None:
        return torch.randn(2, 5, 12, generator=check_generator(None, _SEED)), 3
    rng = check_random(seed)
    batch, length, heads, width = rng.randint(1, 3), rng.randint(2, 6), rng.randint(2, 4), rng.randint(2, 4)
    return torch.randn(batch, length, heads * width, generator=check_generator(seed, _SEED)), heads


def check_split_heads(fn: Callable[[torch.Tensor, int], torch.Tensor], *, seed: int | None = None) -> None:
    """Exercise 03-1: ``fn(x (B, L, D), n_heads)`` → ``(B, H, L, D / H)``, head ``h`` = features ``h·d … (h+1)·d - 1``."""
    exercise = "练习 03-1 拆分多头"
    x, heads = _split_case(seed)
    batch, length, width = x.shape
    got = call_learner(exercise, fn, x.clone(), heads)
    compare_tensor(
        exercise, got, split_heads(x, heads),
        mistakes=[
            KnownMistake(x.reshape(batch, heads, length, width // heads),
                         "形状对了，但你直接 reshape 成了 (B, H, L, d)：这样一个“头”里混进了不同位置的特征。"
                         "应先 reshape 成 (B, L, H, d)，再交换 L 与 H 两维 (transpose(1, 2))。"),
            KnownMistake(x.reshape(batch, length, width // heads, heads).permute(0, 3, 1, 2),
                         "你把特征按 (d, H) 而不是 (H, d) 的顺序拆开了：第 h 个头应当是连续的一段特征 h·d … (h+1)·d-1，"
                         "你的头取的是间隔为 H 的特征。"),
        ],
        what="拆分后的张量",
    )
    passed(exercise)


def _attention_mask(seed: int | None) -> torch.Tensor:
    """A 0/1 ``(B, L)`` mask, ones first: the lesson's three rows, or rows of random lengths drawn from ``seed``."""
    if seed is None:
        return torch.tensor(_ATTENTION_MASK)
    rng = check_random(seed)
    length = rng.randint(3, 8)
    rows = [[1] * n + [0] * (length - n) for n in (rng.randint(1, length) for _ in range(rng.randint(2, 4)))]
    return torch.tensor(rows)


def check_key_padding_mask(fn: Callable[[torch.Tensor], torch.Tensor], *, seed: int | None = None) -> None:
    """Exercise 03-2: ``fn(attention_mask (B, L) 0/1 int)`` → torch's ``key_padding_mask`` (bool, True = ignore)."""
    exercise = "练习 03-2 转换为 PyTorch 的 key_padding_mask"
    attention_mask = _attention_mask(seed)
    got = call_learner(exercise, fn, attention_mask.clone())
    if not isinstance(got, torch.Tensor) or got.dtype != torch.bool:
        got_type = got.dtype if isinstance(got, torch.Tensor) else type(got).__name__
        raise ExerciseCheckError(
            f"{exercise}: key_padding_mask 应当是布尔张量 (torch.bool)，你的是 {got_type}。"
            "浮点型的 key_padding_mask 会被 PyTorch 当作加到分数上的偏置，而不是遮蔽。"
        )
    expected = attention_mask == 0
    compare_tensor(
        exercise, got, expected,
        mistakes=[KnownMistake(attention_mask == 1,
                               "方向反了：PyTorch 的 key_padding_mask 里 True 表示“忽略这个键”（填充），"
                               "而你把真实词标成了 True——模型会只看填充，不报任何错。")],
        what="key_padding_mask",
    )
    passed(exercise)
