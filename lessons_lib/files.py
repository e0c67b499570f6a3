"""Files the course writes: atomically, under a lock, and recorded so that only they are ever removed.

- :func:`atomic_write` / :func:`atomic_write_many`: the data goes to a temporary file in
  the same folder, is flushed to disk and then renamed over the target, so a reader sees
  the old file or the new one, never half of one. A failure (a full disk, Ctrl-C) removes
  the temporary file and leaves the old file as it was; an ``OSError`` becomes a
  :class:`~lessons_lib.errors.CourseInputError` naming the file. Each process writes its
  own temporary name, so two processes never write into the same temporary file.
- :func:`folder_lock`, :func:`file_lock`: one command at a time on a folder (or a file): the
  lock is the kernel's (``flock`` on a lock file), so it ends when its holder does, even
  killed; the file holds the holder's process id for the message only, and is removed on
  exit. A second command gets an error naming the folder and the holder; a lock file that
  nobody holds (left by a killed command, empty, naming a process of another machine) is
  simply taken; one that cannot be opened (a folder, no permission) is an error saying how
  to clear it.
- :func:`record_written` / :func:`written_by_course`: a folder's manifest
  (:data:`MANIFEST_NAME`) holds the SHA-256 of every file the course wrote there, and what
  kind of output it is (a baselines file, an experiment's results …). A file counts as the
  course's only while its bytes are the ones recorded: a file of the same name that the user
  wrote or edited is never removed or overwritten as if it were the course's.
- :func:`check_output_file` / :func:`check_output_folder`: the one rule of every ``--out``,
  ``--out-dir`` and ``--output-dir``. A command writes only a new path, or over an output of
  its own kind that the course wrote and nobody changed since; anything else is refused in one
  line naming the file and how to go on (a new path, or ``--force``), before any work.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

from lessons_lib.errors import CourseInputError, file_errors

__all__ = [
    "read_json_file",
    "LOCK_NAME",
    "MANIFEST_NAME",
    "BOOKKEEPING_NAMES",
    "atomic_write",
    "atomic_write_many",
    "atomic_via",
    "folder_lock",
    "file_lock",
    "record_written",
    "record_via",
    "written_by_course",
    "record_many",
    "check_output_file",
    "check_output_folder",
    "output_refused",
    "foreign_entries",
]

# The lock file of a folder being written, and the record of the files the course wrote there.
LOCK_NAME = ".lessons.lock"
MANIFEST_NAME = ".lessons-files.json"
# Files of a folder that are the course's bookkeeping, not its content.
BOOKKEEPING_NAMES = (LOCK_NAME, MANIFEST_NAME)
_MANIFEST_FORMAT = "lessons-files/1"
# Locks this process holds: path → [its open descriptor, how many times it was taken (a command may nest them)].
_HELD: dict[str, list[int]] = {}


def _encode(data: bytes | str) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else data


def _temporary(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def _write_temporary(path: Path, data: bytes) -> Path:
    tmp = _temporary(path)
    try:
        with open(tmp, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def atomic_write(path: str | os.PathLike, data: bytes | str) -> Path:
    """Write ``data`` (``str``: as UTF-8) to ``path`` through a temporary file and a rename.

    Raises:
        CourseInputError: the file cannot be written (a missing folder, no permission, a full
            disk), naming it; the old file is then unchanged.
    """
    path = Path(path)
    with file_errors(path, "write"):
        tmp = _write_temporary(path, _encode(data))
        try:
            tmp.replace(path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    return path


def atomic_write_many(contents: Mapping[str | os.PathLike, bytes | str]) -> list[Path]:
    """Write several files so that either all of them are new or none is.

    Every file is written to its temporary name first; only when all were written are they
    renamed (renames do not fail for want of space). A failure removes the temporary files
    and leaves every old file as it was.
    """
    written: list[tuple[Path, Path]] = []
    try:
        for path, data in contents.items():
            path = Path(path)
            with file_errors(path, "write"):
                written.append((_write_temporary(path, _encode(data)), path))
        for tmp, path in written:
            with file_errors(path, "write"):
                tmp.replace(path)
    finally:
        for tmp, _ in written:
            tmp.unlink(missing_ok=True)
    return [path for _, path in written]


def atomic_via(path: str | os.PathLike, writer: Callable[[Path], object]) -> Path:
    """Let ``writer(temporary path)`` write the file, then rename it to ``path``: for writers that take a path.

    A failure (an error, Ctrl-C) removes the temporary file and leaves ``path`` as it was.
    """
    path = Path(path)
    tmp = _temporary(path)
    try:
        writer(tmp)
        with file_errors(path, "write"):
            tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def _lock_owner(lock: Path) -> int | None:
    """The process id written in ``lock`` (``None``: unreadable or empty); only for messages."""
    try:
        return int(lock.read_text(encoding="utf-8").split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _clear_hint(lock: Path) -> str:
    remove = "rm -r" if lock.is_dir() and not lock.is_symlink() else "rm"
    return f"if no command is running there, remove it ({remove} '{lock}') and run again"


def _open_lock(lock: Path, target: Path) -> int:
    """The lock file's descriptor, opened for writing (created if missing); a folder or an unopenable file is an error."""
    if lock.is_symlink() or (lock.exists() and not lock.is_file()):
        raise CourseInputError(f"{target}: its lock {lock} is not a plain file; {_clear_hint(lock)}")
    try:
        return os.open(lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
    except OSError as error:
        if not os.path.lexists(lock):  # nothing to remove: the folder itself refuses a new file (read-only, no permission)
            raise CourseInputError(f"{target}: cannot create its lock file {lock} ({error.strerror}): the command "
                                   f"writes in {lock.parent}; make it writable, or choose another folder") from None
        raise CourseInputError(f"{target}: cannot open its lock file {lock} ({error.strerror}); "
                               f"{_clear_hint(lock)}") from None


def _take_lock(lock: Path, target: Path) -> int:
    """Lock ``lock`` with ``flock`` (the kernel releases it when its holder dies) and write this process's id in it.

    A lock file that nobody holds (left by a killed command, empty, or naming a process that is
    not ours) is simply taken. Returns the open descriptor, which holds the lock.
    """
    for _ in range(10):
        fd = _open_lock(lock, target)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            owner = _lock_owner(lock)
            who = "another command" if owner is None else f"another command (process {owner})"
            raise CourseInputError(f"{target} is in use by {who}: wait until it has finished, or use another "
                                   f"folder (its lock file is {lock})") from None
        except OSError as error:
            os.close(fd)
            raise CourseInputError(f"{target}: cannot lock {lock} ({error.strerror}); {_clear_hint(lock)}") from None
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(lock, follow_symlinks=False))
        except FileNotFoundError:
            same = False
        if not same:  # its holder removed the file as we opened it: lock the new one
            os.close(fd)
            continue
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        except OSError:
            os.close(fd)
            raise
        return fd
    raise CourseInputError(f"{target}: could not take its lock file {lock}; another command keeps taking it")


