"""The trained lessons' conclusions hold under another draw of their randomness.

Lessons 05, 06, 08, 09 and 12 train models and state what the runs show. Each such statement is
printed by its cell as a verdict (which model is better and whether the exact McNemar test
says so, or which bucket of a learned table is largest) and asserted there, so the prose
and the assertions say the same thing. Here each of these lessons runs once more with
other seeds (``lesson_runs.PERTURBED``) — the perturbation a learner's own run is most likely
to bring, and a larger one than a CPU's kernel choice — and every cell but an unanswered
exercise's check must pass: an assertion that fails is a conclusion that hangs on one draw.

The run is the student version's one execution of the test run (``executed_student_version``):
the lesson's own cells are unchanged there, and its exercises are left unanswered, which no
later cell needs (``test_assignments.py`` checks that). Each run takes minutes at the lesson's
full size, so the student versions run that way only when ``COURSE_PERTURBED_TESTS=required``
(``.ci/run`` sets it in CI); otherwise they run with smaller knobs and this module skips.
"""

from __future__ import annotations

import ast

import nbformat
import pytest

from lessons_lib.course.assignments import find_exercises
from lessons_lib.paths import NOTEBOOKS_DIR
from lesson_runs import PERTURBED, PERTURBED_RUNS, one_worker, run_parameters

pytestmark = [pytest.mark.notebook,
              pytest.mark.skipif(not PERTURBED_RUNS,
                                 reason="minutes per lesson: set COURSE_PERTURBED_TESTS=required (CI does)")]


def _parameter_values(nb) -> dict:
    """The values the lesson's own ``parameters`` cell assigns, by name (the course's file: evaluated)."""
    cell = next(c for c in nb.cells if c.cell_type == "code" and "parameters" in c.metadata.get("tags", []))
    return {node.targets[0].id: eval(compile(ast.Expression(node.value), "parameters", "eval"), {})
            for node in ast.parse(cell.source).body
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)}


@pytest.mark.parametrize("name", [one_worker(n) for n in sorted(PERTURBED)])
def test_the_lessons_verdicts_hold_with_other_seeds(name, executed_student_version):
    path = NOTEBOOKS_DIR / name
    solution = nbformat.read(path, as_version=4)
    assert run_parameters(name) == PERTURBED[name]
    own = _parameter_values(solution)
    same = [key for key, value in PERTURBED[name].items() if own.get(key) == value]
    assert not same, f"{name}: {same} keep the lesson's own values"
    student = executed_student_version(path)
    shift = len(student.cells) - len(solution.cells)  # the injected parameters cell
    assert shift == 1, f"{name}: the perturbed parameters were not injected"
    unanswered = {e.check_index + shift for e in find_exercises(solution, name)}
    failed = [f"cell {i} ({o['ename']}: {o['evalue'][:300]})" for i, c in enumerate(student.cells)
              if c.cell_type == "code" for o in c.outputs
              if o.get("output_type") == "error" and not (i in unanswered and o["ename"] == "ExerciseNotDone")]
    assert not failed, f"{name} with {PERTURBED[name]}: " + "; ".join(failed)
    assert all(c.execution_count for c in student.cells if c.cell_type == "code"), f"{name} did not run to its end"
