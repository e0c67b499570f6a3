"""The ablation's worker pool: an experiment's runs trained in several processes at once.

:func:`run_all` trains each job of a list in this process (one worker) or in that many spawned
processes, and yields the results in the jobs' order. The workers are tied to the experiment's
process (they end when it ends, even killed: ``PR_SET_PDEATHSIG`` on Linux), start with Ctrl-C held
back and standard error quiet until they are so tied, and leave the parent's random streams where
running the jobs here one by one would have left them. What a job is and how it runs is the
runner's (:mod:`lessons_lib.ablation.experiment`); this module knows only processes.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
import threading
from concurrent.futures import ProcessPoolExecutor
from multiprocessing.connection import Connection
from typing import Any, Callable, Iterator, Sequence, TypeVar

import torch

from lessons_lib.seeding import random_states, restore_random_states

__all__ = ["run_all"]

State = TypeVar("State")
Job = TypeVar("Job")
Result = TypeVar("Result")

_WORKER: dict[str, Any] = {}  # a worker process's state and run function, set once by _start_worker


def _die_with_parent(parent: int) -> None:
    """End this worker when the experiment's process ends, even killed (Linux: ``PR_SET_PDEATHSIG``)."""
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the line above
        os._exit(1)


def _start_worker(make_state: Callable[[], Any], run: Callable[[Any, Any], Any], threads: int, parent: int,
                  stderr: Connection) -> None:
    _die_with_parent(parent)
    os.dup2(stderr.fileno(), 2)  # started, and tied to its parent: from here on its errors are shown (_stderr_quiet)
    stderr.close()
    # Ctrl-C reaches every process of the terminal's group: the parent answers it with one line, a worker just
    # ends. The worker was spawned with Ctrl-C held back (see _ctrl_c_held); one that came meanwhile ends it here.
    signal.signal(signal.SIGINT, lambda signum, frame: os._exit(130))
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    # tqdm's default lock is a multiprocessing semaphore; a worker ended by os._exit would leak it
    # and the resource tracker would print a warning after Ctrl-C. A thread lock is all one worker needs.
    from lessons_lib.progress import progress_bar_class

    progress_bar_class().set_lock(threading.RLock())
    torch.set_num_threads(threads)
    _WORKER.update(state=make_state(), run=run)


@contextlib.contextmanager
def _stderr_quiet() -> Iterator[None]:
    """Standard error on /dev/null for the block: the workers spawned in it start with it so.

    A spawned worker reads its arguments (the data, the trees: megabytes) from a pipe before any
    code of the course runs in it; if the experiment's process is killed then, the stream is cut
    short and Python would print the worker's ``UnpicklingError`` under the command's last line.
    Each worker gets the real standard error back in :func:`_start_worker`, once tied to its parent.
    """
    sys.stderr.flush()
    real = os.dup(2)
    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, 2)
    os.close(quiet)
    try:
        yield
    finally:
        os.dup2(real, 2)
        os.close(real)


@contextlib.contextmanager
def _ctrl_c_held() -> Iterator[None]:
    """Hold Ctrl-C back (blocked, not lost) while workers are spawned: they inherit the block until
    :func:`_start_worker`, so a Ctrl-C while they import torch prints no traceback of theirs."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _worker_run(job: Any) -> tuple[Any, tuple]:
    return _WORKER["run"](_WORKER["state"], job), random_states()


# The resource tracker (a process multiprocessing starts beside the workers) unlinks the pool's semaphores
# when the experiment's process is killed, and warns about each as "leaked"; the unlinking is all that is needed.
_TRACKER_QUIET = "ignore::UserWarning:multiprocessing.resource_tracker"


def _quiet_resource_tracker() -> None:
    """Start the resource tracker, if none runs yet, without its "leaked semaphore objects" warning.

    It takes this process's ``-W`` options (``sys.warnoptions``) when it starts; it still
    removes what a killed experiment leaves, silently.
    """
    from multiprocessing import resource_tracker

    added = _TRACKER_QUIET not in sys.warnoptions
    if added:
        sys.warnoptions.append(_TRACKER_QUIET)
    try:
        resource_tracker.ensure_running()
    finally:
        if added:
            sys.warnoptions.remove(_TRACKER_QUIET)


def run_all(jobs: Sequence[Job], workers: int, make_state: Callable[[], State],
            run: Callable[[State, Job], Result]) -> Iterator[Result]:
    """Yield ``run(state, job)`` for each job of ``jobs``, in their order.

    Args:
        make_state: builds what every job of one process reads (once per process); with more than
            one worker it and ``run`` are sent to each worker, so both must be picklable (a
            module's function, or a :func:`functools.partial` of one).
        workers: with ``workers > 1`` the jobs run in that many fresh processes (spawned, so each
            imports torch under this process's environment, numeric mode included, with as many
            torch threads as this one). A job's result must depend only on the job (the runner
            seeds every stream); the parent's streams are then set to where the last job left its
            worker's, which is where they would be after running the jobs here one by one.
    """
    if workers == 1 or len(jobs) == 1:
        state = make_state()
        for job in jobs:
            yield run(state, job)
        return
    context = multiprocessing.get_context("spawn")
    _quiet_resource_tracker()
    stderr = Connection(os.dup(2), readable=False)  # the real standard error, sent to each worker as a descriptor
    pool = ProcessPoolExecutor(min(workers, len(jobs)), mp_context=context, initializer=_start_worker,
                               initargs=(make_state, run, torch.get_num_threads(), os.getpid(), stderr))
    states: tuple | None = None
    try:
        with _ctrl_c_held(), _stderr_quiet():  # map submits every job now, which spawns the workers
            results = pool.map(_worker_run, jobs)
        for result, worker_states in results:
            states = worker_states  # the last job's random streams, as after running the jobs here one by one
            yield result
    except BaseException:  # Ctrl-C or an error: the workers' jobs are not waited for (nor a worker spawned after it)
        for process in list((getattr(pool, "_processes", None) or {}).values()):  # the pool keeps no public list
            process.kill()
        raise
    finally:
        pool.shutdown()
        stderr.close()
    assert states is not None  # more than one job ran
    restore_random_states(states)
