"""Lesson-05 checkers: reference answers pass, plausible wrong ones are explained."""

from __future__ import annotations

import math

import pytest

from lessons_lib.exercises import ExerciseCheckError
from lessons_lib.exercises.encoder import check_embedding_sum, check_pre_ln_block


def _pre_ln(x, attention, ffn, norm1, norm2):
    h = x + attention(norm1(x))
    return h + ffn(norm2(h))


def _embed(token_ids, segment_ids, token_table, segment_table, pe):
    return token_table[token_ids] * math.sqrt(token_table.shape[1]) + pe[: token_ids.shape[1]] + segment_table[segment_ids]


def test_reference_answers_pass(capsys):
    check_pre_ln_block(_pre_ln)
    check_embedding_sum(_embed)
    assert capsys.readouterr().out.count("✅") == 2


def _post_ln(x, attention, ffn, norm1, norm2):
    h = norm1(x + attention(x))
    return norm2(h + ffn(h))


@pytest.mark.parametrize("wrong, message", [
    (_post_ln, "Post-LN"),
    (lambda x, a, f, n1, n2: f(n2(a(n1(x)))), "残差"),
    (lambda x, a, f, n1, n2: x + a(n1(x)) + f(n2(x)), "串联"),
    (lambda x, a, f, n1, n2: x + a(n1(x)) + f(n1(x + a(n1(x)))), "数值"),  # norm1 reused: no known mistake
])
def test_pre_ln_mistakes(wrong, message):
    with pytest.raises(ExerciseCheckError, match=message):
        check_pre_ln_block(wrong)


@pytest.mark.parametrize("wrong, message", [
    (lambda t, s, T, S, pe: T[t] + pe[: t.shape[1]] + S[s], "√D"),
    (lambda t, s, T, S, pe: T[t] * math.sqrt(T.shape[1]) + S[s], "位置编码"),
    (lambda t, s, T, S, pe: T[t] * math.sqrt(T.shape[1]) + pe[: t.shape[1]], "段嵌入"),
    (lambda t, s, T, S, pe: (T[t] + pe[: t.shape[1]] + S[s]) * math.sqrt(T.shape[1]), "只乘字嵌入"),
])
def test_embedding_mistakes(wrong, message):
    with pytest.raises(ExerciseCheckError, match=message):
        check_embedding_sum(wrong)


def test_saturating_step_is_softmax(capsys):
    from lessons_lib.exercises import ExerciseCheckError as CheckError
    from lessons_lib.exercises.encoder import check_saturating_step, softmax_jacobian_norm

    assert softmax_jacobian_norm(16.0) < 0.5 * softmax_jacobian_norm(1.0)
    check_saturating_step(lambda: "softmax")
    assert "为什么" in capsys.readouterr().out
    for wrong, message in [("layernorm", "one-hot"), ("residual", "导数恒为 1"), ("gelu", "负半轴"), ("none", "one-hot"), ("tanh", "选项之一")]:
        with pytest.raises(CheckError, match=message):
            check_saturating_step(lambda wrong=wrong: wrong)


def test_post_ln_gradient_ratio_is_measured_and_a_far_answer_is_refused(capsys):
    from lessons_lib.exercises import ExerciseCheckError as CheckError
    from lessons_lib.exercises.encoder import check_post_ln_gradient_ratio, post_ln_gradient_ratio

    measured = post_ln_gradient_ratio(embedding_norm=False, seeds=(0,), depth=6, width=32)
    assert 0.5 < measured < 2.0
    without = post_ln_gradient_ratio(embedding_norm=False)
    kept = post_ln_gradient_ratio(embedding_norm=True)
    check_post_ln_gradient_ratio(lambda: (without, kept))
    out = capsys.readouterr().out
    assert "✅" in out and "配对差" in out
    check_post_ln_gradient_ratio(lambda: [without + 5e-4, kept - 5e-4])  # a list, within the tolerance
    assert "✅" in capsys.readouterr().out
    wrong_answers = [
        ((kept, kept), "未改动的设置"),           # no change made: the unchanged set-up's value
        ((1.0, kept), "猜测"),                    # a guess
        ((1.0, 1.0), "猜测"),
        ((kept, without), "顺序反了"),
        ((without * 1.1, kept), "相差超过"),       # within the old 15 % tolerance, refused now
        ((without, kept * 0.95), "相差超过"),
        (without, "两个数"),
        (("1.0", kept), "两个数"),
    ]
    for wrong, message in wrong_answers:
        with pytest.raises(CheckError, match=message):
            check_post_ln_gradient_ratio(lambda wrong=wrong: wrong)