@contextlib.contextmanager
def folder_lock(folder: str | os.PathLike) -> Iterator[Path]:
    """Hold the lock of the existing ``folder`` (``folder/.lessons.lock``) while the block writes in it.

    The same process may take a lock it holds again (a command that locks its output folder
    calls the trainer, which locks the run folder); it is removed when the outermost holder
    leaves.

    Raises:
        CourseInputError: another running process holds the lock (naming ``folder``).
    """
    with _holding(Path(folder) / LOCK_NAME, Path(folder)) as lock:
        yield lock


@contextlib.contextmanager
def file_lock(path: str | os.PathLike) -> Iterator[Path]:
    """Hold the lock of the file ``path`` (``path.lock`` next to it) while the block writes it; as :func:`folder_lock`."""
    path = Path(path)
    with _holding(path.with_name(path.name + ".lock"), path) as lock:
        yield lock


@contextlib.contextmanager
def _holding(lock: Path, target: Path) -> Iterator[Path]:
    key = os.path.abspath(lock)
    if key in _HELD:
        _HELD[key][1] += 1
    else:
        with file_errors(lock, "create the lock file"):
            _HELD[key] = [_take_lock(lock, target), 1]
    try:
        yield lock
    finally:
        _HELD[key][1] -= 1
        if not _HELD[key][1]:
            fd = _HELD.pop(key)[0]
            with contextlib.suppress(OSError):  # removed while still locked: a waiter re-checks the file it locked
                lock.unlink()
            os.close(fd)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _load_manifest(folder: Path) -> dict:
    """The manifest's JSON (empty when missing, unreadable or of another format)."""
    try:
        saved = json.loads((folder / MANIFEST_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(saved, dict) or saved.get("format") != _MANIFEST_FORMAT or not isinstance(saved.get("files"), dict):
        return {}
    return saved


def _read_manifest(folder: Path) -> dict[str, list[str]]:
    """File name → the SHA-256 digests that make it the course's (two while a write is under way)."""
    files = _load_manifest(folder).get("files", {})
    return {str(k): [str(d) for d in v] if isinstance(v, list) else [str(v)] for k, v in files.items()}


def _read_kinds(folder: Path) -> dict[str, str]:
    """File name → the kind of output the course wrote there (files written without a kind are not listed)."""
    kinds = _load_manifest(folder).get("kinds", {})
    return {str(k): str(v) for k, v in kinds.items()} if isinstance(kinds, dict) else {}


def _write_manifest(folder: Path, files: Mapping[str, list[str]], kinds: Mapping[str, str]) -> None:
    entries = {name: digests[0] if len(digests) == 1 else digests for name, digests in sorted(files.items())}
    record: dict = {"format": _MANIFEST_FORMAT, "files": entries}
    kinds = {name: kind for name, kind in sorted(kinds.items()) if name in files}
    if kinds:
        record["kinds"] = kinds
    atomic_write(folder / MANIFEST_NAME, json.dumps(record, indent=1) + "\n")


def _with_kind(kinds: Mapping[str, str], name: str, kind: str | None) -> dict[str, str]:
    updated = {k: v for k, v in kinds.items() if k != name}
    if kind is not None:
        updated[name] = kind
    return updated


def record_written(path: str | os.PathLike, data: bytes | str, kind: str | None = None) -> Path:
    """Write ``data`` to ``path`` atomically and record it in its folder's manifest as the course's.

    ``kind`` names what the file is (``"baselines file"``): :func:`check_output_file` lets a
    command replace only an output of its own kind. The manifest first accepts both the old
    and the new content, then the file is written, then the manifest keeps only the new one: a
    failure at any point (a full disk, a kill) leaves a file whose content the manifest
    accepts, never one of the course's disowned.
    """
    path = Path(path)
    data = _encode(data)
    files, kinds = _read_manifest(path.parent), _with_kind(_read_kinds(path.parent), path.name, kind)
    new = _digest(data)
    _write_manifest(path.parent, {**files, path.name: [*files.get(path.name, [])[-1:], new]}, kinds)
    atomic_write(path, data)
    _write_manifest(path.parent, {**files, path.name: [new]}, kinds)
    return path


def record_many(folder: str | os.PathLike, contents: Mapping[str, bytes | str], kind: str | None = None) -> list[Path]:
    """:func:`atomic_write_many` of the files ``contents`` (name → data) in ``folder``, recorded as the course's."""
    folder = Path(folder)
    datas = {name: _encode(data) for name, data in contents.items()}
    files, kinds = _read_manifest(folder), _read_kinds(folder)
    for name in datas:
        kinds = _with_kind(kinds, name, kind)
    both = {name: [*files.get(name, [])[-1:], _digest(data)] for name, data in datas.items()}
    _write_manifest(folder, {**files, **both}, kinds)
    written = atomic_write_many({folder / name: data for name, data in datas.items()})
    _write_manifest(folder, {**files, **{name: [_digest(data)] for name, data in datas.items()}}, kinds)
    return written


def record_via(path: str | os.PathLike, writer: Callable[[Path], object], kind: str | None = None) -> Path:
    """:func:`record_written` for writers that take a path: ``writer(temporary path)``, then recorded and renamed."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.new")
    try:
        writer(tmp)
        with file_errors(tmp):
            data = tmp.read_bytes()
    finally:
        tmp.unlink(missing_ok=True)
    return record_written(path, data, kind)


def check_output_file(path: str | os.PathLike, flag: str, inputs: Sequence[str | os.PathLike] = (), *,
                      kind: str, force: bool = False, recognise: Callable[[Path], bool] | None = None) -> Path:
    """Refuse an output file inside a folder the command reads, or an existing file that is not the course's ``kind``.

    The file may be new, or an output of the same ``kind`` that the course wrote and nobody
    changed since; ``force`` (the command's ``--force``) replaces any file. A file the course
    recorded before outputs had kinds counts when ``recognise(path)`` (its own format) says it
    is one. Call it before any work; write the file with :func:`record_written` or
    :func:`record_via` and the same ``kind``, so that the next run may replace it.

    Raises:
        CourseInputError: naming the flag, the file, why, and how to go on.
    """
    path = Path(path)
    resolved = path.resolve()
    for folder in inputs:
        folder = Path(folder).resolve()
        if folder in resolved.parents:
            raise CourseInputError(f"{flag} {path} is inside the data folder {folder} that the command reads: "
                                   "choose a file outside it")
    if not force and (path.is_symlink() or (path.exists() and not _replaceable(path, kind, recognise))):
        raise output_refused(flag, path, f"already exists and is not a {kind} that the course wrote (or it was "
                                         "changed since)", "file")
    return path


def _replaceable(path: Path, kind: str, recognise: Callable[[Path], bool] | None) -> bool:
    """Whether ``path`` is the course's output of ``kind``: recorded so, or recorded without a kind and of its format."""
    if written_by_course(path, kind):
        return True
    recorded_without_kind = path.name not in _read_kinds(path.parent) and written_by_course(path)
    return recorded_without_kind and recognise is not None and recognise(path)


def output_refused(flag: str, path: str | os.PathLike, why: str, new: str = "folder") -> CourseInputError:
    """The one message of every refused output: the flag, the path, why, and the two ways on (a new path, ``--force``).

    ``new``: ``"file"`` or ``"folder"``, what the user should choose instead.
    """
    instead = "a new file" if new == "file" else "a new or empty folder"
    return CourseInputError(f"{flag} {path} {why}: choose {instead}, or add --force to replace "
                            f"{'it' if new == 'file' else 'them'} (nothing was written)")


def check_output_folder(folder: str | os.PathLike, flag: str, names: Sequence[str] | None = None, *,
                        kind: str | None = None, force: bool = False) -> Path:
    """Refuse an output folder holding files the command would replace that the course did not write there.

    ``names``: the files the command writes in ``folder`` (each must be new, or the course's
    ``kind`` and unchanged); ``None``: the command writes a whole tree, and every file already
    in ``folder`` must be the course's. ``force`` (the command's ``--force``) lets it replace
    them; files it does not write are never touched either way.

    Raises:
        CourseInputError: naming the flag, the folder, the files (five at most), and how to go on.
    """
    folder = Path(folder)
    if force or not folder.is_dir():
        return folder
    if names is None:
        foreign = foreign_entries(folder)
    else:
        foreign = [name for name in names
                   if (folder / name).is_symlink() or ((folder / name).exists() and not written_by_course(folder / name, kind))]
    if foreign:
        raise output_refused(flag, folder, _not_the_courses(foreign, kind))
    return folder


def _not_the_courses(foreign: Sequence[str], kind: str | None) -> str:
    """Why an output folder is refused: its files (five at most) the course did not write, as ``kind`` if given."""
    shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
    # A kind named in the plural ("translation results") takes no article.
    written_as = "there" if kind is None else f"as {kind}" if kind.endswith("results") else f"as a {kind}"
    was = "was" if len(foreign) == 1 else "were"
    return f"holds {shown}, which the course did not write {written_as} (or which {was} changed since)"


def written_by_course(path: str | os.PathLike, kind: str | None = None) -> bool:
    """Whether ``path`` is a file the course wrote (recorded in its folder's manifest) and nobody changed since.

    With ``kind``, it must also have been recorded as that kind of output.
    """
    path = Path(path)
    accepted = _read_manifest(path.parent).get(path.name)
    if not accepted or not path.is_file():
        return False
    if kind is not None and _read_kinds(path.parent).get(path.name) != kind:
        return False
    with file_errors(path):
        return _digest(path.read_bytes()) in accepted


def foreign_entries(folder: str | os.PathLike) -> list[str]:
    """The names in ``folder`` that the course did not write, or that were changed since (sorted).

    Sub-folders count entry by entry; the course's bookkeeping files are not listed.
    """
    folder = Path(folder)
    if not folder.is_dir():
        return []
    out = []
    for path in sorted(folder.rglob("*")):
        if path.is_dir() or path.name in BOOKKEEPING_NAMES:
            continue
        if not written_by_course(path):
            out.append(str(path.relative_to(folder)))
    return out


def read_json_file(path: str | os.PathLike, kind: str) -> Any:
    """The JSON value in ``path``, a ``kind`` (``"results file"``), or one line naming the file: it
    cannot be read, is not UTF-8 text, is empty, or where it stops being JSON (nothing more when it
    never starts as JSON: another kind of file)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise CourseInputError(f"{path}: cannot read the {kind.removesuffix(' file')} ({error.strerror or error})") from None
    except UnicodeDecodeError as error:
        raise CourseInputError(f"{path}: not a JSON {kind} (not UTF-8 text, byte {error.start})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise CourseInputError(f"{path}: not a JSON {kind}{_where_json_breaks(text, error)}") from None


def _where_json_breaks(text: str, error: json.JSONDecodeError) -> str:
    if not text.strip():
        return " (the file is empty)"
    if error.pos <= len(text) - len(text.lstrip()):
        return ""
    return f" (not valid JSON at line {error.lineno}, column {error.colno})"
