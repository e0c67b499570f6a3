"""Exercises as assignments: the student version, nbgrader course folders, and grading.

The lesson notebooks are the *solution* notebooks. In an exercise cell the answer sits
between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` (nbgrader's markers); the next
code cell that calls a ``check_…`` function of :mod:`lessons_lib.exercises` is that
exercise's check cell.

- :func:`make_student_notebook` replaces every solution region with a comment saying
  what to write and ``raise NotImplementedError()``, and clears all outputs;
  :func:`build_student_version` writes them, never into (or below) a folder it reads from.
- :func:`build_workspace` makes a learner's own copy of the course: the student version
  of every lesson and the glossary, adding what is missing and never touching a file the
  learner already has.
- :func:`build_nbgrader_course` lays the notebooks out as an nbgrader course
  (``source/<assignment>/``) with nbgrader cell metadata, so that
  ``nbgrader generate_assignment`` produces the release version.

Grading completed notebooks (isolated execution, scores decided by the grader) lives in
:mod:`lessons_lib.grader.grading`.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import nbformat

from lessons_lib.course.notebooks import read_notebook
from lessons_lib.errors import CourseInputError, file_errors
from lessons_lib.files import BOOKKEEPING_NAMES, check_output_folder, folder_lock, record_written

BEGIN_SOLUTION = "### BEGIN SOLUTION"
END_SOLUTION = "### END SOLUTION"
_CHECK_CALL = re.compile(r"\bcheck_\w+\s*\(")
_DEF_LINE = re.compile(r"^\s*def\s+(\w+)\s*\((.*)\)\s*(->.*)?:\s*$")


@dataclass(frozen=True)
class Exercise:
    """An exercise cell and the check cell that grades it (indices into ``nb.cells``)."""

    number: int
    cell_index: int
    check_index: int


def find_exercises(nb: nbformat.NotebookNode, name: str = "notebook") -> list[Exercise]:
    """Exercise cells (with a solution region) paired with the check cell that follows each.

    Raises:
        CourseInputError: an exercise cell has no check cell before the next exercise.
    """
    exercises: list[Exercise] = []
    cells = nb.cells
    for index, cell in enumerate(cells):
        if cell.cell_type != "code" or BEGIN_SOLUTION not in cell.source:
            continue
        check = next((j for j in range(index + 1, len(cells)) if cells[j].cell_type == "code"
                      and (BEGIN_SOLUTION in cells[j].source or _CHECK_CALL.search(cells[j].source))), None)
        if check is None or BEGIN_SOLUTION in cells[check].source:
            raise CourseInputError(f"{name} cell {index}: exercise without a check cell after it")
        exercises.append(Exercise(number=len(exercises) + 1, cell_index=index, check_index=check))
    return exercises


def _todo_comment(lines: list[str], begin: int) -> str:
    """What the learner should write: named after the function that encloses the region."""
    for line in reversed(lines[:begin]):
        match = _DEF_LINE.match(line)
        if match:
            return f"TODO: implement `{match.group(1)}({match.group(2)})` as the exercise above describes"
    return "TODO: write the code that the exercise above asks for"


def strip_solutions(source: str, where: str = "cell") -> str:
    """Replace each solution region by a TODO comment and ``raise NotImplementedError()``.

    Args:
        source: a code cell's source.
        where: names the cell in error messages.

    Raises:
        CourseInputError: unbalanced or nested markers.
    """
    lines = source.split("\n")
    out: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        if END_SOLUTION in line:
            raise CourseInputError(f"{where}, line {index + 1}: {END_SOLUTION} without {BEGIN_SOLUTION}")
        if BEGIN_SOLUTION not in line:
            out.append(line)
            index += 1
            continue
        end = next((j for j in range(index + 1, len(lines)) if END_SOLUTION in lines[j] or BEGIN_SOLUTION in lines[j]), None)
        if end is None or BEGIN_SOLUTION in lines[end]:
            raise CourseInputError(f"{where}, line {index + 1}: {BEGIN_SOLUTION} without a matching {END_SOLUTION}")
        indent = line[: len(line) - len(line.lstrip())]
        out.append(f"{indent}# {_todo_comment(lines, index)}")
        out.append(f"{indent}raise NotImplementedError()")
        index = end + 1
    return "\n".join(out)


def solution_lines(nb: nbformat.NotebookNode) -> list[str]:
    """The non-blank lines inside the notebook's solution regions (to prove they do not leak)."""
    found = []
    for cell in nb.cells:
        inside = False
        for line in cell.source.split("\n"):
            if BEGIN_SOLUTION in line:
                inside = True
            elif END_SOLUTION in line:
                inside = False
            elif inside and line.strip():
                found.append(line.strip())
    return found


