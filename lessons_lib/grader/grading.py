"""Grading learners' notebooks that nobody has to trust: isolated execution, scores decided by the grader.

A submission folder holds one folder per student with their notebooks
(``submissions/<student>/<lesson>.ipynb``). For each notebook:

1. **Isolation.** The student's files are copied once, before anything runs, into the
   grader's private staging folder (regular files only; links are not followed). Each
   notebook then runs in its own sandbox session (:mod:`lessons_lib.grader.sandbox`):
   its own process tree with a wall-clock limit per notebook, a time limit per cell,
   memory and file-size limits, and — where bubblewrap works — only its own files
   visible (read-only, copied into a private ``/tmp``), no network, no other process, no
   write access anywhere else. :func:`grade_submissions` records which isolation was in
   force; :func:`lessons_lib.grader.sandbox.choose_isolation` says what each level gives.
2. **Execution.** Inside, :mod:`lessons_lib.grader.grading_worker` executes the whole
   notebook in a fresh kernel (errors allowed: the check cells still give the learner
   their feedback, but their output is ignored here). Each cell that raised is named in
   the report (:class:`CellError`: its index, its exercise, its exception and one line), so
   a low score that comes from a cell that could not run is seen as such.
3. **Trusted scoring.** The exercises are found in the *solution* notebook (the
   ``### BEGIN SOLUTION`` cells and the check cell after each, whose call
   ``check_x(learner_function)`` names both the checker and the learner's function). The
   grader runs each checker of :mod:`lessons_lib.exercises` **in its own process**, with a
   seed of its own so the inputs are ones the notebook never saw, and hands it a stand-in
   for the learner's function: each call is sent to the sandbox, runs there on a copy of
   the arguments, and only plain data comes back (tensors, numbers, strings, lists,
   loaded with ``torch.load(weights_only=True)``; never a pickle of an arbitrary object).
   The comparison with the reference and the score happen on the trusted side, so
   patching or redefining a checker inside the notebook, printing a pass line or
   returning an object that claims to equal anything earns nothing.
4. **Failures stay local.** A notebook that is not valid, has no solution notebook, runs
   past its time limit, exhausts its memory or kills its kernel is reported as such, with
   every exercise failed; the other notebooks and students are graded. The report
   (``grades.json``, ``grades.txt``) is rewritten after every notebook, so it exists
   whatever happens.
"""

from __future__ import annotations

import ast
import base64
import contextlib
import io
import json
import math
import os
import queue
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from lessons_lib.course.assignments import check_output_outside, find_exercises, make_student_notebook
from lessons_lib.course.notebooks import KERNEL_ENV, read_notebook
from lessons_lib.grader.code_reading import code_tree
from lessons_lib.grader.sandbox import (INPUT_DIR, SANDBOX_TMP, Isolation, Limits, PidsCgroup,
                                        check_package_matches_sandbox, choose_isolation, kill_session,
                                        launch_environment, process_limit_in_force, sandbox_command,
                                        sandbox_environment)
from lessons_lib.errors import CourseInputError
from lessons_lib.files import check_output_folder, folder_lock, record_written
from lessons_lib.validation import check_input_dir, check_output_dir

__all__ = [
    "GradedExercise",
    "graded_exercises",
    "CheckResult",
    "CellError",
    "cell_errors",
    "NotebookGrade",
    "score_exercises",
    "SandboxSession",
    "grade_notebook",
    "grade_submissions",
    "format_grades",
    "reference_code_flags",
    "shown",
]

GRADES_JSON = "grades.json"
GRADES_TXT = "grades.txt"
GRADES_KIND = "grading report"  # what the output rule calls the two files (lessons_lib.files)
# A submission folder larger than this is not graded (notebooks and their data are small).
MAX_SUBMISSION_MB = 200
# The longest reply line the grader reads from a sandbox (a call's result, base64-encoded).
_MAX_REPLY_BYTES = 48 * 1024 * 1024


