"""The lesson-08 checkers accept the reference answers and explain plausible wrong ones."""

from __future__ import annotations

import pytest
import torch

from lessons_lib.exercises import ExerciseCheckError
from lessons_lib.exercises.syntax_bias import check_bucket_bias, check_hard_mask
from lessons_lib.syntax_bias.variants import lookup_bias


def _reference_hard_mask(buckets, max_distance):
    far = (buckets > max_distance) & (buckets <= 10)
    return torch.zeros(buckets.shape, dtype=torch.float32).masked_fill(far, float("-inf"))[:, None]


def test_reference_answers_pass(capsys):
    check_bucket_bias(lookup_bias)
    check_hard_mask(_reference_hard_mask)
    assert capsys.readouterr().out.count("✅") == 2


@pytest.mark.parametrize(
    "wrong, message",
    [
        (lambda t, b: t[:, b].transpose(0, 1), "最后一个桶"),
        (lambda t, b: lookup_bias(t, b).masked_fill((b < 0)[:, None], float("-inf")), "-inf"),
        (lambda t, b: t[:, b.clamp(min=0)], "形状"),
        (lambda t, b: None, "没有返回值"),
    ],
)
def test_bucket_bias_mistakes(wrong, message):
    with pytest.raises(ExerciseCheckError, match=message):
        check_bucket_bias(wrong)


@pytest.mark.parametrize(
    "wrong, message",
    [
        (lambda b, r: torch.zeros(b.shape).masked_fill(b > r, float("-inf"))[:, None], "跨句"),
        (lambda b, r: _reference_hard_mask(b, r).masked_fill((b < 0)[:, None], float("-inf")), "填充"),
        (lambda b, r: _reference_hard_mask(b, r - 1), "差一"),
        (lambda b, r: _reference_hard_mask(b, r)[:, 0], "形状"),
        (lambda b, r: _reference_hard_mask(b, r).clamp(min=-1e9), "有限的大负数"),
    ],
)
def test_hard_mask_mistakes(wrong, message):
    with pytest.raises(ExerciseCheckError, match=message):
        check_hard_mask(wrong)


def _prediction(zero, rounding):
    return lambda: {"exactly_zero": set(zero), "rounding_only": set(rounding)}


def test_one_block_gradient_prediction_passes_when_right(capsys):
    from lessons_lib.exercises.syntax_bias import check_one_block_gradients, one_block_table_gradient
    from lessons_lib.syntax.buckets import SPECIAL_BUCKET

    grad = one_block_table_gradient()
    assert grad[SPECIAL_BUCKET] > 0 and (grad[:SPECIAL_BUCKET] == 0).all()  # the measured fact the exercise is about
    check_one_block_gradients(_prediction(range(SPECIAL_BUCKET), [SPECIAL_BUCKET]))
    assert "✅" in capsys.readouterr().out


@pytest.mark.parametrize(
    "answer, message",
    [
        (_prediction(range(13), []), "特殊符号"),
        (_prediction(range(11), [11, 12]), "精确为 0"),
        (_prediction(range(5), [12]), "没有归类"),
        (lambda: {"exactly_zero": {0}}, "rounding_only"),
        (lambda: {"exactly_zero": {99}, "rounding_only": {12}}, "不存在"),
        (lambda: [0, 1], "字典"),
    ],
)
def test_one_block_gradient_prediction_mistakes(answer, message):
    from lessons_lib.exercises.syntax_bias import check_one_block_gradients

    with pytest.raises(ExerciseCheckError, match=message):
        check_one_block_gradients(answer)


def test_the_gradient_check_leaves_the_random_stream_alone():
    from lessons_lib.exercises.syntax_bias import one_block_table_gradient

    torch.manual_seed(3)
    expected = torch.rand(3)
    torch.manual_seed(3)
    one_block_table_gradient()
    assert torch.equal(torch.rand(3), expected)


# --- lesson 09 -------------------------------------------------------------------------------------

