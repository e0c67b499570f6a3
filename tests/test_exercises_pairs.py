"""The lesson-06 checkers accept the reference answers and explain plausible wrong ones."""

from __future__ import annotations

import math

import pytest

from lessons_lib.exercises import ExerciseCheckError, ExerciseNotDone
from lessons_lib.exercises.pairs import check_f1, check_segment_ids, check_truncation
from lessons_lib.pairs.encoding import truncate_pair


def reference_f1(predictions, labels):
    tp = sum(p == y == 1 for p, y in zip(predictions, labels))
    fp = sum(p == 1 and y == 0 for p, y in zip(predictions, labels))
    fn = sum(p == 0 and y == 1 for p, y in zip(predictions, labels))
    return 2 * tp / (2 * tp + fp + fn)


def test_reference_answers_pass(capsys):
    check_segment_ids(lambda a, b: [0] * (a + 2) + [1] * (b + 1))
    check_truncation(truncate_pair)
    check_f1(reference_f1)
    assert capsys.readouterr().out.count("✅") == 3


@pytest.mark.parametrize(
    "wrong, message",
    [
        (lambda a, b: [0] * (a + 1) + [1] * (b + 2), "第一个 \\[SEP\\]"),
        (lambda a, b: [0] * (a + 2) + [1] * b + [0], "最后一个 \\[SEP\\]"),
        (lambda a, b: [0] * (a + 1) + [1] * (b + 1), "len_a \\+ len_b \\+ 3"),
        (lambda a, b: None, "没有返回值"),
    ],
)
def test_segment_id_mistakes(wrong, message):
    with pytest.raises(ExerciseCheckError, match=message):
        check_segment_ids(wrong)


def cut_tail(a, b, n):
    joined = (a + b)[:n]
    return joined[: len(a)], joined[len(a):]


def cut_front(a, b, n):
    a, b = list(a), list(b)
    while len(a) + len(b) > n:
        (a if len(a) >= len(b) else b).pop(0)
    return a, b


@pytest.mark.parametrize(
    "wrong, message",
    [
        (cut_tail, "拼接后序列的末尾"),
        (cut_front, "从句子的末尾删字"),
        (lambda a, b, n: (a, b), "超过了 max_tokens"),
        (lambda a, b, n: a, "两个列表"),
    ],
)
def test_truncation_mistakes(wrong, message):
    with pytest.raises(ExerciseCheckError, match=message):
        check_truncation(wrong)


@pytest.mark.parametrize(
    "wrong, message",
    [
        (lambda p, y: sum(a == b for a, b in zip(p, y)) / len(y), "准确率"),
        (lambda p, y: reference_f1([1 - v for v in p], [1 - v for v in y]), "标签 0 的 F1"),
        (lambda p, y: sum(a == b == 1 for a, b in zip(p, y)) / sum(p), "精确率"),
        (lambda p, y: sum(a == b == 1 for a, b in zip(p, y)) / sum(y), "召回率"),
        (lambda p, y: "0.5x", "应当返回一个数"),
    ],
)
def test_f1_mistakes(wrong, message):
    with pytest.raises(ExerciseCheckError, match=message):
        check_f1(wrong)


def test_messages_do_not_leak_expected_values():
    with pytest.raises(ExerciseCheckError) as info:
        check_segment_ids(lambda a, b: [1] * (a + b + 3))
    assert "[0, 0" not in str(info.value)


