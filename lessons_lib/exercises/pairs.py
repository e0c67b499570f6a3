"""Checkers for the sentence-pair exercises: segment ids, truncation, F1, reading the overlap rule,
and how much the rule's threshold depends on the size of the dev split.

Each checker runs the learner's function on fixed inputs (with ``seed``: fresh random
cases of the same kind), compares with the package's own
implementation (:mod:`lessons_lib.pairs.encoding`, :mod:`lessons_lib.training.trainer`) and explains known
mistakes in words, never printing the expected values.
"""

from __future__ import annotations

import math
import statistics
from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache
from random import Random
from typing import Callable, Sequence, TypeGuard

import torch

from lessons_lib.exercises import (ExerciseCheckError, KnownMistake, call_learner, check_random, compare_choice,
                                   compare_tensor, passed)
from lessons_lib.evaluation.baselines import JaccardRule, accuracy, tune_jaccard_rule
from lessons_lib.pairs.data import LcqmcData, PairExample, char_overlap
from lessons_lib.validation import check_int
from lessons_lib.pairs.encoding import truncate_pair
from lessons_lib.evaluation.metrics import metrics_from_logits

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
    """Exercise 06-5: ``fn(predictions, labels)`` is the F1 score of label 1."""
    exercise = "练习 06-5 F1 分数"
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


def course_sample() -> LcqmcData:
    """The course's shipped sample, whatever ``$LCQMC_DIR`` says: the data exercises 06-3 and 06-4 are checked on."""
    from lessons_lib.pairs.data import load_lcqmc
    from lessons_lib.paths import LCQMC_SAMPLE_DIR

    return load_lcqmc(LCQMC_SAMPLE_DIR)


def sample_jaccard_rule() -> JaccardRule:
    """The character-overlap rule tuned on the dev split of the course's sample (not ``$LCQMC_DIR``)."""
    return tune_jaccard_rule(course_sample().dev.examples)


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


SMALL_DEV_PAIRS = 50
"""Exercise 06-4 tunes the overlap rule on random dev subsets of this many pairs."""
SMALL_DEV_MIN_DRAWS = 500
"""Exercise 06-4 asks for at least this many subsets."""
SMALL_DEV_CHECK_DRAWS = 1000
"""How many subsets the checker of exercise 06-4 draws itself, for the reading it prints after a pass."""
_SMALL_DEV_SEED = 2027  # the checker's draws in the lesson; another seed than a learner would pick first


def _accuracy_reader(examples: Sequence[PairExample]) -> Callable[[float], float]:
    """``accuracy_at(t)``: the share of ``examples`` that the rule ``J > t`` gets right.

    The overlaps are computed once and sorted per label, so each threshold costs two binary
    searches instead of a pass over the pairs: the rule is right on a label-1 pair above ``t``
    and on a label-0 pair at or below it (the ``>`` of :class:`JaccardRule`).
    """
    positives = sorted(char_overlap(e.text_a, e.text_b) for e in examples if e.label == 1)
    negatives = sorted(char_overlap(e.text_a, e.text_b) for e in examples if e.label == 0)

    def accuracy_at(threshold: float) -> float:
        right = len(positives) - bisect_right(positives, threshold) + bisect_right(negatives, threshold)
        return right / len(examples)

    return accuracy_at


@dataclass(frozen=True)
class SmallDevDraws:
    """Exercise 06-4's resampling of the overlap rule; each tuple has one entry per random subset, in draw order.

    Attributes:
        dev_pairs, test_pairs: the sizes of the two splits.
        full_dev_rule: the rule tuned on the whole dev split.
        full_dev: its test accuracy.
        test: test accuracy of the rule tuned on each dev subset (what the exercise measures).
        own_subset: that rule's accuracy on the subset it was tuned on.
        whole_dev: that rule's accuracy on the whole dev split.
        tuned_on_test: test accuracy of a rule tuned on a random test subset of the same size.
    """

    dev_pairs: int
    test_pairs: int
    full_dev_rule: JaccardRule
    full_dev: float
    test: tuple[float, ...]
    own_subset: tuple[float, ...]
    whole_dev: tuple[float, ...]
    tuned_on_test: tuple[float, ...]