@dataclass(frozen=True)
class GradedExercise:
    """One exercise as the grader sees it: which learner function, which checker of :mod:`lessons_lib.exercises`."""

    number: int
    function: str
    checker: str


def graded_exercises(reference: Any, name: str) -> list[GradedExercise]:
    """The exercises of a solution notebook, each with the function its check cell passes to its checker.

    Raises:
        CourseInputError: a check cell that does not call exactly one ``check_…(name)``.
    """
    out = []
    for exercise in find_exercises(reference, name):
        source = reference.cells[exercise.check_index].source
        try:
            tree = ast.parse(source)
        except SyntaxError as error:
            raise CourseInputError(f"{name} cell {exercise.check_index}: the check cell is not valid Python ({error})") from None
        calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                 and node.func.id.startswith("check_")]
        argument = calls[0].args[0] if len(calls) == 1 and len(calls[0].args) == 1 else None
        checker = calls[0].func if calls else None
        if not isinstance(argument, ast.Name) or not isinstance(checker, ast.Name):
            raise CourseInputError(f"{name} cell {exercise.check_index}: a check cell must call one check_…(function)")
        out.append(GradedExercise(exercise.number, argument.id, checker.id))
    return out


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one exercise."""

    exercise: int
    function: str
    passed: bool
    message: str


@dataclass(frozen=True)
class CellError:
    """A cell of the submission that raised while the notebook executed.

    Attributes:
        cell: the cell's index in the submitted notebook (0-based, markdown cells counted).
        exercise: the exercise whose check cell or function cell it is, else ``None``.
        where: that in words (``"check cell of exercise 2 (safe_masked_softmax)"``), else ``""``.
        error: the exception's name.
        message: the first line of its message.
    """

    cell: int
    exercise: int | None
    where: str
    error: str
    message: str

    def line(self) -> str:
        """One line of the report: ``cell 12 (check cell of exercise 2 (f)): NameError: name 'x' is not defined``."""
        where = f" ({self.where})" if self.where else ""
        return f"cell {self.cell}{where}: {self.error}" + (f": {self.message}" if self.message else "")


def _called_and_defined(source: str) -> tuple[set[tuple[str, str]], set[str]]:
    """The ``check_…(name)`` calls and the functions a cell defines (nothing for a cell that is not Python)."""
    tree = code_tree(source)
    if tree is None:
        return set(), set()
    calls = {(node.func.id, node.args[0].id) for node in ast.walk(tree)
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id.startswith("check_")
             and node.args and isinstance(node.args[0], ast.Name)}
    defined = {node.name for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return calls, defined


def _exercise_of_cell(source: str, exercises: Sequence[GradedExercise]) -> tuple[int | None, str]:
    """Which exercise a submitted cell belongs to: its check call, else its function's definition."""
    calls, defined = _called_and_defined(source)
    for exercise in exercises:
        if (exercise.checker, exercise.function) in calls:
            return exercise.number, f"check cell of exercise {exercise.number} ({exercise.function})"
    for exercise in exercises:
        if exercise.function in defined:
            return exercise.number, f"exercise {exercise.number} ({exercise.function})"
    return None, ""


def cell_errors(raised: Sequence[Sequence], submitted: Any, exercises: Sequence[GradedExercise]) -> list[CellError]:
    """The cells that raised, each named by its index, its exercise where it has one, its exception and one line.

    Args:
        raised: ``[cell index, exception name, first line of the message]`` per error, as the
            sandbox reported them (untrusted: indices that are no cell of ``submitted`` are kept
            without an exercise).
        submitted: the submitted notebook (the cells are read here, on the trusted side).
        exercises: the solution's exercises (:func:`graded_exercises`).
    """
    out = []
    for index, name, message in raised:
        cell = submitted.cells[index] if 0 <= index < len(submitted.cells) else None
        source = cell.source if cell is not None and cell.cell_type == "code" else ""
        number, where = _exercise_of_cell(source, exercises)
        out.append(CellError(index, number, where, name, message))
    return out


