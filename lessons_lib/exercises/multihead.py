"""Checkers for the multi-head attention exercises (splitting heads, torch's padding mask)."""

from __future__ import annotations

from typing import Callable

import torch

from lessons_lib.exercises import ExerciseCheckError, KnownMistake, call_learner, compare_tensor, passed
from lessons_lib.attention.multihead import split_heads

_SEED = 2026


def check_split_heads(fn: Callable[[torch.Tensor, int], torch.Tensor]) -> None:
    """Exercise 03-1: ``fn(x (B, L, D), n_heads)`` → ``(B, H, L, D / H)``, head ``h`` = features ``h·d … (h+1)·d - 1``."""
    exercise = "练习 03-1 拆分多头"
    g = torch.Generator().manual_seed(_SEED)
    x = torch.randn(2, 5, 12, generator=g)
    got = call_learner(exercise, fn, x.clone(), 3)
    compare_tensor(
        exercise, got, split_heads(x, 3),
        mistakes=[
            KnownMistake(x.reshape(2, 3, 5, 4),
                         "形状对了，但你直接 reshape 成了 (B, H, L, d)：这样一个“头”里混进了不同位置的特征。"
                         "应先 reshape 成 (B, L, H, d)，再交换 L 与 H 两维 (transpose(1, 2))。"),
            KnownMistake(x.reshape(2, 5, 4, 3).permute(0, 3, 1, 2),
                         "你把特征按 (d, H) 而不是 (H, d) 的顺序拆开了：第 h 个头应当是连续的一段特征 h·d … (h+1)·d-1，"
                         "你的头取的是间隔为 H 的特征。"),
        ],
        what="拆分后的张量",
    )
    passed(exercise)


def check_key_padding_mask(fn: Callable[[torch.Tensor], torch.Tensor]) -> None:
    """Exercise 03-2: ``fn(attention_mask (B, L) 0/1 int)`` → torch's ``key_padding_mask`` (bool, True = ignore)."""
    exercise = "练习 03-2 转换为 PyTorch 的 key_padding_mask"
    attention_mask = torch.tensor([[1, 1, 1, 1, 0, 0], [1, 1, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1]])
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
