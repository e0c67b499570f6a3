"""The grader against hostile submissions: each one is graded correctly and the others keep their scores.

One grading run (module fixture) over a class of students, each doing one thing a hostile
or broken submission might do. Where bubblewrap works, the run also proves that a
submission cannot read or overwrite a neighbour's files; elsewhere the report must say
that a weaker isolation was in force (and those two checks are skipped, saying why).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from lessons_lib.course.assignments import make_student_notebook
from lessons_lib.grader.grading import grade_submissions
from lessons_lib.grader.sandbox import Isolation, Limits, choose_isolation, run_isolated

pytestmark = pytest.mark.slow

NOTEBOOK = "01_tiny.ipynb"
# Time to spare: a verdict here is what a submission did, never how fast a busy machine started its kernel
# (a kernel with torch takes 10-40 s to start beside other work on 2 cores).
LIMITS = Limits(notebook_seconds=600, cell_seconds=120, call_seconds=20, memory_mb=2048, disk_mb=256)
# For the notebook that never ends: it runs past any limit, so a short one decides the same on any machine.
HANG_LIMITS = Limits(notebook_seconds=40, cell_seconds=8, call_seconds=3, memory_mb=2048, disk_mb=256)
# 600 children, each alive until the loop ends (they wait on a pipe the kernel closes then), however slowly they
# start: the session's process count only grows, so the loop meets the process limit on a slow machine too.
FORK_BOMB = ("import os\nwait, done = os.pipe()\ntry:\n    for _ in range(600):\n        if os.fork() == 0:\n"
             "            try:\n                os.close(done)\n                os.read(wait, 1)\n"
             "            finally:\n                os._exit(0)\nfinally:\n    os.close(done)\n    os.close(wait)")

SCORES = '''def scaled_scores(q, k):
    ### BEGIN SOLUTION
    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    ### END SOLUTION'''
SOFTMAX = '''def safe_masked_softmax(scores, mask):
    ### BEGIN SOLUTION
    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
    return torch.where(mask.any(dim=-1, keepdim=True), weights, torch.zeros_like(weights))
    ### END SOLUTION'''
CORRECT_SCORES = "def scaled_scores(q, k):\n    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
# A file a submission tries to create among the shipped results: it must never appear (and is removed if it does).
RESULTS_PROBE = "written-by-a-submission.json"
# Reads a shipped results file where lessons_lib.paths puts it, then tries to change the results: both writes refused.
READS_RESULTS = (
    "import json, os\nfrom lessons_lib import paths\n"
    "shipped = sorted(paths.LCQMC_RESULTS_DIR.glob('*.json'))\n"
    "assert shipped and json.loads(shipped[0].read_text(encoding='utf-8')), 'no shipped results to read'\n"
    f"probe = paths.RESULTS_DIR / {RESULTS_PROBE!r}\n"
    "try:\n    open(probe, 'x').close()\nexcept OSError:\n    pass\nelse:\n"
    "    probe.unlink()\n    raise AssertionError('created a file in results/')\n"
    "assert not os.access(shipped[0], os.W_OK), 'a shipped results file is writable'")


def _reference() -> nbformat.NotebookNode:
    return new_notebook(cells=[
        new_code_cell("import math\nimport torch"),
        new_code_cell(SCORES),
        new_code_cell("from lessons_lib.exercises.attention import check_masked_softmax, check_scaled_scores\n\n"
                      "check_scaled_scores(scaled_scores)"),
        new_code_cell(SOFTMAX),
        new_code_cell("check_masked_softmax(safe_masked_softmax)"),
    ])


def _submission(exercise_1: str | None = None, exercise_2: str | None = None, extra: str | None = None):
    """The student version with the two exercise cells replaced (``None``: left to do) and an extra cell."""
    nb = make_student_notebook(_reference(), NOTEBOOK)
    if exercise_1 is not None:
        nb.cells[1].source = exercise_1
    if exercise_2 is not None:
        nb.cells[3].source = exercise_2
    if extra is not None:
        nb.cells.insert(2, new_code_cell(extra))
    return nb


def _hanging() -> nbformat.NotebookNode:
    """A notebook whose kernel ignores interrupts and never finishes a cell; more cells follow (each times out)."""
    nb = _submission(CORRECT_SCORES, SOFTMAX,
                     extra="import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass")
    nb.cells += [new_code_cell(f"x = {i}") for i in range(8)]
    return nb


def _class(root: Path) -> dict[str, nbformat.NotebookNode | str]:
    alice = root / "submissions" / "alice" / NOTEBOOK
    grades = root / "grades"
    marker = root / "unpickled"
    reads_alice = (f"import json\nsource = json.load(open({str(alice)!r}))\n"
                   "exec('\\n'.join(''.join(c['source']) for c in source['cells'][1:5:2]), globals())")
    return {
        "alice": nbformat.read(root / "reference" / NOTEBOOK, as_version=4),  # the solution itself
        "bob_overwrites": _submission(
            CORRECT_SCORES, extra=(f"for target in ({str(alice)!r}, {str(grades / 'grades.json')!r}):\n"
                                   "    try:\n        open(target, 'w').write('{}')\n"
                                   "    except OSError as error:\n        print('refused:', error)")),
        "carol_reads": _submission(reads_alice, ""),
        "dave_patches": _submission(
            "import lessons_lib.exercises as base\nimport lessons_lib.exercises.attention as checkers\n"
            "checkers.check_scaled_scores = lambda fn, **kw: print('✅ 练习 01-1 缩放点积分数: 通过')\n"
            "base.compare_tensor = lambda *args, **kwargs: None\n"
            "def scaled_scores(q, k):\n    return None",
            "def check_masked_softmax(fn, **kw):\n    print('✅ 练习 01-2 带遮蔽的 softmax: 通过')\n\n"
            "def safe_masked_softmax(scores, mask):\n    return 1"),
        "eve_loops": _submission("def scaled_scores(q, k):\n    while True:\n        pass", SOFTMAX),
        "grace_broken": "{ this is not a notebook",
        "henry_hogs": _submission("def scaled_scores(q, k):\n    torch.empty(2 ** 36, dtype=torch.uint8)\n"
                                  "    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])", SOFTMAX,
                                  extra="hoard = bytearray(2 ** 34)"),
        "olga_reads_results": _submission(CORRECT_SCORES, SOFTMAX, extra=READS_RESULTS),
        "kim_sysctl": _submission(CORRECT_SCORES, SOFTMAX, extra=(
            "setting = '/proc/sys/vm/swappiness'\nopen(setting, 'w').write(open(setting).read())")),
        "mia_borrows": _submission(
            "from lessons_lib.attention.functional import attention_scores, masked_softmax\n"
            "def scaled_scores(q, k):\n    return attention_scores(q, k)",
            "def safe_masked_softmax(scores, mask):\n    return masked_softmax(scores, mask)"),
        "nora_reaches_in": _submission(
            "from lessons_lib.exercises.attention import attention_scores\n"
            "def scaled_scores(q, k):\n    return attention_scores(q, k)",
            "def safe_masked_softmax(scores, mask):\n"
            "    return check_masked_softmax.__globals__['masked_softmax'](scores, mask)"),
        "ivan_smuggles": _submission(
            "import lessons_lib.grader.grading_worker as worker\n"
            f"class Payload:\n    def __reduce__(self):\n        return (open, ({str(marker)!r}, 'w'))\n"
            "worker.as_data = lambda value, depth=0: value\n"
            "def scaled_scores(q, k):\n    return Payload()"),
    }


def _write_class(root: Path, students: dict) -> None:
    for name, nb in students.items():
        folder = root / "submissions" / name
        folder.mkdir(parents=True)
        if isinstance(nb, str):
            (folder / NOTEBOOK).write_text(nb, encoding="utf-8")
        else:
            nbformat.write(nb, folder / NOTEBOOK)


@pytest.fixture(scope="module")
def graded(tmp_path_factory, grading_isolation):
    root = tmp_path_factory.mktemp("class")
    (root / "reference").mkdir()
    nbformat.write(_reference(), root / "reference" / NOTEBOOK)
    _write_class(root, _class(root))
    alice_before = (root / "submissions" / "alice" / NOTEBOOK).read_bytes()
    report = grade_submissions(root / "submissions", root / "grades", root / "reference", limits=LIMITS, seed=3,
                               isolation=grading_isolation)
    return root, report, alice_before


def _grade(report: dict, student: str) -> dict:
    return report["students"][student]["notebooks"][NOTEBOOK]


def _raised(grade: dict) -> set[str]:
    """The exceptions the notebook's cells raised while it ran."""
    return {error["error"] for error in grade["cell_errors"]}