@dataclass
class NotebookGrade:
    """All exercises of one notebook.

    Attributes:
        status: ``"graded"``, ``"timed out"`` (the notebook's time ran out) or ``"failed"``
            (not a valid notebook, no solution notebook, the kernel died, ...).
        message: why, when the status is not ``"graded"`` (else empty).
        cell_errors: the cells that raised while the notebook executed (:class:`CellError`).
        flags: what a teacher should look at (see :func:`reference_code_flags`).
    """

    notebook: str
    status: str = "graded"
    message: str = ""
    checks: list[CheckResult] = field(default_factory=list)
    cell_errors: list[CellError] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)

    @property
    def score(self) -> int:
        return sum(c.passed for c in self.checks)

    @property
    def total(self) -> int:
        return len(self.checks)

    def to_dict(self) -> dict:
        return {"status": self.status, "message": self.message, "score": self.score, "total": self.total,
                "checks": [asdict(c) for c in self.checks], "cell_errors": [asdict(e) for e in self.cell_errors],
                "flags": self.flags}


class _SessionEnded(BaseException):
    """The sandbox session is over (time limit, crash): no more calls can be answered.

    A ``BaseException``, so that a checker's ``except Exception`` does not take it for the
    learner's mistake.
    """


def _learner_error(ename: str, evalue: str) -> Exception:
    """An exception that reads like the one the learner's function raised in the sandbox."""
    if ename == "NotImplementedError":
        return NotImplementedError(evalue)
    name = ename if ename.isidentifier() else "Exception"
    return type(name, (Exception,), {"__module__": "submission"})(evalue)


def score_exercises(exercises: Sequence[GradedExercise], function_for: Callable[[str], Callable],
                    seed: int) -> list[CheckResult]:
    """Run each exercise's checker here, on inputs drawn from ``seed``, against ``function_for(name)``.

    Args:
        exercises: from :func:`graded_exercises`.
        function_for: the learner's function of a given name (for grading, a stand-in that
            calls it in the sandbox; in tests, a plain function).
        seed: seeds the checkers' inputs (exercise ``n`` uses ``seed + n``).

    Returns:
        One :class:`CheckResult` per exercise, in order.

    Raises:
        _SessionEnded: the sandbox stopped answering (the caller fails the rest).
    """
    from lessons_lib.exercises import PASS_MARK, ExerciseCheckError, checker_by_name

    results = []
    for exercise in exercises:
        checker = checker_by_name(exercise.checker)
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):
                checker(function_for(exercise.function), seed=seed + exercise.number)
        except ExerciseCheckError as error:
            passed, message = False, str(error)
        except NotImplementedError as error:
            passed, message = False, f"NotImplementedError: {error}".strip()
        except Exception as error:  # the checker choked on what the learner's function returned
            passed, message = False, f"the checker could not use the result ({type(error).__name__}: {error})"
        else:
            lines = [line for line in printed.getvalue().splitlines() if line.startswith(PASS_MARK)]
            passed, message = True, lines[-1] if lines else "passed"
        results.append(CheckResult(exercise.number, exercise.function, passed, message[:2000]))
    return results


