"""Progress bars: no red warning in a kernel without ipywidgets."""

from __future__ import annotations

import subprocess
import sys


def test_without_ipywidgets_the_text_bar_is_used_and_nothing_is_warned():
    # A fresh interpreter in which ipywidgets cannot be found, posing as a Jupyter kernel for tqdm.auto.
    code = """
import importlib.util, sys, types, warnings
real = importlib.util.find_spec
importlib.util.find_spec = lambda name, *a: None if name == "ipywidgets" else real(name, *a)
sys.modules["ipywidgets"] = None
warnings.simplefilter("error")
from lessons_lib.progress import progress_bar_class
bar = progress_bar_class()
print(bar.__module__)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "tqdm.std"

