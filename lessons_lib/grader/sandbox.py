"""Running untrusted code (a learner's notebook) in a process of its own, as isolated as the machine allows.

Three levels; ``"auto"`` (:func:`choose_isolation`) means bubblewrap and refuses to go on
without it, since the two others isolate files in part or not at all: a weaker level must be asked
for by name.

``bubblewrap``
    Debian's ``bwrap`` (``apt-get install bubblewrap``) builds a new mount, PID, network,
    IPC and user namespace. The process sees the system read-only (``/usr``, a few files
    of ``/etc``), the Python installation and the course package, data and shipped results
    (``results/``, which lessons read) read-only, the
    files it was given read-only at ``/input`` and a private ``/tmp`` of bounded size
    (where it works on its own copy); nothing else of the machine's files exists for it.
    It has no network (a loopback interface only), cannot see or signal other processes,
    runs as an unprivileged user without capabilities, and dies with the grader. The
    kernel's settings (``/proc/sys``) are read-only. When the grader runs as root, a user
    namespace would map the sandbox user to host uid 0, so bubblewrap runs without one and
    ``setpriv`` (util-linux) makes the process the host's ``nobody`` (uid 65534) first.
``namespaces``
    ``unshare`` (util-linux) gives a new user, network, PID and mount namespace: no network,
    no view of other processes, and all its processes die with it. Inside, the submissions,
    the grader's staging area and report and the solution notebooks are covered (each session
    works on its own copy), the Python installation, the course package and ``/proc/sys``
    are read-only, and the process has no capabilities (see :func:`_confining_script`).
    Other files are *not* isolated: it can read and write what the grader's user can. So it
    is refused to root (whose sandbox would keep root's power over those files).
``process``
    Only a process of its own, in a session of its own, in a temporary folder. No network
    or file isolation at all: use it for trusted submissions only.

At every level the process gets a clean environment and the limits of :class:`Limits`:
a wall-clock deadline (the caller kills the session), an address-space limit per process,
a limit on the size of any file it writes and on the number of processes (threads included)
its user may run; the worker applies them to itself with
``setrlimit`` before any untrusted code starts (its children inherit them). Where the machine
lets the grader create one, each session also runs in a pids cgroup of its own
(:class:`PidsCgroup`), which limits the session's processes whoever runs them and lets the
grader kill every one of them; :func:`process_limit_in_force` says which limit applies.

:func:`sandbox_command` turns a command into the command that runs it at a given level;
:func:`run_isolated` runs one to completion (used by tests and by the probe that decides
whether a level works on this machine).
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Mapping, Sequence

from lessons_lib import paths
from lessons_lib.course.assignments import GRADING_CELL_SECONDS
from lessons_lib.errors import CourseInputError
from lessons_lib.validation import check_choice, check_int, check_number

__all__ = [
    "ISOLATIONS",
    "INPUT_DIR",
    "SANDBOX_TMP",
    "Limits",
    "Isolation",
    "choose_isolation",
    "sandbox_command",
    "sandbox_environment",
    "launch_environment",
    "kill_session",
    "run_isolated",
    "PidsCgroup",
    "pids_cgroup_problem",
    "process_limit_in_force",
    "check_package_matches_sandbox",
]

ISOLATIONS = ("bubblewrap", "namespaces", "process")
# Where a bubblewrap sandbox sees the files it was given (read-only), and its private writable folder.
INPUT_DIR = "/input"
SANDBOX_TMP = "/tmp"
# The unprivileged user a bubblewrap sandbox runs as (Debian's "nobody").
_SANDBOX_UID = 65534
# Files of /etc that programs read at start (dynamic linker cache, fonts, user names, time zone).
# What of the sandbox's own /proc stays read-only (bubblewrap covers these itself only without a user namespace).
_PROC_READ_ONLY = ("sys", "sysrq-trigger", "irq", "bus")
_ETC_FILES = ("ld.so.cache", "fonts", "passwd", "group", "nsswitch.conf", "localtime", "mime.types")

_DESCRIPTIONS = {
    "bubblewrap": ("own mount, PID, network and user namespaces (bubblewrap): the submission sees only its own "
                   "files (read-only, copied into a private /tmp of bounded size), the system and the course "
                   "package, data and shipped results read-only, no network, no other process, an unprivileged user (nobody when graded "
                   "as root), /proc/sys read-only; time, memory and process limits"),
    "namespaces": ("own user, network, PID and mount namespaces (unshare): no network, no other process; the "
                   "submissions, the report and the solutions out of sight, the course package, data and results "
                   "and /proc/sys read-only, no capabilities; other files are NOT isolated (it can read and write what the "
                   "grader's user can); time, memory and process limits"),
    "process": ("own process and temporary folder only: NO network or file isolation (it can read and write what "
                "the grader's user can); time, memory and process limits"),
}


@dataclass(frozen=True)
class Limits:
    """What one sandboxed session may use.

    Attributes:
        notebook_seconds: wall-clock time for a whole session (executing a notebook and
            answering the grader's calls); the session is killed after it.
        cell_seconds: time per notebook cell (the kernel is interrupted after it).
        call_seconds: time per call of a learner's function by the grader.
        memory_mb: address space of each process, in MiB.
        disk_mb: bubblewrap: the size of the sandbox's private ``/tmp``; every level: the
            largest file a process may write.
        processes: the most processes and threads of one session (its pids cgroup's ``pids.max``
            where one can be made) and of the sandbox's user (``RLIMIT_NPROC``); a kernel with
            its libraries runs a few dozen threads.
    """

    notebook_seconds: float = 1200.0
    cell_seconds: float = float(GRADING_CELL_SECONDS)
    call_seconds: float = 60.0
    memory_mb: int = 4096
    disk_mb: int = 1024
    processes: int = 256

    def __post_init__(self) -> None:
        for name in ("notebook_seconds", "cell_seconds", "call_seconds"):
            check_number(getattr(self, name), f"Limits.{name}", minimum=0.0, strict_minimum=True)
        check_int(self.memory_mb, "Limits.memory_mb", minimum=256)
        check_int(self.disk_mb, "Limits.disk_mb", minimum=16)
        check_int(self.processes, "Limits.processes", minimum=32)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Isolation:
    """The isolation level in force, what it gives, and why it was chosen."""

    name: str
    reason: str = ""
    user_namespace: bool = True  # bubblewrap: run as an unprivileged user of a new user namespace

    @property
    def description(self) -> str:
        return _DESCRIPTIONS[self.name]

    def to_dict(self) -> dict:
        return {"name": self.name, "gives": self.description, "reason": self.reason}


def sandbox_environment(home: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """A clean environment for sandboxed Python: no variable of the grader's leaks in."""
    bin_dir = str(Path(sys.executable).parent)
    env = {
        "PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        "TMPDIR": str(Path(home).parent),
        "LANG": "C.UTF-8",
        "USER": "nobody",
        "PYTHONDONTWRITEBYTECODE": "1",
        "MPLCONFIGDIR": f"{home}/.matplotlib",
        "IPYTHONDIR": f"{home}/.ipython",
        "JUPYTER_RUNTIME_DIR": f"{home}/.jupyter-runtime",
        "OMP_NUM_THREADS": "1",
        "MALLOC_ARENA_MAX": "2",
    }
    env.update(extra or {})
    return env


@functools.lru_cache(maxsize=None)
def _isolated_python_path() -> tuple[Path, ...]:
    """The folders on the import path of ``python -I`` (what the sandboxed worker runs), from ``/``.

    Isolated mode reads no ``PYTHONPATH``, no user site and no working folder: only the
    installation's own folders and what its ``.pth`` files add. Not this process's ``sys.path``,
    which holds the grader's working folder when it was started with ``python -m``.
    """
    import json

    try:
        done = subprocess.run([sys.executable, "-I", "-c", "import json, sys; print(json.dumps(sys.path))"],
                              cwd="/", env={"PATH": os.environ.get("PATH", "")}, capture_output=True, text=True,
                              timeout=60, check=True)
        entries = json.loads(done.stdout)
    except (OSError, subprocess.SubprocessError, ValueError):
        return ()
    return tuple(Path(p) for p in entries if isinstance(p, str) and p.startswith("/") and Path(p).is_dir())


def check_package_matches_sandbox() -> None:
    """Refuse to grade where the sandbox's Python would import another ``lessons_lib`` than this process.

    The worker runs ``python -I``, which ignores ``PYTHONPATH``: with ``PYTHONPATH`` pointing at
    another checkout, the grader would mount that checkout while the worker imports the
    installed package (or none), and every notebook would fail, scoring 0 without a word.

    Raises:
        CourseInputError: naming both places (or why ``python -I`` imports none) and what to do.
    """
    here = Path(__file__).resolve().parent.parent
    try:
        done = subprocess.run([sys.executable, "-I", "-c", "import lessons_lib, sys; sys.stdout.write(lessons_lib.__file__)"],
                              cwd="/", env={"PATH": os.environ.get("PATH", "")}, capture_output=True, text=True,
                              timeout=120)
    except (OSError, subprocess.SubprocessError) as error:
        raise CourseInputError(f"cannot start {sys.executable} -I to check which lessons_lib the sandbox imports "
                               f"({error})") from None
    sandboxed = Path(done.stdout).resolve().parent if done.returncode == 0 and done.stdout else None
    if sandboxed == here:
        return
    where = f"it from {sandboxed}" if sandboxed else "no lessons_lib at all"
    cause = (f"PYTHONPATH={os.environ['PYTHONPATH']} makes this process import lessons_lib"
             if os.environ.get("PYTHONPATH") else "this process imports lessons_lib")
    raise CourseInputError(f"{cause} from {here}, but the sandbox's Python ({sys.executable} -I, which ignores "
                           f"PYTHONPATH) imports {where}: every notebook would fail; unset PYTHONPATH, or install that "
                           f"checkout (pip install -e {here.parent})")


def _private_folders() -> list[Path]:
    """Folders never exposed, whatever the Python installation seems to need: the grader's working and home folders."""
    private = [Path.cwd().resolve()]
    with contextlib.suppress(RuntimeError, KeyError):
        private.append(Path.home().resolve())
    return private


def _readonly_paths(hidden: Sequence[Path]) -> list[Path]:
    """The Python installation, the course package, its data and shipped results: what a sandboxed kernel must read.

    A folder that holds one of ``hidden`` (the submissions, the grader's staging area), the
    grader's working folder or its home folder is never exposed (a folder inside them may
    be: a virtual environment in the home folder); the repository root is not either (only
    its package, data and results folders, each where :mod:`lessons_lib.paths` puts it).
    """
    package_dir = Path(__file__).resolve().parent.parent
    wanted = [Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix), Path(os.path.realpath(sys.executable)).parent,
              package_dir, paths.DATA_DIR.resolve(), paths.RESULTS_DIR.resolve(), *_isolated_python_path()]
    hidden = [Path(h).resolve() for h in hidden] + [package_dir.parent] + _private_folders()
    chosen: list[Path] = []
    for path in sorted({p.resolve() for p in wanted if p.exists()}, key=lambda p: len(p.parts)):
        if path == Path("/") or any(h == path or path in h.parents for h in hidden):
            continue
        if not any(c == path or c in path.parents for c in chosen):
            chosen.append(path)
    return chosen


