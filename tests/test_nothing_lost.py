"""Nothing the user has is lost: one command per folder, whole files only, bounded inputs, Ctrl-C, only the course's files removed.

One test class per kind of loss: two commands on one folder (:class:`TestOneCommandPerFolder`),
a full disk (:class:`TestFullDisk`, on a small tmpfs where one can be mounted), inputs whose
cost grows with their square (:class:`TestBoundedInputs`), Ctrl-C (:class:`TestCtrlC`), files
the course did not write (:class:`TestOnlyTheCoursesFiles`) and what a run's identity and the
error messages say (:class:`TestIdentityAndHints`, with :func:`test_every_suggested_command_exists`
walking every message of the package).
"""

from __future__ import annotations

import ast
import contextlib
import fcntl
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
import torch

from lessons_lib.cli import build_parser
from lessons_lib.errors import CourseInputError
from lessons_lib.files import LOCK_NAME, MANIFEST_NAME
from lessons_lib.paths import LCQMC_ENV_VAR, LCQMC_SAMPLE_DIR, NOTEBOOKS_DIR, REPO_ROOT

TINY = ["--limit-train", "24", "--d-model", "16", "--d-ff", "16", "--n-heads", "2", "--epochs", "1",
        "--threads", "1", "--no-progress"]
LESSON = NOTEBOOKS_DIR / "01_dot_product_attention.ipynb"


@pytest.fixture(autouse=True)
def _no_lcqmc_variable(monkeypatch):
    monkeypatch.delenv(LCQMC_ENV_VAR, raising=False)