class SandboxSession:
    """One notebook executing in a sandbox, and the calls of its functions that the grader sends it.

    Args:
        isolation: the level (see :func:`lessons_lib.grader.sandbox.choose_isolation`).
        staged: the student's staged files (read-only for the session).
        notebook: the notebook's file name in ``staged``.
        limits: time, memory and disk limits.
        run_dir: a fresh private folder for this session (the working copy where bubblewrap
            is not available, and the log).
        hidden: folders the sandbox must never see.
    """

    def __init__(self, isolation: Isolation, staged: Path, notebook: str, limits: Limits, run_dir: Path,
                 hidden: Sequence[Path] = ()) -> None:
        self.limits = limits
        # With a PID namespace, killing the session ends every process in it; without one the
        # worker must shut its kernel down itself, or the kernel would outlive the session.
        self._graceful_exit = isolation.name == "process"
        self.deadline = time.monotonic() + limits.notebook_seconds
        self.log_path = run_dir / "worker.log"
        sandboxed = isolation.name == "bubblewrap"
        work = Path(SANDBOX_TMP) / "submission" if sandboxed else run_dir / "submission"
        if not sandboxed:
            shutil.copytree(staged, work)
        home = (Path(SANDBOX_TMP) if sandboxed else run_dir) / "home"
        env = sandbox_environment(str(home), {**KERNEL_ENV, "TMPDIR": str(home.parent)})
        argv = [sys.executable, "-I", "-m", "lessons_lib.grader.grading_worker", "--notebook", notebook,
                "--work", str(work), "--cell-seconds", str(math.ceil(limits.cell_seconds)),
                "--call-seconds", str(math.ceil(limits.call_seconds)), "--memory-mb", str(limits.memory_mb),
                "--disk-mb", str(limits.disk_mb), "--processes", str(limits.processes)]
        if sandboxed:
            argv += ["--copy-from", INPUT_DIR]
        command = sandbox_command(isolation, argv, staged, env, limits, hidden)
        # The session's own process limit, whoever its user is; without one, RLIMIT_NPROC alone (see the report).
        self.cgroup = PidsCgroup.create(limits.processes)
        if self.cgroup is not None:
            command = self.cgroup.enter(command)
        try:
            with open(self.log_path, "wb") as log:
                self.process = subprocess.Popen(
                    command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, start_new_session=True,
                    cwd=None if sandboxed else work, env=launch_environment(isolation, env),
                )
        except BaseException:
            if self.cgroup is not None:
                self.cgroup.close()
            raise
        assert self.process.stdin is not None and self.process.stdout is not None  # both are pipes
        self._to_worker, self._from_worker = self.process.stdin, self.process.stdout
        self._replies: queue.Queue = queue.Queue()
        threading.Thread(target=self._read_replies, daemon=True).start()

    def _read_replies(self) -> None:
        while True:
            line = self._from_worker.readline(_MAX_REPLY_BYTES)
            if not line:
                self._replies.put(None)
                return
            if not line.endswith(b"\n"):
                self._replies.put({"event": "failed", "message": "the sandbox sent a reply larger than "
                                   f"{_MAX_REPLY_BYTES // 2**20} MiB"})
                return
            try:
                message = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                message = {"event": "failed", "message": "the sandbox sent something that is not a reply"}
            self._replies.put(message if isinstance(message, dict) else {"event": "failed", "message": "bad reply"})

    def _reply(self) -> dict:
        """The next reply, or :class:`_SessionEnded` when the session died or its time ran out."""
        remaining = self.deadline - time.monotonic()
        try:
            reply = self._replies.get(timeout=max(0.0, remaining))
        except queue.Empty:
            self.close()
            raise _SessionEnded(f"timed out: the notebook ran past its {self.limits.notebook_seconds:g} s limit") from None
        if reply is None:
            raise _SessionEnded(f"failed: the sandbox ended (exit status {self.process.wait()}){self._log_tail()}")
        if reply.get("event") == "failed":
            self.close()
            raise _SessionEnded(f"failed: {str(reply.get('message', ''))[:500]}")
        return reply

    def _log_tail(self) -> str:
        try:
            with open(self.log_path, "rb") as log:
                log.seek(max(0, os.path.getsize(self.log_path) - 2000))
                lines = log.read().decode("utf-8", errors="replace").strip().splitlines()
        except OSError:
            return ""
        return f"; last log line: {lines[-1][:300]}" if lines else ""

    def wait_executed(self) -> list[list]:
        """Wait until the notebook has run; returns its cells' errors ``[index, name, first line of the message]``."""
        reply = self._reply()
        if reply.get("event") != "executed":
            self.close()
            raise _SessionEnded("failed: the sandbox did not report the notebook's execution")
        errors = reply.get("errors", [])
        if not isinstance(errors, list):
            return []
        # The reply comes from the sandbox: only well-formed entries, their strings cut short.
        return [[error[0], " ".join(str(error[1]).split())[:100], " ".join(str(error[2]).split())[:300]]
                for error in errors if isinstance(error, list) and len(error) == 3 and type(error[0]) is int]

    def function(self, name: str) -> Callable:
        """A stand-in for the learner's function ``name``: each call runs in the sandbox."""
        def call(*args: Any, **kwargs: Any) -> Any:
            return self.call(name, args, kwargs)

        call.__name__ = name
        return call

    def call(self, name: str, args: tuple, kwargs: dict) -> Any:
        """Call ``name(*args, **kwargs)`` in the sandbox; return its result as data, or raise what it raised."""
        import torch

        buffer = io.BytesIO()
        torch.save((args, kwargs), buffer)
        request = {"op": "call", "function": name, "args": base64.b64encode(buffer.getvalue()).decode("ascii")}
        try:
            self._to_worker.write((json.dumps(request) + "\n").encode("utf-8"))
            self._to_worker.flush()
        except (BrokenPipeError, OSError):
            raise _SessionEnded(f"failed: the sandbox ended (exit status {self.process.wait()}){self._log_tail()}") from None
        reply = self._reply()
        if reply.get("error") == "timeout":
            raise TimeoutError(f"{name} did not return within {self.limits.call_seconds:g} s")
        if "payload" not in reply:
            raise RuntimeError(f"{name}: {str(reply.get('error', 'no result'))[:300]}")
        return _outcome_value(name, reply["payload"])

    def close(self) -> None:
        """End the session: ask the worker to stop (without a PID namespace), and kill whatever is left."""
        if self._graceful_exit and self.process.poll() is None:
            try:
                self._to_worker.write(b'{"op": "exit"}\n')
                self._to_worker.flush()
                self.process.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                pass
        kill_session(self.process)
        if self.cgroup is not None:  # every process still in the session's cgroup, wherever it went
            self.cgroup.close()