def _course_folder_links(chosen: Sequence[Path]) -> list[Path]:
    """The course's data and results folders that are symbolic links on the host to a folder bound in the sandbox.

    Bound paths are resolved, so a ``results`` that links elsewhere is bound at its target only:
    the sandbox gets the same link, or the path :mod:`lessons_lib.paths` computes would not exist there.
    """
    links = []
    for folder in (paths.DATA_DIR, paths.RESULTS_DIR):
        target = folder.resolve()
        if folder.is_symlink() and any(c == target or c in target.parents for c in chosen):
            links.append(folder)
    return links


def _root_entries() -> list[str]:
    """``/bin``, ``/lib`` ... as symlinks where the host has merged them into ``/usr``, else bound read-only."""
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        entry = Path("/") / name
        if entry.is_symlink():
            args += ["--symlink", os.readlink(entry), str(entry)]
        elif entry.is_dir():
            args += ["--ro-bind", str(entry), str(entry)]
    for name in _ETC_FILES:
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    return args


def _as_root() -> bool:
    return os.geteuid() == 0


def _parent_folders(chosen: Sequence[Path]) -> list[str]:
    """The folders above the bound paths, to be made traversable (``0755``) inside the sandbox.

    Bubblewrap creates them ``0700``, which the unprivileged sandbox user could not enter
    (a Python installation under ``/root/.pyenv``, for one).
    """
    parents = {parent for path in chosen for parent in path.parents if parent != Path("/")}
    return [str(p) for p in sorted(parents, key=lambda p: len(p.parts))
            if p.parts[1] != "usr" and not any(c == p or c in p.parents for c in chosen)]


