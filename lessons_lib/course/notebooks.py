"""Execute the course notebooks headless, deterministically, and check they were.

Committed notebook outputs come only from :func:`execute_notebook` (``lessons execute``).
It runs every cell top to bottom in a fresh ``python3`` kernel, with timing metadata off,
and stamps the notebook with a fingerprint of its sources so that a hygiene test can
tell when a notebook was edited without being re-executed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping

import nbformat

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


def _parse_parameter(text: str) -> tuple[str, Any]:
    if "=" not in text:
        raise ValueError(f"parameter {text!r} must look like NAME=VALUE")
    name, raw = text.split("=", 1)
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw  # a bare string such as a path
    return name.strip(), value


def parse_parameters(items: list[str] | None) -> dict[str, Any]:
    """``["epochs=3", "data_dir=/x"]`` → ``{"epochs": 3, "data_dir": "/x"}`` (values read as JSON when they parse)."""
    return dict(_parse_parameter(item) for item in items or [])


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
        parameters: values injected after the cell tagged ``parameters`` (papermill's
            convention). A parameterised run must not overwrite the committed notebook.
        timeout: seconds allowed per cell.

    Returns:
        An :class:`ExecutionResult` with the wall time in seconds.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        nbclient.exceptions.CellExecutionError: a cell failed; nothing is written in place.
    """
    from nbclient import NotebookClient

    source = Path(path).resolve()
    if not source.is_file():
        raise FileNotFoundError(f"notebook not found: {source}")
    target = Path(output).resolve() if output is not None else source
    if parameters and target == source:
        raise ValueError("a run with parameters must write to another file or folder, not in place")
    nb = nbformat.read(source, as_version=4)
    _clean_for_execution(nb)
    if parameters:
        from papermill.parameterize import parameterize_notebook

        nb.metadata.setdefault("papermill", {})  # papermill writes here and reads tags of every cell
        for cell in nb.cells:
            cell.metadata.setdefault("tags", [])
        nb = parameterize_notebook(nb, dict(parameters))
        _clean_for_execution(nb)
        for cell in nb.cells:
            if not cell.metadata.get("tags"):
                cell.metadata.pop("tags", None)

    client = NotebookClient(
        nb, timeout=timeout, kernel_name=KERNEL_NAME, record_timing=False,
        resources={"metadata": {"path": str(source.parent)}},
    )
    start = time.perf_counter()
    with kernel_environment():
        client.execute()
    seconds = time.perf_counter() - start

    nb.metadata[METADATA_KEY] = {"source_sha256": source_fingerprint(nb)}
    nb.metadata.pop("papermill", None)
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, target)
    return ExecutionResult(source=source, output=target, seconds=seconds, cells=len(nb.cells))


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
            raise FileNotFoundError(f"not a notebook or a folder of notebooks: {item}")
    return found