def _outcome_value(name: str, payload: Any) -> Any:
    """Decode a call's outcome (data only) and return its value, or raise the learner's exception."""
    import pickle

    import torch

    try:
        outcome = torch.load(io.BytesIO(base64.b64decode(payload, validate=True)), weights_only=True)
    except (ValueError, TypeError, RuntimeError, EOFError, pickle.UnpicklingError) as error:
        raise TypeError(f"{name} returned something that cannot be read back as data ({type(error).__name__})") from None
    status = outcome.get("status") if isinstance(outcome, dict) else None
    if status == "ok" and _is_data(outcome.get("value")):
        return outcome["value"]
    if status == "raised":
        raise _learner_error(str(outcome.get("ename", "Exception")), str(outcome.get("evalue", "")))
    if status == "missing":
        raise NameError(f"name {name!r} is not defined: the notebook defines no function {name}")
    if status == "not_callable":
        raise TypeError(f"{name} is a {str(outcome.get('type'))[:50]}, not a function")
    if status == "not_data":
        raise TypeError(f"{name} returned {str(outcome.get('type'))[:200]}, not a tensor, number or list")
    raise TypeError(f"{name}: the sandbox's reply is not a call outcome")


def _is_data(value: Any, depth: int = 0) -> bool:
    import torch

    if depth > 32:
        return False
    if value is None or type(value) in (bool, int, float, str):
        return True
    if type(value) is torch.Tensor:
        return value.layout == torch.strided and value.device.type == "cpu"
    if type(value) in (list, tuple):
        return all(_is_data(item, depth + 1) for item in value)
    return False


