"""Student version, nbgrader course, grading: on the real lesson notebooks.

The grader's defences against hostile submissions are tested in ``test_grading_isolation.py``.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from lessons_lib.course.assignments import (
    BEGIN_SOLUTION,
    GRADING_CELL_SECONDS,
    build_nbgrader_course,
    build_student_version,
    build_workspace,
    find_exercises,
    make_student_notebook,
    solution_lines,
    strip_solutions,
)
from lessons_lib.grader.grading import grade_submissions, graded_exercises, score_exercises
from lessons_lib.errors import CourseInputError
from lessons_lib.course.notebooks import METADATA_KEY, notebook_parameters, read_notebook
from lessons_lib.exercises import FAIL_MARK, NOT_DONE_MARK, PASS_MARK
from lessons_lib.paths import NOTEBOOKS_DIR
from lesson_runs import PERTURBED, STUDENT_RUN_PARAMETERS, execute_allowing_errors, one_worker

LESSONS = sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))
WITH_EXERCISES = [p for p in LESSONS if find_exercises(nbformat.read(p, as_version=4), p.name)]
FAST_LESSON = NOTEBOOKS_DIR / "01_dot_product_attention.ipynb"


def test_strip_solutions_keeps_indentation_and_names_the_function():
    source = "def f(x, y):\n    ### BEGIN SOLUTION\n    return x + y\n    ### END SOLUTION\n\nprint(1)"
    stripped = strip_solutions(source)
    assert stripped == ("def f(x, y):\n    # TODO: implement `f(x, y)` as the exercise above describes\n"
                        "    raise NotImplementedError()\n\nprint(1)")


@pytest.mark.parametrize("source, message", [
    ("### BEGIN SOLUTION\nx = 1", "without a matching"),
    ("x = 1\n### END SOLUTION", "without ### BEGIN"),
    ("### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION", "without a matching"),
])
def test_unbalanced_markers_are_errors(source, message):
    with pytest.raises(CourseInputError, match=message):
        strip_solutions(source, "lesson.ipynb cell 3")


def test_exercise_without_check_cell_is_an_error():
    nb = new_notebook(cells=[new_code_cell("def f():\n    ### BEGIN SOLUTION\n    pass\n    ### END SOLUTION"),
                             new_code_cell("print('no check here')")])
    with pytest.raises(CourseInputError, match="x.ipynb cell 0: exercise without a check cell"):
        find_exercises(nb, "x.ipynb")


def test_every_lesson_from_01_has_at_least_two_exercises():
    for path in LESSONS:
        if path.name.startswith("00_"):
            continue
        count = len(find_exercises(nbformat.read(path, as_version=4), path.name))
        assert count >= 2, f"{path.name} has {count} exercises"


@pytest.mark.parametrize("path", WITH_EXERCISES, ids=lambda p: p.name)
def test_no_solution_text_in_the_student_version(path):
    solution = nbformat.read(path, as_version=4)
    student = make_student_notebook(solution, path.name)
    student_text = "\n".join(c.source for c in student.cells)
    outside_regions = "\n".join(strip_solutions(c.source) for c in solution.cells)
    leaked = [line for line in solution_lines(solution) if line in student_text and line not in outside_regions]
    assert not leaked, leaked
    assert all(not c.get("outputs") for c in student.cells if c.cell_type == "code")
    # Everything but the solution regions is unchanged.
    assert [c.cell_type for c in student.cells] == [c.cell_type for c in solution.cells]
    for before, after in zip(solution.cells, student.cells):
        if "### BEGIN SOLUTION" not in before.source:
            assert before.source == after.source


def test_solution_notebooks_check_cells_pass_in_their_verified_outputs():
    """The committed outputs are the ones nbval re-checks in this same test run."""
    for path in WITH_EXERCISES:
        nb = nbformat.read(path, as_version=4)
        for exercise in find_exercises(nb, path.name):
            outputs = nb.cells[exercise.check_index].outputs
            text = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
            assert PASS_MARK in text and not any(o.get("output_type") == "error" for o in outputs), (path.name, exercise)


def _solution_functions(nb):
    """The solution notebook's exercise functions, defined in order in one namespace (as the lesson does).

    The namespace first gets every import of the notebook's code cells, since an exercise may
    use a name an earlier cell imported (lesson 00 reads ``PREREQUISITES``).
    """
    import ast

    namespace: dict = {}
    for cell in nb.cells:
        if cell.cell_type == "code":
            tree = ast.parse(cell.source)
            imports = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
            exec(compile(ast.Module(body=imports, type_ignores=[]), "<imports>", "exec"), namespace)
    for exercise in find_exercises(nb):
        exec(nb.cells[exercise.cell_index].source, namespace)
    return namespace


@pytest.mark.slow
@pytest.mark.parametrize("path", WITH_EXERCISES, ids=lambda p: p.name)
def test_trusted_scoring_accepts_the_solutions_on_fresh_inputs_and_rejects_stubs(path):
    nb = nbformat.read(path, as_version=4)
    exercises = graded_exercises(nb, path.name)
    assert [e.number for e in exercises] == list(range(1, len(exercises) + 1))
    solutions = _solution_functions(nb)
    for seed in (1, 2, 3, 1000):
        results = score_exercises(exercises, solutions.__getitem__, seed)
        assert all(r.passed for r in results), [r for r in results if not r.passed]

    def not_done(*args, **kwargs):
        raise NotImplementedError()

    results = score_exercises(exercises, lambda name: not_done, seed=7)
    assert not any(r.passed for r in results) and all("还没有完成" in r.message for r in results)
    results = score_exercises(exercises, lambda name: (lambda *args, **kwargs: None), seed=7)
    assert not any(r.passed for r in results)


@pytest.mark.notebook
@pytest.mark.parametrize("name", [one_worker(p.name) for p in WITH_EXERCISES])
def test_student_version_stops_only_at_check_cells_saying_not_done(name, executed_student_version):
    path = NOTEBOOKS_DIR / name
    solution = nbformat.read(path, as_version=4)
    exercises = find_exercises(solution, path.name)
    student = executed_student_version(path)
    shift = len(student.cells) - len(solution.cells)  # the injected parameters cell, if any
    errors = {i: o for i, c in enumerate(student.cells) if c.cell_type == "code"
              for o in c.outputs if o.get("output_type") == "error"}
    for index, error in errors.items():
        assert error["ename"] == "ExerciseNotDone", f"{path.name} cell {index}: {error['ename']}: {error['evalue']}"
        shown = "\n".join(error["traceback"]).splitlines()  # what JupyterLab shows in place of a traceback
        assert len(shown) == 1 and shown[0].startswith(NOT_DONE_MARK) and "还没有完成" in shown[0], shown
    expected_cells = {e.check_index + shift for e in exercises}
    assert set(errors) == expected_cells, f"{path.name}: errors in cells {sorted(errors)}, exercises' checks {sorted(expected_cells)}"


def test_student_run_parameters_are_the_lessons_own():
    for name, parameters in [*STUDENT_RUN_PARAMETERS.items(), *PERTURBED.items()]:
        known = notebook_parameters(nbformat.read(NOTEBOOKS_DIR / name, as_version=4))
        assert set(parameters) <= set(known), (name, sorted(set(parameters) - set(known)))


WRONG_SCALED_SCORES = "def scaled_scores(q, k):\n    return q @ k.transpose(-2, -1)"


def _exercises_only(solution, name, wrong_first: bool) -> nbformat.NotebookNode:
    """A submission of the lesson's imports and its exercise and check cells only, the solutions
    stripped (``wrong_first``: the first exercise answered with the unscaled mistake).

    The exercises stand alone (the grader runs them without the lesson's other cells), so this
    reaches every check cell without running the lesson again."""
    import ast

    imports = []
    for cell in solution.cells:
        if cell.cell_type == "code":
            tree = ast.parse(cell.source)
            imports += [ast.get_source_segment(cell.source, node) for node in tree.body
                        if isinstance(node, (ast.Import, ast.ImportFrom))]
    student = make_student_notebook(solution, name)
    cells = [new_code_cell("\n".join(dict.fromkeys(imports)))]
    for number, exercise in enumerate(find_exercises(solution, name)):
        work = student.cells[exercise.cell_index]
        if wrong_first and number == 0:
            work.source = WRONG_SCALED_SCORES
        cells += [work, student.cells[exercise.check_index]]
    nb = new_notebook(cells=cells, metadata=solution.metadata)
    return nb


@pytest.mark.slow
def test_a_wrong_answer_in_the_kernel_shows_the_explanation_without_a_traceback():
    solution = nbformat.read(FAST_LESSON, as_version=4)
    student = execute_allowing_errors(_exercises_only(solution, FAST_LESSON.name, wrong_first=True), FAST_LESSON.parent)
    assert not any(o.get("output_type") == "error" for o in student.cells[0].outputs), student.cells[0].outputs
    error = next(o for o in student.cells[2].outputs if o.get("output_type") == "error")
    shown = "\n".join(error["traceback"]).splitlines()
    assert error["ename"] == "ExerciseCheckError" and len(shown) == 1, shown
    assert shown[0].startswith(FAIL_MARK) and "√d_k" in shown[0]
    # neither the frames nor the checker's code (its reference computation) reach the learner
    assert not any(word in shown[0] for word in ("Traceback", "File ", "compare_tensor", "attention_scores(", "transpose"))


@pytest.mark.slow
def test_grader_executes_and_reports_per_student(tmp_path, grading_isolation):
    submissions = tmp_path / "submissions"
    (submissions / "alice").mkdir(parents=True)
    (submissions / "bob").mkdir()
    shutil.copy(FAST_LESSON, submissions / "alice" / FAST_LESSON.name)  # the whole lesson, run in the sandbox
    solution = nbformat.read(FAST_LESSON, as_version=4)
    # Bob hands in only the exercises: the first with the unscaled mistake, the rest not done.
    nbformat.write(_exercises_only(solution, FAST_LESSON.name, wrong_first=True), submissions / "bob" / FAST_LESSON.name)

    report = grade_submissions(submissions, tmp_path / "grades", NOTEBOOKS_DIR, seed=11, isolation=grading_isolation)
    students = report["students"]
    count = len(find_exercises(solution))
    assert students["alice"]["score"] == students["alice"]["total"] == count
    assert students["bob"]["score"] == 0 and students["bob"]["total"] == count
    bob_checks = students["bob"]["notebooks"][FAST_LESSON.name]["checks"]
    assert "√d_k" in bob_checks[0]["message"] and "还没有完成" in bob_checks[1]["message"]
    assert [c["function"] for c in bob_checks][:3] == ["scaled_scores", "safe_masked_softmax", "attend"]
    saved = json.loads((tmp_path / "grades" / "grades.json").read_text(encoding="utf-8"))
    assert saved == report and saved["seed"] == 11
    table = (tmp_path / "grades" / "grades.txt").read_text(encoding="utf-8")
    assert f"alice: {count}/{count}" in table and f"bob: 0/{count}" in table
    assert table.startswith(f"isolation: {report['isolation']['name']} (")


def test_grader_errors_on_an_empty_submission_folder(tmp_path):
    with pytest.raises(CourseInputError, match="one folder per student"):
        grade_submissions(tmp_path, tmp_path / "out", NOTEBOOKS_DIR)


def test_a_check_cell_must_name_one_checker_and_one_function():
    solution = nbformat.read(FAST_LESSON, as_version=4)
    exercise = find_exercises(solution)[0]
    solution.cells[exercise.check_index].source = "check_scaled_scores(scaled_scores, other)"
    with pytest.raises(CourseInputError, match="must call one check_"):
        graded_exercises(solution, FAST_LESSON.name)


def test_student_version_refuses_to_write_into_its_input(tmp_path):
    lessons = tmp_path / "lessons"
    lessons.mkdir()
    shutil.copy(FAST_LESSON, lessons / FAST_LESSON.name)
    before = (lessons / FAST_LESSON.name).read_bytes()
    for inputs in ([lessons], [lessons / FAST_LESSON.name]):
        for out in (lessons, lessons / "student", lessons / "a" / "b"):
            with pytest.raises(CourseInputError, match="input folder"):
                build_student_version(inputs, out)
    assert (lessons / FAST_LESSON.name).read_bytes() == before and not (lessons / "student").exists()
    written = build_student_version([lessons / FAST_LESSON.name], tmp_path / "student")
    assert written == [tmp_path / "student" / FAST_LESSON.name] and written[0].read_bytes() != before


@pytest.mark.slow
def test_nbgrader_generate_assignment_releases_without_solutions(tmp_path):
    nbgrader = shutil.which("nbgrader")
    assert nbgrader, "nbgrader is a dev dependency; `pip install -e .[dev]` installs it"
    names = build_nbgrader_course([FAST_LESSON], tmp_path / "built")
    assert names == [FAST_LESSON.stem]
    course = (tmp_path / "built").rename(tmp_path / "moved")  # the course folder keeps working where it is moved
    run = subprocess.run([nbgrader, "generate_assignment", FAST_LESSON.stem], cwd=course,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "WARNING" not in run.stderr and "Config option" not in run.stderr, run.stderr[-3000:]
    release = nbformat.read(course / "release" / FAST_LESSON.stem / FAST_LESSON.name, as_version=4)
    text = "\n".join(c.source for c in release.cells)
    solution = nbformat.read(FAST_LESSON, as_version=4)
    assert "### BEGIN SOLUTION" not in text and text.count("raise NotImplementedError()") == len(find_exercises(solution))
    assert "math.sqrt(q.shape[-1])\n" not in text.replace("return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])", "")
    assert all(line not in text for line in solution_lines(solution) if "safe_masked_softmax(scaled_scores" in line)


def test_nbgrader_course_refuses_a_non_empty_folder_unless_forced(tmp_path):
    (tmp_path / "grades.csv").write_text("kept", encoding="utf-8")
    with pytest.raises(CourseInputError, match="not empty.*--force"):
        build_nbgrader_course([FAST_LESSON], tmp_path)
    assert not (tmp_path / "source").exists() and not (tmp_path / "nbgrader_config.py").exists()
    assert build_nbgrader_course([FAST_LESSON], tmp_path, force=True) == [FAST_LESSON.stem]
    assert (tmp_path / "grades.csv").read_text(encoding="utf-8") == "kept"
    config = (tmp_path / "nbgrader_config.py").read_text(encoding="utf-8")
    assert str(tmp_path) not in config and "course_id" in config and "db_assignments" not in config


def test_the_nbgrader_course_gives_a_cell_the_time_the_slowest_lesson_needs(tmp_path):
    from nbgrader.preprocessors import Execute
    from traitlets.config.loader import PyFileConfigLoader

    build_nbgrader_course([FAST_LESSON], tmp_path)
    config = PyFileConfigLoader("nbgrader_config.py", path=str(tmp_path)).load_config()
    timeout = Execute(config=config).timeout  # what nbgrader's autograder will use
    assert timeout == GRADING_CELL_SECONDS
    slowest = max(read_notebook(p).metadata[METADATA_KEY]["wall_seconds"] for p in LESSONS)
    assert timeout >= 1.5 * slowest, f"the slowest lesson takes {slowest} s on the machine it was executed on"


def test_workspace_holds_the_student_version_and_never_overwrites_the_learners_work(tmp_path):
    solution = nbformat.read(FAST_LESSON, as_version=4)
    glossary = NOTEBOOKS_DIR / "GLOSSARY.md"
    first = build_workspace([FAST_LESSON], tmp_path / "ws", extra_files=[glossary])
    assert first.written == [tmp_path / "ws" / FAST_LESSON.name, tmp_path / "ws" / glossary.name] and first.kept == []
    copy = nbformat.read(tmp_path / "ws" / FAST_LESSON.name, as_version=4)
    text = "\n".join(c.source for c in copy.cells)
    assert BEGIN_SOLUTION not in text and all(line not in text for line in solution_lines(solution))
    assert not any(c.get("outputs") for c in copy.cells if c.cell_type == "code")
    work = tmp_path / "ws" / FAST_LESSON.name
    work.write_text(work.read_text(encoding="utf-8").replace("raise NotImplementedError()", "return 42", 1), encoding="utf-8")
    (tmp_path / "ws" / glossary.name).unlink()
    before = work.read_bytes()
    second = build_workspace([FAST_LESSON], tmp_path / "ws", extra_files=[glossary])
    assert second.kept == [work] and second.written == [tmp_path / "ws" / glossary.name]
    assert work.read_bytes() == before
    with pytest.raises(CourseInputError, match="inside the input folder"):
        build_workspace([FAST_LESSON], NOTEBOOKS_DIR / "ws")


def test_no_lesson_shows_another_lessons_solution():
    """A solution line may appear only inside its own solution region (lesson 00 demonstrates a checker, not an answer)."""
    sources = {p.name: nbformat.read(p, as_version=4) for p in LESSONS}
    shown_lines = {name: {line.strip() for c in nb.cells for line in strip_solutions(c.source).split("\n")}
                   for name, nb in sources.items()}
    leaks = [(line, name, other) for name, nb in sources.items() for line in solution_lines(nb)
             if len(line) >= 20 and not line.startswith("#")
             for other, lines in shown_lines.items() if other != name and line in lines]
    assert not leaks, f"solution lines shown in another lesson (line, its lesson, where shown): {leaks}"
