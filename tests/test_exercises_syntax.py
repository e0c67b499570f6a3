"""The lesson-07 checkers accept right answers and explain known wrong ones without the solution."""

from __future__ import annotations

import pytest
import torch

from lessons_lib.exercises import ExerciseCheckError, ExerciseNotDone
from lessons_lib.exercises.syntax import (
    check_char_distances,
    check_conllu_to_heads,
    check_tree_distance_matrix,
)
from lessons_lib.syntax.distances import distance_matrix_reference
from lessons_lib.syntax.buckets import char_word_index
from lessons_lib.syntax.trees import depths


def good_conversion(column):
    return [h - 1 for h in column]


def good_distances(heads):
    return torch.tensor(distance_matrix_reference(heads))


def good_char_distances(words, heads):
    d = good_distances(heads)
    idx = torch.tensor(char_word_index(words))
    return d[idx][:, idx]


def test_right_answers_pass(capsys):
    check_conllu_to_heads(good_conversion)
    check_tree_distance_matrix(good_distances)
    check_char_distances(good_char_distances)
    out = capsys.readouterr().out
    assert out.count("✅") == 3 and "07-1" in out and "07-3" in out


@pytest.mark.parametrize(
    "wrong, phrase",
    [
        (lambda column: list(column), "1-based"),
        (lambda column: [i if h == 0 else h - 1 for i, h in enumerate(column)], "spaCy"),
        (lambda column: None, "return"),
        (lambda column: [max(h - 1, 0) for h in column], "根的父节点写成了 0"),       # the most common mistake
        (lambda column: [h - 1 for h in column[:-1]] + [7], r"你的值为 7。"),     # an integer shown as one, not 7.0000
    ],
)
def test_conversion_mistakes_are_explained(wrong, phrase):
    with pytest.raises(ExerciseCheckError, match=phrase):
        check_conllu_to_heads(wrong)


def _depth_difference(heads):
    d = torch.tensor(depths(heads))
    return (d[:, None] - d[None, :]).abs()


@pytest.mark.parametrize(
    "wrong, phrase",
    [
        (lambda h: good_distances(h) + 1 - torch.eye(len(h), dtype=torch.long), "节点数"),
        (_depth_difference, "LCA"),
        (lambda h: good_distances(h)[:, :-1] if len(h) > 1 else good_distances(h)[:, :0], "形状"),
        (lambda h: 1 / 0, "ZeroDivisionError"),
    ],
)
def test_distance_mistakes_are_explained(wrong, phrase):
    with pytest.raises(ExerciseCheckError, match=phrase):
        check_tree_distance_matrix(wrong)


def test_char_mistakes_are_explained():
    with pytest.raises(ExerciseCheckError, match="词级"):
        check_char_distances(lambda words, heads: good_distances(heads))

    def same_word_one(words, heads):
        d = good_char_distances(words, heads)
        return d + ((d == 0) & ~torch.eye(len(d), dtype=torch.bool)).long()

    with pytest.raises(ExerciseCheckError, match="同一个词"):
        check_char_distances(same_word_one)


def test_messages_do_not_reveal_expected_values():
    with pytest.raises(ExerciseCheckError) as info:
        check_tree_distance_matrix(lambda h: torch.zeros(len(h), len(h), dtype=torch.long))
    # The message names a position and the learner's own value, never the expected matrix.
    assert "tensor(" not in str(info.value)
    assert "你的值为 0。" in str(info.value)


def test_an_unfinished_exercise_is_named_as_not_done():
    def todo(heads):
        raise NotImplementedError()

    with pytest.raises(ExerciseNotDone, match="还没有完成"):
        check_tree_distance_matrix(todo)


def test_bucket_counts_of_the_lessons_pair(capsys):
    from lessons_lib.exercises import ExerciseCheckError as CheckError
    from lessons_lib.exercises.syntax import check_bucket_counts, pair_bucket_counts

    assert pair_bucket_counts() == {"cross sentence": 2 * 7 * 10, "special": 20 ** 2 - 17 ** 2, "padding": 24 ** 2 - 20 ** 2}
    check_bucket_counts(lambda: {"cross sentence": 140, "special": 111, "padding": 176})
    assert "为什么" in capsys.readouterr().out
    for wrong, message in [({"cross sentence": 70, "special": 111, "padding": 176}, "两个方向都算"),
                           ({"cross sentence": 140, "special": 60, "padding": 176}, "特殊符号"),
                           ({"cross sentence": 140, "special": 111, "padding": 16}, "-1"),
                           ([140, 111, 176], "请返回")]:
        with pytest.raises(CheckError, match=message):
            check_bucket_counts(lambda wrong=wrong: wrong)
