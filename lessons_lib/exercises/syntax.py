"""Checkers for the dependency-tree exercises (head arrays, tree distances, characters).

Each checker runs the learner's function on fixed trees (with ``seed``: fresh random trees)
and compares the result with
:mod:`lessons_lib.syntax` on the same trees; known mistakes get their own explanation,
and the expected values are never printed.
"""

from __future__ import annotations

from typing import Callable, Sequence

import torch

from lessons_lib.exercises import ExerciseCheckError, KnownMistake, call_learner, check_random, compare_tensor, passed
from lessons_lib.syntax.distances import tree_distances
from lessons_lib.syntax.noise import random_heads
from lessons_lib.syntax.buckets import (CROSS_SENTENCE_BUCKET, PAD_BUCKET, SPECIAL_BUCKET, char_word_index,
                                        pair_distance_buckets)
from lessons_lib.syntax.trees import depths, heads_from_conllu

# Small fixed trees (0-based heads, root = -1) of different shapes: a star, a chain, a
# question's tree, a single word.
CHECK_TREES: tuple[tuple[int, ...], ...] = (
    (1, -1, 1, 1),
    (-1, 0, 1, 2, 3),
    (1, 5, 1, 5, 5, -1, 5),
    (-1,),
    (2, 2, 4, 4, -1, 4, 5, 5),
)
# CoNLL-U head columns (1-based, root = 0) for the conversion exercise.
CHECK_CONLLU_HEADS: tuple[tuple[int, ...], ...] = ((2, 0, 2, 2), (0, 1, 2, 3), (3, 3, 0, 3, 4))
# Words of a sentence whose tree is CHECK_TREES[2]: 手机 没有 信号 是 什么 原因 ？
CHECK_WORDS: tuple[str, ...] = ("手机", "没有", "信号", "是", "什么", "原因", "？")
# Characters that fresh check words are drawn from.
_CHARACTERS = "手机没有信号是什么原因怎么做红烧肉电脑录像如何视频截图花生几月种"


def _trees(seed: int | None) -> Sequence[tuple[int, ...]]:
    if seed is None:
        return CHECK_TREES
    rng = check_random(seed)
    return [random_heads(rng, n) for n in (1, rng.randint(2, 5), rng.randint(5, 9), rng.randint(5, 9))]


def _as_long(exercise: str, got, what: str) -> torch.Tensor:
    if got is None:
        raise ExerciseCheckError(f"{exercise}: 你的函数没有返回值 (returned None)，是不是忘了 `return`？")
    try:
        return torch.as_tensor(got, dtype=torch.long) if not isinstance(got, torch.Tensor) else got.to(torch.long)
    except (TypeError, ValueError, RuntimeError) as error:
        raise ExerciseCheckError(f"{exercise}: {what} 应当是整数列表或张量，收到的是 {type(got).__name__}") from error


def check_conllu_to_heads(fn: Callable[[Sequence[int]], Sequence[int]], *, seed: int | None = None) -> None:
    """Exercise 07-1: ``fn(conllu_heads)`` converts a CoNLL-U head column to 0-based heads, root = -1."""
    exercise = "练习 07-1 CoNLL-U 父节点列 → 父节点数组"
    columns = CHECK_CONLLU_HEADS if seed is None else [tuple(h + 1 for h in heads) for heads in _trees(seed)[1:]]
    for column in columns:
        got = _as_long(exercise, call_learner(exercise, fn, list(column)), "父节点数组 (heads)")
        expected = torch.tensor(heads_from_conllu(column))
        spacy_style = torch.tensor([i if h == 0 else h - 1 for i, h in enumerate(column)])
        compare_tensor(
            exercise, got, expected,
            mistakes=[
                KnownMistake(torch.tensor(column), "你原样返回了 CoNLL-U 的列：它是从 1 开始编号的 (1-based)，根的父节点记为 0；"
                             "本课程的约定是从 0 开始、根记为 -1。每个父节点都要减 1。"),
                KnownMistake(spacy_style, "你把根写成了指向它自己 (spaCy 的约定)；本课程的约定是根的父节点为 -1。"),
                KnownMistake(expected.clamp(min=0), "你把根的父节点写成了 0，可 0 是第一个词的下标；本课程的约定是根的父节点为 -1"
                             "（CoNLL-U 的 0 减 1 正好是 -1，不必单独处理）。"),
            ],
            what="父节点数组 (heads)",
        )
    passed(exercise)


def check_tree_distance_matrix(fn: Callable[[Sequence[int]], torch.Tensor], *, seed: int | None = None) -> None:
    """Exercise 07-2: ``fn(heads)`` returns the ``(n, n)`` matrix of tree distances (arcs on the path)."""
    exercise = "练习 07-2 树距离矩阵"
    for heads in _trees(seed):
        got = _as_long(exercise, call_learner(exercise, fn, list(heads)), "距离矩阵")
        expected = tree_distances(heads)
        depth = torch.tensor(depths(heads))
        compare_tensor(
            exercise, got, expected,
            mistakes=[
                KnownMistake(expected + 1 - torch.eye(len(heads), dtype=torch.long),
                             "你数的是路径上的节点数 (nodes)，而不是边数 (arcs)：父子之间的距离应为 1。"),
                KnownMistake(expected + 1, "每个距离都多了 1：一个词到它自己的距离是 0，到父节点的距离是 1。"),
                KnownMistake((depth[:, None] - depth[None, :]).abs(),
                             "你用的是深度之差 |depth(i) − depth(j)|，它忽略了两条路径在最近公共祖先 (LCA) 处汇合："
                             "两个兄弟节点深度相同，距离却是 2。"),
                KnownMistake(depth[:, None] + depth[None, :],
                             "你用的是 depth(i) + depth(j)，漏掉了减去 2·depth(LCA)：只有经过根的路径才这样算。"),
            ],
            what="距离矩阵 (distances)",
        )
    passed(exercise)


