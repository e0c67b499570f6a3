"""The baselines (majority class, tuned character-Jaccard rule) and the data-set statistics."""

from __future__ import annotations

from pathlib import Path

import pytest

from lessons_lib.errors import CourseInputError
from lessons_lib.evaluation.baselines import (
    JaccardRule,
    accuracy,
    compute_baselines,
    majority_label,
    tune_jaccard_rule,
)
from lessons_lib.pairs.data import PairExample, char_overlap
from lessons_lib.pairs.stats import HARD_NEGATIVE_OVERLAP, data_statistics, split_statistics


def pairs(*rows: tuple[str, str, int]) -> list[PairExample]:
    return [PairExample(a, b, label) for a, b, label in rows]


def test_char_overlap() -> None:
    assert char_overlap("什么花一年四季都开", "什么花生一年四季都开") == pytest.approx(0.9)
    assert char_overlap("ab", "ba") == 1.0 and char_overlap("ab", "cd") == 0.0
    assert char_overlap("abc", "cd") == char_overlap("cd", "abc") == pytest.approx(0.25)
    assert char_overlap("", "") == 0.0


def test_majority_label_comes_from_train_and_ties_go_to_1() -> None:
    assert majority_label(pairs(("a", "b", 0), ("c", "d", 0), ("e", "f", 1))) == 0
    assert majority_label(pairs(("a", "b", 0), ("c", "d", 1))) == 1
    with pytest.raises(CourseInputError, match="empty"):
        majority_label([])


def test_jaccard_rule_is_strict_and_its_ties_go_to_the_smallest_threshold() -> None:
    # overlaps 1/3 (label 1), 1.0 (label 1), 0.5 (label 0)
    dev = pairs(("ab", "ac", 1), ("ab", "ba", 1), ("abc", "ab", 0))
    overlaps = [char_overlap(e.text_a, e.text_b) for e in dev]
    assert overlaps == pytest.approx([1 / 3, 1.0, 2 / 3])
    # t = -1 (all "same"): 2 right; t = 1/3: 1 right; t = 2/3: 2 right; t = 1: 1 right -> tie, smallest wins
    assert tune_jaccard_rule(dev) == JaccardRule(-1.0)
    # a pair whose overlap equals the threshold is predicted 0: the rule is J > t
    assert JaccardRule(2 / 3).predict(dev) == [0, 1, 0]
    # a dev set where one threshold alone is best
    dev = pairs(("ab", "ac", 0), ("ab", "ba", 1), ("abc", "ab", 1), ("ab", "cd", 0))
    assert tune_jaccard_rule(dev) == JaccardRule(1 / 3)
    with pytest.raises(CourseInputError, match="empty"):
        tune_jaccard_rule([])


def test_compute_baselines_and_reading_a_model_against_them() -> None:
    train = pairs(("ab", "ac", 1), ("x", "y", 1), ("p", "q", 0))
    dev = pairs(("ab", "ba", 1), ("ab", "cd", 0))
    test = pairs(("ab", "ab", 1), ("ab", "cd", 0), ("abc", "abd", 1), ("mn", "m", 0))
    baselines = compute_baselines(train, dev, test)
    assert baselines.majority == 1 and baselines.predictions["majority"]["test"] == [1, 1, 1, 1]
    assert baselines.jaccard == JaccardRule(0.0)
    assert baselines.predictions["jaccard"]["test"] == [1, 0, 1, 1]
    assert baselines.accuracy("majority", "test") == 0.5 and baselines.accuracy("jaccard", "test") == 0.75
    assert accuracy(baselines.predictions["jaccard"]["test"], test) == 0.75
    report = baselines.report()
    assert "majority class (label 1, from train): dev accuracy 0.5000, test accuracy 0.5000" in report
    assert "character Jaccard > 0.0000 (tuned on dev)" in report and "exact McNemar p =" in report
    lines = baselines.read_against("test", [1, 0, 1, 0], model="perfect").splitlines()
    assert lines[0].startswith("test: perfect 1.0000 vs majority 0.5000: only perfect right 2, only majority right 0")
    assert lines[1].startswith("test: perfect 1.0000 vs jaccard 0.7500: only perfect right 1, only jaccard right 0")
    with pytest.raises(CourseInputError, match="3 model predictions for 4 test pairs"):
        baselines.read_against("test", [1, 0, 1])
    with pytest.raises(CourseInputError, match="split"):
        baselines.read_against("train", [1, 0, 1])
    with pytest.raises(CourseInputError, match="2 predictions for 4 pairs"):
        accuracy([1, 0], test)
    with pytest.raises(CourseInputError, match="`test` is empty"):
        compute_baselines(train, dev, [])