def small_dev_rule_draws(dev: Sequence[PairExample], test: Sequence[PairExample], rng: Random, *,
                         pairs: int = SMALL_DEV_PAIRS, draws: int = SMALL_DEV_CHECK_DRAWS) -> SmallDevDraws:
    """Tune :func:`tune_jaccard_rule` on ``draws`` random subsets of ``pairs`` dev pairs and read each rule.

    Each subset is drawn without replacement (``rng.sample``); the subsets are independent of
    one another. The mistaken readings (on the subset itself, on the whole dev split, a rule
    tuned on test) come from the same loop, so that the checker can name them.

    Raises:
        CourseInputError: ``pairs`` larger than either split, or not a positive int; ``draws`` not a positive int.
    """
    check_int(pairs, "pairs", maximum=min(len(dev), len(test)))
    check_int(draws, "draws")
    dev, test = list(dev), list(test)
    on_test, on_dev = _accuracy_reader(test), _accuracy_reader(dev)
    readings: dict[str, list[float]] = {"test": [], "own_subset": [], "whole_dev": [], "tuned_on_test": []}
    for _ in range(draws):
        subset = rng.sample(dev, pairs)
        rule = tune_jaccard_rule(subset)
        readings["test"].append(on_test(rule.threshold))
        readings["own_subset"].append(accuracy(rule.predict(subset), subset))
        readings["whole_dev"].append(on_dev(rule.threshold))
        readings["tuned_on_test"].append(on_test(tune_jaccard_rule(rng.sample(test, pairs)).threshold))
    full_dev_rule = tune_jaccard_rule(dev)
    return SmallDevDraws(len(dev), len(test), full_dev_rule, on_test(full_dev_rule.threshold),
                         **{name: tuple(values) for name, values in readings.items()})


@lru_cache(maxsize=8)
def _sample_draws(seed: int) -> SmallDevDraws:
    """The checker's draws on the course's sample; kept, since a grader or a test checks many answers on one seed."""
    data = course_sample()
    return small_dev_rule_draws(data.dev.examples, data.test.examples, check_random(seed))


