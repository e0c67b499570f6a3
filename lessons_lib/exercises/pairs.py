"""Checkers for the sentence-pair exercises: segment ids, truncation, F1, reading the overlap rule.

Each checker runs the learner's function on fixed inputs (with ``seed``: fresh random
cases of the same kind), compares with the package's own
implementation (:mod:`lessons_lib.pairs.encoding`, :mod:`lessons_lib.pairs.trainer`) and explains known
mistakes in words, never printing the expected values.
"""

from __future__ import annotations

from typing import Callable, Sequence

import torch

from lessons_lib.exercises import (ExerciseCheckError, KnownMistake, call_learner, check_random, compare_choice, compare_tensor,
                                   passed)
from lessons_lib.pairs.baselines import JaccardRule, char_overlap, tune_jaccard_rule
from lessons_lib.pairs.data import PairExample
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
    exercise = "练习 06-1 段编号"
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
                           what=f"len_a={len_a}, len_b={len_b} 时的段编号 (segment ids)")
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
    """Exercise 06-4: ``fn(predictions, labels)`` is the F1 score of label 1."""
    exercise = "练习 06-4 F1 分数"
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


# Exercise 06-3: four pairs on which the learner predicts the character-overlap rule. Two are
# the rule's typical failures (near-identical wording, other meaning; other wording, same
# meaning), two are pairs it gets right.
JACCARD_EXERCISE_PAIRS = (
    PairExample("四级多少分算过", "六级多少分算过", 0),
    PairExample("电脑怎么录像？", "如何在计算机上录视频", 1),
    PairExample("狗能吃巧克力吗", "狗狗可以吃巧克力吗", 1),
    PairExample("明天会下雨吗", "怎么提高英语听力", 0),
)
# Which pairs the rule must get wrong, as a choice with an explanation of each wrong option.
JACCARD_FAILURE_CHOICES = {
    "A": "字面很像、意思不同的句对，以及字面不像、意思相同的句对",
    "B": "句子很长的句对",
    "C": "含有标点符号的句对",
}
_FAILURE_EXPLANATIONS = {
    "B": "规则只看字集合的交并比，句子长短本身不改变它的判断方式；错误来自“字面”和“意思”不一致。",
    "C": "标点只是集合里的一个字符，影响很小；错误来自“字面”和“意思”不一致。",
}


def _as_answers(exercise: str, answers: object, name: str, kind: type) -> list:
    if isinstance(answers, dict):
        keys = sorted(answers)
        if keys != list(range(1, len(JACCARD_EXERCISE_PAIRS) + 1)):
            raise ExerciseCheckError(f"{exercise}: `{name}` 的键应当是 1 到 {len(JACCARD_EXERCISE_PAIRS)}（第几对），"
                                     f"你给的是 {keys}")
        values = [answers[k] for k in keys]
    else:
        raise ExerciseCheckError(f"{exercise}: `{name}` 应当是一个字典 {{第几对: 答案}}，你给的是 {type(answers).__name__}")
    if kind is int and not all(v in (0, 1) and not isinstance(v, bool) for v in values):
        raise ExerciseCheckError(f"{exercise}: `{name}` 的每个值应当是 0 或 1")
    if kind is bool and not all(isinstance(v, bool) for v in values):
        raise ExerciseCheckError(f"{exercise}: `{name}` 的每个值应当是 True 或 False")
    return values


def sample_jaccard_rule() -> JaccardRule:
    """The character-overlap rule tuned on the dev split of the course's sample (not ``$LCQMC_DIR``)."""
    from lessons_lib.pairs.data import load_lcqmc
    from lessons_lib.paths import LCQMC_SAMPLE_DIR

    return tune_jaccard_rule(load_lcqmc(LCQMC_SAMPLE_DIR).dev.examples)


def check_jaccard_predictions(answers: Callable[[], tuple[dict, dict, str]], *, seed: int | None = None,
                              rule: JaccardRule | None = None) -> None:
    """Exercise 06-3: the learner predicts the tuned overlap rule on :data:`JACCARD_EXERCISE_PAIRS`.

    ``answers()`` returns ``(rule_says, rule_is_right, failure_kind)``: ``rule_says[i]`` the
    rule's label (0/1) for pair ``i`` (1-based), ``rule_is_right[i]`` whether that label equals
    the true one, ``failure_kind`` the key of :data:`JACCARD_FAILURE_CHOICES` naming the pairs
    the rule must get wrong. ``rule`` defaults to :func:`sample_jaccard_rule` (the lesson's
    default run; the grader has no other data). ``seed`` (the grader's) is accepted and
    unused: the four pairs are the exercise.
    """
    exercise = "练习 06-3 读懂字重合度规则"
    rule = rule or sample_jaccard_rule()
    got = call_learner(exercise, answers)
    if not (isinstance(got, tuple) and len(got) == 3):
        raise ExerciseCheckError(f"{exercise}: 应当返回三个值 (rule_says, rule_is_right, failure_kind)")
    rule_says, rule_is_right, failure_kind = got
    said = _as_answers(exercise, rule_says, "rule_says", int)
    judged = _as_answers(exercise, rule_is_right, "rule_is_right", bool)
    truth = rule.predict(JACCARD_EXERCISE_PAIRS)
    for number, (guess, actual) in enumerate(zip(said, truth), start=1):
        if guess != actual:
            raise ExerciseCheckError(
                f"{exercise}: 第 {number} 对的规则判断不对。规则只比较两句字集合的交并比 J 与阈值 "
                f"t = {rule.threshold:.4f}（J > t 才判 1）：数一数两句共有几个不同的字、合起来共有几个不同的字。")
    for number, (pair, verdict, actual) in enumerate(zip(JACCARD_EXERCISE_PAIRS, judged, truth), start=1):
        if verdict != (actual == pair.label):
            raise ExerciseCheckError(
                f"{exercise}: 第 {number} 对“规则是否判对”不对：把规则的判断和真实标签 {pair.label} 比一比。")
    compare_choice(exercise, failure_kind, JACCARD_FAILURE_CHOICES, "A", _FAILURE_EXPLANATIONS)
    passed(exercise)