def tiny_splits() -> dict[str, list[PairExample]]:
    train = pairs(("猫能吃葡萄吗", "猫可以吃葡萄吗", 1), ("猫可以吃葡萄吗", "猫咪吃葡萄行吗", 1), ("明天下雨吗", "今天几号", 0))
    dev = pairs(("猫能吃葡萄吗", "猫咪吃葡萄行吗", 1),  # both seen, linked through train positives
                ("明天下雨吗", "狗能吃葡萄吗", 0),     # one seen
                ("狗能吃葡萄吗", "狗可以吃葡萄吗", 1))  # neither
    test = pairs(("猫可以吃葡萄吗", "猫能吃葡萄吗", 1),  # the first training pair, reversed: a repeat
                 ("猫能吃葡萄吗", "狗能吃葡萄吗", 0),     # a hard negative (overlap 5/7)
                 ("明天下雨吗", "今天几号", 0),           # a second repeat (same order)
                 ("明天下雨吗", "今天几号", 0))           # ... and a duplicate within test
    return {"train": train, "dev": dev, "test": test}


def test_split_statistics_on_a_hand_made_set() -> None:
    stats = split_statistics(tiny_splits())
    assert stats.pairs == {"train": 3, "dev": 3, "test": 4}
    assert stats.positives == {"train": 2, "dev": 2, "test": 1}
    dev, test = stats.against_train["dev"], stats.against_train["test"]
    # dev questions: 猫能…, 猫咪…, 明天…, 狗能…, 狗可以… -> 3 of 5 seen
    assert (dev.questions, dev.questions_seen, dev.both, dev.one, dev.neither) == (5, 3, 1, 1, 1)
    assert dev.seen_share == pytest.approx(0.6) and dev.kind_shares() == pytest.approx((1 / 3, 1 / 3, 1 / 3))
    assert dev.linked_positives == 1
    assert (test.questions, test.questions_seen, test.both, test.one, test.neither) == (5, 4, 3, 1, 0)
    assert test.linked_positives == 1
    assert stats.repeats == {"train&dev": 0, "train&test": 2, "dev&test": 0}
    assert stats.duplicates == {"train": 0, "dev": 0, "test": 1}
    assert char_overlap("猫能吃葡萄吗", "狗能吃葡萄吗") >= HARD_NEGATIVE_OVERLAP
    assert stats.hard_negatives == {"train": 0, "dev": 0, "test": 1}
    assert stats.shared_dev_test_questions == 3
    report = stats.report()
    assert "test questions seen in train" in report and "80.0% of 5" in report and "66.3%" in report
    assert "2 / 0 / 0" not in report and "0 / 2 / 0" in report  # the repeats line, in its order


def test_split_statistics_rejects_a_missing_split(tmp_path: Path) -> None:
    splits = tiny_splits()
    with pytest.raises(CourseInputError, match="'dev' is missing or empty"):
        split_statistics({"train": splits["train"], "dev": [], "test": splits["test"]})
    with pytest.raises(CourseInputError, match="'test' is missing"):
        split_statistics({"train": splits["train"], "dev": splits["dev"]})
    (tmp_path / "train.tsv").write_text("猫\t狗\t0\n", encoding="utf-8")
    with pytest.raises(CourseInputError, match="no dev file"):
        data_statistics(tmp_path)


def test_question_graph_counts_components_and_reuse() -> None:
    from lessons_lib.pairs.stats import question_graph

    examples = [PairExample("甲", "乙", 1), PairExample("乙", "丙", 0), PairExample("丁", "戊", 1),
                PairExample("己", "庚", 0)]
    graph = question_graph(examples)
    # 甲-乙-丙 is one web of 2 pairs; 丁-戊 and 己-庚 stand alone
    assert (graph.pairs, graph.questions, graph.components, graph.largest_component) == (4, 7, 3, 2)
    assert graph.pairs_per_question == pytest.approx(8 / 7) and graph.largest_share == 0.5
    stats = split_statistics(tiny_splits())
    assert stats.graph["test"].pairs == 4 and stats.graph["test"].questions == 5