def _char_cases(seed: int | None) -> Sequence[tuple[Sequence[str], Sequence[int]]]:
    if seed is None:
        return [(CHECK_WORDS, CHECK_TREES[2]), (("怎么", "做", "红烧肉", "？"), CHECK_TREES[0])]
    rng = check_random(seed)
    cases = []
    for heads in _trees(seed)[2:]:
        words = ["".join(rng.choice(_CHARACTERS) for _ in range(rng.randint(1, 3))) for _ in heads]
        cases.append((tuple(words), heads))
    return cases


def check_char_distances(fn: Callable[[Sequence[str], Sequence[int]], torch.Tensor], *, seed: int | None = None) -> None:
    """Exercise 07-3: ``fn(words, heads)`` returns the ``(C, C)`` word-tree distance between characters."""
    exercise = "练习 07-3 从词到字的距离"
    for words, heads in _char_cases(seed):
        got = _as_long(exercise, call_learner(exercise, fn, list(words), list(heads)), "字级距离矩阵")
        index = torch.tensor(char_word_index(words))
        word_level = tree_distances(heads)
        expected = word_level[index][:, index]
        same_word_one = expected + ((expected == 0) & ~torch.eye(len(index), dtype=torch.bool)).long()
        if tuple(got.shape) == tuple(word_level.shape) and got.shape != expected.shape:
            raise ExerciseCheckError(
                f"{exercise}: 你返回的是词级 (word-level) 的 {tuple(word_level.shape)} 矩阵；"
                f"需要的是字级 (character-level) 的 {tuple(expected.shape)} 矩阵：每个字取它所属词的距离。"
            )
        compare_tensor(
            exercise, got, expected,
            mistakes=[KnownMistake(same_word_one, "同一个词里的两个字距离应为 0（它们是树上的同一个节点），你给了 1。")],
            what="字级距离矩阵",
        )
    passed(exercise)


BUCKET_COUNT_PAIR = ("电脑怎么录像？", "如何在计算机上录视频")
BUCKET_COUNT_MAX_LEN = 24


def pair_bucket_counts(text_a: str = BUCKET_COUNT_PAIR[0], text_b: str = BUCKET_COUNT_PAIR[1],
                       max_len: int = BUCKET_COUNT_MAX_LEN) -> dict[str, int]:
    """How many of the ``max_len²`` position pairs fall in the cross-sentence, special and padding buckets.

    These counts do not depend on the trees, so each character stands for a word here.
    """
    chain_a = [-1] + list(range(len(text_a) - 1))
    chain_b = [-1] + list(range(len(text_b) - 1))
    buckets = pair_distance_buckets(list(text_a), chain_a, list(text_b), chain_b, max_len=max_len)
    return {"cross sentence": int((buckets == CROSS_SENTENCE_BUCKET).sum()),
            "special": int((buckets == SPECIAL_BUCKET).sum()),
            "padding": int((buckets == PAD_BUCKET).sum())}


def check_bucket_counts(fn: Callable[[], dict], *, seed: int | None = None) -> None:
    """Exercise 07-4: ``fn()`` predicts the three counts of :func:`pair_bucket_counts` for the lesson's pair.

    ``seed`` (the grader's) is accepted and unused: a prediction has no inputs to redraw.
    """
    exercise = "练习 07-4 数一数三种桶"
    got = call_learner(exercise, fn)
    expected = pair_bucket_counts()
    if not isinstance(got, dict) or set(got) != set(expected):
        raise ExerciseCheckError(f"{exercise}: 请返回 {{\"cross sentence\": 整数, \"special\": 整数, \"padding\": 整数}}，"
                                 f"你返回的是 {got!r}")
    length = len(BUCKET_COUNT_PAIR[0]) + len(BUCKET_COUNT_PAIR[1]) + 3
    hints = {
        "cross sentence": "跨句的字对：p 在一句、q 在另一句，两个方向都算；[CLS]、[SEP] 与填充都不算。",
        "special": f"凡是有一方是 [CLS] 或 [SEP] 的字对都进“特殊符号”桶（两个方向都算），但填充优先：先去掉含填充的字对。"
                   f"这一对有 {length} 个真实位置。",
        "padding": f"任一方是填充的字对都是 -1：一共 {BUCKET_COUNT_MAX_LEN}² 个字对，减去两方都是真实位置的那些。",
    }
    for name, value in expected.items():
        if got[name] != value:
            raise ExerciseCheckError(f"{exercise}: {name} 的个数不对（你的是 {got[name]!r}）。{hints[name]}")
    passed(exercise, f"s1 有 {len(BUCKET_COUNT_PAIR[0])} 个字、s2 有 {len(BUCKET_COUNT_PAIR[1])} 个字：跨句 = 2 × "
                     f"{len(BUCKET_COUNT_PAIR[0])} × {len(BUCKET_COUNT_PAIR[1])}；特殊 = {length}² − {length - 3}²；"
                     f"填充 = {BUCKET_COUNT_MAX_LEN}² − {length}²。三者都与树无关，只取决于长度。")
