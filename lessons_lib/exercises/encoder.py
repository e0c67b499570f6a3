"""Checkers for the encoder-block exercises (a Pre-LN block, the embedding sum, the step that
saturates, and a Post-LN stack's gradients without the embedding LayerNorm)."""

from __future__ import annotations

import functools
import math
import numbers
from typing import Callable

import torch
from torch import nn

from lessons_lib.exercises import (ExerciseCheckError, KnownMistake, call_learner, check_generator, compare_choice,
                                   compare_tensor, passed)
from lessons_lib.transformer.config import EncoderConfig
from lessons_lib.transformer.encoder import Encoder, block_gradient_norms
from lessons_lib.transformer.positional import sinusoidal_encoding
from lessons_lib.transformer.reversal import reversal_batch

_SEED = 2027
_D = 8


def _sublayers(seed: int | None) -> tuple[nn.Module, nn.Module, nn.LayerNorm, nn.LayerNorm, torch.Tensor]:
    torch.manual_seed(_SEED if seed is None else seed)
    attention = nn.Linear(_D, _D)  # any function (B, L, D) -> (B, L, D) stands in for the sub-layer
    ffn = nn.Sequential(nn.Linear(_D, 16), nn.ReLU(), nn.Linear(16, _D))
    norm1, norm2 = nn.LayerNorm(_D), nn.LayerNorm(_D)
    with torch.no_grad():  # non-trivial affine parameters, so that norm1 and norm2 differ
        for norm in (norm1, norm2):
            norm.weight.uniform_(0.5, 1.5)
            norm.bias.uniform_(-0.5, 0.5)
    x = torch.randn(2, 4, _D) * 3 + 1
    return attention, ffn, norm1, norm2, x


@torch.no_grad()
def check_pre_ln_block(fn: Callable[..., torch.Tensor], *, seed: int | None = None) -> None:
    """Exercise 05-1: ``fn(x, attention, ffn, norm1, norm2)`` → the Pre-LN block's output ``(B, L, D)``."""
    exercise = "练习 05-1 Pre-LN 编码器块"
    attention, ffn, norm1, norm2, x = _sublayers(seed)
    got = call_learner(exercise, fn, x.clone(), attention, ffn, norm1, norm2)
    h = x + attention(norm1(x))
    expected = h + ffn(norm2(h))
    post = norm1(x + attention(x))
    post = norm2(post + ffn(post))
    no_residual = attention(norm1(x))
    no_residual = ffn(norm2(no_residual))
    compare_tensor(
        exercise, got, expected,
        mistakes=[
            KnownMistake(post, "这是 Post-LN 的顺序（先相加再归一化）。Pre-LN 是 x + f(LayerNorm(x))：先归一化再进子层，残差不经过归一化。"),
            KnownMistake(no_residual, "你漏掉了残差连接 (residual)：每个子层的输出要加回它的输入 x。"),
            KnownMistake(x + attention(norm1(x)) + ffn(norm2(x)),
                         "FFN 的输入应当是注意力子层之后的结果 h，而不是原来的 x（两个子层是串联的，不是并联的）。"),
        ],
        what="编码器块输出",
    )
    passed(exercise)


@torch.no_grad()
def check_embedding_sum(fn: Callable[..., torch.Tensor], *, seed: int | None = None) -> None:
    """Exercise 05-2: ``fn(token_ids, segment_ids, token_table, segment_table, pe)`` → ``(B, L, D)`` sum before LayerNorm."""
    exercise = "练习 05-2 三种嵌入相加"
    g = check_generator(seed, _SEED)
    token_table = torch.randn(10, _D, generator=g) / math.sqrt(_D)
    segment_table = torch.randn(2, _D, generator=g)
    pe = sinusoidal_encoding(16, _D)
    token_ids = torch.randint(1, 10, (2, 6), generator=g)
    segment_ids = (torch.arange(6) >= 3).long().expand(2, 6).clone()
    got = call_learner(exercise, fn, token_ids.clone(), segment_ids.clone(), token_table, segment_table, pe)
    tokens, segments, positions = token_table[token_ids], segment_table[segment_ids], pe[:6]
    expected = tokens * math.sqrt(_D) + positions + segments
    compare_tensor(
        exercise, got, expected,
        mistakes=[
            KnownMistake(tokens + positions + segments, "你忘了把字嵌入乘以 √D：字向量的范数约为 1，位置向量约为 √(D/2)，不乘就被位置编码淹没。"),
            KnownMistake(tokens * math.sqrt(_D) + segments, "你漏掉了位置编码：没有它，自注意力对词序毫无感知。"),
            KnownMistake(tokens * math.sqrt(_D) + positions, "你漏掉了段嵌入 (segment embedding)：两个句子就无法区分。"),
            KnownMistake((tokens + positions + segments) * math.sqrt(_D), "√D 只乘字嵌入，不乘位置与段嵌入。"),
        ],
        what="嵌入之和",
    )
    passed(exercise)