def test_label_overlap_gives_mean_quartiles_and_lengths() -> None:
    from lessons_lib.pairs.stats import jaccard_bin, label_overlap

    examples = [PairExample("甲乙", "甲乙", 1), PairExample("甲乙", "甲丙", 1), PairExample("甲", "乙", 1),
                PairExample("甲乙丙丁", "甲乙丙戊", 1), PairExample("甲", "丙", 0)]
    overlap = label_overlap(examples, 1)
    assert overlap.pairs == 4 and overlap.mean == pytest.approx((1 + 1 / 3 + 0 + 0.6) / 4)
    assert overlap.quartiles == pytest.approx((0.25, 0.4666667, 0.7))  # inclusive quartiles of 0, 1/3, 0.6, 1
    assert overlap.pair_chars == pytest.approx((4 + 4 + 2 + 8) / 4)
    assert label_overlap(examples, 0) is None  # one pair has no quartiles
    assert [jaccard_bin(j) for j in (0.0, 0.049, 0.05, 0.5, 0.999, 1.0)] == [0, 0, 1, 10, 19, 19]
    report = split_statistics(tiny_splits()).report()
    assert "test Jaccard label 0: mean (q1 / median / q3)" in report and "0.569 (0.455 / 0.556 / 0.667)" in report
    assert "test components / largest (pairs, share)" in report and "11,090 / 8 (0.1%)" in report


def test_independence_check() -> None:
    from lessons_lib.evaluation.significance import INDEPENDENCE_LIMITS, check_independence

    apart = [PairExample(f"问{i}", f"答{i}", i % 2) for i in range(200)]
    check = check_independence(apart)
    assert check.holds and check.pairs_per_question == 1.0 and check.largest_component == 1
    assert "shared questions within the limits" in check.describe()
    web = apart[:150] + [PairExample("问0", f"又{i}", 0) for i in range(50)]  # one question in 51 pairs
    check = check_independence(web)
    assert not check.holds and check.largest_component == 51 and check.pairs_per_question <= 1.2
    assert "shared questions beyond the limits" in check.describe() and check.largest_share > INDEPENDENCE_LIMITS["largest_component_share"]
    reused = [PairExample(f"问{i % 10}", f"答{i // 10}", 0) for i in range(100)]  # 20 questions, 100 pairs
    assert check_independence(reused).pairs_per_question == 10.0 and not check_independence(reused).holds
    with pytest.raises(CourseInputError, match="examples"):
        check_independence([])


def test_near_duplicates_link_pairs_that_identical_strings_do_not():
    from lessons_lib.errors import CourseInputError
    from lessons_lib.pairs.data import PairExample
    from lessons_lib.pairs.stats import near_duplicates, question_graph

    pairs = [
        PairExample("厨房里有蚂蚁怎么办", "怎样赶走蚂蚁", 1),
        PairExample("厨房里有蚂蚁该怎么办", "明天会下雨吗", 0),   # J = 9/10 with the first question above
        PairExample("明天会下雨吗？", "今天天气好吗", 0),         # J = 6/7 with 明天会下雨吗: joins the web
        PairExample("狗能吃巧克力吗", "狗狗能吃巧克力吗", 1),     # J = 1 within the pair; other pairs far
    ]
    assert question_graph(pairs).largest_component == 1  # no identical question: the identical-string check sees nothing
    found = near_duplicates(pairs)
    assert (found.pairs, found.pairs_linked, found.largest_web) == (4, 3, 3)
    assert found.example == ("厨房里有蚂蚁怎么办", "厨房里有蚂蚁该怎么办")
    strict = near_duplicates(pairs, min_overlap=0.87)  # 9/10 stays, 6/7 = 0.857 goes
    assert (strict.pairs_linked, strict.largest_web) == (2, 2)
    none = near_duplicates(pairs[3:])  # two questions of one pair are never linked to each other
    assert (none.pairs_linked, none.largest_web, none.example) == (0, 0, None)
    for bad in (0, 1.5):
        with pytest.raises(CourseInputError, match="min_overlap"):
            near_duplicates(pairs, min_overlap=bad)