def make_student_notebook(nb: nbformat.NotebookNode, name: str = "notebook") -> nbformat.NotebookNode:
    """A copy with solutions replaced, outputs and execution counts cleared, everything else unchanged."""
    student = copy.deepcopy(nb)
    find_exercises(student, name)  # validates the exercise / check pairing
    for index, cell in enumerate(student.cells):
        if cell.cell_type == "code":
            if BEGIN_SOLUTION in cell.source or END_SOLUTION in cell.source:
                cell.source = strip_solutions(cell.source, f"{name} cell {index}")
            cell.outputs = []
            cell.execution_count = None
    student.metadata.pop("lessons", None)  # it was not executed by the course's command
    return student


def check_output_outside(out_dir: Path, inputs: Sequence[str | Path], flag: str = "--out") -> None:
    """Refuse an output folder that is, or lies inside, a folder the inputs are read from.

    An input folder counts as such, and so does the folder of an input file: writing there
    would overwrite the solution notebooks (or mix derived copies with them).

    Raises:
        CourseInputError: naming the output folder and the input folder.
    """
    out = Path(out_dir).resolve()
    for item in inputs:
        folder = Path(item).resolve() if Path(item).is_dir() else Path(item).resolve().parent
        if out == folder or folder in out.parents:
            where = "is" if out == folder else "is inside"
            raise CourseInputError(f"{flag} {out_dir} {where} the input folder {folder}: it would overwrite or "
                                   "mix with the notebooks it reads; choose a folder outside it")


def _write_notebook(nb: nbformat.NotebookNode, target: Path) -> None:
    """Write ``nb`` to ``target`` atomically (never half a notebook), recorded as the course's."""
    text = nbformat.writes(nb)
    _write_file(target, text if text.endswith("\n") else text + "\n")  # as nbformat.write ends it


def _write_file(target: Path, content: bytes | str) -> None:
    with file_errors(target.parent, "create the folder"):
        target.parent.mkdir(parents=True, exist_ok=True)
    record_written(target, content)


def _make_folder(folder: Path) -> Path:
    with file_errors(folder, "create the folder"):
        folder.mkdir(parents=True, exist_ok=True)
    return folder


def build_student_version(paths: list[Path], out_dir: Path, force: bool = False) -> list[Path]:
    """Write the student version of each notebook into ``out_dir``; return the written paths.

    Every notebook is read and converted before anything is written. ``out_dir`` must be
    new, empty, or hold only files this course wrote there and nobody changed since (an
    earlier student version): a learner's edited notebook is never overwritten, unless
    ``force`` (``--force``) says to.

    Raises:
        CourseInputError: ``out_dir`` is or lies inside an input folder, holds files the
            course did not write, or a notebook is not valid (naming it).
    """
    check_output_outside(out_dir, paths)
    students = [(make_student_notebook(read_notebook(path), path.name), out_dir / path.name) for path in paths]
    check_output_folder(out_dir, "--out", force=force)  # before any folder is made, and again under its lock
    with folder_lock(_make_folder(out_dir)):
        check_output_folder(out_dir, "--out", force=force)
        for nb, target in students:
            _write_notebook(nb, target)
    return [target for _, target in students]


@dataclass(frozen=True)
class WorkspaceReport:
    """What :func:`build_workspace` did: the files it wrote, and the learner's files it left alone."""

    written: list[Path]
    kept: list[Path]


