"""The lesson-01 checkers accept the reference answers and explain plausible wrong ones."""

from __future__ import annotations

import math
import warnings

import pytest
import torch

from lessons_lib.attention import functional as attention
from lessons_lib.exercises import FAIL_MARK, ExerciseCheckError, ExerciseNotDone, compare_tensor
from lessons_lib.exercises.attention import check_attention, check_masked_softmax, check_scaled_scores


def test_reference_answers_pass(capsys):
    check_scaled_scores(lambda q, k: attention.attention_scores(q, k))
    check_masked_softmax(attention.masked_softmax)
    check_attention(lambda q, k, v, m: attention.scaled_dot_product_attention(q, k, v, m)[0])
    out = capsys.readouterr().out
    assert out.count("✅") == 3


@pytest.mark.parametrize(
    "wrong, message",
    [
        (lambda q, k: q @ k.transpose(-2, -1), "没有除以 √d_k"),
        (lambda q, k: q @ k.transpose(-2, -1) / q.shape[-1], "除以的是 d_k"),
        (lambda q, k: k @ q.transpose(-2, -1), "形状 .* 应为 \\(2, 3, 5\\)"),
        (lambda q, k: None, "没有返回值"),
        (lambda q, k: 1 / 0, "ZeroDivisionError"),
    ],
)
def test_scaled_scores_mistakes(wrong, message):
    with pytest.raises(ExerciseCheckError, match=message):
        check_scaled_scores(wrong)


def _softmax_with(fill, dim=-1, invert=False):
    def fn(scores, mask):
        m = ~mask if invert else mask
        return torch.softmax(scores.masked_fill(~m, fill), dim=dim)
    return fn


@pytest.mark.parametrize(
    "wrong, message",
    [
        (_softmax_with(-1e9), "均匀分布"),
        (_softmax_with(float("-inf")), "NaN"),
        (lambda s, m: attention.masked_softmax(s, ~m), "遮蔽方向反了"),
        (lambda s, m: torch.softmax(s, dim=-1), "没有使用 mask"),
        (lambda s, m: torch.nan_to_num(_softmax_with(float("-inf"), dim=-2)(s, m)), "维度"),
    ],
)
def test_masked_softmax_mistakes(wrong, message):
    with pytest.raises(ExerciseCheckError, match=message):
        check_masked_softmax(wrong)


def test_attention_mistakes():
    def unscaled(q, k, v, m):
        return attention.scaled_dot_product_attention(q, k, v, m, scale=False)[0]

    with pytest.raises(ExerciseCheckError, match="缺少 √d_k"):
        check_attention(unscaled)


def test_an_unfinished_exercise_is_named_as_not_done():
    def todo(q, k):
        raise NotImplementedError()

    with pytest.raises(ExerciseNotDone, match="01-1.*还没有完成"):
        check_scaled_scores(todo)


def test_attention_that_ignores_the_mask_is_told_so():
    def unmasked(q, k, v, m):
        return attention.scaled_dot_product_attention(q, k, v, None)[0]

    def large_negative(q, k, v, m):
        weights = torch.softmax(attention.attention_scores(q, k).masked_fill(~m, -1e9), dim=-1)
        return weights @ v

    with pytest.raises(ExerciseCheckError, match="没有使用 mask") as info:
        check_attention(unmasked)
    assert "维度" not in str(info.value)
    with pytest.raises(ExerciseCheckError, match="整行都被遮蔽"):
        check_attention(large_negative)


def test_a_plain_transpose_on_batched_tensors_gets_the_batched_hint():
    def plain_transpose(q, k):
        return q @ k.T / q.shape[-1] ** 0.5

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # torch's own `.T` warning no longer prints above the explanation
        with pytest.raises(ExerciseCheckError, match=r"transpose\(-2, -1\)") as info:
            check_scaled_scores(plain_transpose)
    assert "RuntimeError" in str(info.value) and "(2, 3, 16)" in str(info.value)


def test_a_failed_check_renders_as_its_explanation_alone():
    def unscaled(q, k):
        return q @ k.transpose(-2, -1)

    with pytest.raises(ExerciseCheckError) as info:
        check_scaled_scores(unscaled)
    rendered = info.value._render_traceback_()
    assert rendered == [f"{FAIL_MARK} {info.value}"] and "\n" not in rendered[0]


def test_messages_do_not_reveal_expected_values():
    expected = torch.tensor([[0.123456, 0.654321]])
    with pytest.raises(ExerciseCheckError) as info:
        compare_tensor("x", torch.tensor([[0.5, 0.654321]]), expected)
    assert "0.1235" not in str(info.value) and "0.123456" not in str(info.value)
    assert "(0, 0)" in str(info.value)


def test_compare_tensor_shape_hint_for_transpose():
    with pytest.raises(ExerciseCheckError, match="转置"):
        compare_tensor("x", torch.zeros(3, 2), torch.zeros(2, 3))


def test_compare_tensor_rejects_non_tensor_expected():
    with pytest.raises(ValueError, match="expected"):
        compare_tensor("x", torch.zeros(1), [0.0])


def test_compare_tensor_dtype_kind():
    with pytest.raises(ExerciseCheckError, match="数据类型"):
        compare_tensor("x", torch.zeros(2, dtype=torch.long), torch.zeros(2))


def test_non_callable_is_explained():
    with pytest.raises(ExerciseCheckError, match="函数"):
        check_scaled_scores(math.pi)



def test_scaled_max_weight_prediction(capsys):
    from lessons_lib.exercises.attention import check_scaled_max_weight, measured_max_weight

    measured = measured_max_weight(4096)
    assert 0.25 < measured < 0.4 and measured_max_weight(4096, scale=False) > 0.9
    check_scaled_max_weight(lambda: measured_max_weight(16))       # the same as at any other d_k
    assert "为什么" in capsys.readouterr().out
    for wrong, message in [(0.1, "均匀分布"), (0.99, "方差还随 d_k 增长吗"), ("0.3", "应当是一个数")]:
        with pytest.raises(ExerciseCheckError, match=message):
            check_scaled_max_weight(lambda wrong=wrong: wrong)


def test_a_global_d_k_read_inside_the_function_is_named():
    # The learner's function as a notebook defines it: d_k is a global the lesson's loop left at 256.
    namespace = {"math": math, "d_k": 256}
    exec("def scores(q, k):\n    return q @ k.transpose(-2, -1) / math.sqrt(d_k)\n", namespace)
    with pytest.raises(ExerciseCheckError, match="全局变量 d_k（现在是 256）.*q.shape\\[-1\\]"):
        check_scaled_scores(namespace["scores"])
    namespace["d_k"] = 16  # the inputs' own width: the same function is then right
    check_scaled_scores(namespace["scores"])


def test_the_fallback_hint_names_only_the_exercise_s_own_steps():
    wrong = lambda q, k: q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]) + 0.5  # noqa: E731
    with pytest.raises(ExerciseCheckError) as caught:
        check_scaled_scores(wrong)
    assert "除以 √d_k" in str(caught.value) and "softmax" not in str(caught.value)
    with pytest.raises(ExerciseCheckError) as caught:
        compare_tensor("x", torch.zeros(2), torch.ones(2))
    assert "softmax" not in str(caught.value) and "一步一步检查" in str(caught.value)