def _needs_bubblewrap(report: dict) -> None:
    if report["isolation"]["name"] != "bubblewrap":
        pytest.skip(f"bubblewrap is not in force here ({report['isolation']['reason']}); the report says so")


def test_isolation_in_force_is_reported_and_is_bubblewrap_where_installed(graded):
    root, report, _ = graded
    isolation = report["isolation"]
    assert isolation["name"] in ("bubblewrap", "namespaces", "process") and isolation["gives"]
    if shutil.which("bwrap") and os.geteuid() == 0:
        assert isolation["name"] == "bubblewrap", isolation  # as root it always works: a fallback here is a bug
    saved = json.loads((root / "grades" / "grades.json").read_text(encoding="utf-8"))
    assert saved == report
    assert (root / "grades" / "grades.txt").read_text(encoding="utf-8").startswith(f"isolation: {isolation['name']}")


def test_the_honest_student_keeps_full_marks(graded):
    _, report, _ = graded
    assert report["students"]["alice"]["score"] == report["students"]["alice"]["total"] == 2


def test_a_submission_that_overwrites_a_neighbour_changes_nothing_of_theirs(graded):
    root, report, alice_before = graded
    bob = _grade(report, "bob_overwrites")
    assert (bob["score"], bob["total"]) == (1, 2) and bob["status"] == "graded"
    assert report["students"]["alice"]["score"] == 2  # graded from the copy made before anyone ran
    _needs_bubblewrap(report)
    assert (root / "submissions" / "alice" / NOTEBOOK).read_bytes() == alice_before


