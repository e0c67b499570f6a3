"""Lesson 00's exercise: every lesson to finish before lesson 07, from the course map."""

from __future__ import annotations

import pytest

from lessons_lib.errors import CourseInputError
from lessons_lib.exercises import ExerciseCheckError
from lessons_lib.exercises.course_map import PREREQUISITES, all_prerequisites, check_prerequisites


def test_the_map_is_acyclic_and_closed():
    for lesson, direct in PREREQUISITES.items():
        assert all(d in PREREQUISITES and d < lesson for d in direct), lesson
    assert all_prerequisites("07") == {"01", "03", "04", "05", "06"}
    with pytest.raises(CourseInputError, match="unknown lesson"):
        all_prerequisites("42")


def test_the_full_set_passes_in_either_spelling(capsys):
    check_prerequisites(lambda: {1, 3, 4, 5, 6})
    check_prerequisites(lambda: ["01", "03", "04", "05", "06"])
    assert capsys.readouterr().out.count("✅") == 2


@pytest.mark.parametrize("answer, message", [
    ({1}, "少了第 03 课.*第 07 课用第 06 课"),
    ({1, 3, 4, 6}, "少了第 05 课"),
    ({1, 2, 3, 4, 5, 6}, "第 02 课不在任何一条"),
    ("01", "集合或列表"),
    ({"六"}, "不是课号"),
])
def test_wrong_sets_are_explained(answer, message):
    with pytest.raises(ExerciseCheckError, match=message):
        check_prerequisites(lambda: answer)
