"""Execute the course notebooks headless, deterministically, and check they were.

Committed notebook outputs come only from :func:`execute_notebook` (``lessons execute``).
It runs every cell top to bottom in a fresh ``python3`` kernel, with timing metadata off,
and stamps the notebook with a fingerprint of its sources so that a hygiene test can
tell when a notebook was edited without being re-executed.

:func:`read_notebook` is the one way the course reads a notebook file: anything that is not
a valid notebook (not UTF-8, not JSON, not the notebook schema) is a
:class:`~lessons_lib.errors.CourseInputError` naming the file. Parameters (``-p NAME=VALUE``)
must name a variable of the notebook's ``parameters`` cell (:func:`check_parameters`): a
typo is an error, never a silently ignored value.
"""

from __future__ import annotations

import ast
import contextlib
import difflib
import hashlib
import json
import math
import os
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping

import nbformat

from lessons_lib.errors import CourseInputError, file_errors
from lessons_lib.files import atomic_write, record_written

# What a copy written by `lessons execute --output-dir` is, in its folder's manifest (only it is replaced without --force).
EXECUTED_KIND = "notebook executed by `lessons execute`"

KERNEL_NAME = "python3"
METADATA_KEY = "lessons"
# Environment of the kernel: fixed hash seed; no progress bars in compared outputs.
KERNEL_ENV = {"PYTHONHASHSEED": "0", "TQDM_DISABLE": "1", "MPLBACKEND": "module://matplotlib_inline.backend_inline"}


@dataclass(frozen=True)
class ExecutionResult:
    """What :func:`execute_notebook` did to one notebook."""

    source: Path
    output: Path
    seconds: float
    cells: int