def test_a_submission_cannot_read_a_neighbours_notebook(graded):
    _, report, _ = graded
    _needs_bubblewrap(report)
    carol = _grade(report, "carol_reads")
    assert carol["score"] == 0, carol
    assert "FileNotFoundError" in _raised(carol)
    assert all("not defined" in check["message"] for check in carol["checks"])


def test_patching_or_redefining_the_checkers_earns_nothing(graded):
    _, report, _ = graded
    dave = _grade(report, "dave_patches")
    assert dave["score"] == 0 and dave["status"] == "graded"
    assert "没有返回值" in dave["checks"][0]["message"]  # judged by the grader's own, unpatched checker
    assert "应当是张量" in dave["checks"][1]["message"] or "形状" in dave["checks"][1]["message"]


def test_a_function_that_loops_forever_fails_its_exercise_only(graded):
    _, report, _ = graded
    eve = _grade(report, "eve_loops")
    assert eve["status"] == "graded" and [c["passed"] for c in eve["checks"]] == [False, True]
    assert "TimeoutError" in eve["checks"][0]["message"]


def test_a_notebook_that_hangs_is_reported_as_timed_out(tmp_path, grading_isolation):
    (tmp_path / "reference").mkdir()
    nbformat.write(_reference(), tmp_path / "reference" / NOTEBOOK)
    _write_class(tmp_path, {"frank_hangs": _hanging()})
    report = grade_submissions(tmp_path / "submissions", tmp_path / "grades", tmp_path / "reference",
                               limits=HANG_LIMITS, seed=3, isolation=grading_isolation)
    frank = _grade(report, "frank_hangs")
    assert frank["status"] == "timed out" and frank["score"] == 0 and frank["total"] == 2
    assert f"{HANG_LIMITS.notebook_seconds:g} s" in frank["message"]


def test_an_invalid_notebook_is_reported_and_not_run(graded):
    _, report, _ = graded
    grace = _grade(report, "grace_broken")
    assert grace["status"] == "failed" and "not a notebook" in grace["message"] and grace["total"] == 2


def test_memory_is_limited_per_process(graded):
    _, report, _ = graded
    henry = _grade(report, "henry_hogs")
    assert "MemoryError" in _raised(henry)
    assert [c["passed"] for c in henry["checks"]] == [False, True]
    assert "RuntimeError" in henry["checks"][0]["message"]


def test_the_kernels_settings_are_read_only_in_the_sandbox(graded):
    _, report, _ = graded
    _needs_bubblewrap(report)  # as root, the namespaces and process levels give no such protection
    kim = _grade(report, "kim_sysctl")
    assert _raised(kim) & {"OSError", "PermissionError"}, kim  # the write was refused
    assert kim["score"] == 2


