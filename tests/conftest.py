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


# The quick loop (CONTRIBUTING: ``-m "not notebook and not slow"``) leaves these out: each takes
# seconds to minutes on 2 cores (a training run, a subprocess per case, a sandbox, a server,
# an emulated CPU, a built website). By file: ``None`` for the whole file, else the test
# functions (every parameter of each); a name that matches no test is an error, so the list
# cannot go stale silently.
SLOW_TESTS: dict[str, set[str] | None] = {
    "test_numerics.py": None,
    "test_grading_isolation.py": None,
    "test_site.py": None,
    "test_assignments.py": {"test_trusted_scoring_accepts_the_solutions_on_fresh_inputs_and_rejects_stubs",
                            "test_nbgrader_generate_assignment_releases_without_solutions",
                            "test_grader_executes_and_reports_per_student",
                            "test_a_wrong_answer_in_the_kernel_shows_the_explanation_without_a_traceback"},
    "test_attachment_control.py": {"test_the_learned_tree_bias_solves_the_control_and_sequence_distance_does_not"},
    "test_bad_inputs.py": {"test_the_console_command_prints_no_traceback"},
    "test_exercises_pairs.py": {"test_small_dev_rule_exercise_accepts_a_measurement_and_names_the_mistakes"},
    "test_exercises_seq2seq.py": {"test_unscaled_saturation_width_is_measured_and_wrong_widths_are_explained"},
    "test_exercises_syntax_bias.py": {"test_one_change_that_erases_the_tree_breaks_the_control",
                                      "test_a_change_the_control_survives_is_rejected_with_its_accuracy"},
    "test_baselines_file.py": {"test_the_command_writes_the_file_and_refuses_a_folder"},
    "test_experiment.py": {"test_runs_in_worker_processes_give_the_same_results_and_random_streams",
                           "test_command_line_runs_end_to_end_with_the_real_parser",
                           "test_run_experiment_writes_every_variant_and_seed_and_resumes",
                           "test_command_line_runs_the_positive_control"},
    "test_grid.py": {"test_no_lcqmc_text_is_tracked"},
    "test_lcqmc.py": {"test_build_is_deterministic_and_matches_shipped_files"},
    "test_notebook_runner.py": {"test_nbval_strict_fails_on_a_perturbed_output",
                                "test_the_projects_conftest_keeps_a_notebooks_cells_on_one_xdist_worker"},
    "test_nothing_lost.py": {"test_two_real_runs_on_one_folder_leave_one_consistent_run",
                             "test_every_flag_a_message_names_is_a_flag_of_the_commands_it_reaches",
                             "test_build_sample_on_a_full_disk_keeps_the_old_sample_whole"},
    "test_sample_builder.py": {"test_shipped_build_does_not_depend_on_the_hash_seed"},
    "test_training.py": {"test_command_line_build_sample", "test_command_line_trains_resumes_and_compares"},
}
# Files whose every test executes a lesson: marked ``notebook`` like nbval's cells.
NOTEBOOK_TESTS = {"test_jupyterlab_browser.py", "test_perturbed_verdicts.py"}
STUDENT_VERSION_TESTS = {"test_student_version_stops_only_at_check_cells_saying_not_done"}


def pytest_collection_modifyitems(config, items):
    seen: dict[str, set[str]] = {}
    for item in items:
        if item.path.parent.name != "tests" or item.path.suffix != ".py":
            continue
        name = item.originalname if hasattr(item, "originalname") else item.name
        seen.setdefault(item.path.name, set()).add(name)
        slow = SLOW_TESTS.get(item.path.name, set())
        if slow is None or name in slow:
            item.add_marker(pytest.mark.slow)
        if item.path.name in NOTEBOOK_TESTS or name in STUDENT_VERSION_TESTS:
            item.add_marker(pytest.mark.notebook)
    stale = [f"{file}::{name}" for file, names in SLOW_TESTS.items() if file in seen and names
             for name in names - seen[file]]
    if stale:
        raise pytest.UsageError(f"tests/conftest.py SLOW_TESTS names tests that do not exist: {', '.join(sorted(stale))}")


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
