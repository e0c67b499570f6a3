"""The grading report names the cells of a submission that raised: index, exercise, exception, one line."""

from __future__ import annotations

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from lessons_lib.course.assignments import make_student_notebook
from lessons_lib.grader.grading import (CellError, CheckResult, NotebookGrade, cell_errors, format_grades,
                                        graded_exercises)

NOTEBOOK = "01_tiny.ipynb"


def _reference() -> nbformat.NotebookNode:
    return new_notebook(cells=[
        new_markdown_cell("# 练习"),
        new_code_cell("import math\nimport torch"),
        new_code_cell("def scaled_scores(q, k):\n    ### BEGIN SOLUTION\n"
                      "    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n    ### END SOLUTION"),
        new_code_cell("from lessons_lib.exercises.attention import check_scaled_scores\n\n"
                      "check_scaled_scores(scaled_scores)"),
        new_code_cell("results = open('results/missing.json').read()"),
    ])


def _report(grade: NotebookGrade) -> dict:
    return {"isolation": {"name": "bubblewrap", "gives": "...", "reason": ""}, "seed": 3,
            "students": {"ana": {"score": grade.score, "total": grade.total, "note": "",
                                 "notebooks": {NOTEBOOK: grade.to_dict()}}}}


def test_each_cell_that_raised_is_named_with_its_exercise_exception_and_one_line():
    reference = _reference()
    submitted = make_student_notebook(reference, NOTEBOOK)  # the exercise left to do: its check cell raises
    raised = [[3, "NotImplementedError", ""], [4, "FileNotFoundError", "[Errno 2] No such file or directory"]]
    grade = NotebookGrade(NOTEBOOK, checks=[CheckResult(1, "scaled_scores", False, "NotImplementedError")],
                          cell_errors=cell_errors(raised, submitted, graded_exercises(reference, NOTEBOOK)))
    assert grade.cell_errors == [
        CellError(3, 1, "check cell of exercise 1 (scaled_scores)", "NotImplementedError", ""),
        CellError(4, None, "", "FileNotFoundError", "[Errno 2] No such file or directory")]
    text = format_grades(_report(grade))
    assert ("  01_tiny.ipynb: 0/1\n    2 cells raised while the notebook ran:\n"
            "      cell 3 (check cell of exercise 1 (scaled_scores)): NotImplementedError\n"
            "      cell 4: FileNotFoundError: [Errno 2] No such file or directory\n") in text, text
    assert _report(grade)["students"]["ana"]["notebooks"][NOTEBOOK]["cell_errors"][1] == {
        "cell": 4, "exercise": None, "where": "", "error": "FileNotFoundError",
        "message": "[Errno 2] No such file or directory"}


def test_a_cell_defining_an_exercise_function_is_named_by_it_and_odd_indices_stay_plain():
    reference = _reference()
    submitted = make_student_notebook(reference, NOTEBOOK)
    submitted.cells[2].source = "def scaled_scores(q, k):\n    return undefined_name"
    submitted.cells.append(new_code_cell("this is not python ("))
    raised = [[2, "NameError", "x"], [5, "SyntaxError", "invalid syntax"], [99, "ValueError", "a cell index "
                                                                             "the notebook does not have"]]
    named = cell_errors(raised, submitted, graded_exercises(reference, NOTEBOOK))
    assert [(e.cell, e.exercise, e.where) for e in named] == [
        (2, 1, "exercise 1 (scaled_scores)"), (5, None, ""), (99, None, "")]


def test_a_notebook_without_cell_errors_adds_no_line():
    grade = NotebookGrade(NOTEBOOK, checks=[CheckResult(1, "scaled_scores", True, "passed")])
    assert format_grades(_report(grade)).endswith("ana: 1/1\n  01_tiny.ipynb: 1/1\n")