def test_the_shipped_results_are_readable_and_read_only_in_the_sandbox(graded):
    """Lessons read results/ at run time (lesson 10): the sandbox shows it where the package expects it, read-only."""
    from lessons_lib import paths

    _, report, _ = graded
    assert not (paths.RESULTS_DIR / RESULTS_PROBE).exists()
    _needs_bubblewrap(report)  # the other levels, as root, would let the write through
    olga = _grade(report, "olga_reads_results")
    assert olga["cell_errors"] == [] and olga["score"] == 2, olga


def test_the_report_names_each_cell_that_raised(graded):
    root, report, _ = graded
    _needs_bubblewrap(report)
    carol = _grade(report, "carol_reads")  # cell 1 cannot read alice's file; both check cells then miss a function
    named = {(error["cell"], error["exercise"], error["error"]) for error in carol["cell_errors"]}
    assert named == {(1, None, "FileNotFoundError"), (2, 1, "NameError"), (4, 2, "NameError")}, carol["cell_errors"]
    text = (root / "grades" / "grades.txt").read_text(encoding="utf-8")
    carol_block = re.split(r"\n(?=\S)", text.partition("\ncarol_reads: ")[2])[0]  # up to the next student
    assert "    3 cells raised while the notebook ran:\n      cell 1: FileNotFoundError: " in carol_block, text
    assert ("      cell 4 (check cell of exercise 2 (safe_masked_softmax)): NameError: name 'safe_masked_softmax' "
            "is not defined\n") in carol_block, text


def _grade_fork_bomb(root: Path, isolation: str | Isolation, seed: int) -> dict:
    """Grade one student whose notebook forks 600 children, with :data:`LIMITS`."""
    (root / "reference").mkdir()
    nbformat.write(_reference(), root / "reference" / NOTEBOOK)
    _write_class(root, {"leo_forks": _submission(CORRECT_SCORES, SOFTMAX, extra=FORK_BOMB)})
    return grade_submissions(root / "submissions", root / "grades", root / "reference", limits=LIMITS,
                             isolation=isolation, seed=seed)


@pytest.fixture(scope="module")
def forked(tmp_path_factory, grading_isolation):
    root = tmp_path_factory.mktemp("forks")
    return root, _grade_fork_bomb(root, grading_isolation, seed=6)


def _stopped_at_the_limit(root: Path, report: dict, cgroup_problem: str) -> None:
    """The fork bomb met the process limit (its loop raised), the rest was graded, and the report names the limit."""
    leo = _grade(report, "leo_forks")
    assert "BlockingIOError" in _raised(leo), leo
    assert leo["status"] == "graded" and leo["score"] == 2, leo
    limit = report["isolation"]["process_limit"]
    assert ("pids cgroup" in limit) == (not cgroup_problem) and f"{LIMITS.processes}" in limit, limit
    assert f"process limit: {limit}" in (root / "grades" / "grades.txt").read_text(encoding="utf-8")


def test_a_fork_bomb_stops_at_the_process_limit(forked):
    from lessons_lib.grader.sandbox import pids_cgroup_problem

    root, report = forked
    _needs_bubblewrap(report)  # root's own processes are exempt from RLIMIT_NPROC outside the sandbox user
    _stopped_at_the_limit(root, report, pids_cgroup_problem())


def test_answers_borrowed_from_the_course_code_are_flagged(graded):
    root, report, _ = graded
    mia = _grade(report, "mia_borrows")
    assert mia["flags"] and "lessons_lib.attention.functional" in mia["flags"][0]
    assert not _grade(report, "alice")["flags"] and not _grade(report, "eve_loops")["flags"]
    assert "flag: uses the course's own code" in (root / "grades" / "grades.txt").read_text(encoding="utf-8")


def test_the_reference_reached_through_the_checker_module_or_its_globals_is_flagged(graded):
    """Both answers are the reference's own, so they pass; the flags tell the teacher how they got there."""
    _, report, _ = graded
    nora = _grade(report, "nora_reaches_in")
    assert nora["score"] == 2, nora
    assert any("lessons_lib.exercises.attention.attention_scores" in flag for flag in nora["flags"]), nora["flags"]
    assert any("__globals__" in flag for flag in nora["flags"]), nora["flags"]


