"""Seeds, thread counts and print options that make notebook outputs repeatable.

The seeding itself is :func:`lessons_lib.seeding.set_seed`, a leaf any layer may use; it is
imported here too because lesson 08 imports ``set_seed`` from this module.
"""

from __future__ import annotations

import os

import torch

from lessons_lib.seeding import set_seed
from lessons_lib.errors import FieldName
from lessons_lib.validation import check_int

__all__ = ["DEFAULT_THREADS", "set_seed", "setup_reproducible"]

# Float reductions depend on how work is split over threads; a fixed count keeps printed
# numbers identical on machines with different core counts. One thread: the lessons' small
# tensors gain nothing from more, and on a busy 2-core machine two threads waiting on each
# other made training up to 20x slower (measured while writing lessons 02, 05, 06 and 08).
DEFAULT_THREADS = 1


def setup_reproducible(seed: int = 0, threads: int = DEFAULT_THREADS, precision: int = 4) -> torch.Generator:
    """One call at the top of every notebook: seeds, fixed threads, short tensor printing.

    Args:
        seed: seed for Python, NumPy and torch.
        threads: torch intra-op threads (fixed, so results do not depend on the machine).
        precision: digits torch prints after the decimal point.

    Returns:
        A ``torch.Generator`` seeded with ``seed``, for code that wants its own stream.
    """
    check_int(threads, FieldName("threads"))
    os.environ.setdefault("PYTHONHASHSEED", str(seed))
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.set_printoptions(precision=precision, sci_mode=False, linewidth=100)
    return set_seed(seed)