def _one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _lock_holder(folder: Path, wait_for: Path | None = None) -> subprocess.Popen:
    """A process that takes ``folder``'s lock with the course's own code and holds it; its first line says
    ``held`` or ``refused``. With ``wait_for``, it starts trying once that file exists (for races)."""
    code = ("import os, sys, time\nfrom lessons_lib.errors import CourseInputError\n"
            "from lessons_lib.files import folder_lock\n"
            "while sys.argv[2] and not os.path.exists(sys.argv[2]):\n    time.sleep(0.001)\n"
            "try:\n    lock = folder_lock(sys.argv[1]); lock.__enter__()\n"
            "except CourseInputError:\n    print('refused', flush=True); time.sleep(60)\n"
            "else:\n    print('held', flush=True); time.sleep(60)\n")
    holder = subprocess.Popen([os.sys.executable, "-c", code, str(folder), str(wait_for or "")], text=True,
                              stdout=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    if wait_for is None:
        assert holder.stdout.readline().strip() == "held"
    return holder


def _end(process: subprocess.Popen) -> None:
    """Kill ``process`` (SIGKILL: it never removes its lock file) and close its pipe."""
    process.kill()
    process.wait()
    if process.stdout:
        process.stdout.close()


def _train(cli, out: Path, *extra: str) -> tuple[int, str, str]:
    return cli(["train", "--out", out, *TINY, *extra])



# CPU seconds two tiny training runs may use together (a budget of work, the same on an idle or a busy machine).
TWO_TINY_RUNS_CPU_BUDGET = 120.0


def _cpu_seconds(pid: int) -> float:
    """The CPU time ``pid`` has used so far (Linux's /proc; 0 once it has ended)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _finish_while_working(processes: list[subprocess.Popen], stall_seconds: float = 300.0) -> list[tuple[str, str]]:
    """Each process's ``(stdout, stderr)`` once all have ended, waiting as long as they keep working.

    No wall-clock limit, which a loaded machine can pass however healthy the processes are: the
    test fails only when none of those still running has used any CPU for ``stall_seconds``, a
    hang (a fair share of a busy machine's CPU comes far more often than that).
    """
    outputs: dict[int, tuple[str, str]] = {}
    used, since = -1.0, time.monotonic()
    while len(outputs) < len(processes):
        for index, process in enumerate(processes):
            if index not in outputs:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    outputs[index] = process.communicate(timeout=1)
        now = sum(_cpu_seconds(p.pid) for i, p in enumerate(processes) if i not in outputs)
        if now != used:
            used, since = now, time.monotonic()
        if time.monotonic() - since > stall_seconds:
            for process in processes:
                process.kill()
            pytest.fail(f"no CPU used for {stall_seconds:.0f} s by a process still running: it hangs")
    return [outputs[index] for index in range(len(processes))]

@pytest.fixture
def small_disk(tmp_path):
    """``small_disk(size)``: a fresh tmpfs of ``size`` (``"64k"``), unmounted afterwards; skipped where none can be mounted."""
    mounted: list[Path] = []

    def mount(size: str) -> Path:
        folder = tmp_path / f"disk{len(mounted)}"
        folder.mkdir()
        if os.geteuid() != 0 or shutil.which("mount") is None:
            pytest.skip("a small tmpfs needs root and mount(8): the full-disk cases are not run here")
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            pytest.skip(f"cannot mount a small tmpfs here ({done.stderr.strip()[:200]})")
        mounted.append(folder)
        return folder

    yield mount
    for folder in mounted:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


class TestOneCommandPerFolder:
    def test_a_second_run_on_a_folder_in_use_is_refused_naming_it(self, tmp_path, cli):
        out = tmp_path / "run"
        out.mkdir()
        holder = _lock_holder(out)
        try:
            code, text, err = _train(cli, out)
        finally:
            _end(holder)
        line = _one_error_line(err)
        assert code == 2 and f"{out} is in use by another command (process {holder.pid})" in line
        assert "epoch 1:" not in text and _snapshot(out) == {LOCK_NAME: f"{holder.pid}\n".encode()}

    @pytest.mark.parametrize("left", ["killed holder", "live unrelated process", "empty", "text"])
    def test_a_lock_file_nobody_holds_is_taken(self, tmp_path, cli, left):
        out = tmp_path / "run"
        out.mkdir()
        other = subprocess.Popen(["sleep", "60"])
        try:
            if left == "killed holder":
                holder = _lock_holder(out)
                _end(holder)
                assert (out / LOCK_NAME).read_text(encoding="utf-8") == f"{holder.pid}\n"
            else:
                content = {"live unrelated process": f"{other.pid}\n", "empty": "", "text": "not a pid"}[left]
                (out / LOCK_NAME).write_text(content, encoding="utf-8")
            code, text, err = _train(cli, out)
        finally:
            other.kill()
            other.wait()
        assert code == 0, err
        assert not (out / LOCK_NAME).exists() and (out / "checkpoint.pt").is_file()

    def test_the_lock_leaves_no_descriptor_open_whether_taken_refused_or_broken(self, tmp_path):
        from lessons_lib.files import file_lock, folder_lock

        def open_descriptors() -> set[str]:
            return set(os.listdir("/proc/self/fd"))

        broken = tmp_path / "broken"
        (broken / LOCK_NAME).mkdir(parents=True)  # a lock that is a folder
        busy = tmp_path / "busy"
        busy.mkdir()
        holder = _lock_holder(busy)
        try:
            before = open_descriptors()
            with folder_lock(tmp_path), folder_lock(tmp_path), file_lock(tmp_path / "r.json"):
                assert len(open_descriptors() - before) == 2  # one per lock file, the nested one shared
            for refused in (busy, broken):
                with pytest.raises(CourseInputError), folder_lock(refused):
                    pass
            assert open_descriptors() == before
        finally:
            _end(holder)

    def test_two_processes_racing_for_one_lock_one_wins_and_a_killed_winner_frees_it(self, tmp_path):
        start = tmp_path / "go"
        racers = [_lock_holder(tmp_path, wait_for=start) for _ in range(2)]
        start.touch()
        outcomes = [racer.stdout.readline().strip() for racer in racers]
        try:
            assert sorted(outcomes) == ["held", "refused"], outcomes
            winner = racers[outcomes.index("held")]
            assert (tmp_path / LOCK_NAME).read_text(encoding="utf-8") == f"{winner.pid}\n"
            _end(winner)
            again = _lock_holder(tmp_path)
            _end(again)
        finally:
            for racer in racers:
                _end(racer)

    @pytest.mark.slow
    def test_two_real_runs_on_one_folder_leave_one_consistent_run(self, tmp_path):
        import resource

        out = tmp_path / "run"
        command = [os.sys.executable, "-m", "lessons_lib.cli", "train", "--out", str(out), *TINY]
        env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "OMP_NUM_THREADS": "1"}
        env.pop(LCQMC_ENV_VAR, None)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        runs = [subprocess.Popen([*command, "--epochs", "3", "--seed", seed], env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True) for seed in ("0", "5")]
        errors = [err for _, err in _finish_while_working(runs)]
        codes = [run.returncode for run in runs]
        assert sorted(codes) == [0, 2], errors  # one finishes; the other is refused: in use, or another run's folder
        winner = ("0", "5")[codes.index(0)]
        loser_error = errors[codes.index(2)]
        assert "Traceback" not in loser_error and ("is in use by another command" in loser_error
                                                   or "cannot resume from" in loser_error), loser_error
        metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
        checkpoint = torch.load(out / "checkpoint.pt", weights_only=True)
        assert metrics["train_config"]["seed"] == checkpoint["train_config"]["seed"] == int(winner)
        assert len(metrics["epochs"]) == checkpoint["epoch"] == 3 and not (out / LOCK_NAME).exists()
        # The cost, measured in CPU seconds (what the runs did, not how long a busy machine made them wait):
        # two imports of torch and three epochs of 24 pairs take about 10 s; far more means work gone astray.
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        spent = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        assert spent < TWO_TINY_RUNS_CPU_BUDGET, f"the two runs used {spent:.0f} CPU seconds"

    def test_an_experiment_refuses_a_results_file_another_one_is_writing(self, tmp_path, cli, monkeypatch):
        from lessons_lib.cli import experiment_commands

        monkeypatch.setattr(experiment_commands, "_data_and_parses", lambda args, config: (None, None))
        out = tmp_path / "results.json"
        with open(tmp_path / "results.json.lock", "w", encoding="utf-8") as lock:  # as another command holds it
            lock.write("1\n")
            lock.flush()
            fcntl.flock(lock, fcntl.LOCK_EX)
            code, _, err = cli(["experiment", "--out", out, "--threads", "1"])
        assert code == 2 and f"{out} is in use by another command (process 1)" in _one_error_line(err)
        assert not out.exists()


class TestLockFilesAndManifest:
    @pytest.mark.parametrize("kind", ["folder", "unreadable"])
    def test_a_lock_that_cannot_be_opened_says_how_to_clear_it(self, tmp_path, cli, kind):
        out = tmp_path / "run"
        out.mkdir()
        if kind == "folder":
            (out / LOCK_NAME).mkdir()
        else:
            (out / LOCK_NAME).symlink_to(tmp_path / "elsewhere")  # not a plain file: never followed
        code, _, err = _train(cli, out)
        line = _one_error_line(err)
        assert code == 2 and f"{out}: its lock {out / LOCK_NAME} is not a plain file" in line
        remove = "rm -r" if kind == "folder" else "rm"  # a link is a file to rm, a folder needs -r
        assert f"remove it ({remove} '{out / LOCK_NAME}')" in line and "in use" not in line

    def test_a_read_only_folder_is_named_and_no_missing_lock_is_to_be_removed(self, tmp_path, cli, monkeypatch):
        import errno

        from lessons_lib import files

        out = tmp_path / "run"
        out.mkdir()
        real = os.open

        def read_only(path, flags, *args, **kwargs):  # as a read-only mount answers, for root too
            if Path(path).name == LOCK_NAME and flags & os.O_CREAT and not os.path.lexists(path):
                raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
            return real(path, flags, *args, **kwargs)

        monkeypatch.setattr(files.os, "open", read_only)
        code, _, err = _train(cli, out)
        line = _one_error_line(err)
        assert code == 2 and f"{out}: cannot create its lock file {out / LOCK_NAME} (Read-only file system)" in line
        assert line.endswith(f"writes in {out}; make it writable, or choose another folder")
        assert "rm " not in line and not os.path.lexists(out / LOCK_NAME)

    @pytest.mark.parametrize("fails", ["the file", "the final manifest"])
    def test_a_fault_between_file_and_manifest_never_disowns_the_courses_file(self, tmp_path, monkeypatch, fails):
        from lessons_lib import files

        target = tmp_path / "checkpoint.pt"
        files.record_written(target, b"old")
        real = files.atomic_write
        written = []

        def faulty(path, data):
            if (fails == "the file" and Path(path) == target) or (
                    fails == "the final manifest" and Path(path).name == files.MANIFEST_NAME and target in written):
                raise CourseInputError(f"{path}: no space left on device")
            written.append(Path(path))
            return real(path, data)

        monkeypatch.setattr(files, "atomic_write", faulty)
        with pytest.raises(CourseInputError):
            files.record_written(target, b"new")
        monkeypatch.setattr(files, "atomic_write", real)
        assert target.read_bytes() == (b"old" if fails == "the file" else b"new")
        assert files.written_by_course(target) and files.foreign_entries(tmp_path) == []
        files.record_written(target, b"newer")
        target.write_bytes(b"old")  # the older content is no longer the course's once a write finished
        assert not files.written_by_course(target)


class TestFullDisk:
    @pytest.mark.slow
    def test_build_sample_on_a_full_disk_keeps_the_old_sample_whole(self, small_disk, cli):
        disk = small_disk("1m")
        for name in ("train.tsv", "dev.tsv", "test.tsv"):
            shutil.copy(LCQMC_SAMPLE_DIR / name, disk / name)
        before = _snapshot(disk)
        code, _, err = cli(["build-sample", "--out-dir", disk, "--seed", "7", "--force"])  # not the course's
        line = _one_error_line(err)
        assert code == 2 and "No space left on device" in line and str(disk) in line
        after = {name: data for name, data in _snapshot(disk).items() if name != MANIFEST_NAME}  # the record may stay
        assert after == before  # the old three files, byte for byte; no temporary file left
        from lessons_lib.pairs.data import load_lcqmc

        assert len(load_lcqmc(disk).train) > 0

    def test_a_checkpoint_that_does_not_fit_is_one_error_line_naming_it(self, small_disk, cli):
        out = small_disk("64k")
        code, _, err = _train(cli, out)
        line = _one_error_line(err)
        assert code == 2 and f"cannot write {out / 'checkpoint.pt'}: No space left on device" in line
        assert not (out / "checkpoint.pt").exists() and not [p for p in out.iterdir() if p.name.endswith(".tmp")]

    def test_a_workspace_on_a_full_disk_holds_no_half_notebook(self, small_disk, cli):
        disk = small_disk("256k")
        code, _, err = cli(["workspace", disk / "ws"])
        assert code == 2 and "No space left on device" in _one_error_line(err)
        from lessons_lib.course.notebooks import read_notebook

        for path in (disk / "ws").glob("*.ipynb"):
            read_notebook(path)  # every notebook there is whole
        assert not [p for p in (disk / "ws").iterdir() if p.name.endswith(".tmp")]

    def test_a_full_parse_cache_is_not_called_damaged(self, small_disk):
        from lessons_lib.syntax.cache import ParseCache
        from lessons_lib.syntax.parser import Parse

        disk = small_disk("64k")
        cache = ParseCache(disk, "p", "1")
        with pytest.raises(CourseInputError) as caught:
            for start in range(0, 100_000, 200):
                cache.put_many([Parse(f"句子{i}" * 20, [f"句子{i}" * 20], [-1], ["root"]) for i in range(start, start + 200)])
        message = str(caught.value)
        assert "the disk is full" in message and "delete" not in message and str(disk / "parses.sqlite") in message


class TestBoundedInputs:
    @pytest.fixture
    def long_question(self, tmp_path) -> Path:
        data = tmp_path / "data"
        shutil.copytree(LCQMC_SAMPLE_DIR, data)
        with open(data / "dev.tsv", "a", encoding="utf-8") as handle:
            handle.write("怎" * 100_000 + "\t红烧肉怎么做\t1\n")
        return data

    @pytest.mark.parametrize("command", [
        ["train", "--out", "{tmp}/run", *TINY],
        ["preparse", "--cache-dir", "{tmp}/cache"],
        ["experiment", "--out", "{tmp}/r.json", "--threads", "1", "--no-progress"],
    ], ids=["train", "preparse", "experiment"])
    def test_a_huge_question_is_refused_naming_the_line_and_the_limit(self, long_question, tmp_path, cli, command):
        from lessons_lib.pairs.data import MAX_SENTENCE_CHARS

        line_number = len((long_question / "dev.tsv").read_text(encoding="utf-8").splitlines())
        argv = [a.format(tmp=tmp_path) for a in command] + ["--data-dir", long_question]
        started = time.perf_counter()
        code, _, err = cli(argv)
        line = _one_error_line(err)
        assert code == 2 and f"{long_question / 'dev.tsv'}, line {line_number}" in line
        assert f"100,000 characters, more than the {MAX_SENTENCE_CHARS:,}" in line
        assert time.perf_counter() - started < 60  # refused before any parsing or distance matrix

    def test_lenient_reading_skips_it_with_the_reason(self, long_question):
        from lessons_lib.pairs.data import load_lcqmc

        data = load_lcqmc(long_question, lenient=True)
        assert len(data.dev.skipped) == 1 and "more than the" in data.dev.skipped[0].reason

    def test_the_parser_refuses_a_text_past_the_limit_before_parsing(self):
        from lessons_lib.syntax.parser import check_texts

        with pytest.raises(CourseInputError, match=r"`texts`\[1\] has 100,000 characters"):
            check_texts(["短句", "长" * 100_000])


def _process_stats() -> Iterator[tuple[int, list[str]]]:
    """Every process as (pid, the fields of /proc/PID/stat after the command name: state, ppid, pgrp, session …)."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                yield int(entry), Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue


def _children(pid: int) -> list[int]:
    """The process ids whose parent is ``pid`` (Linux's /proc)."""
    return [child for child, fields in _process_stats() if int(fields[1]) == pid]


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _session(sid: int) -> list[int]:
    """The running processes of session ``sid`` (a command started in a session of its own, and all it started)."""
    return [pid for pid, fields in _process_stats() if int(fields[3]) == sid and fields[0] != "Z"]


def _command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:200]
    except OSError:
        return "?"


def _until(condition, seconds: float = 240.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the command did not get there in time"
        time.sleep(0.2)


def _command(*argv: str) -> subprocess.Popen:
    """``lessons argv`` in a process group of its own, as a terminal would run it."""
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "OMP_NUM_THREADS": "1"}
    env.pop(LCQMC_ENV_VAR, None)
    return subprocess.Popen([os.sys.executable, "-m", "lessons_lib.cli", *argv], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def _experiment_with_workers(out: Path) -> subprocess.Popen:
    return _command("experiment", "--control", "attachment", "--out", str(out), "--workers", "2", "--variants", "none",
                    "learned", "--seeds", "0", "--epochs", "60", "--no-progress", "--threads", "1")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from Linux's /proc")
class TestCtrlCOnTheConsole:
    """Ctrl-C (SIGINT to the terminal's process group) and SIGKILL on real commands."""

    def test_execute_during_a_cell_ends_with_one_line(self, tmp_path):
        marker = tmp_path / "cell-started"
        notebook = tmp_path / "slow.ipynb"
        nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
            f"import pathlib, time\npathlib.Path({str(marker)!r}).touch()\ntime.sleep(120)")]), notebook)
        before = notebook.read_bytes()
        command = _command("execute", str(notebook))
        _until(marker.exists)
        os.killpg(command.pid, signal.SIGINT)
        out, err = command.communicate(timeout=120)
        assert command.returncode == 130 and "Traceback" not in err and err.strip() == "", err
        assert out.strip().splitlines()[-1].startswith("interrupted; ")
        assert notebook.read_bytes() == before

    @pytest.mark.parametrize("when", ["workers start", "workers train"])
    def test_experiment_with_workers_ends_with_one_line_and_no_process_left(self, tmp_path, when):
        command = _experiment_with_workers(tmp_path / "r.json")
        if when == "workers start":
            _until(lambda: len(_children(command.pid)) >= 2)  # the workers (and resource tracker) are starting
        else:
            _until(lambda: len(list((tmp_path / "r_runs").glob("*/checkpoint.pt"))) >= 1)
        started = _session(command.pid)
        os.killpg(command.pid, signal.SIGINT)
        out, err = command.communicate(timeout=120)
        try:
            _until(lambda: not _session(command.pid), seconds=20)
        finally:
            left = {pid: _command_line(pid) for pid in _session(command.pid)}
            for pid in left:
                os.kill(pid, signal.SIGKILL)
        assert len(started) >= 3 and not left, left  # the command, its workers and the resource tracker had run
        assert command.returncode == 130 and out.strip().splitlines()[-1].startswith("interrupted; "), err
        assert err == "", err  # no traceback, no resource tracker warning

    @pytest.mark.slow
    @pytest.mark.parametrize("when", ["workers start", "workers train"])
    def test_experiment_killed_leaves_no_worker_behind_and_nothing_on_stderr(self, tmp_path, when):
        command = _experiment_with_workers(tmp_path / "r.json")
        if when == "workers start":  # the workers and the resource tracker run; the workers read their data
            _until(lambda: len(_children(command.pid)) >= 3)
        else:
            _until(lambda: len(list((tmp_path / "r_runs").glob("*/checkpoint.pt"))) >= 1)
        workers = _children(command.pid)
        assert len(workers) >= 2
        command.kill()  # SIGKILL: the parent cleans nothing up
        command.wait()
        try:
            _until(lambda: not any(_running(pid) for pid in workers), seconds=20)
        finally:
            for pid in workers:
                if _running(pid):
                    os.kill(pid, signal.SIGKILL)
        _, err = command.communicate(timeout=60)  # the pipe ends when the workers and the tracker have
        assert err == "", err  # no worker's UnpicklingError, no "leaked semaphore objects"


