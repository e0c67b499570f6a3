"""Seeds, thread counts and print options that make notebook outputs repeatable."""

from __future__ import annotations

import os
import random

import torch

from lessons_lib.validation import check_int

# Float reductions depend on how work is split over threads; a fixed count keeps printed
# numbers identical on machines with different core counts. One thread: the lessons' small
# tensors gain nothing from more, and on a busy 2-core machine two threads waiting on each
# other made training up to 20x slower (measured while writing lessons 02, 05, 06 and 08).
DEFAULT_THREADS = 1


def set_seed(seed: int) -> torch.Generator:
    """Seed Python, NumPy (when installed) and torch; return a torch generator seeded the same.

    Args:
        seed: a non-negative integer.
    """
    check_int(seed, "`seed`", minimum=0)
    random.seed(seed)
    try:
        import numpy as np

        np.random.seed(seed)
    except ImportError:  # numpy is optional for the package itself
        pass
    torch.manual_seed(seed)
    return torch.Generator().manual_seed(seed)


def setup_reproducible(seed: int = 0, threads: int = DEFAULT_THREADS, precision: int = 4) -> torch.Generator:
    """One call at the top of every notebook: seeds, fixed threads, short tensor printing.

    Args:
        seed: seed for Python, NumPy and torch.
        threads: torch intra-op threads (fixed, so results do not depend on the machine).
        precision: digits torch prints after the decimal point.

    Returns:
        A ``torch.Generator`` seeded with ``seed``, for code that wants its own stream.
    """
    check_int(threads, "`threads`")
    os.environ.setdefault("PYTHONHASHSEED", str(seed))
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.set_printoptions(precision=precision, sci_mode=False, linewidth=100)
    return set_seed(seed)