def reference_code_flags(submitted: Any, reference: Any, name: str) -> list[str]:
    """What a teacher should look at: the submission's routes to the course's own code that its exercise does not take.

    The course's reference implementations cannot be hidden from the sandbox: the checkers the
    notebook itself calls use them. So the grader reads the submission and flags each route
    (see :mod:`lessons_lib.grader.code_reading`): course names that neither the exercise
    notebook (the student version) nor its solution names, lookups inside objects or by a
    string that neither makes, and course code a graded function uses where the solution's
    does not. A flag is not a verdict: a teacher reads the notebook.
    """
    from lessons_lib.grader.code_reading import code_trees, course_names, course_names_used_by, runtime_lookups

    given, solution, trees = code_trees(make_student_notebook(reference, name)), code_trees(reference), code_trees(submitted)
    allowed = course_names(given) | course_names(solution)
    extra = sorted(n for n in course_names(trees) - allowed if not any(a.startswith(f"{n}.") for a in allowed))
    flags = []
    if extra:
        flags.append(f"uses the course's own code, which the exercise notebook does not import: {', '.join(extra)[:500]}")
    lookups = sorted(runtime_lookups(trees) - runtime_lookups(given) - runtime_lookups(solution))
    if lookups:
        flags.append("looks inside functions or modules, or looks names up at run time, which the exercise notebook "
                     f"does not (a route to the checkers' reference code): {', '.join(lookups)[:500]}")
    for exercise in graded_exercises(reference, name):
        called = sorted(course_names_used_by(trees, exercise.function)
                        - course_names_used_by(solution, exercise.function))
        if called:
            flags.append(f"exercise {exercise.number} ({exercise.function}) uses the course's own code, which the "
                         f"solution's {exercise.function} does not: {', '.join(called)[:500]}")
    return flags


def _failed_checks(exercises: Sequence[GradedExercise], message: str) -> list[CheckResult]:
    return [CheckResult(e.number, e.function, False, message) for e in exercises]


def grade_notebook(staged: Path, notebook: str, reference_dir: Path, isolation: Isolation, limits: Limits,
                   seed: int, hidden: Sequence[Path] = ()) -> NotebookGrade:
    """Execute one staged notebook in a sandbox session and score its exercises on the trusted side.

    Args:
        staged: the student's staged folder (see :func:`grade_submissions`).
        notebook: the notebook's file name there; its solution notebook has the same name
            in ``reference_dir``.
        isolation, limits: how the session runs.
        seed: seeds the checkers' inputs.
        hidden: folders the sandbox must never see.
    """
    grade = NotebookGrade(notebook)
    reference_path = reference_dir / notebook
    if not reference_path.is_file():
        grade.status, grade.message = "failed", f"no solution notebook named {notebook} in {reference_dir}"
        return grade
    reference = read_notebook(reference_path)
    exercises = graded_exercises(reference, notebook)
    try:
        submitted = read_notebook(staged / notebook)
    except CourseInputError as error:
        grade.status, grade.message = "failed", str(error).replace(str(staged), "<submission>")
        grade.checks = _failed_checks(exercises, "not graded: " + grade.message)
        return grade
    grade.flags = reference_code_flags(submitted, reference, notebook)
    with tempfile.TemporaryDirectory(prefix="lessons-grade-") as run_dir:
        session = SandboxSession(isolation, staged, notebook, limits, Path(run_dir), hidden)
        try:
            grade.cell_errors = cell_errors(session.wait_executed(), submitted, exercises)
            grade.checks = score_exercises(exercises, session.function, seed)
        except _SessionEnded as ended:
            status, _, message = str(ended).partition(": ")
            grade.status, grade.message = status, message
            done = {c.exercise for c in grade.checks}
            grade.checks += _failed_checks([e for e in exercises if e.number not in done], f"not graded: {message}")
        finally:
            session.close()
    return grade


