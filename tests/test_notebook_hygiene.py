"""Hygiene of the committed notebooks: what nbval alone would not catch."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import nbformat
import pytest

from lessons_lib.course.notebooks import KERNEL_NAME, recorded_fingerprint, source_fingerprint
from lessons_lib.paths import NOTEBOOKS_DIR

NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))
ABSOLUTE_PATH = re.compile(r"(/root/|/home/[^/\s]+/|/work/|/tmp/|[A-Z]:\\\\Users\\\\)")


def _read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def _code_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code" and c.source.strip()]


def _output_text(output) -> str:
    if output.get("output_type") == "stream":
        return output.get("text", "")
    if output.get("output_type") == "error":
        return "\n".join(output.get("traceback", []))
    data = output.get("data", {})
    return "\n".join(str(v) for k, v in data.items() if k.startswith("text/"))


def _runs_an_assert(source: str) -> bool:
    """Whether the cell's code holds an ``assert`` of something that is not a constant, outside any ``def``.

    Parsed, not searched: the word in a comment or a string, an ``assert True``, or an assert
    in a function the cell never has to call checks nothing.
    """
    code = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
    pending = list(ast.parse(code).body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, ast.Assert) and not isinstance(node.test, ast.Constant):
            return True
        pending.extend(ast.iter_child_nodes(node))
    return False


@pytest.mark.parametrize(
    "source, runs",
    [
        ("x = 2\nassert x > 1", True),
        ("for i in range(2):\n    assert i < 2", True),
        ("%time y = 1\nassert y", True),
        ("x = 2  # assert x > 1", False),
        ("print('assert')", False),
        ("assert True", False),
        ("def f():\n    assert 1 < 2\n", False),
    ],
)
def test_an_assert_is_told_from_the_word(source, runs):
    assert _runs_an_assert(source) is runs


def test_there_are_lessons():
    assert len(NOTEBOOKS) >= 2, f"expected lesson notebooks in {NOTEBOOKS_DIR}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_kernelspec_is_python3(path):
    assert _read(path).metadata.get("kernelspec", {}).get("name") == KERNEL_NAME


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_executed_top_to_bottom_by_the_execute_command(path):
    nb = _read(path)
    counts = [c.execution_count for c in _code_cells(nb)]
    assert None not in counts, f"{path.name}: code cells without execution count; run `lessons execute {path}`"
    assert counts == list(range(1, len(counts) + 1)), f"{path.name}: cells were not run once, in order: {counts}"
    assert recorded_fingerprint(nb) == source_fingerprint(nb), (
        f"{path.name} was edited after it was last executed; run `lessons execute {path}`"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_outputs_are_clean(path):
    nb = _read(path)
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        for output in cell.get("outputs", []):
            where = f"{path.name} cell {index}"
            assert output.get("output_type") != "error", f"{where}: an error output is committed"
            assert not (output.get("output_type") == "stream" and output.get("name") == "stderr"), (
                f"{where}: stderr output {output.get('text', '')[:200]!r}"
            )
            text = _output_text(output)
            match = ABSOLUTE_PATH.search(text)
            assert match is None, f"{where}: absolute path {match.group(0)!r} in an output"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_skeleton(path):
    nb = _read(path)
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    for heading in ("学习目标", "小结", "边界与局限"):
        assert heading in markdown, f"{path.name}: missing section {heading}"
    tags = [t for c in nb.cells for t in c.metadata.get("tags", [])]
    assert "parameters" in tags, f"{path.name}: no cell tagged `parameters`"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_ignored_outputs_still_assert(path):
    """A cell excused from output comparison must still check something."""
    nb = _read(path)
    for index, cell in enumerate(nb.cells):
        if "nbval-ignore-output" in cell.metadata.get("tags", []):
            assert _runs_an_assert(cell.source), (
                f"{path.name} cell {index}: nbval-ignore-output without an assert statement that runs"
            )


def test_notebooks_are_valid_json():
    for path in NOTEBOOKS:
        json.loads(path.read_text(encoding="utf-8"))
