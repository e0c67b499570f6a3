"""The numeric mode in which the lessons' printed digits are the same on every x86-64 CPU.

The same seed does not give the same digits everywhere: torch picks its own vectorised
kernels (softmax, layer norm, the element-wise operations) by what the CPU offers —
``ATEN_CPU_CAPABILITY`` ``avx512``, ``avx2`` or ``default`` — and Intel's MKL (matrix
products, vector math) and oneDNN (convolutions) pick their code the same way. Each sums
floats in another order, the last bits differ, and a few hundred training steps later a
prediction or a whole run can differ (CONTRIBUTING.md gives the measurements).

:func:`pin_numerics`, called in a lesson's first cell before torch is imported, fixes these
choices: torch's portable kernels (``ATEN_CPU_CAPABILITY=default``), MKL's conditional
numerical reproducibility (``MKL_CBWR=COMPATIBLE``), oneDNN's convolutions held to SSE4.1, and
one thread. Two kernels depend on the CPU even then, so the course does not use them: ``F.gelu``
(see :func:`lessons_lib.transformer.encoder.gelu`) and the default path of Adam/AdamW (the
course builds them with ``fused=True``). What that promises and what it does not (ARM laptops,
other torch builds) is in CONTRIBUTING.md, "Digits that travel"; ``tests/test_numerics.py``
checks it on emulated CPUs.
No torch here: the module must load before torch does.
"""

from __future__ import annotations

import os
import sys

__all__ = ["NUMERIC_MODE", "pin_numerics", "numerics_pinned"]

# Read by torch and MKL when they load, so they must be set before `import torch`.
NUMERIC_MODE = {
    "ATEN_CPU_CAPABILITY": "default",
    "MKL_CBWR": "COMPATIBLE",
    # oneDNN (convolutions) picks its kernels by the CPU's vector units too; SSE4.1 is on every x86-64 CPU in use
    "ONEDNN_MAX_CPU_ISA": "SSE41",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}


def numerics_pinned() -> bool:
    """Whether this process computes in :data:`NUMERIC_MODE` (torch loaded with it, or not loaded yet and set)."""
    if any(os.environ.get(name) != value for name, value in NUMERIC_MODE.items()):
        return False
    torch = sys.modules.get("torch")
    return torch is None or torch.backends.cpu.get_cpu_capability() == "DEFAULT"


def pin_numerics() -> bool:
    """Put this process in :data:`NUMERIC_MODE`; call it before the first ``import torch``.

    Returns:
        ``True`` when the mode is in force. Called after torch was loaded without it (a cell
        run out of order), it changes nothing, says so in one line and returns ``False``:
        restart the kernel and run the lesson from the top to get the lesson's digits.
    """
    if "torch" in sys.modules and not numerics_pinned():
        print("numerics: torch was loaded before the course's numeric mode was set; the digits may differ "
              "from the lesson's. Restart the kernel and run from the top.")
        return False
    os.environ.update(NUMERIC_MODE)
    return True