class TestCtrlC:
    @pytest.fixture
    def interrupt(self):
        def raise_interrupt(*args, **kwargs):
            raise KeyboardInterrupt

        return raise_interrupt

    def test_experiment(self, tmp_path, cli, monkeypatch, interrupt):
        from lessons_lib.cli import experiment_commands

        monkeypatch.setattr(experiment_commands, "_data_and_parses", interrupt)
        code, out, err = cli(["experiment", "--out", tmp_path / "r.json", "--threads", "1"])
        assert code == 130 and err == ""
        assert out.strip() == (f"interrupted; every finished epoch of every run is checkpointed under "
                               f"{tmp_path / 'r_runs'} and {tmp_path / 'r.json'} is unchanged: run the same command "
                               "again to resume")
        assert not (tmp_path / "r.json.lock").exists()

    def test_preparse(self, tmp_path, cli, monkeypatch, interrupt):
        from lessons_lib.syntax import cache

        monkeypatch.setattr(cache, "lcqmc_sentences", interrupt)
        code, out, err = cli(["preparse", "--data-dir", LCQMC_SAMPLE_DIR, "--cache-dir", tmp_path])
        assert code == 130 and err == "" and out.strip() == (
            f"interrupted; the sentences parsed so far are kept in the parse cache {tmp_path}: run the same command "
            "again to parse the rest")

    def test_grade(self, tmp_path, cli, monkeypatch, interrupt):
        from lessons_lib.grader import grading

        monkeypatch.setattr(grading, "grade_submissions", interrupt)
        code, out, err = cli(["grade", tmp_path, "--out", tmp_path / "grades"])
        assert code == 130 and err == "" and out.startswith(f"interrupted; {tmp_path / 'grades' / 'grades.json'} holds")

    def test_train_with_no_resume_does_not_suggest_the_command_that_deletes_the_checkpoint(self, tmp_path, cli,
                                                                                            monkeypatch):
        from lessons_lib.training import trainer

        out = tmp_path / "run"
        assert _train(cli, out, "--epochs", "2", "--no-resume", "--seed", "1")[0] == 0
        original = trainer._Trainer.save

        def save_then_interrupt(self, path):
            original(self, path)
            raise KeyboardInterrupt

        monkeypatch.setattr(trainer._Trainer, "save", save_then_interrupt)
        code, text, _ = _train(cli, out, "--epochs", "2", "--no-resume")
        assert code == 130 and "run the command again without --no-resume to resume" in text
        assert "run the same command again" not in text and (out / "checkpoint.pt").is_file()


