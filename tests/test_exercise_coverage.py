"""Every checker of lessons_lib.exercises is exercised by a test that accepts and rejects answers."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path

import lessons_lib.exercises as exercises

TESTS = Path(__file__).parent


def _checkers() -> list[str]:
    names = []
    for module in pkgutil.iter_modules(exercises.__path__):
        mod = importlib.import_module(f"lessons_lib.exercises.{module.name}")
        names += [f"{module.name}.{n}" for n, f in inspect.getmembers(mod, inspect.isfunction)
                  if n.startswith("check_") and f.__module__ == mod.__name__]
    return names


def test_each_checker_has_tests_that_expect_a_rejection():
    sources = {p.name: p.read_text(encoding="utf-8") for p in TESTS.glob("test_exercises_*.py")}
    missing = []
    for qualified in _checkers():
        name = qualified.split(".")[1]
        users = [s for s in sources.values() if name in s]
        if not any("ExerciseCheckError" in s for s in users):
            missing.append(qualified)
    assert _checkers(), "no checkers found"
    assert not missing, f"checkers without a test that expects ExerciseCheckError: {missing}"


def test_each_checker_is_used_by_a_lesson():
    notebooks = "\n".join(p.read_text(encoding="utf-8") for p in (TESTS.parent / "notebooks").glob("*.ipynb"))
    unused = [q for q in _checkers() if q.split(".")[1] not in notebooks]
    assert not unused, f"checkers no lesson calls: {unused}"


def test_every_checker_takes_a_seed_and_is_found_by_name():
    from lessons_lib.errors import CourseInputError

    for qualified in _checkers():
        module, name = qualified.split(".")
        checker = exercises.checker_by_name(name)
        assert checker.__module__ == f"lessons_lib.exercises.{module}"
        seed = inspect.signature(checker).parameters.get("seed")
        assert seed is not None and seed.kind is inspect.Parameter.KEYWORD_ONLY and seed.default is None, qualified
    for wrong in ("check_nothing", "passed"):
        try:
            exercises.checker_by_name(wrong)
        except CourseInputError:
            continue
        raise AssertionError(f"{wrong} was found")