from lessons_lib.exercises.syntax_bias import (  # noqa: E402
    CONTROL_EXPLANATIONS, check_control_explanation, check_drop_bias, check_offset_baseline)
from lessons_lib.syntax_bias.predictor import offset_baseline_accuracy  # noqa: E402


def _reference_drop(bias, dropped):
    return torch.where(dropped[:, None, None, None], torch.zeros(()), bias)


def test_lesson_09_reference_answers_pass(capsys):
    check_drop_bias(_reference_drop)
    check_offset_baseline(offset_baseline_accuracy)
    check_control_explanation(lambda: "B")
    check_control_explanation(lambda: " b ")
    out = capsys.readouterr().out
    assert out.count("✅") == 4 and "为什么" in out


@pytest.mark.parametrize(
    "wrong, message",
    [
        (lambda bias, dropped: bias * (~dropped).float()[:, None, None, None], "NaN"),
        (lambda bias, dropped: _reference_drop(bias, ~dropped), "保留的句对"),
        (lambda bias, dropped: bias.masked_fill(dropped[:, None, None, None], float("-inf")), "-inf"),
        (lambda bias, dropped: bias, "没有去掉"),
        (lambda bias, dropped: _reference_drop(bias, dropped)[:, 0], "形状"),
    ],
)
def test_drop_bias_mistakes(wrong, message):
    with pytest.raises(ExerciseCheckError, match=message):
        check_drop_bias(wrong)


@pytest.mark.parametrize(
    "wrong, message",
    [
        (lambda a, b, c, d: offset_baseline_accuracy(a.abs(), b, c.abs(), d), r"\|j − i\|"),
        (lambda a, b, c, d: offset_baseline_accuracy(a, b, c, d) * len(c), r"\[0, 1\]"),
        (lambda a, b, c, d: 0.5, "不对"),
        (lambda a, b, c, d: "0.5x", "返回一个数"),
    ],
)
def test_offset_baseline_mistakes(wrong, message):
    with pytest.raises(ExerciseCheckError, match=message):
        check_offset_baseline(wrong)


@pytest.mark.parametrize("answer", sorted(set(CONTROL_EXPLANATIONS) - {"B"}))
def test_control_explanation_rejects_each_wrong_letter_with_its_reason(answer):
    with pytest.raises(ExerciseCheckError, match="不对"):
        check_control_explanation(lambda: answer)


def test_control_explanation_needs_a_letter():
    with pytest.raises(ExerciseCheckError, match="选项之一"):
        check_control_explanation(lambda: "E")
    with pytest.raises(ExerciseCheckError, match="选项之一"):
        check_control_explanation(lambda: 2)


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_lesson_09_checkers_draw_fresh_inputs_per_seed(seed, capsys):
    from lessons_lib.exercises.syntax_bias import _offset_cases

    check_drop_bias(_reference_drop, seed=seed)
    check_offset_baseline(offset_baseline_accuracy, seed=seed)
    check_control_explanation(lambda: "B", seed=seed)
    assert capsys.readouterr().out.count("✅") == 3
    with pytest.raises(ExerciseCheckError, match="NaN"):
        check_drop_bias(lambda bias, dropped: bias * (~dropped).float()[:, None, None, None], seed=seed)
    with pytest.raises(ExerciseCheckError, match=r"\|j − i\|"):
        check_offset_baseline(lambda a, b, c, d: offset_baseline_accuracy(a.abs(), b, c.abs(), d), seed=seed)
    assert not torch.equal(_offset_cases(seed)[0][0], _offset_cases(None)[0][0])


@pytest.mark.slow
def test_one_change_that_erases_the_tree_breaks_the_control(capsys):
    from lessons_lib.exercises.syntax_bias import check_one_change_breaks_control

    check_one_change_breaks_control(lambda: {"max_distance": 1})
    out = capsys.readouterr().out
    assert "✅" in out and "max_distance = 1" in out and "一点不剩" in out and "种子 0, 1, 2" in out


