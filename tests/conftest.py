"""Shared fixtures and settings for the unit tests."""

from __future__ import annotations

import os
from typing import NamedTuple

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


class CommandResult(NamedTuple):
    """What one ``lessons`` command gave: its exit status and what it printed."""

    code: int
    out: str
    err: str


@pytest.fixture
def cli(capsys):
    """``cli(argv)``: the ``lessons`` command in this process → :class:`CommandResult`.

    Arguments may be paths; argparse's own exits give their status; a Ctrl-C that escapes ``main``
    fails the test (on a console the user would see a traceback).
    """
    from lessons_lib.cli import main

    def run(argv) -> CommandResult:
        try:
            code = main([str(a) for a in argv])
        except SystemExit as error:  # argparse's own errors and --help
            code = error.code if isinstance(error.code, int) else 2
        except KeyboardInterrupt:
            pytest.fail("Ctrl-C escaped the command: the user sees a KeyboardInterrupt traceback")
        captured = capsys.readouterr()
        return CommandResult(code, captured.out, captured.err)

    return run


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
