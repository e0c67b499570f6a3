"""The inner loop of CONTRIBUTING selects tests freely: one node id, or ``--lf``.

Marks are written where each test is, so a selection that leaves out a file or a marked test
never trips over a list kept elsewhere. Each case starts pytest on the real ``tests/`` folder,
with its own cache folder, in one process.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from lessons_lib.paths import REPO_ROOT

pytestmark = pytest.mark.slow

# A quick test in a file that also holds a slow one: selecting it alone leaves the slow one out.
QUICK_NODE = "tests/test_grid.py::test_arms_are_named_by_variant_trees_and_changed_options"
SLOW_NEIGHBOUR = "tests/test_grid.py::test_no_lcqmc_text_is_tracked"


def _pytest(tmp_path, *args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "pytest", "-n", "0", "-q", "-o", f"cache_dir={tmp_path / 'cache'}", *args]
    return subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=900)


def test_the_slow_neighbour_is_marked_where_it_is_written():
    source = (REPO_ROOT / "tests" / "test_grid.py").read_text(encoding="utf-8")
    name = SLOW_NEIGHBOUR.split("::")[1]
    assert f"@pytest.mark.slow\ndef {name}(" in source


def test_one_node_id_runs_alone(tmp_path):
    result = _pytest(tmp_path, QUICK_NODE)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1].startswith("1 passed in")


def test_last_failed_reruns_only_what_failed(tmp_path):
    # pytest's own record of a failure, as a failed run leaves it
    lastfailed = tmp_path / "cache" / "v" / "cache" / "lastfailed"
    lastfailed.parent.mkdir(parents=True)
    lastfailed.write_text(json.dumps({QUICK_NODE: True}), encoding="utf-8")
    result = _pytest(tmp_path, "tests", "--lf", "-m", "not notebook and not slow")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    summary = result.stdout.strip().splitlines()[-1]
    assert summary.startswith("1 passed in"), summary  # the one recorded failure, nothing else
