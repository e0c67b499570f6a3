"""The test command's grouping under pytest-xdist, for every path it is given (tests/ and
notebooks/ alike; the unit tests' own fixtures are in ``tests/conftest.py``)."""

from __future__ import annotations

import pytest


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist (``-n auto --dist loadgroup``, as ``pyproject.toml`` runs it), every
    test file and every notebook runs whole on one worker: a notebook's cells must run in order in
    one kernel, and a file's module fixtures are built once. A test marked with a group of its own
    (``tests/lesson_runs.one_worker``) keeps it."""
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