def _stage(student: Path, target: Path) -> str:
    """Copy the regular files of ``student`` (recursively, links not followed) to ``target``; returns a note."""
    total, skipped = 0, 0
    for root, dirs, files in os.walk(student, followlinks=False):
        here = Path(root)
        destination = target / here.relative_to(student)
        destination.mkdir(parents=True, exist_ok=True)
        skipped += sum((here / d).is_symlink() for d in dirs)
        for name in files:
            source = here / name
            if source.is_symlink() or not source.is_file():
                skipped += 1
                continue
            total += source.stat().st_size
            if total > MAX_SUBMISSION_MB * 1024 * 1024:
                raise CourseInputError(f"{student} holds more than {MAX_SUBMISSION_MB} MB")
            shutil.copyfile(source, destination / name)
            os.chmod(destination / name, 0o644)
        os.chmod(destination, 0o755)  # the sandbox's user reads it; the staging folder above stays private
    return f"{skipped} symbolic links or special files not copied" if skipped else ""


def _check_references(staging: Path, reference_dir: Path) -> None:
    """Every solution notebook that a submission needs must be readable, before any submission runs."""
    names = sorted({p.name for p in staging.glob("*/*.ipynb")})
    for name in names:
        if (reference_dir / name).is_file():
            graded_exercises(read_notebook(reference_dir / name), name)


def shown(name: str) -> str:
    """A file name as the report and the log show it: bytes that are not UTF-8 as backslash escapes (``\\xff``).

    Python keeps such bytes of a name as lone surrogates, which no UTF-8 file or terminal takes.
    """
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _printable(value: Any) -> Any:
    """``value`` (the report) with every string, keys included, as :func:`shown` writes it."""
    if isinstance(value, str):
        return shown(value)
    if isinstance(value, dict):
        return {_printable(key): _printable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_printable(item) for item in value]
    return value


def _write_report(report: dict, out_dir: Path) -> None:
    report = _printable(report)
    for name, text in ((GRADES_JSON, json.dumps(report, ensure_ascii=False, indent=2) + "\n"),
                       (GRADES_TXT, format_grades(report))):
        record_written(out_dir / name, text, kind=GRADES_KIND)


