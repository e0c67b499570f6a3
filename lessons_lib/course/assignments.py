"""Exercises as assignments: the student version, nbgrader course folders, and grading.

The lesson notebooks are the *solution* notebooks. In an exercise cell the answer sits
between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` (nbgrader's markers); the next
code cell that calls a ``check_…`` function of :mod:`lessons_lib.exercises` is that
exercise's check cell.

- :func:`make_student_notebook` replaces every solution region with a comment saying
  what to write and ``raise NotImplementedError()``, and clears all outputs.
- :func:`build_nbgrader_course` lays the notebooks out as an nbgrader course
  (``source/<assignment>/``) with nbgrader cell metadata, so that
  ``nbgrader generate_assignment`` produces the release version.
- :func:`grade_notebook` executes a completed notebook and reports which checks pass,
  finding the check cells by their source in the solution notebook.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

import nbformat

from lessons_lib.errors import CourseInputError
from lessons_lib.exercises import PASS_MARK

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
    exercises = []
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


def build_student_version(paths: list[Path], out_dir: Path) -> list[Path]:
    """Write the student version of each notebook into ``out_dir``; return the written paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        target = out_dir / path.name
        nbformat.write(make_student_notebook(nb, path.name), target)
        written.append(target)
    return written


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


NBGRADER_CONFIG = '''# nbgrader configuration written by `lessons nbgrader-course`.
c = get_config()  # noqa: F821
c.CourseDirectory.root = {root!r}
c.CourseDirectory.db_assignments = {assignments!r}
'''


def build_nbgrader_course(paths: list[Path], course_dir: Path) -> list[str]:
    """Lay notebooks out as an nbgrader course, one assignment per lesson.

    ``course_dir/source/<stem>/<notebook>`` gets the notebook with nbgrader metadata and
    ``course_dir/nbgrader_config.py`` lists the assignments. Returns the assignment names.
    """
    names = []
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        if not find_exercises(nb, path.name):
            continue
        stem = path.stem
        target = course_dir / "source" / stem / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(add_nbgrader_metadata(nb, stem), target)
        names.append(stem)
    config = NBGRADER_CONFIG.format(root=str(course_dir.resolve()), assignments=[{"name": n} for n in names])
    (course_dir / "nbgrader_config.py").write_text(config, encoding="utf-8")
    return names


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one exercise's check cell."""

    exercise: int
    passed: bool
    message: str


@dataclass
class NotebookGrade:
    """All checks of one notebook."""

    notebook: str
    checks: list[CheckResult] = field(default_factory=list)

    @property
    def score(self) -> int:
        return sum(c.passed for c in self.checks)

    @property
    def total(self) -> int:
        return len(self.checks)


def _check_outcome(cell: nbformat.NotebookNode) -> tuple[bool, str]:
    errors = [o for o in cell.outputs if o.get("output_type") == "error"]
    if errors:
        evalue = errors[0].get("evalue", "").strip().splitlines()
        return False, f"{errors[0].get('ename')}: {evalue[0] if evalue else ''}".strip()
    text = "".join(o.get("text", "") for o in cell.outputs if o.get("output_type") == "stream")
    passed_lines = [line for line in text.splitlines() if line.startswith(PASS_MARK)]
    if passed_lines:
        return True, passed_lines[0]
    return False, "the check cell printed no pass line (was it changed or not run?)"


def grade_executed(nb: nbformat.NotebookNode, reference: nbformat.NotebookNode, name: str) -> NotebookGrade:
    """Read the check outcomes of a just-executed notebook.

    Check cells are found by their source, taken from ``reference`` (the solution
    notebook): learners write code in the exercise cells and may add cells, but the
    check cells are theirs to run, not to edit. A check cell that is missing or was
    edited fails with a message saying so.
    """
    grade = NotebookGrade(notebook=name)
    used: set[int] = set()
    for exercise in find_exercises(reference, name):
        check_source = reference.cells[exercise.check_index].source
        match = next((i for i, c in enumerate(nb.cells)
                      if i not in used and c.cell_type == "code" and c.source == check_source), None)
        if match is None:
            grade.checks.append(CheckResult(exercise.number, False, "the check cell was removed or edited"))
            continue
        used.add(match)
        passed, message = _check_outcome(nb.cells[match])
        grade.checks.append(CheckResult(exercise.number, passed, message))
    return grade


def grade_notebook(path: Path, reference_dir: Path, timeout: int = 900) -> NotebookGrade:
    """Execute a completed notebook in a fresh kernel (errors allowed) and grade its checks.

    Args:
        path: the learner's notebook.
        reference_dir: folder with the solution notebook of the same file name.
        timeout: seconds allowed per cell.
    """
    from nbclient import NotebookClient

    from lessons_lib.course.notebooks import KERNEL_NAME, kernel_environment

    reference_path = reference_dir / path.name
    if not reference_path.is_file():
        raise CourseInputError(f"{path}: no solution notebook named {path.name} in {reference_dir}")
    reference = nbformat.read(reference_path, as_version=4)
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=timeout, kernel_name=KERNEL_NAME, allow_errors=True,
                            record_timing=False, resources={"metadata": {"path": str(path.parent)}})
    with kernel_environment():
        client.execute()
    return grade_executed(nb, reference, path.name)


def grade_submissions(submissions: Path, out_dir: Path, reference_dir: Path, timeout: int = 900) -> dict:
    """Grade ``submissions/<student>/*.ipynb``; write ``grades.json`` and ``grades.txt`` to ``out_dir``.

    Returns:
        ``{student: {"score": int, "total": int, "notebooks": {name: {...}}}}``.
    """
    students = sorted(p for p in submissions.iterdir() if p.is_dir()) if submissions.is_dir() else []
    if not students:
        raise CourseInputError(f"{submissions}: expected one folder per student with their notebooks")
    report: dict = {}
    for student in students:
        grades = [grade_notebook(p, reference_dir, timeout) for p in sorted(student.glob("*.ipynb"))]
        report[student.name] = {
            "score": sum(g.score for g in grades),
            "total": sum(g.total for g in grades),
            "notebooks": {g.notebook: {"score": g.score, "total": g.total,
                                       "checks": [asdict(c) for c in g.checks]} for g in grades},
        }
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "grades.json").write_text(json.dumps(report, ensure_ascii=False, indent=2), encoding="utf-8")
    (out_dir / "grades.txt").write_text(format_grades(report), encoding="utf-8")
    return report


def format_grades(report: dict) -> str:
    """A readable table: one line per student and notebook, failed checks with their message."""
    lines = []
    for student, result in report.items():
        lines.append(f"{student}: {result['score']}/{result['total']}")
        for notebook, grade in result["notebooks"].items():
            lines.append(f"  {notebook}: {grade['score']}/{grade['total']}")
            for check in grade["checks"]:
                if not check["passed"]:
                    lines.append(f"    exercise {check['exercise']}: {check['message']}")
    return "\n".join(lines) + "\n"
