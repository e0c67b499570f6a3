"""Shared fixtures and settings for the unit tests."""

from __future__ import annotations

import os

import matplotlib
import pytest

# Tests never open windows.
matplotlib.use("Agg")
os.environ.setdefault("TQDM_DISABLE", "1")

import torch  # noqa: E402

# The tests' models are tiny: one thread per core costs more in synchronisation than it gains
# (on 2 busy cores the unit tests took twice as long). Only this process: the notebooks' kernels
# and the command lines the tests start keep their own settings.
torch.set_num_threads(1)


@pytest.fixture(scope="session")
def executed_student_version():
    """``run(path)``: the student version of a lesson, executed once per test run (errors allowed;
    the parameters are ``lesson_runs.run_parameters``)."""
    from lesson_runs import execute_student_version

    done: dict = {}

    def run(path):
        if path not in done:
            done[path] = execute_student_version(path)
        return done[path]

    return run


@pytest.fixture(scope="session")
def grading_isolation() -> str:
    """The isolation a grading test asks for: bubblewrap ("auto") where it works, else the plain
    process named explicitly (grading refuses to fall back by itself; the report says which)."""
    from lessons_lib.grader.sandbox import choose_isolation
    from lessons_lib.errors import CourseInputError

    try:
        choose_isolation("auto")
    except CourseInputError:
        return "process"
    return "auto"
