"""Progress bars that never warn: tqdm's notebook bar where ipywidgets is installed, else its text bar.

``tqdm.auto`` in a Jupyter kernel without ipywidgets (a learner's install has none: it comes
with the teacher's nbgrader) prints a red ``TqdmWarning: IProgress not found`` before falling
back to the text bar. The course asks for the text bar itself in that case. No tqdm at import.
"""

from __future__ import annotations

import importlib.util
from typing import Any

__all__ = ["progress_bar_class"]


def progress_bar_class() -> Any:
    """The ``tqdm`` class to use here: ``tqdm.auto.tqdm`` when ipywidgets can be imported, else ``tqdm.std.tqdm``."""
    if importlib.util.find_spec("ipywidgets") is None:
        from tqdm.std import tqdm
    else:
        from tqdm.auto import tqdm
    return tqdm
