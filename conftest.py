"""The test command's grouping under pytest-xdist and its ``notebook`` mark, for every path it is
given (tests/ and notebooks/ alike; the unit tests' own fixtures are in ``tests/conftest.py``).

Every cell nbval runs is marked ``notebook``, like the tests that execute whole lessons, so that
``-m "not notebook and not slow"`` (CONTRIBUTING's quick loop) leaves them out.

Each unit of work goes whole to one worker:

- a notebook (nbval): its cells must run in order in one kernel;
- a test file: its module fixtures are built once;
- every test whose parameter id begins with :data:`SHARED_WORKER_PREFIX`, whatever its file:
  ``tests/lesson_runs.py`` names the tests that read one lesson's student version this way, so that
  the session's one execution of it serves them all.

The grouping is read from the test ids the workers report, as strings (pytest's public ``nodeid``),
by a scheduler of pytest-xdist's own kind: it does not depend on how a pytest release stores ids
inside an item, which is where ``xdist_group`` marks stopped working under pytest 9.2.
"""

from __future__ import annotations

import pytest

SHARED_WORKER_PREFIX = "one worker: "


def work_unit(nodeid: str) -> str:
    """The unit of work of test ``nodeid``: its file, or its shared-worker parameter id."""
    path, _, rest = nodeid.partition("::")
    _, bracket, params = rest.partition("[")
    if bracket and params.startswith(SHARED_WORKER_PREFIX):
        return params.removesuffix("]")
    return path


def pytest_collection_modifyitems(items):
    for item in items:
        if item.path.suffix == ".ipynb":
            item.add_marker(pytest.mark.notebook)


@pytest.hookimpl(tryfirst=True, optionalhook=True)  # before xdist's own choice of scheduler
def pytest_xdist_make_scheduler(config, log):
    """Under ``-n N``, whatever ``--dist`` load mode is named, work units as :func:`work_unit` says."""
    if config.getvalue("dist") in ("no", "each"):
        return None
    from xdist.scheduler import LoadScopeScheduling

    class WorkUnitScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    return WorkUnitScheduling(config, log)