def _bubblewrap_command(argv: Sequence[str], input_dir: Path, env: Mapping[str, str], limits: Limits,
                        hidden: Sequence[Path], user_namespace: bool) -> list[str]:
    command = [shutil.which("bwrap") or "bwrap", "--die-with-parent", "--new-session", "--hostname", "sandbox"]
    if _as_root():
        # A user namespace started by root maps the sandbox user to host uid 0, for whom the kernel's own
        # files (/proc/sys ...) are writable. Instead bubblewrap runs without one, and setpriv turns the
        # process into the host's unprivileged "nobody", without capabilities, before Python starts.
        command += ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
                    "--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
        argv = [shutil.which("setpriv") or "setpriv", f"--reuid={_SANDBOX_UID}", f"--regid={_SANDBOX_UID}",
                "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--", *argv]
    else:
        command += ["--unshare-all", "--cap-drop", "ALL"]
        if user_namespace:
            command += ["--unshare-user", "--uid", str(_SANDBOX_UID), "--gid", str(_SANDBOX_UID)]
    command += _root_entries()
    command += ["--proc", "/proc"]
    for name in _PROC_READ_ONLY:  # the kernel's settings: read-only whoever the sandbox user is
        command += ["--ro-bind-try", f"/proc/{name}", f"/proc/{name}"]
    command += ["--dev", "/dev", "--size", str(limits.disk_mb * 1024 * 1024), "--perms", "1777", "--tmpfs", SANDBOX_TMP]
    chosen = _readonly_paths([input_dir, *hidden])
    links = _course_folder_links(chosen)
    for folder in _parent_folders([*chosen, *links]):
        command += ["--perms", "0755", "--dir", folder]
    for path in chosen:
        command += ["--ro-bind", str(path), str(path)]
    for link in links:
        command += ["--symlink", str(link.resolve()), str(link)]
    command += ["--ro-bind", str(input_dir), INPUT_DIR, "--chdir", SANDBOX_TMP, "--clearenv"]
    for key, value in env.items():
        command += ["--setenv", key, value]
    return [*command, "--", *argv]