def test_jaccard_prediction_exercise(capsys):
    from lessons_lib.exercises.pairs import JACCARD_EXERCISE_PAIRS, check_jaccard_predictions, sample_jaccard_rule
    from lessons_lib.evaluation.baselines import JaccardRule

    rule = JaccardRule(0.1667)
    says = {i: p for i, p in enumerate(rule.predict(JACCARD_EXERCISE_PAIRS), start=1)}
    right = {i: says[i] == pair.label for i, pair in enumerate(JACCARD_EXERCISE_PAIRS, start=1)}
    assert says == {1: 1, 2: 0, 3: 1, 4: 0} and right == {1: False, 2: False, 3: True, 4: True}
    check_jaccard_predictions(lambda: (says, right, "A"), rule=rule)
    assert "✅ 练习 06-3" in capsys.readouterr().out
    # without a rule (the notebook's check cell and the grader) it is the one tuned on the sample's dev split
    sample_says = {i: p for i, p in enumerate(sample_jaccard_rule().predict(JACCARD_EXERCISE_PAIRS), start=1)}
    sample_right = {i: sample_says[i] == pair.label for i, pair in enumerate(JACCARD_EXERCISE_PAIRS, start=1)}
    check_jaccard_predictions(lambda: (sample_says, sample_right, "A"), seed=5)
    with pytest.raises(ExerciseCheckError, match="第 1 对的规则判断不对"):
        check_jaccard_predictions(lambda: ({**sample_says, 1: 1 - sample_says[1]}, sample_right, "A"))
    # another threshold changes the answers the checker expects
    check_jaccard_predictions(lambda: ({1: 1, 2: 0, 3: 0, 4: 0}, {1: False, 2: False, 3: False, 4: True}, "A"),
                              rule=JaccardRule(0.7))
    wrong = [
        (({**says, 1: 0}, right, "A"), "第 1 对的规则判断不对.*t = 0.1667"),
        ((says, {**right, 3: False}, "A"), "第 3 对“规则是否判对”不对"),
        ((says, right, "B"), "句子长短"),
        ((says, right, "D"), "请返回选项之一"),
        (({0: 1, 1: 0, 2: 1, 3: 0}, right, "A"), "键应当是 1 到 4"),
        (({**says, 2: True}, right, "A"), "0 或 1"),
        ((says, {**right, 2: 0}, "A"), "True 或 False"),
        (([1, 0, 1, 0], right, "A"), "应当是一个字典"),
    ]
    for answer, message in wrong:
        with pytest.raises(ExerciseCheckError, match=message):
            check_jaccard_predictions(lambda answer=answer: answer, rule=rule)
    with pytest.raises(ExerciseCheckError, match="三个值"):
        check_jaccard_predictions(lambda: (says, right), rule=rule)
    with pytest.raises(ExerciseNotDone, match="还没有完成"):  # the student version's placeholder
        check_jaccard_predictions(_not_done, rule=rule)


def _not_done():
    raise NotImplementedError()


def _small_dev_measurement(source: str = "dev", read: str = "test", pairs: int = 50, draws: int = 500,
                           at_or_above: bool = False):
    """A learner's measurement for exercise 06-4, written apart from the checker: ``fn(rng)`` → (mean, sd)."""
    import statistics

    from lessons_lib.exercises.pairs import course_sample
    from lessons_lib.evaluation.baselines import tune_jaccard_rule
    from lessons_lib.pairs.data import char_overlap

    sample = course_sample()
    tuned_on = sample.dev.examples if source == "dev" else sample.test.examples
    read_on = [(char_overlap(e.text_a, e.text_b), e.label)
               for e in (sample.test.examples if read == "test" else sample.dev.examples)]

    def measure(rng):
        readings = []
        for _ in range(draws):
            threshold = tune_jaccard_rule(rng.sample(tuned_on, pairs)).threshold
            said = [(overlap >= threshold) if at_or_above else (overlap > threshold) for overlap, _ in read_on]
            readings.append(sum(s == bool(label) for s, (_, label) in zip(said, read_on)) / len(read_on))
        return statistics.mean(readings), statistics.stdev(readings)

    return measure