def test_only_data_comes_back_from_the_sandbox(graded):
    root, report, _ = graded
    ivan = _grade(report, "ivan_smuggles")
    assert ivan["score"] == 0 and "cannot be read back as data" in ivan["checks"][0]["message"]
    assert not (root / "unpickled").exists()


def test_the_fallback_isolation_is_reported_and_still_grades_on_the_trusted_side(tmp_path):
    (tmp_path / "reference").mkdir()
    nbformat.write(_reference(), tmp_path / "reference" / NOTEBOOK)
    students = _class(tmp_path)
    _write_class(tmp_path, {name: students[name] for name in ("alice", "dave_patches")})
    report = grade_submissions(tmp_path / "submissions", tmp_path / "grades", tmp_path / "reference",
                               limits=LIMITS, isolation="process", seed=4)
    assert report["isolation"]["name"] == "process" and "NO network or file isolation" in report["isolation"]["gives"]
    assert {name: entry["score"] for name, entry in report["students"].items()} == {"alice": 2, "dave_patches": 0}


def test_named_namespaces_keep_each_session_to_its_own_copy(tmp_path):
    """``--isolation namespaces``: a neighbour's original, the report and the kernel's settings stay out of reach."""
    try:
        isolation = choose_isolation("namespaces")
    except Exception as error:  # not available on this machine: the level refuses, naming why
        pytest.skip(str(error))
    (tmp_path / "reference").mkdir()
    nbformat.write(_reference(), tmp_path / "reference" / NOTEBOOK)
    students = _class(tmp_path)
    _write_class(tmp_path, {name: students[name] for name in ("alice", "bob_overwrites", "carol_reads", "kim_sysctl")})
    alice = tmp_path / "submissions" / "alice" / NOTEBOOK
    alice_before = alice.read_bytes()
    report = grade_submissions(tmp_path / "submissions", tmp_path / "grades", tmp_path / "reference",
                               limits=LIMITS, isolation=isolation, seed=5)
    assert alice.read_bytes() == alice_before
    assert json.loads((tmp_path / "grades" / "grades.json").read_text(encoding="utf-8")) == report
    bob, carol, kim = (_grade(report, name) for name in ("bob_overwrites", "carol_reads", "kim_sysctl"))
    assert (bob["score"], carol["score"], kim["score"]) == (1, 0, 2)
    assert "FileNotFoundError" in _raised(carol)
    assert _raised(kim) & {"OSError", "PermissionError"}, kim  # the write was refused


@pytest.mark.parametrize("level", ["auto", "namespaces"])
def test_a_fork_bomb_stops_at_the_sessions_own_process_limit(tmp_path, level, grading_isolation, request):
    """600 waiting children: stopped by the session's pids cgroup, or by RLIMIT_NPROC where it holds (not for root)."""
    from lessons_lib.grader.sandbox import pids_cgroup_problem

    try:
        isolation = choose_isolation(level if level == "namespaces" else grading_isolation)
    except Exception as error:  # not available on this machine: the level refuses, naming why
        pytest.skip(str(error))
    cgroup_problem = pids_cgroup_problem()
    if cgroup_problem and (os.geteuid() == 0 and isolation.name != "bubblewrap"):
        pytest.skip(f"no process limit can be set here: no pids cgroup ({cgroup_problem}), and root's processes "
                    "ignore RLIMIT_NPROC")
    if level == "auto":  # the same run as the test above: graded once
        root, report = request.getfixturevalue("forked")
    else:
        root, report = tmp_path, _grade_fork_bomb(tmp_path, isolation, seed=6)
    _stopped_at_the_limit(root, report, cgroup_problem)


def _probe_script(outside: Path) -> list[str]:
    code = (
        "import os, socket\n"
        "print('input', open('f.txt' if os.path.exists('f.txt') else '/input/f.txt').read())\n"
        f"for path in ({str(outside)!r},):\n"
        "    try:\n        open(path).read(); print('read outside: yes')\n"
        "    except OSError: print('read outside: no')\n"
        "    try:\n        open(path + '.new', 'w').write('x'); print('write outside: yes')\n"
        "    except OSError: print('write outside: no')\n"
        "try:\n    socket.create_connection(('192.0.2.1', 80), timeout=2); print('network: yes')\n"
        "except OSError: print('network: no')\n"
    )
    return [sys.executable, "-I", "-c", code]