def sandbox_command(isolation: Isolation, argv: Sequence[str], input_dir: Path, env: Mapping[str, str],
                    limits: Limits, hidden: Sequence[Path] = ()) -> list[str]:
    """The command that runs ``argv`` at ``isolation``'s level.

    Args:
        isolation: from :func:`choose_isolation`.
        argv: the command (its first word an absolute path).
        input_dir: the files the process is given: read-only at :data:`INPUT_DIR` with
            bubblewrap; other levels run in it (the caller passes it as the working folder).
        env: the process's whole environment (see :func:`sandbox_environment`); with
            bubblewrap it is set inside the sandbox, else the caller passes it to ``Popen``.
        limits: the sandbox's ``/tmp`` size comes from here.
        hidden: folders never to expose, even if the Python installation seems to need them.
    """
    if isolation.name == "bubblewrap":
        return _bubblewrap_command(argv, input_dir, env, limits, hidden, isolation.user_namespace)
    if isolation.name == "namespaces":
        _refuse_namespaces_as_root()
        return [shutil.which("unshare") or "unshare", "--user", "--map-root-user", "--net", "--pid", "--fork",
                "--kill-child", "--mount-proc", "--", "/bin/sh", "-c", _confining_script(hidden), "sh", *argv]
    return list(argv)


