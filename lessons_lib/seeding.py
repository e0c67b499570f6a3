"""Seeding: the one call that puts Python's, NumPy's and torch's random streams in a known state.

A leaf shared by every layer (an experiment seeds as often as a lesson does), beside
:mod:`lessons_lib.errors` and :mod:`lessons_lib.validation`; the notebook-facing setup
(threads, print options) is :func:`lessons_lib.course.reproducibility.setup_reproducible`.
"""

from __future__ import annotations

import random

import torch

from lessons_lib.validation import check_int

__all__ = ["set_seed"]


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
