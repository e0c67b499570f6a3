"""Checkers for the sentence-pair exercises: segment ids, truncation, F1.

Each checker runs the learner's function on fixed inputs (with ``seed``: fresh random
cases of the same kind), compares with the package's own
implementation (:mod:`lessons_lib.pairs.encoding`, :mod:`lessons_lib.pairs.trainer`) and explains known
mistakes in words, never printing the expected values.
"""

from __future__ import annotations

from typing import Callable, Sequence

import torch

from lessons_lib.exercises import ExerciseCheckError, KnownMistake, call_learner, check_random, compare_tensor, passed
from lessons_lib.pairs.encoding import truncate_pair
from lessons_lib.pairs.metrics import metrics_from_logits

# (len_a, len_b): the lesson's two examples, the shortest pair, and an unbalanced one.
_LENGTH_CASES = ((9, 11), (7, 10), (1, 1), (12, 3))


def _reference_segments(len_a: int, len_b: int) -> list[int]:
    return [0] * (len_a + 2) + [1] * (len_b + 1)


def _length_cases(seed: int | None) -> Sequence[tuple[int, int]]:
    if seed is None:
        return _LENGTH_CASES
    rng = check_random(seed)
    return [(rng.randint(1, 20), rng.randint(1, 20)) for _ in range(4)]


def check_segment_ids(fn: Callable[[int, int], Sequence[int]], *, seed: int | None = None) -> None:
    """Exercise 06-1: ``fn(len_a, len_b)`` gives the segment ids of ``[CLS] a [SEP] b [SEP]``."""
    exercise = "练习 06-1 段落编号"
    for len_a, len_b in _length_cases(seed):
        got = call_learner(exercise, fn, len_a, len_b)
        mistakes = [
            KnownMistake(torch.tensor([0] * (len_a + 1) + [1] * (len_b + 2)),
                         "第一个 [SEP] 被你算进了第二句（段 1）。它结束第一句，属于段 0。"),
            KnownMistake(torch.tensor([0] * (len_a + 2) + [1] * len_b + [0]),
                         "最后一个 [SEP] 被你标成了 0：它结束第二句，属于段 1。"),
        ]
        try:
            compare_tensor(exercise, got, torch.tensor(_reference_segments(len_a, len_b)), mistakes=mistakes,
                           what=f"len_a={len_a}, len_b={len_b} 时的段落编号 (segment ids)")
        except ExerciseCheckError as error:
            message = str(error)
            if "形状" in message and "应为" in message:
                message += " 长度应为 len_a + len_b + 3：别忘了 [CLS] 和两个 [SEP]。"
            raise ExerciseCheckError(message) from None
    passed(exercise)


def _truncation_cases(seed: int | None) -> Sequence[tuple[list[int], list[int], int]]:
    if seed is None:
        return ((list(range(10)), [100, 101], 6), ([1, 2, 3], [4, 5, 6, 7], 4),
                (list(range(20)), list(range(50, 70)), 9), ([1, 2], [3], 5))
    rng = check_random(seed)

    def ids() -> list[int]:
        return [rng.randint(4, 999) for _ in range(rng.randint(1, 15))]

    return [(ids(), ids(), rng.randint(2, 24)) for _ in range(4)]


