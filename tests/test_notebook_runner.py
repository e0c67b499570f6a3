"""The execute command, and nbval's strict comparison actually catching a changed output."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from lessons_lib.cli import main
from lessons_lib.course.notebooks import (
    execute_notebook,
    notebook_paths,
    parse_parameters,
    recorded_fingerprint,
    source_fingerprint,
)
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


def test_parameters_are_injected_into_a_copy(tmp_path):
    path = _tiny_notebook(tmp_path / "tiny.ipynb")
    out = tmp_path / "out" / "tiny.ipynb"
    execute_notebook(path, out, parameters={"n": 5})
    assert nbformat.read(out, as_version=4).cells[-1].outputs[0]["text"] == "10\n"
    with pytest.raises(ValueError, match="another file"):
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
    with pytest.raises(ValueError, match="NAME=VALUE"):
        parse_parameters(["epochs"])


def test_notebook_paths_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a notebook"):
        notebook_paths([str(tmp_path / "missing.ipynb")], tmp_path)
    with pytest.raises(FileNotFoundError, match="notebook not found"):
        execute_notebook(tmp_path / "missing.ipynb")


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


def _nbval(path: Path) -> subprocess.CompletedProcess:
    sanitiser = path.parent / "tests" / "nbval_sanitize.cfg"
    sanitiser.parent.mkdir(exist_ok=True)
    shutil.copy(REPO_ROOT / "tests" / "nbval_sanitize.cfg", sanitiser)
    return subprocess.run(
        # The project's own pytest settings (strict nbval + sanitiser), as the test command uses
        # them, run from the notebook's folder (with the sanitiser at its relative path).
        [sys.executable, "-m", "pytest", "-q", "-c", str(REPO_ROOT / "pyproject.toml"),
         "--rootdir", str(path.parent), path.name],
        capture_output=True, text=True, cwd=path.parent, timeout=300,
    )


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