class TestOnlyTheCoursesFiles:
    def test_a_finished_run_missing_its_metrics_writes_them_again(self, tmp_path, cli):
        out = tmp_path / "run"
        assert _train(cli, out)[0] == 0
        first = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
        (out / "metrics.json").unlink()
        code, text, err = _train(cli, out)
        assert code == 0, err
        again = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
        assert again["epochs"] == first["epochs"] and len(again["epochs"]) == 1

    def test_a_fresh_run_keeps_the_users_own_metrics_and_vocabulary(self, tmp_path, cli):
        out = tmp_path / "run"
        out.mkdir()
        (out / "metrics.json").write_text('{"mine": true}\n', encoding="utf-8")
        (out / "vocab.json").write_text('["我的"]\n', encoding="utf-8")
        before = _snapshot(out)
        code, text, err = _train(cli, out)
        line = _one_error_line(err)
        assert code == 2 and f"{out} holds metrics.json, vocab.json, which the course did not write" in line
        assert "removed" not in text and _snapshot(out) == before

    def test_a_run_file_edited_by_the_user_is_not_removed_by_a_fresh_start(self, tmp_path, cli):
        out = tmp_path / "run"
        assert _train(cli, out)[0] == 0
        (out / "metrics.json").write_text('{"my notes": 1}\n', encoding="utf-8")
        code, _, err = _train(cli, out, "--no-resume")
        assert code == 2 and "holds metrics.json, which the course did not write (or which was changed since)" in err
        assert (out / "metrics.json").read_text(encoding="utf-8") == '{"my notes": 1}\n'
        assert (out / "checkpoint.pt").is_file()  # nothing removed
        (out / "metrics.json").unlink()
        code, text, _ = _train(cli, out, "--no-resume")  # the course's own files go, as before
        assert code == 0 and "starting afresh: removed checkpoint.pt, vocab.json, predictions.json" in text

    def test_student_refuses_a_learners_folder_and_rewrites_its_own(self, tmp_path, cli):
        learner = tmp_path / "mine"
        learner.mkdir()
        (learner / LESSON.name).write_text("my edited notebook", encoding="utf-8")
        code, _, err = cli(["student", LESSON, "--out", learner])
        assert code == 2 and f"--out {learner} holds {LESSON.name}, which the course did not write there" in err
        assert (learner / LESSON.name).read_text(encoding="utf-8") == "my edited notebook"
        out = tmp_path / "student"
        assert cli(["student", LESSON, "--out", out])[0] == 0
        assert cli(["student", LESSON, "--out", out])[0] == 0  # its own, unchanged output: rewritten
        nb = nbformat.read(out / LESSON.name, as_version=4)
        nb.cells[0].source += "\n我的笔记"
        nbformat.write(nb, out / LESSON.name)
        code, _, err = cli(["student", LESSON, "--out", out])
        assert code == 2 and f"holds {LESSON.name}, which the course did not write there (or which was changed since)" in err
        assert "我的笔记" in (out / LESSON.name).read_text(encoding="utf-8")



