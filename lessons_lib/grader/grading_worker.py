"""The sandboxed side of grading: execute one learner's notebook, then call its functions on request.

This module runs *inside* the sandbox (``python -I -m lessons_lib.grader.grading_worker``,
started by :mod:`lessons_lib.grader.grading` through :mod:`lessons_lib.grader.sandbox`),
next to the untrusted kernel. Nothing it sends is trusted by the grader: the grader treats
every reply as the learner's answer and decides the score itself.

1. It limits its own address space, file sizes and process count (``setrlimit``; the
   kernel inherits the limits), copies the submission from the read-only input folder into its working folder
   when asked, and executes the notebook in a fresh kernel (errors allowed, each cell
   interrupted after ``--cell-seconds``).
2. It then answers requests, one JSON object per line on its stdin:
   ``{"op": "call", "function": name, "args": base64(torch.save((args, kwargs)))}`` runs
   ``name(*args, **kwargs)`` in the kernel (interrupted after ``--call-seconds``) and
   replies ``{"event": "result", "payload": base64(torch.save(outcome))}``, where
   ``outcome`` holds plain data only (tensors, numbers, strings, lists, tuples, ``None``)
   or the name and message of the exception the function raised. ``{"op": "exit"}`` ends it.

Replies go to a private copy of the original stdout; the kernel's stdout and stderr go to
the worker's stderr (a log the grader keeps), so nothing the notebook prints can be
mistaken for a reply.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TextIO

# A call's result bigger than this is not sent back (a learner's answer is a small tensor).
MAX_RESULT_BYTES = 32 * 1024 * 1024
# Marks a cell that ran past its time limit (nbclient's reply when it interrupts the kernel).
TIMEOUT_NAME = "CellTimeoutError"
_MAX_DEPTH = 32


class NotData(TypeError):
    """A learner's function returned something that is not plain data."""


def as_data(value: Any, depth: int = 0) -> Any:
    """``value`` as plain data: tensors (plain, CPU, detached), numbers, strings, ``None``, lists and tuples of them.

    NumPy arrays and scalars become tensors and Python numbers.

    Raises:
        NotData: anything else (naming its type).
    """
    import torch

    if depth > _MAX_DEPTH:
        raise NotData(f"nested deeper than {_MAX_DEPTH} levels")
    if value is None or type(value) in (bool, int, float, str):
        return value
    if isinstance(value, torch.Tensor):
        tensor = value.detach()
        if tensor.layout != torch.strided:
            tensor = tensor.to_dense()
        return tensor.as_subclass(torch.Tensor).cpu().clone()
    if type(value) in (list, tuple):
        items = [as_data(item, depth + 1) for item in value]
        return items if type(value) is list else tuple(items)
    module = type(value).__module__
    if module == "numpy":
        import numpy

        if isinstance(value, numpy.ndarray):
            return torch.from_numpy(numpy.array(value, copy=True))
        if isinstance(value, numpy.generic):
            return as_data(value.item(), depth + 1)
    raise NotData(f"an object of type {type(value).__module__}.{type(value).__qualname__}")


def run_call(name: str, args_path: str, result_path: str, namespace: dict) -> None:
    """Run in the kernel: call ``namespace[name]`` on the saved arguments and save the outcome as data."""
    import torch

    args, kwargs = torch.load(args_path, weights_only=False)  # written by the grader
    function = namespace.get(name)
    if function is None:
        outcome = {"status": "missing"}
    elif not callable(function):
        outcome = {"status": "not_callable", "type": type(function).__name__}
    else:
        try:
            value = function(*args, **kwargs)
        except KeyboardInterrupt:  # the time limit: the worker reports it
            raise
        except BaseException as error:  # the learner's code may raise anything, SystemExit included
            outcome = {"status": "raised", "ename": type(error).__name__, "evalue": str(error)[:2000]}
        else:
            try:
                outcome = {"status": "ok", "value": as_data(value)}
            except NotData as error:
                outcome = {"status": "not_data", "type": str(error)}
    torch.save(outcome, result_path)


class _Channel:
    """Requests from the original stdin, replies to the original stdout; fds 0 and 1 then point elsewhere."""

    def __init__(self) -> None:
        self._requests: TextIO = os.fdopen(os.dup(0), "r", encoding="utf-8")
        self._replies: TextIO = os.fdopen(os.dup(1), "w", encoding="utf-8")
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        os.dup2(2, 1)  # whatever the kernel or a library prints lands in the log, not in the replies

    def send(self, message: dict) -> None:
        self._replies.write(json.dumps(message) + "\n")
        self._replies.flush()

    def requests(self):
        for line in self._requests:
            yield json.loads(line)


def _limit_resources(memory_mb: int, disk_mb: int, processes: int) -> None:
    """Address space, file size and process limits for this process and all it starts (soft = hard: no raising them).

    ``RLIMIT_NPROC`` counts every process and thread of the sandbox's user: a fork bomb stops there.
    """
    for kind, value in ((resource.RLIMIT_AS, memory_mb * 1024 * 1024), (resource.RLIMIT_FSIZE, disk_mb * 1024 * 1024),
                        (resource.RLIMIT_CORE, 0), (resource.RLIMIT_NPROC, processes)):
        resource.setrlimit(kind, (value, value))


