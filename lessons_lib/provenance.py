"""Where a measurement was made: the machine, the numeric libraries and the course's code.

:func:`run_provenance` is what a results file records beside its numbers, so that a reader can
refuse to compare runs made on other devices or with other code (a contrast never mixes them).
Only facts the machine states are recorded: nothing is looked up on a network.
"""

from __future__ import annotations

import platform
import subprocess
import sys
from pathlib import Path

__all__ = ["run_provenance", "code_version", "device_name"]

_PACKAGE_DIR = Path(__file__).resolve().parent


def code_version() -> tuple[str | None, bool | None]:
    """``(commit, modified)`` of the checkout the package was imported from: the git commit and
    whether the package's files differ from it; ``(None, None)`` outside a git checkout (an
    installed wheel) or without git."""
    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", *args], cwd=_PACKAGE_DIR, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if commit is None:
        return None, None
    status = git("status", "--porcelain", "--", ".")
    return commit.strip(), None if status is None else bool(status.strip())


def device_name(device: str) -> str:
    """The CPU's model name (Linux ``/proc/cpuinfo``, else :func:`platform.processor`) or the GPU's name."""
    import torch

    if device.startswith("cuda"):
        return torch.cuda.get_device_name(torch.device(device))
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name") and ":" in line:
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def run_provenance(device: str) -> dict:
    """What a results file records about where its runs were made.

    Keys: ``code_commit``, ``code_modified`` (see :func:`code_version`), ``device`` (``"cpu"`` or
    ``"cuda"``), ``device_name``, ``cpu_capability`` (torch's CPU kernel set, e.g. ``"AVX2"``: it
    decides the last bits of the sums), ``torch``, ``threads``, ``python``, ``machine``.
    """
    import torch

    commit, modified = code_version()
    return {"code_commit": commit, "code_modified": modified, "device": device, "device_name": device_name(device),
            "cpu_capability": torch.backends.cpu.get_cpu_capability(), "torch": torch.__version__,
            "threads": torch.get_num_threads(), "python": platform.python_version(), "machine": platform.machine(),
            "platform": sys.platform}
