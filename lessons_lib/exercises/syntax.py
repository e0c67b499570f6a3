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
from lessons_lib.syntax.buckets import char_word_index
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


def _random_heads(rng, n: int) -> tuple[int, ...]:
    """A random tree of ``n`` words (0-based heads, root = -1): each word attaches to one placed before it."""
    order = list(range(n))
    rng.shuffle(order)
    heads = [-1] * n
    for position, word in enumerate(order[1:], start=1):
        heads[word] = order[rng.randrange(position)]
    return tuple(heads)


def _trees(seed: int | None) -> Sequence[tuple[int, ...]]:
    if seed is None:
        return CHECK_TREES
    rng = check_random(seed)
    return [_random_heads(rng, n) for n in (1, rng.randint(2, 5), rng.randint(5, 9), rng.randint(5, 9))]


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
                             "你用的是深度之差 |depth(i) − depth(j)|，它忽略了两条路径在最低公共祖先 (LCA) 处汇合："
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
