"""Stopping a run on Ctrl-C (SIGINT) or SIGTERM: within seconds, with no process left behind.

The main process turns both signals into :class:`Interrupted` (raised where it waits for the next
result), then SIGKILLs every process below it: the pool workers, each worker's fork server and
resource tracker, and the sandboxes those started. The main process is made a child subreaper
(Linux ``PR_SET_CHILD_SUBREAPER``), so a grandchild whose parent dies first is re-parented to it
and found by the same walk instead of living on under pid 1. A second signal during the short
clean-up ends the process at once (the children are killed first).

Ctrl-C sends SIGINT to the terminal's whole process group, the workers and the gradebook's
``alembic`` subprocess included; each would print a ``KeyboardInterrupt`` traceback of its own
(or die mid-start-up). They are started with SIGINT blocked (``shielded``: a child inherits its
starting thread's signal mask), so only the main process hears it and stops them itself.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import threading
from collections.abc import Iterator

import psutil

_PR_SET_CHILD_SUBREAPER = 36
SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(BaseException):
    """SIGINT or SIGTERM reached the main process (a BaseException like KeyboardInterrupt, so
    no ``except Exception`` of the run swallows it)."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_status(self) -> int:
        """The shell's convention: 128 + the signal (130 for SIGINT, 143 for SIGTERM)."""
        return 128 + self.signum


def become_subreaper() -> None:
    """Orphaned descendants are re-parented to this process (Linux only; elsewhere a no-op)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _own_tracker() -> int | None:
    """This process's multiprocessing resource tracker: it ends by itself when this process
    does, and killed earlier it is started again to a flood of KeyError tracebacks."""
    from multiprocessing import resource_tracker

    return getattr(resource_tracker._resource_tracker, "_pid", None)


def kill_descendants(rounds: int = 20) -> int:
    """SIGKILL every process below this one (but its own resource tracker) until none is left;
    how many were killed."""
    me = psutil.Process()
    spare = _own_tracker()
    killed: set[int] = set()
    for _ in range(rounds):
        _reap()
        try:
            children = [c for c in me.children(recursive=True) if c.pid != spare]
        except psutil.Error:
            return len(killed)
        if not children:
            break
        for child in children:
            with contextlib.suppress(psutil.Error):
                child.kill()
                killed.add(child.pid)
        psutil.wait_procs([c for c in children if c.ppid() == me.pid] or children, timeout=1)
    return len(killed)


def _reap() -> None:
    """Collect this process's dead children: a grandchild re-parented here when its parent was
    killed stays a zombie, listed among the children, until collected."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


@contextlib.contextmanager
def shielded() -> Iterator[None]:
    """Processes started inside have SIGINT blocked (the calling thread's for the while)."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _raise(signum: int, _frame) -> None:
    raise Interrupted(signum)


def _exit_now(signum: int, _frame) -> None:
    kill_descendants()
    os._exit(128 + signum)


@contextlib.contextmanager
def _handling(handler) -> Iterator[None]:
    """``handler`` for SIGINT and SIGTERM while inside, in the main thread (outside it, or in
    another thread, nothing changes: signals reach the main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, handler) for s in SIGNALS}
    try:
        yield
    finally:
        for s, old in previous.items():
            signal.signal(s, old)


def interruptible() -> contextlib.AbstractContextManager[None]:
    """While inside, SIGINT and SIGTERM raise :class:`Interrupted` in the main thread."""
    return _handling(_raise)


def final() -> contextlib.AbstractContextManager[None]:
    """While inside (the clean-up after an interruption), a further signal kills the children
    and exits at once instead of interrupting the clean-up halfway."""
    return _handling(_exit_now)