SATURATION_OPTIONS = {
    "layernorm": "层归一化 (LayerNorm)",
    "softmax": "多头自注意力里的 softmax",
    "residual": "残差相加",
    "gelu": "逐位置前馈网络的 GELU 激活",
    "none": "没有哪一步会饱和（教材的说法）",
}


def softmax_jacobian_norm(scale: float, n_rows: int = 2000, n_keys: int = 10) -> float:
    """Mean Frobenius norm of the softmax Jacobian for standard normal scores multiplied by ``scale``."""
    g = torch.Generator().manual_seed(_SEED)
    p = torch.softmax(torch.randn(n_rows, n_keys, generator=g) * scale, dim=-1)
    jacobian = torch.diag_embed(p) - p[:, :, None] * p[:, None, :]
    return float(jacobian.flatten(1).norm(dim=-1).mean())


def check_saturating_step(fn: Callable[[], str], *, seed: int | None = None) -> None:
    """Exercise 05-3: ``fn()`` names the step of the block that saturates (a key of :data:`SATURATION_OPTIONS`).

    ``seed`` (the grader's) is accepted and unused: a prediction has no inputs to redraw.
    """
    exercise = "练习 05-3 编码器块里会饱和的一步"
    got = call_learner(exercise, fn)
    compare_choice(exercise, got, SATURATION_OPTIONS, "softmax", wrong={
        "layernorm": "LayerNorm 把每个位置拉回均值 0、方差 1，输入放大多少倍输出都一样，它没有把输入压成常数的曲线。"
                     "再想想：哪一步把一行数变成接近 one-hot 的分布？",
        "residual": "残差相加是恒等的加法，导数恒为 1——正是它让梯度能绕过会饱和的子层。",
        "gelu": "GELU 只在负半轴变平（像 ReLU），正半轴是一条直线，不是“两端压平”。",
        "none": "再想想：哪一步把一行数变成一个分布？分数都很大时这个分布接近 one-hot，它对分数的导数是多少？",
    })
    small, large = softmax_jacobian_norm(1.0), softmax_jacobian_norm(16.0)
    passed(exercise, f"分数放大 16 倍时，softmax 雅可比范数的平均值从 {small:.3f} 降到 {large:.3f}：分数一大，注意力就接近 one-hot，"
                     "流向 W_Q、W_K 的梯度随之变小。教材说块里没有饱和曲线，这不对；残差连接让梯度绕过它，才是堆叠仍能训练的原因。")


GRADIENT_DEPTH = 24
"""Exercise 05-4 measures a Post-LN stack of this many blocks."""


@functools.lru_cache(maxsize=8)  # deterministic; the checker and its tests ask for the same set-ups again
def post_ln_gradient_ratio(*, embedding_norm: bool, depth: int = GRADIENT_DEPTH, seeds: tuple[int, ...] = (0, 1, 2),
                           width: int = 64) -> float:
    """Last block's over first block's gradient norm of a Post-LN encoder at initialisation.

    The set-up of lesson 05's gradient measurement: vocabulary 11, ``width`` wide, 4 heads,
    no dropout, one reversal batch of 32 strings of length 4–12 per seed, cross-entropy at
    the real positions; the per-block norms are averaged over ``seeds`` before the ratio.
    ``embedding_norm=False`` replaces the embeddings' LayerNorm by the identity.
    """
    runs = []
    for s in seeds:
        torch.manual_seed(s)
        config = EncoderConfig(vocab_size=11, d_model=width, n_heads=4, n_layers=depth, d_ff=4 * width,
                               dropout=0.0, max_positions=64, norm_first=False)
        encoder, head = Encoder(config), nn.Linear(width, 11)
        if not embedding_norm:
            encoder.embeddings.norm = nn.Identity()
        inputs, targets, keep = reversal_batch(32, 4, 12, generator=torch.Generator().manual_seed(s))
        logits = head(encoder(inputs, torch.zeros_like(inputs), keep))          # (B, L, vocab)
        nn.functional.cross_entropy(logits[keep], targets[keep]).backward()
        runs.append(block_gradient_norms(encoder))
    norms = torch.tensor(runs).mean(0)                                           # (depth,)
    return float(norms[-1] / norms[0])


