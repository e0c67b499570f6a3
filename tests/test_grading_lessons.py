"""The lessons that read the shipped results (10 and 11) run in the grader's sandbox as they run at home.

The submission is the solution notebook itself, so every cell must run: a cell that raised
would mean the sandbox hides something the lesson reads (``results/`` before it was mounted).
"""

from __future__ import annotations

import shutil

import pytest

from lessons_lib.grader.grading import grade_submissions
from lessons_lib.grader.sandbox import Limits
from lessons_lib.paths import NOTEBOOKS_DIR

pytestmark = pytest.mark.slow

LESSONS = ("10_reading_results_honestly.ipynb", "11_preregistered_study.ipynb")
# Each takes one to two minutes on 2 idle cores; time to spare for a busy machine and a slow kernel start.
LIMITS = Limits(notebook_seconds=1500, cell_seconds=600, call_seconds=60, memory_mb=4096, disk_mb=512)


@pytest.mark.parametrize("lesson", LESSONS)
def test_a_correct_submission_of_a_lesson_reading_results_runs_without_a_cell_error_in_the_sandbox(
        tmp_path, grading_isolation, lesson):
    if grading_isolation != "auto":
        pytest.skip("bubblewrap does not work here: only its sandbox hides the repository's other files")
    folder = tmp_path / "submissions" / "ana"
    folder.mkdir(parents=True)
    shutil.copyfile(NOTEBOOKS_DIR / lesson, folder / lesson)
    report = grade_submissions(tmp_path / "submissions", tmp_path / "grades", NOTEBOOKS_DIR, limits=LIMITS, seed=11,
                               isolation=grading_isolation)
    assert report["isolation"]["name"] == "bubblewrap", report["isolation"]
    grade = report["students"]["ana"]["notebooks"][lesson]
    assert grade["status"] == "graded", grade
    assert grade["cell_errors"] == [], grade["cell_errors"]
    assert grade["total"] == 2 and grade["score"] == 2, grade["checks"]
    assert "raised while the notebook ran" not in (tmp_path / "grades" / "grades.txt").read_text(encoding="utf-8")