def _students(submissions: Path) -> list[Path]:
    students = sorted(p for p in submissions.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not students:
        raise CourseInputError(f"{submissions}: expected one folder per student with their notebooks")
    return students


def grade_submissions(submissions: Path, out_dir: Path, reference_dir: Path, *, limits: Limits | None = None,
                      isolation: str | Isolation = "auto", seed: int | None = None,
                      log: Callable[[str], None] | None = None, force: bool = False) -> dict:
    """Grade ``submissions/<student>/*.ipynb``; write ``grades.json`` and ``grades.txt`` to ``out_dir``.

    Args:
        submissions: one folder per student.
        out_dir: where the report goes (rewritten after every notebook).
        reference_dir: the solution notebooks (same file names).
        limits: per-notebook limits (default :class:`~lessons_lib.grader.sandbox.Limits`).
        isolation: ``"auto"``, a level name, or an :class:`~lessons_lib.grader.sandbox.Isolation`.
        seed: seeds the checkers' inputs (default: a fresh random seed, recorded in the report).
        log: one line per notebook as it is graded.
        force: replace a ``grades.json`` / ``grades.txt`` in ``out_dir`` that the course did not write
            (without it they are refused before any work: the files the course wrote are replaced).

    Returns:
        ``{"isolation": {...}, "limits": {...}, "seed": int, "students": {student: {"score", "total",
        "notebooks": {name: {...}}, "note"}}}``.
    """
    check_input_dir(submissions, "submissions folder")
    check_input_dir(reference_dir, "reference folder")
    students = _students(submissions)
    check_output_outside(out_dir, [submissions])
    check_output_folder(out_dir, "--out", (GRADES_JSON, GRADES_TXT), kind=GRADES_KIND, force=force)
    check_package_matches_sandbox()
    chosen = isolation if isinstance(isolation, Isolation) else choose_isolation(isolation)
    check_output_dir(out_dir, "--out")
    limits = limits or Limits()
    seed = secrets.randbelow(2**31) if seed is None else seed
    with folder_lock(out_dir):  # one grader at a time writes this report
        return _grade_all(submissions, students, out_dir, reference_dir, limits, chosen, seed, log)


def _grade_all(submissions: Path, students: list[Path], out_dir: Path, reference_dir: Path, limits: Limits,
               chosen: Isolation, seed: int, log: Callable[[str], None] | None) -> dict:
    """Stage every submission, then grade each notebook in its sandbox, rewriting the report after each."""
    report: dict = {"isolation": {**chosen.to_dict(), "process_limit": process_limit_in_force(limits)},
                    "limits": limits.to_dict(), "seed": seed, "students": {}}
    with tempfile.TemporaryDirectory(prefix="lessons-staging-") as staging:
        notes = {}
        for student in students:  # every submission is copied before any of them runs
            if student.is_symlink():
                notes[student.name] = "not graded: a symbolic link, not a student's own folder"
                continue
            try:
                notes[student.name] = _stage(student, Path(staging) / student.name)
            except (CourseInputError, OSError) as error:
                notes[student.name] = f"not graded: {error}"
        _check_references(Path(staging), reference_dir)
        hidden = [submissions.resolve(), Path(staging).resolve(), out_dir.resolve(), reference_dir.resolve()]
        for student in students:
            entry: dict[str, Any] = {"score": 0, "total": 0, "notebooks": {}, "note": notes[student.name]}
            report["students"][_report_key(report, student.name)] = entry
            staged = Path(staging) / student.name
            if notes[student.name].startswith("not graded"):
                _write_report(report, out_dir)
                continue
            for path in sorted(p for p in staged.glob("*.ipynb") if p.is_file()):
                grade = grade_notebook(staged, path.name, reference_dir, chosen, limits, seed, hidden)
                entry["notebooks"][shown(path.name)] = grade.to_dict()
                entry["score"] += grade.score
                entry["total"] += grade.total
                _write_report(report, out_dir)
                if log:
                    log(shown(f"{student.name}/{path.name}: {grade.score}/{grade.total}"
                              + ("" if grade.status == "graded" else f" ({grade.status}: {grade.message})")))
            _write_report(report, out_dir)
    return _printable(report)


def _report_key(report: dict, name: str) -> str:
    """The student's name in the report (:func:`shown`), made unique should an escaped name meet a real one."""
    key, number = shown(name), 1
    while key in report["students"]:
        number += 1
        key = f"{shown(name)} ({number})"
    return key


def _cell_error_lines(errors: Sequence[dict]) -> list[str]:
    """The report's lines for a notebook's cells that raised: how many, then one line each."""
    if not errors:
        return []
    count = len({error["cell"] for error in errors})
    lines = [f"    {count} cell{'s' if count != 1 else ''} raised while the notebook ran:"]
    return lines + [f"      {CellError(**error).line()}" for error in errors]


def format_grades(report: dict) -> str:
    """A readable table: the isolation, then one line per student and notebook, its flags, the cells that raised
    (each with its exercise, exception and one line) and the failed checks with their message."""
    isolation = report["isolation"]
    lines = [f"isolation: {isolation['name']} ({isolation['gives']})"
             + (f"; {isolation['reason']}" if isolation.get("reason") else ""),
             f"process limit: {isolation.get('process_limit', '')}", f"checker seed: {report['seed']}", ""]
    for student, result in report["students"].items():
        lines.append(f"{student}: {result['score']}/{result['total']}" + (f" ({result['note']})" if result["note"] else ""))
        for notebook, grade in result["notebooks"].items():
            status = "" if grade["status"] == "graded" else f" — {grade['status']}: {grade['message']}"
            lines.append(f"  {notebook}: {grade['score']}/{grade['total']}{status}")
            lines += [f"    flag: {flag}" for flag in grade.get("flags", [])]
            lines += _cell_error_lines(grade.get("cell_errors", []))
            for check in grade["checks"]:
                if not check["passed"]:
                    lines.append(f"    exercise {check['exercise']} ({check['function']}): {check['message']}")
    return "\n".join(lines) + "\n"