RATIO_TOLERANCE = 1e-3
"""Exercise 05-4's tolerance on each ratio: the measurement is seeded, so it repeats to about 1e-6;
the change itself moves the ratio by a few thousandths (seeds 0–2), so a wider tolerance would let
the unchanged set-up's value pass."""


def check_post_ln_gradient_ratio(fn: Callable[[], tuple[float, float]], *, seed: int | None = None) -> None:
    """Exercise 05-4: ``fn()`` → ``(without, with_)``, the last/first gradient ratio of 24 Post-LN blocks
    without and with the embedding LayerNorm, on the same seeds and batches.

    The checker measures both again on the model seeds 0, 1, 2 the exercise names (``fn`` takes no
    inputs, so the grader's ``seed`` is accepted and unused) and accepts each within ``RATIO_TOLERANCE``. A "without" value that
    is the unchanged set-up's (or 1.0, a guess) is refused with its own line, so the answer must come
    from the changed model; the message then prints the paired difference.
    """
    exercise = "练习 05-4 去掉嵌入层的 LayerNorm"
    got = call_learner(exercise, fn)
    if (not isinstance(got, (tuple, list)) or len(got) != 2
            or any(isinstance(v, bool) or not isinstance(v, numbers.Real) or v != v for v in got)):
        raise ExerciseCheckError(f"{exercise}: 应当返回两个数 (去掉时的比值, 保留时的比值)，你返回的是 {got!r}")
    without, kept_got = (float(v) for v in got)
    measured = post_ln_gradient_ratio(embedding_norm=False, seeds=(0, 1, 2))
    kept = post_ln_gradient_ratio(embedding_norm=True, seeds=(0, 1, 2))
    distinct = abs(measured - kept) > RATIO_TOLERANCE  # the two set-ups can be told apart on these seeds
    if distinct and abs(without - kept) <= RATIO_TOLERANCE and abs(kept_got - measured) <= RATIO_TOLERANCE:
        raise ExerciseCheckError(f"{exercise}: 两个比值的顺序反了：先返回去掉 LayerNorm 时的，再返回保留时的。")
    if distinct and abs(without - kept) <= RATIO_TOLERANCE:
        raise ExerciseCheckError(f"{exercise}: 你给的“去掉时”的比值 {without:.4f} 正是未改动的设置测得的值："
                                 "是否忘了把 encoder.embeddings.norm 换成 nn.Identity()，或者换在了前向计算之后？")
    for value, expected, what in ((without, measured, "去掉嵌入层 LayerNorm 时"), (kept_got, kept, "保留嵌入层 LayerNorm 时")):
        if value == 1.0 and abs(expected - 1.0) > RATIO_TOLERANCE:
            raise ExerciseCheckError(f"{exercise}: {what}的比值 1.0 是猜测，不是测量：请真的建模型、做一次反向传播，再算最后一块 / 第一块。")
        if abs(value - expected) > RATIO_TOLERANCE:
            raise ExerciseCheckError(
                f"{exercise}: {what}的比值 {value:.4f} 与检查器的测量相差超过 {RATIO_TOLERANCE:g}。这是固定种子的测量，"
                "应当几乎逐位重现：检查种子 0、1、2，批次（32 个长 4–12 的串，生成器用同一个种子），"
                "先对种子平均各块的梯度范数再求比值，以及是否用了 Post-LN（norm_first=False）。")
    passed(exercise, f"{GRADIENT_DEPTH} 块 Post-LN 的最后一块 / 第一块：去掉嵌入层的 LayerNorm 时 {measured:.4f}，"
                     f"保留时 {kept:.4f}（同样的种子与批次），配对差 {measured - kept:+.4f}。这一处改动几乎不动这个比值，"
                     "两者都接近 1：所以嵌入层后的 LayerNorm 不是 Post-LN 梯度沿深度几乎平坦的原因，"
                     "这个猜测被测量否定了；原因仍未查明。")
