"""Checkers for the syntax-biased attention exercises (bucket lookup, hard mask).

The check inputs use the default bucket scheme of :mod:`lessons_lib.syntax.buckets`:
0 same word, 1–10 tree distances, 11 different sentences, 12 special tokens, -1 padding.
"""

from __future__ import annotations

from typing import Callable, Sequence

import torch

from lessons_lib.exercises import KnownMistake, call_learner, check_generator, check_random, compare_tensor, passed
from lessons_lib.syntax.buckets import CROSS_SENTENCE_BUCKET, DEFAULT_SCHEME, NUM_BUCKETS, PAD_BUCKET, SPECIAL_BUCKET
from lessons_lib.syntax_bias.registry import HardMaskOptions
from lessons_lib.syntax_bias.variants import HardMaskBias, lookup_bias

_SEED = 808  # seeds the check tables


def _lengths(seed: int | None) -> Sequence[tuple[int, int]]:
    """Sentence lengths of the two check pairs: the lesson's, or drawn from ``seed`` (each pair then padded)."""
    if seed is None:
        return ((4, 3), (3, 2))
    rng = check_random(seed)
    out = []
    for _ in range(2):
        len_a = rng.randint(1, 5)
        out.append((len_a, rng.randint(1, 6 - len_a)))  # at most 9 positions: padding in every row
    return out


def _buckets(seed: int | None = None) -> torch.Tensor:
    """``(2, 10, 10)`` bucket ids of two pairs ``[CLS] a [SEP] b [SEP]``, padded to 10 positions.

    Every character is its own word and each sentence is a chain, so the tree distance of
    two characters of a sentence is how far apart they are.
    """
    out = torch.full((2, 10, 10), PAD_BUCKET, dtype=torch.long)
    for row, (len_a, len_b) in enumerate(_lengths(seed)):
        part = [-1] + [0] * len_a + [-1] + [1] * len_b + [-1]
        n = len(part)
        for i in range(n):
            for j in range(n):
                if part[i] < 0 or part[j] < 0:
                    out[row, i, j] = SPECIAL_BUCKET
                elif part[i] != part[j]:
                    out[row, i, j] = CROSS_SENTENCE_BUCKET
                else:
                    out[row, i, j] = abs(i - j)
    return out


def _table(rows: int, seed: int | None = None) -> torch.Tensor:
    g = check_generator(None if seed is None else seed + rows, _SEED + rows)
    return torch.randn(rows, NUM_BUCKETS, generator=g)


def _hard_mask(buckets: torch.Tensor, radius: int) -> torch.Tensor:
    return HardMaskBias(DEFAULT_SCHEME, options=HardMaskOptions(hard_max_distance=radius))(buckets)[0]


def check_bucket_bias(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor], *, seed: int | None = None) -> None:
    """Exercise 08-1: ``fn(table (h, n_buckets), buckets (B, L, L))`` → bias ``(B, h, L, L)``, 0 at padding."""
    exercise = "练习 08-1 查表得到句法偏置"
    buckets = _buckets(seed)
    for rows in (1, 4):
        table = _table(rows, seed)
        got = call_learner(exercise, fn, table.clone(), buckets.clone())
        wrapped = table[:, buckets].transpose(0, 1)  # padding (-1) reads the last bucket
        minus_inf_pad = lookup_bias(table, buckets).masked_fill((buckets < 0)[:, None], float("-inf"))
        compare_tensor(
            exercise, got, lookup_bias(table, buckets),
            mistakes=[
                KnownMistake(wrapped, "填充位置 (padding, 桶号 -1) 的偏置不是 0：在 PyTorch 里 table[..., -1] "
                                      "取到的是最后一个桶（“特殊符号”桶），不会报错。先把 -1 换成任意合法桶号再查表，"
                                      "然后把这些位置置为 0。"),
                KnownMistake(minus_inf_pad, "你把填充位置设成了 -inf。填充的键已经由 key mask 遮蔽；"
                                            "而填充的查询行如果整行都是 -inf，softmax 会得到 NaN。偏置在填充处应为 0。"),
            ],
            what=f"偏置 (bias)，table 有 {rows} 行",
        )
    passed(exercise)


def check_hard_mask(fn: Callable[[torch.Tensor, int], torch.Tensor], *, seed: int | None = None) -> None:
    """Exercise 08-2: ``fn(buckets (B, L, L), max_distance)`` → ``(B, 1, L, L)`` bias: -inf beyond the radius, else 0."""
    exercise = "练习 08-2 硬遮蔽 (hard mask)"
    buckets = _buckets(seed)
    radii = (1, 2) if seed is None else sorted(check_random(seed).sample(range(1, 6), 2))
    for radius in radii:
        got = call_learner(exercise, fn, buckets.clone(), radius)
        expected = _hard_mask(buckets, radius)
        far = (buckets > radius)[:, None]
        closes_all = torch.zeros_like(expected).masked_fill(far, float("-inf"))  # cross/special closed too
        closes_pad = expected.masked_fill((buckets < 0)[:, None], float("-inf"))
        off_by_one = _hard_mask(buckets, radius - 1)
        compare_tensor(
            exercise, got, expected,
            mistakes=[
                KnownMistake(closes_all, f"你把“跨句”({CROSS_SENTENCE_BUCKET}) 和“特殊符号”({SPECIAL_BUCKET}) 两个桶也遮住了：它们的桶号比距离大，"
                                         "但不是距离。跨句注意力被关掉，一个块就无法比较两个问句；[CLS] 也看不到句子。"),
                KnownMistake(closes_pad, "填充位置 (-1) 应为 0，不是 -inf：填充的查询行会整行 -inf，softmax 得到 NaN。"),
                KnownMistake(off_by_one, f"差一 (off-by-one)：距离恰好等于 max_distance={radius} 的词对应当保留。"),
            ],
            what=f"硬遮蔽偏置，max_distance={radius}",
        )
    passed(exercise)