def _confining_script(hidden: Sequence[Path]) -> str:
    """The shell script that confines a ``namespaces`` session's files, then runs its command (``"$@"``).

    It runs as the root of the session's own user and mount namespaces, so its mounts are the
    session's alone: each of ``hidden`` (the submissions, the grader's staging area and report,
    the solution notebooks) is covered by an empty ``tmpfs``, or made read-only where the
    course's package lies inside it; the Python installation, the course package, data and
    results and ``/proc/sys`` are made read-only. ``setpriv`` then drops every capability before the
    command starts, so nothing in the session can undo a mount (and a user namespace it makes
    itself gets the mounts locked).
    """
    import shlex

    mount = shlex.quote(shutil.which("mount") or "mount")
    needed = _readonly_paths(hidden)
    # Built from single words: each line is a child command's arguments, not a message to the user.
    def read_only(path: str) -> str:
        return " ".join([mount, "--bind", "-o", "ro", path, path])

    lines = ["set -e", read_only("/proc/sys")]
    for path in needed:
        lines.append(read_only(shlex.quote(str(path))))
    for folder in sorted({Path(h).resolve() for h in hidden if Path(h).is_dir()}, key=lambda p: len(p.parts)):
        target = shlex.quote(str(folder))
        if any(folder == p or folder in p.parents for p in needed):
            lines.append(read_only(target))
        else:
            lines.append(" ".join([mount, "-t", "tmpfs", "-o", "size=64k,mode=0555", "lessons-hidden", target]))
    setpriv = shlex.quote(shutil.which("setpriv") or "setpriv")
    lines.append(" ".join(["exec", setpriv, "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--", '"$@"']))
    return "\n".join(lines)


def _refuse_namespaces_as_root() -> None:
    """The ``namespaces`` level is refused to root: its sandbox keeps root's power over every file it can reach.

    Its user namespace maps the sandbox's root to the host's root, so the files it does not
    cover (``/etc``, the cgroup files that hold its own process limit, other grading runs'
    folders) would stay writable or readable by it.
    """
    if _as_root():
        raise CourseInputError(
            "isolation namespaces is refused as root: its sandbox would act as root on every file it can reach "
            "(/etc, its own cgroup's process limit, other grading runs); grade with bubblewrap (--isolation auto) "
            "or as an unprivileged user")


def launch_environment(isolation: Isolation, env: Mapping[str, str]) -> dict[str, str]:
    """The environment to start :func:`sandbox_command`'s command with (bubblewrap sets ``env`` inside itself)."""
    return {"PATH": os.environ.get("PATH", "")} if isolation.name == "bubblewrap" else dict(env)


