"""Seeding: the one call that puts Python's, NumPy's and torch's random streams in a known state.

A leaf shared by every layer (an experiment seeds as often as a lesson does), beside
:mod:`lessons_lib.errors` and :mod:`lessons_lib.validation`; the notebook-facing setup
(threads, print options) is :func:`lessons_lib.course.reproducibility.setup_reproducible`.
"""

from __future__ import annotations

import random

import torch

from lessons_lib.errors import FieldName
from lessons_lib.validation import check_int

__all__ = ["set_seed", "random_states", "restore_random_states"]


def set_seed(seed: int) -> torch.Generator:
    """Seed Python, NumPy (when installed) and torch; return a torch generator seeded the same.

    Args:
        seed: a non-negative integer.
    """
    check_int(seed, FieldName("seed"), minimum=0)
    random.seed(seed)
    try:
        import numpy as np

        np.random.seed(seed)
    except ImportError:  # numpy is optional for the package itself
        pass
    torch.manual_seed(seed)
    return torch.Generator().manual_seed(seed)


def random_states() -> tuple:
    """The current states of Python's, NumPy's (when installed) and torch's random streams.

    What a worker process hands back so that its parent can continue from the state the same
    work would have left had it run in the parent (:func:`restore_random_states`).
    """
    try:
        import numpy as np

        numpy_state = np.random.get_state()
    except ImportError:
        numpy_state = None
    return random.getstate(), numpy_state, torch.get_rng_state()


def restore_random_states(states: tuple) -> None:
    """Put the three random streams in ``states`` (from :func:`random_states`)."""
    python_state, numpy_state, torch_state = states
    random.setstate(python_state)
    if numpy_state is not None:
        import numpy as np

        np.random.set_state(numpy_state)
    torch.set_rng_state(torch_state)