def _prepare(args: argparse.Namespace) -> Path:
    """The working folder, with the submission copied in when asked, and the folders the environment names."""
    for key in ("HOME", "MPLCONFIGDIR", "IPYTHONDIR", "JUPYTER_RUNTIME_DIR"):
        if os.environ.get(key):
            Path(os.environ[key]).mkdir(parents=True, exist_ok=True)
    work = Path(args.work)
    if args.copy_from:
        shutil.copytree(args.copy_from, work, symlinks=True, dirs_exist_ok=True)
    os.chdir(work)
    return work


def _first_line(text: str) -> str:
    """The first line of an exception's message that says something (a report shows one line per cell)."""
    return next((line.strip() for line in str(text).splitlines() if line.strip()), "")


def _errors(nb) -> list[list]:
    """``[cell index, exception name, first line of its message]`` of each error output of the executed notebook."""
    return [[index, output.get("ename", ""), _first_line(output.get("evalue", ""))[:300]]
            for index, cell in enumerate(nb.cells) if cell.cell_type == "code"
            for output in cell.get("outputs", []) if output.get("output_type") == "error"]


def _call(client, request: dict, scratch: Path) -> dict:
    """Run one requested call in the kernel; the reply's payload is the saved outcome (or why there is none)."""
    from nbformat.v4 import new_code_cell

    args_path, result_path = scratch / "args.pt", scratch / "result.pt"
    result_path.unlink(missing_ok=True)
    args_path.write_bytes(base64.b64decode(request["args"]))
    code = (f"__import__('lessons_lib.grader.grading_worker', fromlist=['run_call'])"
            f".run_call({request['function']!r}, {str(args_path)!r}, {str(result_path)!r}, globals())")
    cell = new_code_cell(code)
    client.nb.cells.append(cell)  # nbclient executes cells of its notebook: the call is one, removed afterwards
    started = time.monotonic()
    try:
        client.execute_cell(cell, len(client.nb.cells) - 1, store_history=False)
    finally:
        client.nb.cells.pop()
    errors = [o.get("ename", "") for o in cell.outputs if o.get("output_type") == "error"]
    if not result_path.is_file():
        if TIMEOUT_NAME in errors or time.monotonic() - started >= client.timeout:
            return {"event": "result", "error": "timeout"}
        return {"event": "result", "error": f"no result ({', '.join(errors) or 'the kernel gave no reason'})"}
    if result_path.stat().st_size > MAX_RESULT_BYTES:
        return {"event": "result", "error": f"a result larger than {MAX_RESULT_BYTES // 2**20} MiB"}
    return {"event": "result", "payload": base64.b64encode(result_path.read_bytes()).decode("ascii")}


def _serve(args: argparse.Namespace, channel: _Channel) -> None:
    from jupyter_client.manager import AsyncKernelManager
    from nbclient import NotebookClient
    from nbclient.exceptions import DeadKernelError

    from lessons_lib.course.notebooks import KERNEL_NAME, read_notebook
    from lessons_lib.errors import CourseInputError

    work = _prepare(args)
    try:
        nb = read_notebook(work / args.notebook)
    except CourseInputError as error:
        channel.send({"event": "failed", "message": str(error).replace(str(work), ".")})
        return
    # The kernel talks over Unix sockets, not TCP: a sandbox without network may have no loopback either.
    sockets = Path(tempfile.mkdtemp(prefix="kernel-")) / "ipc"
    kernel = AsyncKernelManager(kernel_name=KERNEL_NAME, transport="ipc", ip=str(sockets))
    client = NotebookClient(nb, km=kernel, timeout=args.cell_seconds, kernel_name=KERNEL_NAME, allow_errors=True,
                            interrupt_on_timeout=True, record_timing=False,
                            error_on_timeout={"ename": TIMEOUT_NAME, "evalue": "the cell ran past its time limit"},
                            resources={"metadata": {"path": str(work)}})
    client.reset_execution_trackers()
    try:
        with client.setup_kernel():
            for index, cell in enumerate(nb.cells):
                client.execute_cell(cell, index)
            channel.send({"event": "executed", "cells": len(nb.cells), "errors": _errors(nb)[:100]})
            client.timeout = args.call_seconds
            scratch = Path(tempfile.mkdtemp(prefix="calls-"))
            for request in channel.requests():
                if request.get("op") != "call":
                    break
                channel.send(_call(client, request, scratch))
    except DeadKernelError as error:
        channel.send({"event": "failed", "message": f"the kernel died ({str(error)[:200]})"})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="grading_worker", description=__doc__.splitlines()[0])
    parser.add_argument("--notebook", required=True, help="file name of the notebook in the working folder")
    parser.add_argument("--work", required=True, help="working folder (the submission's copy)")
    parser.add_argument("--copy-from", default=None, help="copy the submission from this folder first")
    parser.add_argument("--cell-seconds", type=int, required=True)
    parser.add_argument("--call-seconds", type=int, required=True)
    parser.add_argument("--memory-mb", type=int, required=True)
    parser.add_argument("--disk-mb", type=int, required=True)
    parser.add_argument("--processes", type=int, required=True)
    args = parser.parse_args(argv)
    channel = _Channel()
    _limit_resources(args.memory_mb, args.disk_mb, args.processes)
    _serve(args, channel)
    return 0


if __name__ == "__main__":
    sys.exit(main())
