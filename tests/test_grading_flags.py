"""The grader's reading of a submission: every route to the course's reference code is flagged for the teacher.

Static reading only (no sandbox): each test builds a submission that reaches a reference
implementation one way, and checks that the flags name that way, while the course's own
solutions and the plain answer are never flagged.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest
from nbformat.v4 import new_code_cell, new_notebook

import lessons_lib.exercises
from lessons_lib.course.assignments import make_student_notebook
from lessons_lib.course.notebooks import read_notebook
from lessons_lib.grader.grading import reference_code_flags
from lessons_lib.paths import NOTEBOOKS_DIR

NOTEBOOK = "01_tiny.ipynb"
CORRECT = "def scaled_scores(q, k):\n    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"


def _reference(setup: str = "import math\nimport torch") -> object:
    """A solution notebook with one exercise (its check cell imports its checker from the attention checkers)."""
    return new_notebook(cells=[
        new_code_cell(setup),
        new_code_cell("def scaled_scores(q, k):\n    ### BEGIN SOLUTION\n"
                      "    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n    ### END SOLUTION"),
        new_code_cell("from lessons_lib.exercises.attention import check_scaled_scores\n\n"
                      "check_scaled_scores(scaled_scores)"),
    ])


def _flags(answer: str, reference: object | None = None) -> list[str]:
    reference = reference or _reference()
    submitted = make_student_notebook(reference, NOTEBOOK)
    submitted.cells[1].source = answer
    return reference_code_flags(submitted, reference, NOTEBOOK)


def test_the_plain_answer_and_the_solution_itself_are_not_flagged():
    assert _flags(CORRECT) == []
    assert reference_code_flags(_reference(), _reference(), NOTEBOOK) == []


@pytest.mark.parametrize("path", sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb")), ids=lambda p: p.name[:2])
def test_no_lesson_solution_is_flagged(path):
    solution = read_notebook(path)
    assert reference_code_flags(solution, solution, path.name) == []


def test_the_reference_imported_through_the_checker_module_the_exercise_imports_is_flagged():
    flags = _flags("from lessons_lib.exercises.attention import attention_scores, masked_softmax\n"
                   "def scaled_scores(q, k):\n    return attention_scores(q, k)")
    assert any("lessons_lib.exercises.attention.attention_scores" in f and "masked_softmax" in f for f in flags), flags
    assert any(f.startswith("exercise 1 (scaled_scores) uses the course's own code") for f in flags), flags


def test_the_reference_reached_through_a_checkers_globals_is_flagged():
    flags = _flags("def scaled_scores(q, k):\n"
                   "    return check_scaled_scores.__globals__['attention_scores'](q, k)")
    assert any("looks inside functions or modules" in f and "__globals__" in f for f in flags), flags


@pytest.mark.parametrize("answer, named", [
    ("def scaled_scores(q, k):\n    return getattr(check_scaled_scores, '__glo' + 'bals__')['attention_scores'](q, k)",
     "getattr"),
    ("import sys\ndef scaled_scores(q, k):\n"
     "    return vars(sys.modules[check_scaled_scores.__module__])['attention_scores'](q, k)", "sys.modules"),
    ("import importlib\nm = importlib.import_module('lessons_lib.' + 'attention.functional')\n"
     "def scaled_scores(q, k):\n    return m.attention_scores(q, k)", "importlib"),
    ("import inspect\ndef scaled_scores(q, k):\n"
     "    return inspect.getclosurevars(check_scaled_scores).globals['attention_scores'](q, k)", "inspect"),
    ("def scaled_scores(q, k):\n    return eval('attention' + '_scores')(q, k)", "eval"),
])
def test_a_name_built_at_run_time_is_flagged_by_the_lookup_that_uses_it(answer, named):
    flags = _flags(answer)
    assert any("looks names up at run time" in f and named in f for f in flags), flags


@pytest.mark.parametrize("answer", [
    "import lessons_lib.exercises.attention as checks\ndef scaled_scores(q, k):\n    return checks.attention_scores(q, k)",
    "from lessons_lib.exercises import attention\ndef scaled_scores(q, k):\n    return attention.attention_scores(q, k)",
    "from lessons_lib.exercises.attention import *\ndef scaled_scores(q, k):\n    return attention_scores(q, k)",
    "import lessons_lib\ndef scaled_scores(q, k):\n    return lessons_lib.attention.functional.attention_scores(q, k)",
])
def test_the_reference_as_an_attribute_of_an_imported_module_is_flagged(answer):
    flags = _flags(answer)
    assert flags and flags[0].startswith("uses the course's own code, which the exercise notebook does not import"), flags


@pytest.mark.parametrize("answer", [
    "def scaled_scores(q, k):\n    return attention_scores(q, k)",
    "scaled_scores = attention_scores",
    "helper = attention_scores\ndef scaled_scores(q, k):\n    return helper(q, k)",
    "def _step(q, k):\n    return attention_scores(q, k)\ndef scaled_scores(q, k):\n    return _step(q, k)",
])
def test_a_graded_function_that_calls_the_library_version_the_lesson_imports_is_flagged(answer):
    """Lesson 01 imports the library's attention_scores to show it before the exercise asks for it."""
    reference = _reference("import math\nimport torch\nfrom lessons_lib.attention.functional import attention_scores")
    flags = _flags(answer, reference)
    assert flags == ["exercise 1 (scaled_scores) uses the course's own code, which the solution's scaled_scores does "
                     "not: lessons_lib.attention.functional.attention_scores"], flags
    assert _flags(CORRECT, reference) == []


def _checker_modules() -> list[str]:
    return [f"lessons_lib.exercises.{m.name}" for m in pkgutil.iter_modules(lessons_lib.exercises.__path__)]


@pytest.mark.parametrize("module", _checker_modules())
def test_every_name_of_a_checker_module_but_its_checkers_is_flagged_when_imported(module):
    """A checker module holds the reference code its checkers compare with: importing anything but a checker is flagged."""
    loaded = importlib.import_module(module)
    checker = next(name for name, value in vars(loaded).items()
                   if name.startswith("check_") and inspect.isfunction(value) and value.__module__ == module)
    reference = _reference()
    reference.cells[2].source = f"from {module} import {checker}\n\ncheck_scaled_scores = {checker}\n" \
                                "check_scaled_scores(scaled_scores)"
    for name in [n for n in vars(loaded) if not n.startswith("__") and not n.startswith("check_")]:
        flags = _flags(f"from {module} import {name}\n{CORRECT}", reference)
        assert flags and f"{module}.{name}" in flags[0], (name, flags)
