"""The positive control (one string, two trees) and the relative-position buckets of the non-syntactic control."""

from __future__ import annotations

import collections

import pytest
import torch

from lessons_lib.errors import CourseInputError
from lessons_lib.pairs.vocab import tokenize_chars
from lessons_lib.syntax.attachment_control import (FRAMES, PEOPLE, PROBE, READINGS, VERBS, ambiguous_question,
                                                   both_readings, bucket_profile, make_attachment_control, phrase_tree,
                                                   probe_question, text_only_baselines)
from lessons_lib.syntax.buckets import (DEFAULT_SCHEME, PAD_BUCKET, POSITION_UNITS, BucketScheme,
                                        batch_pair_distance_buckets, batch_pair_position_buckets)
from lessons_lib.syntax.trees import validate_heads
from lessons_lib.syntax_bias.model import check_parse_alignment


@pytest.fixture(scope="module")
def task():
    return make_attachment_control()


def test_same_seed_same_task_other_seed_other_task(task):
    again = make_attachment_control()
    assert again == task
    other = make_attachment_control(seed=1)
    assert other.train != task.train and other.as_data().source.path != task.as_data().source.path


def test_every_tree_is_valid_and_spells_its_sentence(task):
    for text, parse in task.parses.items():
        assert parse.text == text
        validate_heads(parse.heads)
        assert len(parse.words) == len(parse.heads) == len(parse.deprels)
        assert sum(h == -1 for h in parse.heads) == 1
        check_parse_alignment(text, parse)


def test_both_readings_spell_the_same_string_with_different_trees():
    for frame in range(len(FRAMES)):
        r0, r1 = (ambiguous_question("关心", "学生", "老师", r, frame) for r in READINGS)
        assert r0.text == r1.text and r0.words == r1.words
        assert r0.heads != r1.heads
        tree = batch_pair_distance_buckets([(r.words, r.heads, ["好"], [-1]) for r in (r0, r1)])
        assert not torch.equal(tree[0], tree[1])
        for unit in POSITION_UNITS:
            position = batch_pair_position_buckets([(r.words, ["好"]) for r in (r0, r1)], unit=unit)
            assert torch.equal(position[0], position[1])  # sequence distance cannot tell them apart


def test_the_readings_differ_beyond_distance_one_only():
    """Every tree has n − 1 arcs: both readings have as many distance-1 pairs; reading 1 reaches further."""
    for frame in range(len(FRAMES)):
        counts = []
        for reading in READINGS:
            parse = ambiguous_question("关心", "学生", "老师", reading, frame)
            buckets = batch_pair_distance_buckets([(parse.words, parse.heads, ["好"], [-1])])[0]
            counts.append(torch.bincount(buckets[buckets >= 0], minlength=DEFAULT_SCHEME.n_buckets))
        assert counts[0][1] == counts[1][1]
        assert counts[1][5] > counts[0][5]


def test_phrases_never_cross_splits(task):
    def phrases(split):
        return {ex.text_b for ex in split}  # the probe names the phrase: N2 V N1 吗？
    assert not phrases(task.train) & phrases(task.dev)
    assert not phrases(task.train) & phrases(task.test)
    assert not phrases(task.dev) & phrases(task.test)


def test_labels_are_balanced_and_follow_the_tree(task):
    for split in (task.train, task.dev, task.test):
        share = sum(ex.label for ex in split) / len(split)
        assert 0.45 <= share <= 0.55
        for ex in split:
            assert ex.label == int(task.readings[ex.text_a] == 0)
            assert task.readings[ex.text_b] == PROBE


def test_no_text_only_rule_beats_chance(task):
    baselines = text_only_baselines(task)
    assert set(baselines) == {"majority", "jaccard"}
    for accuracy in baselines.values():
        assert abs(accuracy - 0.5) <= 0.05


def test_the_reading_is_independent_of_the_frame(task):
    by_frame = collections.defaultdict(list)
    for text, reading in task.readings.items():
        if reading != PROBE:
            frame = next(f for f, ((prefix, _), tail) in enumerate(FRAMES)
                         if text.startswith("".join(prefix)) and text.endswith("".join(tail))
                         and len(text) == len("".join(prefix)) + 7 + len("".join(tail)))
            by_frame[frame].append(reading)
    assert len(by_frame) == len(FRAMES)
    for readings in by_frame.values():
        assert 0.4 <= sum(readings) / len(readings) <= 0.6


def test_jieba_segments_every_sentence_into_the_gold_words(task):
    from lessons_lib.syntax.segmentation import segment

    wrong = [t for t in task.parses if segment(t) != list(task.parses[t].words)]
    assert not wrong, wrong[:5]


def test_bucket_profile_counts_pairs_of_one_sentence(task):
    profile = bucket_profile(task)
    for means in profile.values():
        assert len(means) == DEFAULT_SCHEME.n_buckets
        assert means[DEFAULT_SCHEME.cross_sentence] == means[DEFAULT_SCHEME.special] == 0.0
    assert profile[1][5] > profile[0][5] and profile[1][6] > profile[0][6] == 0.0
    same_word, d1 = DEFAULT_SCHEME.same_word, 1  # the same words, and n - 1 arcs under either tree
    assert profile[0][same_word] == profile[1][same_word] and profile[0][d1] == profile[1][d1]


def test_both_readings_keep_the_words_and_change_the_tree(task):
    text = task.test[0].text_a
    both = both_readings(task.parses[text])
    assert both[task.readings[text]] == task.parses[text]
    assert both[0].words == both[1].words and both[0].heads != both[1].heads
    with pytest.raises(CourseInputError, match="not an ambiguous question"):
        both_readings(task.parses[task.test[0].text_b])