@pytest.mark.parametrize("level", ["bubblewrap", "namespaces"])
def test_the_sandbox_levels_give_what_they_promise(tmp_path, level):
    try:
        isolation = choose_isolation(level)
    except Exception as error:  # not available on this machine: the level refuses, naming why
        pytest.skip(str(error))
    given = tmp_path / "given"
    given.mkdir()
    (given / "f.txt").write_text("mine", encoding="utf-8")
    outside = tmp_path / "secret.txt"
    outside.write_text("neighbour", encoding="utf-8")
    done = run_isolated(isolation, _probe_script(outside), given, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "input mine" in done.stdout and "network: no" in done.stdout
    if level == "bubblewrap":
        assert "read outside: no" in done.stdout and "write outside: no" in done.stdout
        assert not (tmp_path / "secret.txt.new").exists()


def test_a_results_folder_that_is_a_symbolic_link_is_found_where_the_package_looks(tmp_path, monkeypatch):
    """Bound paths are resolved: the link itself is recreated, read-only behind it, or lessons would find nothing."""
    from lessons_lib import paths

    try:
        isolation = choose_isolation("bubblewrap")
    except Exception as error:  # not available on this machine: the level refuses, naming why
        pytest.skip(str(error))
    shipped, given = tmp_path / "elsewhere" / "results", tmp_path / "given"
    (shipped / "lcqmc").mkdir(parents=True)
    given.mkdir()
    (shipped / "lcqmc" / "one.json").write_text('{"accuracy": 0.5}', encoding="utf-8")
    (tmp_path / "course").mkdir()
    (tmp_path / "course" / "results").symlink_to(shipped)
    monkeypatch.setattr(paths, "RESULTS_DIR", tmp_path / "course" / "results")
    code = (f"import os\nfolder = {str(tmp_path / 'course' / 'results')!r}\n"
            "print(open(os.path.join(folder, 'lcqmc', 'one.json')).read())\n"
            "print('writable' if os.access(os.path.join(folder, 'lcqmc'), os.W_OK) else 'read-only')")
    done = run_isolated(isolation, [sys.executable, "-I", "-c", code], given, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == '{"accuracy": 0.5}\nread-only\n', done.stdout


def test_an_unknown_or_unavailable_level_is_an_error():
    from lessons_lib.errors import CourseInputError

    with pytest.raises(CourseInputError, match="isolation"):
        choose_isolation("docker")
    assert choose_isolation("process") == Isolation("process", "asked for")


def test_what_comes_back_from_a_call_is_plain_data():
    import numpy
    import torch

    from lessons_lib.grader.grading_worker import NotData, as_data

    class Tagged(torch.Tensor):
        pass

    value = as_data([torch.ones(2, requires_grad=True).as_subclass(Tagged), (1, 2.5, None, "x"), numpy.arange(3),
                     numpy.float32(0.5)])
    assert type(value[0]) is torch.Tensor and not value[0].requires_grad
    assert value[1] == (1, 2.5, None, "x") and torch.equal(value[2], torch.arange(3)) and value[3] == 0.5
    deep: list = []
    for _ in range(40):
        deep = [deep]
    for bad in (object(), {"a": 1}, torch.nn.Linear(1, 1), deep):
        with pytest.raises(NotData):
            as_data(bad)


@pytest.mark.parametrize("start_in", ["unrelated", "home"])
def test_a_submission_cannot_read_the_graders_working_or_home_folder(tmp_path, start_in):
    """`python -m lessons_lib.cli grade` run from an unrelated folder, or from the home folder: neither is mounted."""
    import subprocess

    if choose_isolation("auto" if shutil.which("bwrap") else "process").name != "bubblewrap":
        pytest.skip("only bubblewrap isolates files")
    unrelated, home = tmp_path / "unrelated", tmp_path / "home"
    for folder in (unrelated, home, tmp_path / "reference"):
        folder.mkdir()
    (unrelated / "secret.txt").write_text("the answers", encoding="utf-8")
    (home / "secret.txt").write_text("another class", encoding="utf-8")
    nbformat.write(_reference(), tmp_path / "reference" / NOTEBOOK)
    targets = (str(unrelated / "secret.txt"), str(home / "secret.txt"), str(unrelated), str(home))
    _write_class(tmp_path, {"sam_snoops": _submission(CORRECT_SCORES, SOFTMAX, extra=(
        f"import os\nreadable = []\nfor path in {targets!r}:\n"
        "    try:\n        open(path).read() if path.endswith('.txt') else os.listdir(path)\n"
        "        readable.append(path)\n    except OSError:\n        pass\n"
        "assert not readable, readable"))})
    done = subprocess.run([sys.executable, "-m", "lessons_lib.cli", "grade", str(tmp_path / "submissions"), "--out",
                           str(tmp_path / "grades"), "--reference", str(tmp_path / "reference"), "--seed", "7"],
                          cwd=unrelated if start_in == "unrelated" else home, env={**os.environ, "HOME": str(home)},
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    sam = json.loads((tmp_path / "grades" / "grades.json").read_text(encoding="utf-8"))["students"]["sam_snoops"]
    assert sam["notebooks"][NOTEBOOK]["cell_errors"] == [], sam  # no AssertionError: nothing there could be read
    assert sam["score"] == 2


def test_the_namespaces_level_is_refused_as_root_in_one_line(tmp_path):
    """As root its sandbox would keep root's power over /etc, its own cgroup's limit and other runs' folders."""
    import subprocess

    from lessons_lib.errors import CourseInputError
    from lessons_lib.grader.sandbox import sandbox_command

    if os.geteuid() != 0:
        pytest.skip("the namespaces level is refused to root only")
    with pytest.raises(CourseInputError, match="isolation namespaces is refused as root"):
        choose_isolation("namespaces")
    with pytest.raises(CourseInputError, match="refused as root"):  # an Isolation made by hand is refused too
        sandbox_command(Isolation("namespaces"), ["/bin/true"], tmp_path, {}, LIMITS)
    (tmp_path / "reference").mkdir()
    nbformat.write(_reference(), tmp_path / "reference" / NOTEBOOK)
    _write_class(tmp_path, {"alice": _reference()})
    done = subprocess.run([sys.executable, "-m", "lessons_lib.cli", "grade", str(tmp_path / "submissions"), "--out",
                           str(tmp_path / "grades"), "--reference", str(tmp_path / "reference"), "--isolation",
                           "namespaces"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stderr.startswith("error: isolation namespaces is refused as root"), done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "grades" / "grades.json").exists()


def test_a_pythonpath_that_shadows_the_package_is_refused_at_start(tmp_path):
    """The sandbox's `python -I` ignores PYTHONPATH: grading with another checkout would score every notebook 0."""
    import subprocess

    import lessons_lib

    shutil.copytree(Path(lessons_lib.__file__).parent, tmp_path / "checkout" / "lessons_lib",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "reference").mkdir()
    nbformat.write(_reference(), tmp_path / "reference" / NOTEBOOK)
    _write_class(tmp_path, {"alice": _reference()})
    done = subprocess.run([sys.executable, "-m", "lessons_lib.cli", "grade", str(tmp_path / "submissions"), "--out",
                           str(tmp_path / "grades"), "--reference", str(tmp_path / "reference"), "--isolation", "process"],
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(tmp_path / "checkout")},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    assert done.stderr.startswith(f"error: PYTHONPATH={tmp_path / 'checkout'} makes this process import lessons_lib "
                                  f"from {tmp_path / 'checkout' / 'lessons_lib'}"), done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "grades" / "grades.json").exists()


def test_a_student_folder_whose_name_is_not_utf8_is_graded_and_named_with_escapes(tmp_path, grading_isolation):
    import subprocess

    (tmp_path / "reference").mkdir()
    nbformat.write(_reference(), tmp_path / "reference" / NOTEBOOK)
    folder = os.fsdecode(os.fsencode(tmp_path / "submissions") + b"/stu\xffdent")
    os.makedirs(folder)
    nbformat.write(_reference(), os.path.join(folder, NOTEBOOK))
    done = subprocess.run([sys.executable, "-m", "lessons_lib.cli", "grade", str(tmp_path / "submissions"), "--out",
                           str(tmp_path / "grades"), "--reference", str(tmp_path / "reference"), "--isolation",
                           grading_isolation], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert f"stu\\xffdent/{NOTEBOOK}: 2/2" in done.stdout
    report = json.loads((tmp_path / "grades" / "grades.json").read_text(encoding="utf-8"))
    assert report["students"]["stu\\xffdent"]["score"] == 2, report["students"].keys()
    assert "stu\\xffdent: 2/2" in (tmp_path / "grades" / "grades.txt").read_text(encoding="utf-8")
