"""How the tests run a lesson's student version: with which parameters, and how it is executed.

Each student version runs once per test run (the ``executed_student_version`` fixture of
``conftest.py``), and every test of it reads that one execution. Which parameters it runs with
depends on the run:

- by default, the lessons that train get smaller knobs (:data:`STUDENT_RUN_PARAMETERS`): the run
  checks where a student version stops, not what it measures, and nbval runs every committed
  lesson at its own values in the same test run;
- with ``COURSE_PERTURBED_TESTS=required`` (``.ci/run`` sets it in CI), they run at full size
  with other seeds (:data:`PERTURBED`), so the same execution also shows that every verdict the
  lesson prints and asserts holds under another draw of its randomness
  (``test_perturbed_verdicts.py``).
"""

from __future__ import annotations

import os

import nbformat
import pytest

from lessons_lib.course.assignments import make_student_notebook
from lessons_lib.course.notebooks import KERNEL_NAME, inject_parameters, kernel_environment

PERTURBED_RUNS = os.environ.get("COURSE_PERTURBED_TESTS") == "required"

# Smaller knobs for the student versions of the lessons that train, injected after their
# parameters cell as papermill does.
STUDENT_RUN_PARAMETERS = {
    # One seed of the short training comparison: each of its assertions holds seed by seed.
    "05_encoder_block.ipynb": dict(train_seeds=[0]),
    # Model B keeps its 6 epochs (the lesson asserts it leaves the majority class, which takes 5);
    # the from-scratch loop keeps two dev evaluations (every 50 steps); section 10 measures size
    # and time only.
    "06_lcqmc_pair_classification.ipynb": dict(scratch_steps=100, depth_epochs=0, depth_sample_size=400),
    # The control keeps its pairs and the hand-written loop its 300 steps (both are asserted to
    # learn the task); fewer seeds, and a smaller sample ablation, which asserts nothing.
    "08_syntax_biased_attention.ipynb": dict(control_seeds=[0, 1], noise_seeds=[0], sample_size=200, epochs=1,
                                             seeds=[0, 1]),
    "09_syntax_without_a_parser.ipynb": dict(seeds=[0, 1], control_pairs=300, control_test=100, control_epochs=1,
                                             sample_size=200, epochs=1),
}

# Other seeds for every seed parameter of the lessons that train and state what their runs show
# (in lesson 08 the noise seeds must be among the control seeds, whose noise-free runs they are
# compared with); every other parameter keeps the lesson's own value.
PERTURBED = {
    "05_encoder_block.ipynb": dict(seed=1, grad_seeds=list(range(10, 20)), train_seeds=[3, 4, 5]),
    "06_lcqmc_pair_classification.ipynb": dict(seed=1),
    "08_syntax_biased_attention.ipynb": dict(seed=1, control_seeds=[5, 6, 7, 8, 9], seeds=[5, 6, 7, 8, 9],
                                             noise_seeds=[5, 6]),
    "09_syntax_without_a_parser.ipynb": dict(seed=1, seeds=[3, 4, 5]),
    "12_transformer_decoder.ipynb": dict(seed=1),
}


def run_parameters(name: str) -> dict:
    """The parameters the student version of lesson ``name`` runs with in this test run."""
    if PERTURBED_RUNS and name in PERTURBED:
        return PERTURBED[name]
    return STUDENT_RUN_PARAMETERS.get(name, {})


def one_worker(name: str):
    """``name`` as a test parameter whose id keeps every test reading lesson ``name``'s student
    version on one pytest-xdist worker (the root ``conftest.py`` groups by that id), so that the
    session's one execution of it serves them all."""
    return pytest.param(name, id=f"one worker: student version of {name}")


def execute_allowing_errors(nb: nbformat.NotebookNode, cwd) -> nbformat.NotebookNode:
    """``nb`` executed top to bottom in the lessons' kernel and numeric mode, errors recorded as
    outputs (as JupyterLab's Run All with errors shown would leave it)."""
    from nbclient import NotebookClient

    with kernel_environment():
        NotebookClient(nb, timeout=900, kernel_name=KERNEL_NAME, allow_errors=True,
                       resources={"metadata": {"path": str(cwd)}}).execute()
    return nb


def execute_student_version(path) -> nbformat.NotebookNode:
    """The student version of the lesson at ``path``, with :func:`run_parameters`, executed."""
    student = make_student_notebook(nbformat.read(path, as_version=4), path.name)
    student = inject_parameters(student, run_parameters(path.name), path.name)
    return execute_allowing_errors(student, path.parent)
