"""Shared fixtures and settings for the unit tests."""

from __future__ import annotations

import os

import matplotlib

# Tests never open windows.
matplotlib.use("Agg")
os.environ.setdefault("TQDM_DISABLE", "1")