def test_small_dev_draws_read_each_threshold_as_the_rule_does():
    import random

    from lessons_lib.errors import CourseInputError
    from lessons_lib.exercises.pairs import _accuracy_reader, course_sample, small_dev_rule_draws
    from lessons_lib.evaluation.baselines import JaccardRule, accuracy, tune_jaccard_rule
    from lessons_lib.pairs.data import char_overlap

    sample = course_sample()
    test = sample.test.examples
    reader = _accuracy_reader(test)
    overlaps = sorted({char_overlap(e.text_a, e.text_b) for e in test})
    for threshold in [-1.0, 0.0, 1.0] + overlaps[::40]:  # pair overlaps themselves: the ">" decides ties
        assert reader(threshold) == accuracy(JaccardRule(threshold).predict(test), test)
    draws = small_dev_rule_draws(sample.dev.examples, test, random.Random(3), pairs=30, draws=20)
    assert len(draws.test) == len(draws.own_subset) == len(draws.whole_dev) == len(draws.tuned_on_test) == 20
    assert draws.full_dev_rule == tune_jaccard_rule(sample.dev.examples)
    assert draws.full_dev == accuracy(draws.full_dev_rule.predict(test), test)
    assert draws == small_dev_rule_draws(sample.dev.examples, test, random.Random(3), pairs=30, draws=20)
    for bad in (dict(pairs=0), dict(pairs=len(test) + 1), dict(draws=0)):
        with pytest.raises(CourseInputError):
            small_dev_rule_draws(sample.dev.examples, test, random.Random(3), **bad)


@pytest.mark.slow
def test_small_dev_rule_exercise_accepts_a_measurement_and_names_the_mistakes(capsys):
    import random
    import statistics

    from lessons_lib.exercises.pairs import check_small_dev_rule_accuracy

    right = _small_dev_measurement()
    for seed in (None, 4):
        check_small_dev_rule_accuracy(right, seed=seed)
    check_small_dev_rule_accuracy(_small_dev_measurement(draws=600))  # more draws than asked for
    out = capsys.readouterr().out
    assert out.count("✅ 练习 06-4") == 3 and "5%–95% 分位数" in out and "测试准确率 0.6825" in out

    def reshaped(change):  # the right measurement, its result changed by ``change(mean, sd)``
        return lambda rng: change(*right(rng))

    wrong = [
        (_small_dev_measurement(pairs=45), "每个子集应当是 50 对，你抽到的子集有 45 对"),
        (_small_dev_measurement(pairs=60), "每个子集应当是 50 对，你抽到的子集有 60 对"),
        (_small_dev_measurement(draws=499), "你抽了 499 个子集，至少要 500 个"),
        (_small_dev_measurement(at_or_above=True), "J ≥ t"),
        (_small_dev_measurement(source="test"), "有的子集抽自测试集"),
        (_small_dev_measurement(read="dev"), "在整个验证集上读了准确率"),
        (lambda rng: right(random.Random(1)), "没有看到你抽的子集"),
        (reshaped(lambda m, s: (m, 0.0)), "标准差是 0"),
        (reshaped(lambda m, s: (m * 100, s)), "百分数"),
        (reshaped(lambda m, s: (m, s ** 2)), "方差"),
        (reshaped(lambda m, s: (m, s * 1.01)), "标准差偏大"),
        (reshaped(lambda m, s: (m - 0.001, s)), "平均值偏低"),
        (reshaped(lambda m, s: (str(m), s)), "平均值 应当是一个数"),
        (reshaped(lambda m, s: m), "应当返回两个数"),
    ]
    for answer, message in wrong:
        with pytest.raises(ExerciseCheckError, match=message):
            check_small_dev_rule_accuracy(answer)
    population_sd = reshaped(lambda m, s: (m, s * math.sqrt(499 / 500)))  # statistics.pstdev: also accepted
    check_small_dev_rule_accuracy(population_sd)
    assert statistics.pstdev([0.0, 1.0]) == 0.5  # the factor above is pstdev's over 500 draws
    with pytest.raises(ExerciseNotDone, match="还没有完成"):
        check_small_dev_rule_accuracy(lambda rng: _not_done())