def check_truncation(fn: Callable[[list[int], list[int], int], tuple[list[int], list[int]]], *,
                     seed: int | None = None) -> None:
    """Exercise 06-2: ``fn(ids_a, ids_b, max_tokens)`` shortens the longer sentence first."""
    exercise = "练习 06-2 截断"
    for ids_a, ids_b, max_tokens in _truncation_cases(seed):
        got = call_learner(exercise, fn, list(ids_a), list(ids_b), max_tokens)
        if not (isinstance(got, (tuple, list)) and len(got) == 2):
            raise ExerciseCheckError(f"{exercise}: 应当返回两个列表 (a, b)，你返回的是 {type(got).__name__}")
        got_a, got_b = list(got[0]), list(got[1])
        want_a, want_b = truncate_pair(ids_a, ids_b, max_tokens)
        if (got_a, got_b) == (want_a, want_b):
            continue
        joined = (ids_a + ids_b)[:max_tokens]
        if got_a + got_b == joined and (not got_b or len(got_a) != len(want_a)):
            raise ExerciseCheckError(
                f"{exercise}: 你截掉的是拼接后序列的末尾：第二句可能整句被删掉。应当每次从较长的句子末尾删一个字。"
            )
        if len(got_a) + len(got_b) > max_tokens:
            raise ExerciseCheckError(
                f"{exercise}: 截断后两句共 {len(got_a) + len(got_b)} 个字，超过了 max_tokens={max_tokens}。"
            )
        if got_a != ids_a[: len(got_a)] or got_b != ids_b[: len(got_b)]:
            raise ExerciseCheckError(f"{exercise}: 应当从句子的末尾删字，保留开头，且不改变顺序。")
        raise ExerciseCheckError(
            f"{exercise}: 在 len(a)={len(ids_a)}, len(b)={len(ids_b)}, max_tokens={max_tokens} 时，两句保留的长度不对："
            "每次从当前较长的那一句删（一样长时删第一句），直到总长不超过 max_tokens。"
        )
    passed(exercise)


def _f1_cases(seed: int | None) -> Sequence[tuple[list[int], list[int]]]:
    if seed is None:
        return (([1, 0, 1, 1, 0, 0, 1, 0], [1, 1, 0, 1, 0, 0, 1, 1]), ([1, 1, 1, 1, 0, 1], [0, 1, 1, 0, 0, 1]))
    rng = check_random(seed)
    cases = []
    for _ in range(3):
        n = rng.randint(6, 16)
        cases.append(([rng.randint(0, 1) for _ in range(n)], [rng.randint(0, 1) for _ in range(n)]))
    return cases


def check_f1(fn: Callable[[list[int], list[int]], float], *, seed: int | None = None) -> None:
    """Exercise 06-3: ``fn(predictions, labels)`` is the F1 score of label 1."""
    exercise = "练习 06-3 F1 分数"
    for predictions, labels in _f1_cases(seed):
        got = call_learner(exercise, fn, list(predictions), list(labels))
        try:
            got = float(got)
        except (TypeError, ValueError):
            raise ExerciseCheckError(f"{exercise}: 应当返回一个数 (float)，你返回的是 {type(got).__name__}") from None
        logits = torch.nn.functional.one_hot(torch.tensor(predictions), 2).float()
        result = metrics_from_logits(logits, torch.tensor(labels))
        flipped = metrics_from_logits(logits.flip(1), 1 - torch.tensor(labels))
        if abs(got - result.f1) < 1e-6:
            continue
        if abs(got - result.accuracy) < 1e-6:
            raise ExerciseCheckError(f"{exercise}: 你算的是准确率 (accuracy)，不是 F1。F1 = 2·P·R / (P + R)。")
        if abs(got - flipped.f1) < 1e-6:
            raise ExerciseCheckError(f"{exercise}: 你算的是标签 0 的 F1；这里要的是正类（标签 1，“意思相同”）的 F1。")
        tp = sum(p == y == 1 for p, y in zip(predictions, labels))
        if abs(got - tp / max(1, sum(predictions))) < 1e-6:
            raise ExerciseCheckError(f"{exercise}: 这是精确率 (precision)，还要结合召回率 (recall)。")
        if abs(got - tp / max(1, sum(labels))) < 1e-6:
            raise ExerciseCheckError(f"{exercise}: 这是召回率 (recall)，还要结合精确率 (precision)。")
        raise ExerciseCheckError(f"{exercise}: 数值不对（你的值 {got:.4f}）。检查 TP、FP、FN 的计数。")
    passed(exercise)