def build_workspace(paths: list[Path], workspace: Path, extra_files: Sequence[Path] = ()) -> WorkspaceReport:
    """Give a learner the student version of ``paths`` (and copies of ``extra_files``) in ``workspace``.

    A file that already exists in ``workspace`` is the learner's and is never overwritten,
    even when the course has changed since; deleting it and running again gives a fresh copy.

    Raises:
        CourseInputError: ``workspace`` is or lies inside an input folder, or a notebook is
            not valid (naming it).
    """
    check_output_outside(workspace, [*paths, *extra_files], flag="the workspace")
    with folder_lock(_make_folder(workspace)):
        missing = [path for path in [*paths, *extra_files] if not (workspace / path.name).exists()]
        students = {path: make_student_notebook(read_notebook(path), path.name) for path in missing
                    if path.suffix == ".ipynb"}
        for path in missing:  # each written atomically: an interruption never leaves half a notebook to keep
            target = workspace / path.name
            if path in students:
                _write_notebook(students[path], target)
            else:
                with file_errors(path, "read"):
                    content = path.read_bytes()
                _write_file(target, content)
    kept = [workspace / path.name for path in [*paths, *extra_files] if path not in missing]
    return WorkspaceReport(written=[workspace / path.name for path in missing], kept=kept)


def add_nbgrader_metadata(nb: nbformat.NotebookNode, prefix: str) -> nbformat.NotebookNode:
    """Mark exercise cells as nbgrader solution cells and check cells as graded (1 point each)."""
    marked = copy.deepcopy(nb)
    for exercise in find_exercises(marked, prefix):
        marked.cells[exercise.cell_index].metadata["nbgrader"] = {
            "grade": False, "solution": True, "locked": False, "schema_version": 3,
            "grade_id": f"{prefix}-exercise-{exercise.number}",
        }
        marked.cells[exercise.check_index].metadata["nbgrader"] = {
            "grade": True, "solution": False, "locked": True, "points": 1, "schema_version": 3,
            "grade_id": f"{prefix}-check-{exercise.number}",
        }
    return marked


COURSE_ID = "attention-course"
# The longest a lesson's cell may run when it is graded, by `lessons grade` and in the nbgrader
# course alike: each lesson stamps its wall time, and the slowest (lesson 06) was stamped at 11
# minutes on 2 cores at load 7; a grading machine is busy too (nbgrader's own default, 30 s,
# interrupts lessons that train). The limit stays above 1.5 times that stamp, so a busier machine still grades.
GRADING_CELL_SECONDS = 1200
NBGRADER_CONFIG = '''# nbgrader configuration written by `lessons nbgrader-course`.
import os

c = get_config()  # noqa: F821
# The course folder is the one this file is in, wherever it is moved to.
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.course_id = {course_id!r}
# A cell may run {cell_seconds} s when autograded (the lessons that train need minutes, not nbgrader's 30 s).
c.ExecutePreprocessor.timeout = {cell_seconds}
'''


def build_nbgrader_course(paths: list[Path], course_dir: Path, force: bool = False) -> list[str]:
    """Lay notebooks out as an nbgrader course, one assignment per lesson.

    ``course_dir/source/<stem>/<notebook>`` gets the notebook with nbgrader metadata and
    ``course_dir/nbgrader_config.py`` the course's settings (nbgrader finds the assignments
    in ``source/``). Returns the assignment names.

    Raises:
        CourseInputError: ``course_dir`` is inside an input folder, or is not empty and
            ``force`` is false (a course folder holds releases, submissions and grades).
    """
    check_output_outside(course_dir, paths)
    if not force and course_dir.is_dir() and any(p.name not in BOOKKEEPING_NAMES for p in course_dir.iterdir()):
        raise CourseInputError(f"{course_dir} is not empty: choose a new folder, or add --force to write the "
                               "course's source/ and nbgrader_config.py into it (other files stay)")
    marked = []
    for path in paths:
        nb = read_notebook(path)
        if find_exercises(nb, path.name):
            marked.append((path, add_nbgrader_metadata(nb, path.stem)))
    with folder_lock(_make_folder(course_dir)):
        for path, nb in marked:
            _write_notebook(nb, course_dir / "source" / path.stem / path.name)
        _write_file(course_dir / "nbgrader_config.py", NBGRADER_CONFIG.format(course_id=COURSE_ID, cell_seconds=GRADING_CELL_SECONDS))
    return [path.stem for path, _ in marked]