def test_control_bad_input():
    with pytest.raises(CourseInputError, match="n_train"):
        make_attachment_control(n_train=0)
    with pytest.raises(CourseInputError, match="reading"):
        phrase_tree("关心", "学生", "老师", 2)
    with pytest.raises(CourseInputError, match="frame"):
        ambiguous_question("关心", "学生", "老师", 0, frame=len(FRAMES))
    with pytest.raises(CourseInputError, match="split"):
        make_attachment_control(n_train=5, n_dev=5, n_test=5).split("valid")


def test_vocabulary_and_probe():
    assert len(VERBS) == len(set(VERBS)) == 20 and len(PEOPLE) == len(set(PEOPLE)) == 20
    probe = probe_question("关心", "学生", "老师")
    assert probe.text == "老师关心学生吗？" and validate_heads(probe.heads)


# --- relative-position buckets -----------------------------------------------------------------------


def test_position_buckets_layout_and_padding():
    words_a, words_b = ["电脑", "怎么", "录像", "？"], ["如何", "录", "视频"]
    out = batch_pair_position_buckets([(words_a, words_b), (["好"], ["行"])], scheme=BucketScheme(max_distance=3))
    n_a, n_b = 7, 5
    length = n_a + n_b + 3
    assert out.shape == (2, length, length)
    first = out[0]
    assert (first[0] == 5).all() and (first[:, n_a + 1] == 5).all()  # [CLS] row, first [SEP] column: special
    for i in range(n_a):
        for j in range(n_a):
            assert first[1 + i, 1 + j] == min(abs(i - j), 3)
    assert (first[1:1 + n_a, 2 + n_a:2 + n_a + n_b] == 4).all()  # cross sentence
    second = out[1]
    real = 5
    assert (second[:real, :real] >= 0).all()
    assert (second[real:] == PAD_BUCKET).all() and (second[:, real:] == PAD_BUCKET).all()


def test_word_unit_positions_equal_tree_buckets_on_a_chain():
    """When each word is headed by the next, the tree distance of two words is how far apart they are."""
    words_a = ["电脑", "怎么", "录", "像", "吗"]
    words_b = ["如何", "在", "计算机", "上", "录", "视频"]
    chain = lambda words: list(range(1, len(words))) + [-1]  # noqa: E731
    tree = batch_pair_distance_buckets([(words_a, chain(words_a), words_b, chain(words_b))], max_len=14)
    position = batch_pair_position_buckets([(words_a, words_b)], max_len=14, unit="word")
    assert torch.equal(tree, position)


def test_position_buckets_use_log_buckets_and_truncate_like_the_model():
    chars = list("一二三四五六七八九十甲乙丙丁戊己庚辛壬癸")
    scheme = BucketScheme(max_distance=6, log_buckets=True, log_max=16)
    out = batch_pair_position_buckets([(chars, ["好"])], scheme=scheme)[0]
    assert out[1, 1 + 19].item() == scheme.bucket(torch.tensor(19)).item()
    short = batch_pair_position_buckets([(chars, ["好"])], max_len=10)[0]
    assert short.shape == (10, 10)
    assert len(tokenize_chars("".join(chars))) == 20


def test_position_buckets_bad_input():
    with pytest.raises(CourseInputError, match="unit"):
        batch_pair_position_buckets([(["好"], ["行"])], unit="byte")
    with pytest.raises(CourseInputError, match="empty"):
        batch_pair_position_buckets([])
    with pytest.raises(CourseInputError, match="words_a, words_b"):
        batch_pair_position_buckets([(["好"], ["行"], [0])])
    with pytest.raises(CourseInputError, match="pad_to"):
        batch_pair_position_buckets([(["好好"], ["行"])], pad_to=4)
    with pytest.raises(CourseInputError, match="unit"):
        DEFAULT_SCHEME.position_names("byte")


def test_position_names():
    names = BucketScheme(max_distance=3).position_names()
    assert names == ("same position", "|i−j|=1", "|i−j|=2", "|i−j|≥3", "cross sentence", "special")
    assert BucketScheme(max_distance=3).position_names("word")[0] == "same word"


def test_registry_units_match_the_bucket_module():
    from lessons_lib.syntax_bias import registry

    assert registry._POSITION_UNITS == POSITION_UNITS


@pytest.fixture()
def one_thread():
    """One torch thread, as the lessons run (two threads crawl on a busy two-core machine)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.mark.slow
def test_the_learned_tree_bias_solves_the_control_and_sequence_distance_does_not(one_thread):
    """The one end-to-end proof that tree → buckets → bias → attention → [CLS] carries information.

    One epoch of the control recipe at table lr ×100 (the jump from chance to 1.0 happens
    in the first epoch for this seed with the pinned torch; other seeds may need three).
    """
    from lessons_lib.ablation.config import ExperimentConfig
    from lessons_lib.ablation.experiment import run_experiment

    task = make_attachment_control(n_dev=100, n_test=300)
    config = ExperimentConfig(variants=["none", "learned", "relative_position"], seeds=[5], preset="control", model={},
                              train={"epochs": 1}, bias_options={"bias_lr_multiplier": 100.0})
    results = run_experiment(task.as_data(), task.parses, config, progress=False, log=None)
    accuracy = {r.variant: r.test_accuracy for r in results.runs}
    assert accuracy["learned"] >= 0.95
    assert accuracy["none"] <= 0.6 and accuracy["relative_position"] <= 0.6
    test = next(m for m in results.mcnemar if m.variant == "learned")
    assert test.p_value < 1e-10