class RecordingRandom(Random):
    """A :class:`random.Random` that keeps every subset drawn with :meth:`sample`, so that exercise 06-4's
    checker can redo the learner's measurement on exactly the learner's subsets."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.subsets: list[list] = []

    def sample(self, population, k, **kwargs):  # noqa: D102 - Random.sample, recorded
        chosen = super().sample(population, k, **kwargs)
        self.subsets.append(list(chosen))
        return chosen


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _learner_pair(exercise: str, got: object) -> tuple[object, object]:
    if not (isinstance(got, (tuple, list)) and len(got) == 2):
        raise ExerciseCheckError(f"{exercise}: 应当返回两个数 (mean, sd)：测试准确率的平均值和标准差。"
                                 f"你返回的是 {type(got).__name__}")
    return got[0], got[1]


def _check_subsets(exercise: str, subsets: list[list], dev: Sequence[PairExample],
                   test: Sequence[PairExample]) -> None:
    """Refuse, in one line, subsets that are not at least SMALL_DEV_MIN_DRAWS draws of SMALL_DEV_PAIRS dev pairs."""
    if not subsets:
        raise ExerciseCheckError(f"{exercise}: 检查器没有看到你抽的子集：请用传入的 rng 抽每个子集，"
                                 f"rng.sample(验证集的句对, SMALL_DEV_PAIRS)，检查器要在同样的子集上复算。")
    sizes = sorted({len(subset) for subset in subsets})
    if sizes != [SMALL_DEV_PAIRS]:
        raise ExerciseCheckError(f"{exercise}: 每个子集应当是 {SMALL_DEV_PAIRS} 对，你抽到的子集有 "
                                 f"{'、'.join(map(str, sizes))} 对。")
    dev_pairs, test_pairs = set(dev), set(test)
    for subset in subsets:
        if not all(pair in dev_pairs for pair in subset):
            where = "测试集" if all(pair in test_pairs for pair in subset) else "验证集以外"
            raise ExerciseCheckError(f"{exercise}: 有的子集抽自{where}：阈值只能在验证集的子集上选。")
    if len(subsets) < SMALL_DEV_MIN_DRAWS:
        raise ExerciseCheckError(f"{exercise}: 你抽了 {len(subsets)} 个子集，至少要 {SMALL_DEV_MIN_DRAWS} 个。")


def _readings(subsets: list[list], dev: Sequence[PairExample], test: Sequence[PairExample]) -> dict[str, list[float]]:
    """The right reading of each subset's rule (test accuracy of ``J > t``) and the known mistaken ones."""
    on_test, on_dev = _accuracy_reader(test), _accuracy_reader(dev)
    test_overlaps = [(char_overlap(e.text_a, e.text_b), e.label) for e in test]
    readings: dict[str, list[float]] = {"right": [], "at_or_above": [], "own_subset": [], "whole_dev": []}
    for subset in subsets:
        rule = tune_jaccard_rule(subset)
        readings["right"].append(on_test(rule.threshold))
        readings["at_or_above"].append(sum((j >= rule.threshold) == bool(label) for j, label in test_overlaps)
                                       / len(test_overlaps))
        readings["own_subset"].append(accuracy(rule.predict(subset), subset))
        readings["whole_dev"].append(on_dev(rule.threshold))
    return readings


_SAME = 1e-9  # the checker redoes the learner's measurement on the same subsets: only float rounding may differ
_MISTAKES = {
    "at_or_above": "你用了 J ≥ t：规则是 J > t 才判 1（JaccardRule.predict），等于阈值的句对判 0。",
    "own_subset": f"你在选阈值的那 {SMALL_DEV_PAIRS} 对上读了准确率：要在整个测试集上读。",
    "whole_dev": "你在整个验证集上读了准确率：要在测试集上读。",
}


def _same_number(exercise: str, got: object, expected: float, what: str, too_low: str, too_high: str) -> None:
    """``got`` must equal ``expected`` up to float rounding (:data:`_SAME`); a hint in words, never the value."""
    if not _is_number(got) or got != got:
        raise ExerciseCheckError(f"{exercise}: {what} 应当是一个数，你返回的是 {got!r}")
    if abs(got - expected) > _SAME:
        raise ExerciseCheckError(f"{exercise}: 你的{what}是 {got:.6f}，与检查器在你抽的同一批子集上复算的不同。"
                                 f"{too_low if got < expected else too_high}")


