"""Checkers for the multi-head attention exercises (splitting heads, torch's padding mask)."""

from __future__ import annotations

from typing import Callable

import torch
from torch import nn

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


NAN_CHECK_LENGTHS = (6, 4, 6, 3)   # the batch of exercise 03-3, padded to 6


def sentences_with_nan(lengths: tuple[int, ...] = NAN_CHECK_LENGTHS, d_model: int = 8, n_heads: int = 2) -> set[int]:
    """Which sentences of a padded batch come out NaN from torch's attention given the *wrong* mask (1 = real)."""
    g = torch.Generator().manual_seed(_SEED)
    width = max(lengths)
    attention_mask = (torch.arange(width)[None, :] < torch.tensor(lengths)[:, None]).long()
    torch.manual_seed(_SEED)
    mha = nn.MultiheadAttention(d_model, n_heads, batch_first=True).eval()
    x = torch.randn(len(lengths), width, d_model, generator=g)
    with torch.no_grad():
        out, _ = mha(x, x, x, key_padding_mask=attention_mask.bool())
    return {i for i in range(len(lengths)) if bool(torch.isnan(out[i]).any())}


def check_nan_prediction(fn: Callable[[], object], *, seed: int | None = None) -> None:
    """Exercise 03-3: ``fn()`` → the indices of the sentences (lengths 6, 4, 6, 3) that the wrong mask turns into NaN.

    ``seed`` (the grader's) is accepted and unused: a prediction has no inputs to redraw.
    """
    exercise = "练习 03-3 错误的 key_padding_mask 让哪几句变成 NaN"
    got = call_learner(exercise, fn)
    try:
        predicted = {int(i) for i in got}
    except (TypeError, ValueError) as error:
        raise ExerciseCheckError(f"{exercise}: 请返回句子下标的集合，如 {{0, 3}}；你返回的是 {got!r}") from error
    actual = sentences_with_nan()
    if predicted != actual:
        if predicted & {i for i, n in enumerate(NAN_CHECK_LENGTHS) if n < max(NAN_CHECK_LENGTHS)}:
            hint = "有填充的句子不会得到 NaN：错误的遮蔽让它们只看填充位置——还剩下可以关注的键，所以输出有限，错得静悄悄。"
        else:
            hint = "想一想：把 1 = 真实字直接当作 key_padding_mask（True = 忽略）时，哪一句会一个可以关注的键也不剩？"
        raise ExerciseCheckError(f"{exercise}: 预测不对。{hint}")
    passed(exercise, f"没有填充的句子（下标 {sorted(actual)}）所有键都被“忽略”，softmax 的分母为 0，得到 NaN；"
                     "其余句子只看填充，输出有限——那是不会报错的错误。")
