"""The execute command, and nbval's strict comparison actually catching a changed output."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from lessons_lib.cli import main
from lessons_lib.course.notebooks import (
    check_parameters,
    execute_notebook,
    notebook_parameters,
    notebook_paths,
    parse_parameters,
    read_notebook,
    recorded_fingerprint,
    source_fingerprint,
)
from lessons_lib.errors import CourseInputError
from lessons_lib.paths import REPO_ROOT


def _tiny_notebook(path: Path) -> Path:
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    params = new_code_cell("n = 3")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [new_markdown_cell("# tiny"), params, new_code_cell("print(sum(range(n)))")]
    nbformat.write(nb, path)
    return path


def test_execute_in_place_stamps_fingerprint_and_counts(tmp_path):
    path = _tiny_notebook(tmp_path / "tiny.ipynb")
    result = execute_notebook(path)
    assert result.output == path.resolve() and result.seconds > 0
    nb = nbformat.read(path, as_version=4)
    assert [c.execution_count for c in nb.cells if c.cell_type == "code"] == [1, 2]
    assert nb.cells[2].outputs[0]["text"] == "3\n"
    assert recorded_fingerprint(nb) == source_fingerprint(nb)
    assert "execution" not in nb.cells[2].metadata  # no timestamps in committed notebooks
    recorded = nb.metadata["lessons"]  # the wall time and CPUs, which the course's website shows
    assert recorded["wall_seconds"] == round(result.seconds) and recorded["cpus"] == os.cpu_count()


def test_parameters_are_injected_into_a_copy(tmp_path):
    path = _tiny_notebook(tmp_path / "tiny.ipynb")
    out = tmp_path / "out" / "tiny.ipynb"
    execute_notebook(path, out, parameters={"n": 5})
    executed = nbformat.read(out, as_version=4)
    assert executed.cells[-1].outputs[0]["text"] == "10\n"
    injected = executed.cells[2]  # right after the parameters cell, tagged as papermill tags it
    assert injected.source == "# Parameters\nn = 5\n" and injected.metadata["tags"] == ["injected-parameters"]
    with pytest.raises(CourseInputError, match="another file"):
        execute_notebook(path, parameters={"n": 5})


def test_edit_changes_fingerprint(tmp_path):
    path = _tiny_notebook(tmp_path / "tiny.ipynb")
    execute_notebook(path)
    nb = nbformat.read(path, as_version=4)
    nb.cells[2].source = "print(42)"
    assert recorded_fingerprint(nb) != source_fingerprint(nb)


def test_parse_parameters():
    assert parse_parameters(["epochs=3", "lr=5e-5", "data_dir=/x/y", "flag=true"]) == {
        "epochs": 3, "lr": 5e-5, "data_dir": "/x/y", "flag": True}
    with pytest.raises(CourseInputError, match="NAME=VALUE"):
        parse_parameters(["epochs"])
    with pytest.raises(CourseInputError, match="did you mean data_dir"):
        parse_parameters(["data-dir=/x"])


@pytest.mark.parametrize("text", ["epochs=NaN", "epochs=1e999", "epochs=-Infinity", "lr=-1e400"])
def test_a_parameter_that_is_no_finite_number_is_refused_in_one_line(text):
    with pytest.raises(CourseInputError, match="not a finite number"):
        parse_parameters([text])


@pytest.mark.parametrize("value, accepted", [
    (4, True), ("3O", False), (2.5, False), (True, False), ([4], False), (None, False)])
def test_a_parameter_keeps_the_kind_of_its_default(tmp_path, value, accepted):
    nb = read_notebook(_tiny_notebook(tmp_path / "tiny.ipynb"))  # n = 3: an integer
    if accepted:
        check_parameters(nb, {"n": value}, "tiny.ipynb")
    else:
        with pytest.raises(CourseInputError, match=r"tiny.ipynb: parameter n is int \(default 3\)"):
            check_parameters(nb, {"n": value}, "tiny.ipynb")


def test_the_command_refuses_a_parameter_of_another_kind_in_one_line(tmp_path, capsys):
    path = _tiny_notebook(tmp_path / "tiny.ipynb")
    assert main(["execute", str(path), "--output-dir", str(tmp_path / "out"), "-p", "n=3O"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "n='3O'" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_parameters_must_be_those_of_the_parameters_cell(tmp_path):
    path = _tiny_notebook(tmp_path / "tiny.ipynb")
    nb = read_notebook(path)
    assert notebook_parameters(nb) == {"n": 3}
    check_parameters(nb, {"n": 4}, "tiny.ipynb")
    with pytest.raises(CourseInputError, match="tiny.ipynb has no parameter 'm'"):
        check_parameters(nb, {"m": 4}, "tiny.ipynb")
    with pytest.raises(CourseInputError, match="did you mean n"):
        execute_notebook(path, tmp_path / "out.ipynb", parameters={"nn": 4})
    nb.cells[1].metadata["tags"] = []
    with pytest.raises(CourseInputError, match="no cell tagged 'parameters'"):
        check_parameters(nb, {"n": 4}, "tiny.ipynb")
    assert not (tmp_path / "out.ipynb").exists()


def test_notebook_paths_errors(tmp_path):
    with pytest.raises(CourseInputError, match="not a notebook"):
        notebook_paths([str(tmp_path / "missing.ipynb")], tmp_path)
    with pytest.raises(CourseInputError, match="no notebooks"):
        notebook_paths([str(tmp_path)], tmp_path)
    with pytest.raises(CourseInputError, match="notebook not found"):
        execute_notebook(tmp_path / "missing.ipynb")


@pytest.mark.parametrize("content, message", [
    (b"{not json", "not UTF-8 JSON"),
    (b"\xff\xfe{}", "not UTF-8 JSON"),
    (b"[]", "no nbformat version"),
    (b'{"nbformat": 4, "nbformat_minor": 5, "cells": 5, "metadata": {}}', "not a valid Jupyter notebook"),
    (b'{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [{"cell_type": "code", "source": 3, '
     b'"metadata": {}, "outputs": [], "execution_count": null}]}', "not a valid Jupyter notebook"),
])
def test_read_notebook_names_the_file_of_anything_that_is_not_a_notebook(tmp_path, content, message):
    path = tmp_path / "broken.ipynb"
    path.write_bytes(content)
    with pytest.raises(CourseInputError, match=message) as caught:
        read_notebook(path)
    assert str(path) in str(caught.value)


def test_cli_execute_reports_times(tmp_path, capsys):
    path = _tiny_notebook(tmp_path / "tiny.ipynb")
    assert main(["execute", str(path)]) == 0
    out = capsys.readouterr().out
    assert "tiny.ipynb:" in out and " s " in out and "1 of 1 notebooks executed" in out
    assert main(["execute", str(path), "-p", "n=2"]) == 2  # parameters need --output-dir


def test_cli_execute_reports_a_failing_cell(tmp_path, capsys):
    path = _tiny_notebook(tmp_path / "bad.ipynb")
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(new_code_cell("1 / 0"))
    nbformat.write(nb, path)
    assert main(["execute", str(path)]) == 1
    assert "ZeroDivisionError" in capsys.readouterr().err
    assert nbformat.read(path, as_version=4).cells[2].outputs == []  # nothing written in place


def _nbval(path: Path, workers: int = 0) -> subprocess.CompletedProcess:
    sanitiser = path.parent / "tests" / "nbval_sanitize.cfg"
    sanitiser.parent.mkdir(exist_ok=True)
    shutil.copy(REPO_ROOT / "tests" / "nbval_sanitize.cfg", sanitiser)
    return subprocess.run(
        # The project's own pytest settings (strict nbval + sanitiser), as the test command uses
        # them, run from the notebook's folder (with the sanitiser at its relative path); on
        # ``workers`` xdist workers (0: in one process).
        [sys.executable, "-m", "pytest", "-q", "-n", str(workers), "-c", str(REPO_ROOT / "pyproject.toml"),
         "--rootdir", str(path.parent), path.name],
        capture_output=True, text=True, cwd=path.parent, timeout=300,
    )


@pytest.mark.slow
def test_the_projects_conftest_keeps_a_notebooks_cells_on_one_xdist_worker(tmp_path):
    # Each cell needs the one before it: cells sent to two kernels would fail with a NameError.
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [new_code_cell("x0 = 1")] + [new_code_cell(f"x{i} = x{i - 1} + 1") for i in range(1, 8)]
    path = tmp_path / "chain.ipynb"
    nbformat.write(nb, path)
    execute_notebook(path)
    shutil.copy(REPO_ROOT / "conftest.py", tmp_path / "conftest.py")
    run = _nbval(path, workers=2)
    assert run.returncode == 0, run.stdout[-2000:]
    assert "8 passed" in run.stdout


@pytest.mark.slow
def test_nbval_strict_fails_on_a_perturbed_output(tmp_path):
    path = _tiny_notebook(tmp_path / "tiny.ipynb")
    execute_notebook(path)
    assert _nbval(path).returncode == 0
    nb = nbformat.read(path, as_version=4)
    nb.cells[2].outputs[0]["text"] = "4\n"
    nbformat.write(nb, path)
    run = _nbval(path)
    assert run.returncode == 1, run.stdout[-2000:]
    assert "mismatch" in run.stdout.lower() or "differ" in run.stdout.lower()


def _root_conftest():
    spec = importlib.util.spec_from_file_location("root_conftest", REPO_ROOT / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_lessons_student_version_tests_share_one_work_unit_across_files():
    from lesson_runs import one_worker

    work_unit = _root_conftest().work_unit
    name = "08_syntax_biased_attention.ipynb"
    shared_id = one_worker(name).id
    units = {work_unit(f"tests/{f}.py::test_x[{shared_id}]") for f in ("test_assignments", "test_perturbed_verdicts")}
    assert units == {shared_id}
    assert work_unit(f"tests/test_assignments.py::test_x[{one_worker('09_syntax_without_a_parser.ipynb').id}]") != shared_id
    # every other test: its file, parametrised or not; a notebook's cells: the notebook
    assert work_unit("tests/test_layering.py::test_imports[attention/functional.py]") == "tests/test_layering.py"
    assert work_unit("notebooks/08_syntax_biased_attention.ipynb::Cell 12") == "notebooks/08_syntax_biased_attention.ipynb"


def test_consecutive_prints_of_one_stream_are_stored_as_one_output():
    from lessons_lib.course.notebooks import merge_streams

    cell = nbformat.v4.new_code_cell("print('a'); print('b')")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="a\n"),
                    nbformat.v4.new_output("stream", name="stdout", text="b\n"),
                    nbformat.v4.new_output("stream", name="stderr", text="warning\n"),
                    nbformat.v4.new_output("stream", name="stdout", text="c\n"),
                    nbformat.v4.new_output("execute_result", data={"text/plain": "1"}, execution_count=1),
                    nbformat.v4.new_output("stream", name="stdout", text="d\n")]
    nb = nbformat.v4.new_notebook(cells=[cell, nbformat.v4.new_markdown_cell("text")])
    merge_streams(nb)
    assert [(o.output_type, o.get("name"), "".join(o.get("text", ""))) for o in cell.outputs] == [
        ("stream", "stdout", "a\nb\n"), ("stream", "stderr", "warning\n"), ("stream", "stdout", "c\n"),
        ("execute_result", None, ""), ("stream", "stdout", "d\n")]
    nbformat.validate(nb)