def run_isolated(isolation: Isolation, argv: Sequence[str], input_dir: Path, limits: Limits | None = None,
                 env: Mapping[str, str] | None = None, timeout: float = 60.0) -> subprocess.CompletedProcess:
    """Run ``argv`` at ``isolation``'s level to completion; returns the completed process (text output).

    Limits other than the time are applied by the command itself (see
    :mod:`lessons_lib.grader.grading_worker`); here the time limit kills the process group.
    """
    limits = limits or Limits()
    sandboxed = isolation.name == "bubblewrap"
    env = dict(env) if env is not None else sandbox_environment(f"{SANDBOX_TMP}/home" if sandboxed else str(input_dir / ".home"))
    command = sandbox_command(isolation, argv, input_dir, env, limits)
    cgroup = PidsCgroup.create(limits.processes)
    try:
        process = subprocess.Popen(cgroup.enter(command) if cgroup else command, cwd=None if sandboxed else input_dir,
                                   env=launch_environment(isolation, env), stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_session(process)
            out, err = process.communicate()
    finally:
        if cgroup is not None:
            cgroup.close()
    return subprocess.CompletedProcess(command, process.returncode, out, err)


class PidsCgroup:
    """A pids cgroup of its own for one sandboxed session: at most ``limit`` processes and threads in it.

    ``RLIMIT_NPROC`` counts per host user, so sessions that share a user (every bubblewrap
    sandbox graded as root runs as ``nobody``) share it, and root's processes ignore it. A
    cgroup's ``pids.max`` counts only the session's own processes, whoever runs them, and the
    cgroup lists every one of them, so :meth:`close` kills them all.

    Use :meth:`create`, which returns ``None`` (and :func:`pids_cgroup_problem` says why)
    where the machine lets this process create none: cgroup v2 with the ``pids`` controller
    enabled for this process's cgroup's children, else the cgroup v1 ``pids`` hierarchy.
    """

    def __init__(self, path: Path, version: str) -> None:
        self.path = path
        self.version = version

    @classmethod
    def create(cls, limit: int) -> "PidsCgroup | None":
        """A fresh cgroup holding at most ``limit`` processes, or ``None`` where none can be made here."""
        import secrets

        place = _pids_parent()
        if isinstance(place, str):
            return None
        parent, version = place
        path = parent / f"lessons-grade-{os.getpid()}-{secrets.token_hex(4)}"
        try:
            path.mkdir()
        except OSError:
            return None
        cgroup = cls(path, version)
        try:
            (path / "pids.max").write_text(f"{limit}\n", encoding="ascii")
        except OSError:
            cgroup.close()
            return None
        return cgroup

    def enter(self, command: Sequence[str]) -> list[str]:
        """``command`` preceded by a shell that moves itself into the cgroup, then becomes the command."""
        procs = str(self.path / "cgroup.procs")
        return ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', procs, *command]

    def close(self) -> None:
        """Kill every process left in the cgroup and remove it."""
        import signal
        import time

        deadline = time.monotonic() + 5.0
        while True:
            try:
                pids = [int(pid) for pid in (self.path / "cgroup.procs").read_text(encoding="ascii").split()]
            except (OSError, ValueError):
                pids = []
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                if time.monotonic() > deadline:
                    return
                time.sleep(0.05)


def _own_cgroup(controller: str) -> str | None:
    """This process's cgroup path in the hierarchy of ``controller`` (``""``: the v2 unified hierarchy)."""
    try:
        lines = Path("/proc/self/cgroup").read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    for line in lines:
        number, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        if (controllers == "" and controller == "" and number == "0") or controller in controllers.split(","):
            return path
    return None


def _cgroup_mounts() -> list[tuple[str, str, str, list[str]]]:
    """``(type, root inside the hierarchy, mount point, super options)`` of each cgroup mount (/proc/self/mountinfo)."""
    found: list[tuple[str, str, str, list[str]]] = []
    try:
        lines = Path("/proc/self/mountinfo").read_text(encoding="utf-8").splitlines()
    except OSError:
        return found
    for line in lines:
        head, _, tail = line.partition(" - ")
        fields, rest = head.split(), tail.split()
        if len(fields) >= 5 and len(rest) >= 3 and rest[0] in ("cgroup", "cgroup2"):
            found.append((rest[0], fields[3], fields[4], rest[2].split(",")))
    return found


def _pids_parent() -> "tuple[Path, str] | str":
    """Where this process may create a pids cgroup: ``(its own cgroup's folder, "v2" or "v1")``, else why not."""
    mounts = _cgroup_mounts()
    for kind, root, point, options in mounts:
        own = _own_cgroup("" if kind == "cgroup2" else "pids")
        if own is None or (kind == "cgroup" and "pids" not in options):
            continue
        relative = os.path.relpath(own, root)
        if relative.startswith(".."):
            continue
        folder = Path(point) / relative if relative != "." else Path(point)
        if kind == "cgroup2":
            try:
                enabled = (folder / "cgroup.subtree_control").read_text(encoding="ascii").split()
            except OSError:
                continue
            if "pids" not in enabled:
                continue
        if os.access(folder, os.W_OK):
            return folder, "v2" if kind == "cgroup2" else "v1"
    if not mounts:
        return "no cgroup file system is mounted"
    return "this process may not create a cgroup with the pids controller (none delegated to it)"


@functools.lru_cache(maxsize=None)
def pids_cgroup_problem() -> str:
    """``""`` where a session's pids cgroup can be created (and it was tried), else why not (one line)."""
    place = _pids_parent()
    if isinstance(place, str):
        return place
    probe = PidsCgroup.create(32)
    if probe is None:
        return f"cannot create a cgroup with a process limit under {place[0]}"
    probe.close()
    return ""


def process_limit_in_force(limits: Limits) -> str:
    """What limits a session's processes here, in words (recorded in the grading report)."""
    problem = pids_cgroup_problem()
    nproc = f"RLIMIT_NPROC {limits.processes} for the sandbox's user"
    if not problem:
        place = _pids_parent()
        version = place[1] if not isinstance(place, str) else "?"
        return f"a pids cgroup ({version}) of its own per session: pids.max {limits.processes}; and {nproc}"
    return f"{nproc} only ({problem}; root's processes ignore it, and sessions of one user share it)"


def kill_session(process: subprocess.Popen) -> None:
    """Kill ``process`` and its process group (it was started with ``start_new_session=True``)."""
    import signal

    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        process.kill()
    except ProcessLookupError:
        pass
    process.wait()


@functools.lru_cache(maxsize=None)
def _probe(name: str, user_namespace: bool = True) -> str:
    """``""`` if level ``name`` works on this machine, else why not (one line)."""
    import tempfile

    if name == "bubblewrap" and shutil.which("bwrap") is None:
        return "bubblewrap is not installed (apt-get install bubblewrap)"
    if name == "bubblewrap" and _as_root() and shutil.which("setpriv") is None:
        return ("setpriv (util-linux) is not installed: as root it is what runs the sandbox as the unprivileged "
                "user nobody; install util-linux, or grade as an unprivileged user")
    if name == "namespaces" and not all(shutil.which(tool) for tool in ("unshare", "mount", "setpriv")):
        return "unshare, mount or setpriv is not installed (util-linux)"
    with tempfile.TemporaryDirectory() as tmp:
        argv = [sys.executable, "-I", "-c", "import socket, sys; sys.stdout.write('ok')"]
        try:
            done = run_isolated(Isolation(name, user_namespace=user_namespace), argv, Path(tmp), timeout=60)
        except OSError as error:
            return f"{name} could not start: {error}"
    if done.returncode == 0 and done.stdout == "ok":
        return ""
    first = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
    return f"{name} does not work here: {first[:200]}"


def choose_isolation(requested: str = "auto") -> Isolation:
    """The isolation to use: bubblewrap (``"auto"``), or the level asked for.

    Without bubblewrap a submission can read and write files of the grader's user: under
    ``namespaces`` all but the submissions, the report and the solutions, under ``process`` every
    one. So ``"auto"`` does not fall back to a weaker level: the teacher names one.

    Raises:
        CourseInputError: a level that is unknown, or that does not work on this machine;
            ``"auto"`` where bubblewrap does not work (naming the explicit levels);
            ``"namespaces"`` as root.
    """
    check_choice(requested, "isolation", ("auto", *ISOLATIONS))
    if requested == "process":
        return Isolation("process", "asked for")
    if requested in ("auto", "bubblewrap"):
        problem = _probe("bubblewrap")
        if not problem:
            return Isolation("bubblewrap", "")
        if not _probe("bubblewrap", user_namespace=False):
            return Isolation("bubblewrap", "no user namespace here: it runs as the grader's user, without "
                             "capabilities", user_namespace=False)
        if requested == "bubblewrap":
            raise CourseInputError(f"isolation bubblewrap was asked for, but {problem}")
        namespaces = ("" if _as_root() else "`lessons grade --isolation namespaces` (no network, no other process, "
                      "the other submissions and the solutions out of sight, but every other file of yours readable "
                      "and writable) or ")
        raise CourseInputError(
            f"{problem}; without bubblewrap a submission's files are not fully isolated, so grading stops here. "
            f"Install bubblewrap, or name a weaker level: {namespaces}`lessons grade --isolation process` "
            "(no isolation: trusted submissions only)")
    _refuse_namespaces_as_root()
    problem = _probe("namespaces")
    if not problem:
        return Isolation("namespaces", "asked for")
    raise CourseInputError(f"isolation namespaces was asked for, but {problem}")