@pytest.mark.slow
def test_a_change_the_control_survives_is_rejected_with_its_accuracy():
    from lessons_lib.exercises.syntax_bias import check_one_change_breaks_control

    with pytest.raises(ExerciseCheckError, match=r"per_head = True 之后.*种子 0 上的测试准确率是 1\.000，仍然学会了"):
        check_one_change_breaks_control(lambda: {"per_head": True})


@pytest.mark.parametrize(
    "answer, message",
    [
        ({}, "恰好含一个键"),
        ({"epochs": 1, "lr": 1e-5}, "恰好含一个键"),
        ("max_distance=1", "恰好含一个键"),
        ({"max_distanse": 1}, "不是对照运行的一项设置"),
        ({"seed": 3}, "不是对照运行的一项设置"),
        ({"bias_lr_multiplier": 100.0}, "就是本课自己的设置"),
        ({"parser_noise": 0.0}, "就是本课自己的设置"),
        ({"n_layers": 1}, "n_layers = 1 不算答案.*第 2 节"),
        ({"parser_noise": 2.0}, "运行拒绝了这个设置"),
    ],
)
def test_one_change_answers_that_are_not_one_real_change(answer, message):
    # Each is refused before any training: the checker validates the change first.
    from lessons_lib.exercises.syntax_bias import check_one_change_breaks_control

    with pytest.raises(ExerciseCheckError, match=message):
        check_one_change_breaks_control(lambda: answer)


def _fake_control(monkeypatch, accuracy_of):
    """Replace the control's training by ``accuracy_of(change, seed)`` and record the runs asked for."""
    from lessons_lib.exercises import syntax_bias

    runs = []

    def fake(change, seed=0):
        runs.append((dict(change), seed))
        return accuracy_of(change, seed)

    monkeypatch.setattr(syntax_bias, "control_accuracy_with", fake)
    return runs


def test_a_change_that_fails_on_one_seed_only_is_refused(monkeypatch):
    # The multiplier x30 fails on seed 0 and learns on the others: one seed cannot decide.
    from lessons_lib.exercises.syntax_bias import check_one_change_breaks_control

    runs = _fake_control(monkeypatch, lambda change, seed: 0.5 if seed == 0 else 0.98)
    with pytest.raises(ExerciseCheckError, match=r"种子 1 上的测试准确率是 0\.980，仍然学会了.*前面的种子上它确实失败了（0\.500）"):
        check_one_change_breaks_control(lambda: {"bias_lr_multiplier": 30})
    assert runs == [({"bias_lr_multiplier": 30}, 0), ({"bias_lr_multiplier": 30}, 1)]  # stops at the first seed that learns


@pytest.mark.parametrize("value, said, not_said", [(1e6, "乘数大了", "乘数小了"), (1.0, "乘数小了", "乘数大了")])
def test_the_explanation_follows_the_direction_of_the_change(monkeypatch, capsys, value, said, not_said):
    from lessons_lib.exercises.syntax_bias import check_one_change_breaks_control

    runs = _fake_control(monkeypatch, lambda change, seed: 0.5)
    check_one_change_breaks_control(lambda: {"bias_lr_multiplier": value})
    out = capsys.readouterr().out
    assert "✅" in out and said in out and not_said not in out and "种子 0, 1, 2" in out
    assert [seed for _, seed in runs] == [0, 1, 2]


def test_grader_seeds_on_which_the_unchanged_control_fails_prove_nothing(monkeypatch):
    from lessons_lib.exercises.syntax_bias import check_one_change_breaks_control

    runs = _fake_control(monkeypatch, lambda change, seed: 0.5 if seed == 8 else (0.98 if not change else 0.5))
    with pytest.raises(ExerciseCheckError, match="种子 8 上，不改任何设置的对照本身就没有学会"):
        check_one_change_breaks_control(lambda: {"max_distance": 1}, seed=7)
    assert runs == [({}, 7), ({"max_distance": 1}, 7), ({}, 8)]