@contextlib.contextmanager
def kernel_environment() -> Iterator[None]:
    """Set :data:`KERNEL_ENV` while a kernel starts (it inherits our environment), then restore."""
    saved = {key: os.environ.get(key) for key in KERNEL_ENV}
    os.environ.update(KERNEL_ENV)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def source_fingerprint(nb: nbformat.NotebookNode) -> str:
    """SHA-256 of the notebook's cell types and sources (outputs and metadata excluded)."""
    digest = hashlib.sha256()
    for cell in nb.cells:
        digest.update(cell.cell_type.encode())
        digest.update(b"\0")
        digest.update(cell.source.encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()


def recorded_fingerprint(nb: nbformat.NotebookNode) -> str | None:
    """The fingerprint stamped by the last :func:`execute_notebook`, or ``None``."""
    return nb.metadata.get(METADATA_KEY, {}).get("source_sha256")


def _clean_for_execution(nb: nbformat.NotebookNode) -> None:
    nb.metadata["kernelspec"] = {"name": KERNEL_NAME, "display_name": "Python 3", "language": "python"}
    for key in ("widgets", "papermill"):
        nb.metadata.pop(key, None)
    for cell in nb.cells:
        for key in ("execution", "papermill", "collapsed", "scrolled"):
            cell.metadata.pop(key, None)
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None


def read_notebook(path: str | os.PathLike) -> nbformat.NotebookNode:
    """Read a notebook file (as nbformat 4) and validate it against the notebook schema.

    Raises:
        CourseInputError: a missing or unreadable file, or one that is not a valid notebook,
            naming the file.
    """
    path = Path(path)
    if not path.is_file():
        raise CourseInputError(f"notebook not found: {path}")
    with file_errors(path):
        raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
        data = json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CourseInputError(f"{path}: not a notebook (not UTF-8 JSON: {error})") from None
    if not isinstance(data, dict) or not isinstance(data.get("nbformat"), int):
        raise CourseInputError(f"{path}: not a Jupyter notebook (its JSON has no nbformat version)")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. cells without ids, which nbformat fills in
            nb = nbformat.reads(text, as_version=4)
            nbformat.validate(nb)
    except (nbformat.ValidationError, KeyError, TypeError, AttributeError, ValueError) as error:
        first_line = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise CourseInputError(f"{path}: not a valid Jupyter notebook ({first_line[:200]})") from None
    return nb


def _parse_parameter(text: str) -> tuple[str, Any]:
    if "=" not in text:
        raise CourseInputError(f"parameter {text!r} must look like NAME=VALUE")
    name, raw = text.split("=", 1)
    name = name.strip()
    if not name.isidentifier():
        hint = f" (did you mean {name.replace('-', '_')}?)" if name.replace("-", "_").isidentifier() else ""
        raise CourseInputError(f"parameter name {name!r} in {text!r} is not a Python variable name{hint}")
    if _spells_a_non_finite_number(raw):
        raise CourseInputError(f"parameter {name}={raw}: {raw.strip()!r} is not a finite number")
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw  # a bare string such as a path
    return name, value


def _spells_a_non_finite_number(raw: str) -> bool:
    """``NaN``, ``inf``, ``-Infinity``, ``1e999``: what Python's readers take as a number that is none."""
    try:
        return not math.isfinite(float(raw))
    except ValueError:
        return False


def parse_parameters(items: list[str] | None) -> dict[str, Any]:
    """``["epochs=3", "data_dir=/x"]`` → ``{"epochs": 3, "data_dir": "/x"}`` (values read as JSON when they parse)."""
    return dict(_parse_parameter(item) for item in items or [])


def _parameters_cell(nb: nbformat.NotebookNode) -> nbformat.NotebookNode | None:
    return next((c for c in nb.cells if c.cell_type == "code" and "parameters" in c.metadata.get("tags", [])), None)


def notebook_parameters(nb: nbformat.NotebookNode) -> dict[str, Any] | None:
    """The variables assigned in the cell tagged ``parameters`` with their default values (``...``
    where a default is not a literal), or ``None`` without such a cell."""
    cell = _parameters_cell(nb)
    if cell is None:
        return None
    try:
        tree = ast.parse(cell.source)
    except SyntaxError:
        return {}
    defaults: dict[str, Any] = {}
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        for target in (t for t in targets if isinstance(t, ast.Name)):
            try:
                defaults[target.id] = ast.literal_eval(node.value) if node.value is not None else ...
            except ValueError:
                defaults[target.id] = ...
    return defaults


def _same_kind(value: Any, default: Any) -> bool:
    """Whether a ``-p`` value can stand where the parameters cell has ``default``."""
    if default is ... or default is None:
        return True
    if isinstance(default, bool) or isinstance(value, bool):
        return isinstance(value, bool) and isinstance(default, bool)
    if isinstance(default, int):
        return isinstance(value, int)
    if isinstance(default, float):
        return isinstance(value, (int, float))
    if isinstance(default, (list, tuple)):
        return isinstance(value, list)
    return isinstance(value, type(default))


def check_parameters(nb: nbformat.NotebookNode, parameters: Mapping[str, Any], name: str) -> None:
    """Every name in ``parameters`` must be a variable of the notebook's ``parameters`` cell.

    Raises:
        CourseInputError: a notebook without a parameters cell, or an unknown name (with the
            known names and the closest match).
    """
    if not parameters:
        return
    defaults = notebook_parameters(nb)
    if defaults is None:
        raise CourseInputError(f"{name} has no cell tagged 'parameters', so it takes no -p values")
    known = list(defaults)
    for key, value in parameters.items():
        if key not in defaults:
            close = difflib.get_close_matches(key, known, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise CourseInputError(f"{name} has no parameter {key!r}{hint}; its parameters are: {', '.join(known)}")
        if not _same_kind(value, defaults[key]):
            raise CourseInputError(f"{name}: parameter {key} is {type(defaults[key]).__name__} "
                                   f"(default {defaults[key]!r}); -p {key}={value!r} is not")


def inject_parameters(nb: nbformat.NotebookNode, parameters: Mapping[str, Any], name: str) -> nbformat.NotebookNode:
    """``nb`` with a cell assigning ``parameters`` right after its ``parameters`` cell, tagged
    ``injected-parameters`` (the convention papermill and JupyterLab's tools share).

    Raises:
        CourseInputError: a notebook without a parameters cell, a name it does not have, or a
            value of another kind than the name's default.
    """
    check_parameters(nb, parameters, name)
    if not parameters:
        return nb
    source = "# Parameters\n" + "".join(f"{key} = {value!r}\n" for key, value in parameters.items())
    injected = nbformat.v4.new_code_cell(source=source, metadata={"tags": ["injected-parameters"]})
    index = nb.cells.index(_parameters_cell(nb))
    nb.cells.insert(index + 1, injected)
    return nb


def execute_notebook(
    path: str | os.PathLike,
    output: str | os.PathLike | None = None,
    parameters: Mapping[str, Any] | None = None,
    timeout: int = 900,
) -> ExecutionResult:
    """Run a notebook top to bottom in a fresh kernel and write it with its outputs.

    Args:
        path: the ``.ipynb`` to run; its folder is the kernel's working directory.
        output: where to write the executed notebook; ``None`` means in place.
        parameters: values injected after the cell tagged ``parameters``. A parameterised run must not overwrite the committed notebook.
        timeout: seconds allowed per cell.

    Returns:
        An :class:`ExecutionResult` with the wall time in seconds.

    Raises:
        CourseInputError: ``path`` is not a readable notebook, a parameter it does not have,
            or parameters for an in-place run.
        nbclient.exceptions.CellExecutionError: a cell failed; nothing is written in place.
    """
    from nbclient import NotebookClient

    source = Path(path).resolve()
    target = Path(output).resolve() if output is not None else source
    if parameters and target == source:
        raise CourseInputError("a run with parameters must write to another file or folder, not in place")
    nb = read_notebook(source)
    _clean_for_execution(nb)
    nb = inject_parameters(nb, parameters or {}, source.name)
    client = NotebookClient(
        nb, timeout=timeout, kernel_name=KERNEL_NAME, record_timing=False,
        resources={"metadata": {"path": str(source.parent)}},
    )
    start = time.perf_counter()
    with kernel_environment(), tempfile.TemporaryFile() as kernel_log:
        try:
            client.execute(stderr=kernel_log)  # the kernel's own log: shown below, unless Ctrl-C killed it mid-reply
        except BaseException:
            # nbclient answers Ctrl-C (SIGINT) itself: it shuts the kernel down, which surfaces as a dead
            # kernel or a cancelled task. Its handler leaves this mark; the command then ends with one line.
            if getattr(client, "_async_cleanup_kernel_future", None) is not None:
                raise KeyboardInterrupt from None
            _show(kernel_log)
            raise
        _show(kernel_log)
    seconds = time.perf_counter() - start
    merge_streams(nb)

    # The wall time and the CPUs it ran on: the course's website shows them at the top of each lesson.
    nb.metadata[METADATA_KEY] = {"source_sha256": source_fingerprint(nb), "wall_seconds": round(seconds),
                                 "cpus": os.cpu_count()}
    with file_errors(target.parent, "create the folder"):
        target.parent.mkdir(parents=True, exist_ok=True)
    text = nbformat.writes(nb)
    text = text if text.endswith("\n") else text + "\n"
    if target == source:
        atomic_write(target, text)  # in place: never half a lesson
    else:  # a copy: recorded, so that the next run may replace it (and only it)
        record_written(target, text, EXECUTED_KIND)
    return ExecutionResult(source=source, output=target, seconds=seconds, cells=len(nb.cells))


def merged_streams(outputs) -> list[nbformat.NotebookNode]:
    """A cell's outputs as JupyterLab shows them: consecutive outputs of one stream (stdout, stderr) joined.

    How a kernel splits a cell's printing into messages depends on timing (a busy machine splits
    more, a table printed row by row may land in two); the outputs given are not changed.
    """
    merged: list[nbformat.NotebookNode] = []
    for output in outputs:
        last = merged[-1] if merged else None
        if (output.get("output_type") == "stream" and last is not None and last.get("output_type") == "stream"
                and last.get("name") == output.get("name")):
            merged[-1] = nbformat.from_dict({**last, "text": "".join(last.text) + "".join(output.text)})
        else:
            merged.append(output)
    return merged


def merge_streams(nb: nbformat.NotebookNode) -> None:
    """:func:`merged_streams` for every code cell of ``nb``, in place (the stored notebook shows one block too)."""
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = merged_streams(cell.get("outputs", []))


def _show(log) -> None:
    """Copy a kernel's log (a binary file) to stderr."""
    log.seek(0)
    sys.stderr.write(log.read().decode("utf-8", errors="replace"))
    sys.stderr.flush()


def notebook_paths(paths: list[str] | None, default_dir: Path) -> list[Path]:
    """Expand files and folders into a sorted list of lesson notebooks (``NN_*.ipynb``)."""
    found: list[Path] = []
    for item in paths or [str(default_dir)]:
        p = Path(item)
        if p.is_dir():
            found.extend(sorted(q for q in p.glob("*.ipynb") if not q.name.startswith(".")))
        elif p.suffix == ".ipynb" and p.is_file():
            found.append(p)
        else:
            raise CourseInputError(f"not a notebook or a folder of notebooks: {item}")
    if not found:
        raise CourseInputError(f"no notebooks (*.ipynb) in {', '.join(paths or [str(default_dir)])}")
    return found