def check_small_dev_rule_accuracy(fn: Callable[[Random], tuple[float, float]], *, seed: int | None = None) -> None:
    """Exercise 06-4: ``fn(rng)`` → ``(mean, sd)`` of the test accuracy of the overlap rule tuned on 50 random dev pairs.

    Always on the course's sample (:func:`course_sample`, as exercise 06-3). The checker passes a
    :class:`RecordingRandom` (seeded with ``seed``: the grader's; ``None``: the lesson's) and the
    learner draws each subset with ``rng.sample``; the checker then redoes the measurement on
    exactly those subsets and compares both numbers up to float rounding. So a subset of 45 or
    60 pairs, fewer than :data:`SMALL_DEV_MIN_DRAWS` subsets, subsets of the test split, the rule
    read as ``J ≥ t``, and readings on the subset or on the whole dev split are each named in
    one line. The standard deviation may be the sample's or the population's (they differ by
    under 0.1 % at 500 draws). After a pass it prints the spread of its own 1,000 draws.
    """
    exercise = "练习 06-4 只用 50 对验证数据选阈值"
    rng = RecordingRandom(_SMALL_DEV_SEED if seed is None else seed)
    got_mean, got_sd = _learner_pair(exercise, call_learner(exercise, fn, rng))
    data = course_sample()
    dev, test = data.dev.examples, data.test.examples
    _check_subsets(exercise, rng.subsets, dev, test)
    readings = _readings(rng.subsets, dev, test)
    for name, values in readings.items():
        if _is_number(got_mean) and abs(got_mean - statistics.fmean(values)) <= _SAME and name in _MISTAKES:
            if abs(statistics.fmean(values) - statistics.fmean(readings["right"])) > _SAME:
                raise ExerciseCheckError(f"{exercise}: {_MISTAKES[name]}")
    right = readings["right"]
    if _is_number(got_mean) and 1 < got_mean <= 100 and abs(got_mean / 100 - statistics.fmean(right)) <= _SAME:
        raise ExerciseCheckError(f"{exercise}: 这像是百分数：请返回 0 到 1 之间的准确率。")
    _same_number(exercise, got_mean, statistics.fmean(right), "测试准确率的平均值",
                 too_low="平均值偏低：每个子集的阈值是否用 tune_jaccard_rule 在这个子集上选、准确率是否在整个测试集上读？",
                 too_high="平均值偏高：阈值是否只在验证集的子集上选、准确率是否在整个测试集上读？")
    sample_sd, population_sd = statistics.stdev(right), statistics.pstdev(right)
    if _is_number(got_sd) and got_sd == 0:
        raise ExerciseCheckError(f"{exercise}: 标准差是 0：每次读到的准确率都一样。是否每次都在整个验证集上选阈值？")
    if _is_number(got_sd) and any(abs(got_sd - sd ** 2) <= _SAME for sd in (sample_sd, population_sd)):
        raise ExerciseCheckError(f"{exercise}: 这像是方差：标准差是方差的平方根。")
    if not (_is_number(got_sd) and abs(got_sd - population_sd) <= _SAME):
        _same_number(exercise, got_sd, sample_sd, "测试准确率的标准差",
                     too_low="标准差偏小：是否对每个子集的测试准确率求标准差？",
                     too_high="标准差偏大：是否对每个子集的测试准确率求标准差？")
    passed(exercise, _small_dev_reading(_sample_draws(_SMALL_DEV_SEED if seed is None else seed)))


def _small_dev_reading(measured: SmallDevDraws) -> str:
    """What exercise 06-4's measurement shows, in the checker's words after a pass."""
    mean, sd = statistics.fmean(measured.test), statistics.stdev(measured.test)
    low, high = (statistics.quantiles(measured.test, n=20)[i] for i in (0, -1))
    # A test accuracy read on this many pairs has a binomial standard error of its own, whatever the threshold.
    test_se = math.sqrt(measured.full_dev * (1 - measured.full_dev) / measured.test_pairs)
    return (f"整个验证集（{measured.dev_pairs:,} 对）选出的阈值 t = {measured.full_dev_rule.threshold:.4f}，"
            f"测试准确率 {measured.full_dev:.4f}。检查器抽了 {len(measured.test):,} 个 {SMALL_DEV_PAIRS} 对的验证子集"
            f"（你至少 {SMALL_DEV_MIN_DRAWS} 个）：各自选出的阈值在测试集上平均 {mean:.4f}、标准差 {sd:.4f}，"
            f"5%–95% 分位数 {low:.4f}–{high:.4f}，最低 {min(measured.test):.4f}。"
            f"测试集本身的抽样误差（{measured.test_pairs:,} 对上准确率的标准误）约为 {test_se:.4f}，"
            f"阈值选在 {SMALL_DEV_PAIRS} 对上带来的波动是它的 {sd / test_se:.1f} 倍。平均值与整个验证集的结果相差 "
            f"{mean - measured.full_dev:+.4f}，但那是许多次选择的平均：只凭一小份验证集选出的一个阈值，"
            "读到的测试准确率在很宽的范围里摆动。")