USERS_BYTES = "我的 200 行\tmine\t1\n".encode("utf-8") * 200


def _tiny_notebook(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")]), path)
    return path


def _written_by_the_course_as_something_else(path: Path) -> None:
    """``path`` as a run folder's checkpoint or metrics are: recorded as the course's, but not as the command's output."""
    from lessons_lib.files import record_written

    path.parent.mkdir(parents=True, exist_ok=True)
    record_written(path, USERS_BYTES)


def _written_as_experiment_results(path: Path) -> None:
    from lessons_lib.files import record_written
    from lessons_lib.ablation.results import RESULTS_KIND

    path.parent.mkdir(parents=True, exist_ok=True)
    record_written(path, USERS_BYTES, RESULTS_KIND)


def _users_own(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(USERS_BYTES)


# Every command that writes an output path: the argv (with {tmp}), the file that must survive, who wrote it.
OUTPUT_CASES = {
    "build-sample over the user's splits": (["build-sample", "--out-dir", "{tmp}/mydata"], "mydata/train.tsv", _users_own),
    "build-translation-corpus over the user's trees": (["build-translation-corpus", "--out-dir", "{tmp}/corpus"],
                                                        "corpus/trees.conllu", _users_own),
    "baseline over a run's checkpoint": (["baseline", "--out", "{tmp}/run/checkpoint.pt"], "run/checkpoint.pt",
                                         _written_by_the_course_as_something_else),
    "baseline over an experiment's results": (["baseline", "--out", "{tmp}/r.json"], "r.json", _written_as_experiment_results),
    "baseline over the user's file": (["baseline", "--out", "{tmp}/mine.json"], "mine.json", _users_own),
    "experiment over a run's metrics": (["experiment", "--control", "attachment", "--out", "{tmp}/run/metrics.json"],
                                        "run/metrics.json", _written_by_the_course_as_something_else),
    "experiment over the user's file": (["experiment", "--control", "attachment", "--out", "{tmp}/mine.json"],
                                        "mine.json", _users_own),
    "execute over the user's notebook": (["execute", "{tmp}/nb/good.ipynb", "--output-dir", "{tmp}/D"], "D/good.ipynb",
                                         _users_own),
    "site over the user's page": (["site", "--out", "{tmp}/web"], "web/index.html", _users_own),
    "student over the user's notebook": (["student", str(LESSON), "--out", "{tmp}/mine"], f"mine/{LESSON.name}", _users_own),
    "train-parser over the user's pipeline": (["train-parser", "--ud-dir", "{tmp}/nb", "--output", "{tmp}/pipeline"],
                                              "pipeline/meta.json", _users_own),
    "train-parser over the user's scores": (["train-parser", "--ud-dir", "{tmp}/nb", "--scores", "{tmp}/s.json"], "s.json",
                                            _users_own),
}


class TestOutputsReplaceOnlyTheCoursesOwn:
    """One rule for every --out, --out-dir and --output-dir: a new path, or the command's own earlier output."""

    @pytest.mark.parametrize("case", list(OUTPUT_CASES))
    def test_a_file_the_course_did_not_write_as_this_output_survives_byte_for_byte(self, tmp_path, cli, case):
        argv, kept, make = OUTPUT_CASES[case]
        _tiny_notebook(tmp_path / "nb" / "good.ipynb")
        make(tmp_path / kept)
        code, out, err = cli([a.format(tmp=tmp_path) for a in argv])
        line = _one_error_line(err)
        assert code == 2, (out, err)
        assert str(tmp_path / kept) in line or (str((tmp_path / kept).parent) in line and (tmp_path / kept).name in line)
        assert "add --force to replace" in line and "choose a new" in line
        assert (tmp_path / kept).read_bytes() == USERS_BYTES

    def test_the_course_s_own_output_is_replaced_and_force_replaces_the_users(self, tmp_path, cli):
        out = tmp_path / "b.json"
        assert cli(["baseline", "--out", out])[0] == 0
        first = out.read_bytes()
        assert cli(["baseline", "--out", out])[0] == 0  # its own earlier output: replaced, no flag needed
        assert out.read_bytes() == first
        manifest = json.loads((tmp_path / MANIFEST_NAME).read_text(encoding="utf-8"))
        del manifest["kinds"]  # as the course recorded its outputs before they had kinds: the file's format decides
        (tmp_path / MANIFEST_NAME).write_text(json.dumps(manifest), encoding="utf-8")
        assert cli(["baseline", "--out", out])[0] == 0
        _users_own(out)
        assert cli(["baseline", "--out", out])[0] == 2 and out.read_bytes() == USERS_BYTES
        code, _, err = cli(["baseline", "--out", out, "--force"])
        assert code == 0 and err == ""
        replaced, before = json.loads(out.read_bytes()), json.loads(first)
        assert replaced.pop("command")[-1] == "--force" and before.pop("command")[-1] == str(out) and replaced == before

    @pytest.mark.slow
    def test_a_sample_built_by_the_course_is_rebuilt_but_an_edited_split_is_kept(self, tmp_path, cli):
        out = tmp_path / "sample"
        assert cli(["build-sample", "--out-dir", out])[0] == 0
        first = _snapshot(out)
        assert cli(["build-sample", "--out-dir", out])[0] == 0 and _snapshot(out) == first
        (out / "dev.tsv").write_bytes(USERS_BYTES)
        code, _, err = cli(["build-sample", "--out-dir", out])
        assert code == 2 and "holds dev.tsv, which" in _one_error_line(err) and (out / "dev.tsv").read_bytes() == USERS_BYTES

    @pytest.mark.slow
    def test_an_executed_copy_is_replaced_by_the_next_run_but_not_once_edited(self, tmp_path, cli):
        notebook = _tiny_notebook(tmp_path / "nb" / "good.ipynb")
        out = tmp_path / "D"
        assert cli(["execute", notebook, "--output-dir", out])[0] == 0
        assert cli(["execute", notebook, "--output-dir", out])[0] == 0  # its own copy: replaced
        nb = nbformat.read(out / "good.ipynb", as_version=4)
        nb.cells[0].source += "  # 我的笔记"
        nbformat.write(nb, out / "good.ipynb")
        edited = (out / "good.ipynb").read_bytes()
        code, _, err = cli(["execute", notebook, "--output-dir", out])
        assert code == 2 and "holds good.ipynb, which" in _one_error_line(err) and (out / "good.ipynb").read_bytes() == edited
        assert cli(["execute", notebook, "--output-dir", out, "--force"])[0] == 0
        assert "我的笔记" not in (out / "good.ipynb").read_text(encoding="utf-8")

    def test_a_grading_report_the_course_did_not_write_survives_and_its_own_is_replaced(self, tmp_path, cli):
        from lessons_lib.files import check_output_folder, record_written
        from lessons_lib.grader.grading import GRADES_KIND

        (tmp_path / "subs" / "ann").mkdir(parents=True)
        out = tmp_path / "marks"
        _users_own(out / "grades.txt")
        code, _, err = cli(["grade", tmp_path / "subs", "--out", out])
        line = _one_error_line(err)
        assert code == 2 and "holds grades.txt, which" in line and "add --force to replace" in line
        assert (out / "grades.txt").read_bytes() == USERS_BYTES and not (out / "grades.json").exists()
        record_written(out / "grades.txt", "an earlier report\n", kind=GRADES_KIND)  # the course's own: no refusal
        assert check_output_folder(out, "--out", ("grades.json", "grades.txt"), kind=GRADES_KIND) == out

    def test_a_parser_the_course_trained_is_recognised_by_its_meta(self, tmp_path):
        from lessons_lib.syntax.parser_training import check_parser_output

        assert check_parser_output(REPO_ROOT / "data" / "parser" / "zh_course_parser") is not None  # the shipped one
        (tmp_path / "p").mkdir()
        (tmp_path / "p" / "meta.json").write_text('{"name": "my_parser"}', encoding="utf-8")  # a spaCy pipeline, not ours
        with pytest.raises(CourseInputError, match=r"--output .* not a parser the course trained"):
            check_parser_output(tmp_path / "p")
        assert check_parser_output(tmp_path / "p", force=True) == tmp_path / "p"

    def test_the_check_is_one_helper_keyed_by_the_kind_of_output(self, tmp_path):
        from lessons_lib.files import check_output_file, check_output_folder, record_written

        record_written(tmp_path / "a.json", "{}", "baselines file")
        assert check_output_file(tmp_path / "a.json", "--out", kind="baselines file") == tmp_path / "a.json"
        with pytest.raises(CourseInputError, match=r"is not a results file that the course wrote"):
            check_output_file(tmp_path / "a.json", "--out", kind="results file")
        assert check_output_file(tmp_path / "a.json", "--out", kind="results file", force=True)
        record_written(tmp_path / "a.json", "{}")  # recorded without a kind (as before kinds): its format decides
        with pytest.raises(CourseInputError):
            check_output_file(tmp_path / "a.json", "--out", kind="baselines file")
        with pytest.raises(CourseInputError):
            check_output_file(tmp_path / "a.json", "--out", kind="baselines file", recognise=lambda path: False)
        assert check_output_file(tmp_path / "a.json", "--out", kind="baselines file", recognise=lambda path: True)
        (tmp_path / "b.json").write_text("{}", encoding="utf-8")  # never recorded: its format is not asked
        with pytest.raises(CourseInputError):
            check_output_file(tmp_path / "b.json", "--out", kind="baselines file", recognise=lambda path: True)
        assert check_output_folder(tmp_path / "new", "--out-dir", ["a.json"], kind="x") == tmp_path / "new"
        with pytest.raises(CourseInputError, match=r"--out-dir .* holds a.json, b.json, which the course did not write as a x \(or which were changed since\): choose a new or empty folder, or add --force"):
            check_output_folder(tmp_path, "--out-dir", ["a.json", "b.json"], kind="x")


class TestIdentityAndHints:
    def test_the_thread_count_is_part_of_a_runs_identity(self, tmp_path, cli):
        out = tmp_path / "run"
        assert _train(cli, out)[0] == 0
        code, _, err = cli(["train", "--out", out, *TINY, "--threads", "2"])
        assert code == 2 and "threads: 1 in the checkpoint, 2 now" in _one_error_line(err)

    def test_a_checkpoint_written_without_the_thread_count_is_refused_naming_it(self, tmp_path, cli):
        out = tmp_path / "run"
        assert _train(cli, out)[0] == 0
        checkpoint = torch.load(out / "checkpoint.pt", weights_only=True)
        del checkpoint["run_identity"]["threads"]
        torch.save(checkpoint, out / "checkpoint.pt")
        code, _, err = _train(cli, out)
        line = _one_error_line(err)
        assert code == 2 and line.startswith("error: cannot resume from ") and "threads: missing in the checkpoint, 1 now" in line

    @pytest.mark.parametrize("kind", ["garbage", "payload", "truncated"])
    def test_a_damaged_checkpoint_is_not_told_to_load_unsafely(self, tmp_path, cli, kind):
        out = tmp_path / "run"
        out.mkdir()

        class Payload:
            def __reduce__(self):
                return (print, ("ran",))

        if kind == "garbage":
            (out / "checkpoint.pt").write_bytes(b"\x00garbage" * 100)
        else:
            torch.save({"model_state": {"w": torch.zeros(3)}, **({"payload": Payload()} if kind == "payload" else {})},
                       out / "checkpoint.pt")
        if kind == "truncated":
            (out / "checkpoint.pt").write_bytes((out / "checkpoint.pt").read_bytes()[:100])
        code, _, err = _train(cli, out)
        line = _one_error_line(err)
        assert code == 2 and "is not a readable course checkpoint" in line and "move it away or delete it" in line
        assert "weights_only" not in line.lower() and "re-run" not in line.lower() and "miniz" not in line

    def test_the_trainer_leaves_the_restart_flags_to_its_caller(self, tmp_path):
        from dataclasses import replace

        from lessons_lib.pairs.classifier import PairClassifier
        from lessons_lib.pairs.config import resolve_configs
        from lessons_lib.pairs.data import load_lcqmc
        from lessons_lib.training.runs import RunFolder
        from lessons_lib.training.trainer import train_pair_classifier
        from lessons_lib.pairs.vocab import Vocabulary
        from lessons_lib.ablation import experiment

        data = load_lcqmc(LCQMC_SAMPLE_DIR)
        train = data.train.examples[:16]
        vocab = Vocabulary.build(t for ex in train for t in (ex.text_a, ex.text_b))
        model_config, config = resolve_configs("textbook", {"d_model": 16, "d_ff": 16, "n_heads": 2, "epochs": 1},
                                               len(vocab))
        for seed in (0, 1):
            with pytest.raises(CourseInputError) if seed else _nothing():
                train_pair_classifier(PairClassifier(model_config), train, data.dev.examples[:8], vocab,
                                      replace(config, seed=seed), run_folder=RunFolder(tmp_path), progress=False, log=None)
        # The message above ended "another output folder, or start afresh (resume=False)": no command's flag.
        with pytest.raises(CourseInputError, match=r"resume=False\)$"):
            train_pair_classifier(PairClassifier(model_config), train, data.dev.examples[:8], vocab,
                                  replace(config, seed=2), run_folder=RunFolder(tmp_path), progress=False, log=None)
        # What the experiment says instead names its own flags.
        import inspect

        hint = re.search(r'restart_hint="([^"]*)"', inspect.getsource(experiment.RunPlace.run_folder)).group(1)
        assert set(re.findall(r"--[a-z-]+", hint)) <= _options("experiment")

    def test_a_read_only_parse_cache_is_not_called_damaged(self, tmp_path):
        from lessons_lib.syntax.cache import _database_problem

        sqlite3.connect(tmp_path / "parses.sqlite").execute("CREATE TABLE t (x)").connection.commit()
        readonly = sqlite3.connect(f"file:{tmp_path / 'parses.sqlite'}?mode=ro", uri=True)
        with pytest.raises(sqlite3.Error) as caught:
            readonly.execute("INSERT INTO t VALUES (1)")
        message = _database_problem(tmp_path / "parses.sqlite", caught.value)
        assert "make it and its folder writable" in message and "delete" not in message

    def test_grading_without_bubblewrap_stops_unless_a_weaker_level_is_named(self, tmp_path, cli, monkeypatch):
        from lessons_lib.grader import sandbox

        monkeypatch.setattr(sandbox, "_probe", lambda name, user_namespace=True: (
            "bubblewrap is not installed (apt-get install bubblewrap)" if name == "bubblewrap" else ""))
        with pytest.raises(CourseInputError, match="--isolation process") as caught:
            sandbox.choose_isolation("auto")
        assert "no isolation" in str(caught.value)
        if os.geteuid() == 0:  # as root the namespaces level is refused, so it is not offered
            assert "--isolation namespaces" not in str(caught.value)
            with pytest.raises(CourseInputError, match="root"):
                sandbox.choose_isolation("namespaces")
        else:
            assert "--isolation namespaces" in str(caught.value)
            assert "the other submissions and the solutions out of sight" in str(caught.value)  # what namespaces gives
            assert sandbox.choose_isolation("namespaces").name == "namespaces"
        (tmp_path / "subs" / "alice").mkdir(parents=True)
        shutil.copy(LESSON, tmp_path / "subs" / "alice" / LESSON.name)
        code, _, err = cli(["grade", tmp_path / "subs", "--out", tmp_path / "grades"])
        assert code == 2 and "files are not fully isolated" in _one_error_line(err)
        assert not (tmp_path / "grades" / "grades.json").exists()


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _options(command: str) -> set[str]:
    parser = build_parser()
    subparsers = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return {option for action in subparsers.choices[command]._actions for option in action.option_strings}


def _package_strings(docstrings: bool = True) -> list[tuple[Path, int, str]]:
    """Every string literal of the package (f-strings with ``{…}`` for their fields), with its file and line."""
    found = []
    for path in sorted((REPO_ROOT / "lessons_lib").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = set() if docstrings else {
            id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) and node.body
            and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.JoinedStr):
                text = "".join(v.value if isinstance(v, ast.Constant) else "{…}" for v in node.values)
                found.append((path, node.lineno, text))
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                found.append((path, node.lineno, node.value))
    return found


def test_every_suggested_command_exists_with_the_flags_it_takes():
    """Each ``lessons COMMAND --flag …`` a message or docstring suggests is a command that takes those flags."""
    parser = build_parser()
    subparsers = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    suggestions = [(path, line, match.group(1), match.group(2))
                   for path, line, text in _package_strings()
                   for match in re.finditer(r"`lessons ([a-z][a-z-]*)([^`]*)`", text)]
    assert len(suggestions) > 20
    wrong = []
    for path, line, command, rest in suggestions:
        where = f"{path.relative_to(REPO_ROOT)}:{line}"
        if command not in subparsers.choices:
            wrong.append(f"{where}: no command `lessons {command}`")
            continue
        for flag in re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", rest):
            if flag not in _options(command):
                wrong.append(f"{where}: `lessons {command}` has no {flag}")
    assert not wrong, "\n".join(wrong)


# Library modules whose messages reach the user through these commands: a flag they name must be
# a flag of each of them (the trainer's messages reach `train` and `experiment` alike).
_MESSAGES_REACH = {
    "training/trainer.py": ("train", "experiment"),
    "training/runs.py": ("train", "experiment", "compare"),
    "ablation/experiment.py": ("experiment",),
    "syntax/cache.py": ("preparse", "experiment"),
    "grader/sandbox.py": ("grade",),
    "grader/grading.py": ("grade",),
}


def _commands_of(module: str) -> tuple[str, ...]:
    import argparse
    import importlib

    subparsers = argparse.ArgumentParser().add_subparsers()
    importlib.import_module(module).register(subparsers)
    return tuple(subparsers.choices)


@pytest.mark.slow
def test_every_flag_a_message_names_is_a_flag_of_the_commands_it_reaches():
    """A ``--flag`` in a command module's strings is one of its commands'; in a library module, one of every command its messages reach."""
    from lessons_lib.cli import COMMAND_MODULES

    reach = dict(_MESSAGES_REACH)
    for module in COMMAND_MODULES:
        reach[module.removeprefix("lessons_lib.").replace(".", "/") + ".py"] = _commands_of(module)
    wrong = []
    for path, line, text in _package_strings(docstrings=False):
        relative = str(path.relative_to(REPO_ROOT / "lessons_lib"))
        if relative not in reach or len(text.split()) < 3:  # words of a message, not a child command's arguments
            continue
        commands = reach[relative]
        cli_module = relative.startswith("cli/")
        for flag in set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", text)):
            takers = [c for c in commands if flag in _options(c)]
            if (not takers) if cli_module else (len(takers) != len(commands)):
                wrong.append(f"lessons_lib/{relative}:{line}: {flag} is not a flag of "
                             f"{'any of' if cli_module else 'each of'} {', '.join(commands)}")
    assert not wrong, "\n".join(wrong)
