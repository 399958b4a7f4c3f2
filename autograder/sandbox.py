"""The student's side of grading: confinement, then the cells, then probes on request.

This module is imported by each worker's fork server before any submission is seen (it pulls in
NumPy, JAX without initialising a backend, and IPython), so starting a student's process is a fork,
not a fresh interpreter. ``child_main`` is the entry point of each forked child:

1. the child starts a new session and, where the kernel allows, unshares mount, network and PID
   namespaces; it hides the course's files behind empty tmpfs mounts and gives the student a fresh
   tmpfs ``/tmp`` holding only a copy of the notebook;
2. it forks the student's process (PID 1 of the new PID namespace, so when it ends every process
   it started ends too), which sets resource limits, drops to an unprivileged uid, clears the
   environment and runs the harness;
3. the harness runs the notebook's cells in an IPython shell, restores whatever the cells patched
   (autograder.guard), then runs one probe per request and sends back plain data only, over the
   authenticated channel (autograder.channel).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib
import multiprocessing
import os
import random
import resource
import shutil
import signal
import socket
import sys
import tempfile
from pathlib import Path
from typing import Any

import IPython  # noqa: F401  (warm import for the fork server)
import jax
import numpy as np  # noqa: F401  (warm import for the fork server)
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

from autograder import cellguard, syscalls
from autograder.channel import Channel
from autograder.guard import Guard
from autograder.plain import to_plain

CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET = 0x00020000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS = 1, 38
SCRATCH = "/tmp/submission"
# Exit statuses of the namespace's parent: 0-99 is the student's own exit status (capped),
# SIGNAL_BASE + n means the student's process died of signal n.
SIGNAL_BASE = 100
_run_cell = InteractiveShell.run_cell  # the class's method, whatever an instance is given later

_libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)


def child_main(sock: socket.socket, secret: bytes, job: dict) -> None:
    """Forked by the fork server for one (submission, JAX config) run; never returns."""
    # The Process object keeps its arguments; the secret must not stay where it is easy to find.
    proc = multiprocessing.current_process()
    proc._args, proc._kwargs = (), {}
    try:
        os.setsid()
    except OSError:
        pass
    fd = _move_to_high_fd(sock)
    # Inherited descriptors (the fork server's own pipes) are not the student's to write to.
    os.closerange(3, fd)
    os.closerange(fd + 1, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
    chan = Channel(fd, secret, sends_first=False)
    del secret
    try:
        # Normally preloaded by the fork server; imported here otherwise, before files are hidden.
        importlib.import_module(job["probes"])
        isolation = _enter_namespaces(job)
        namespaced = isolation[0].startswith("namespaces")
        scratch = _make_scratch(job, namespaced)
        uid = job["limits"]["uid"] if os.geteuid() == 0 else None
        if uid is not None and not namespaced and not all(_open_to_others(Path(p))
                                                          for p in job["keep"]):
            isolation.append("uid kept: the Python install is not readable by other users")
            uid = None
        if uid is not None:
            for path in (scratch, *scratch.iterdir()):
                os.chown(path, uid, uid)
    except BaseException as err:  # noqa: BLE001 - fail closed: no student code runs
        _fatal(chan, err)
    pid = os.fork()
    if pid:
        os.close(fd)
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        if not namespaced:
            shutil.rmtree(scratch, ignore_errors=True)
        os._exit(min(code, SIGNAL_BASE - 1) if code >= 0 else SIGNAL_BASE - code)
    try:
        isolation += _confine(job, scratch, uid, namespaced=namespaced)
        isolation += syscalls.install()  # last wall: after the sandbox's own set-up (issue 11)
        _harness(chan, job, isolation)
    except BaseException as err:  # noqa: BLE001 - the grader reports it; nothing else to do
        _fatal(chan, err)
    os._exit(0)


def _fatal(chan: Channel, err: BaseException) -> None:
    try:
        chan.send({"fatal": f"{type(err).__name__}: {_message(err)}"})
    finally:
        os._exit(SIGNAL_BASE - 1)


def _move_to_high_fd(sock: socket.socket) -> int:
    fd = random.randrange(600, 1000)
    os.dup2(sock.fileno(), fd)
    sock.close()
    return fd


def _enter_namespaces(job: dict) -> list[str]:
    """Unshare namespaces and hide files; a one-line description of the isolation obtained."""
    if not job["limits"].get("namespaces", True):
        return ["no namespaces (disabled)"]
    if _libc.unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID) != 0:
        return [f"no namespaces (unshare: {os.strerror(ctypes.get_errno())})"]
    _mount(b"none", b"/", None, MS_REC | MS_PRIVATE)
    for path in job["hide"]:
        p = Path(path)
        if p.is_dir():
            _mount(b"tmpfs", p, b"tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, b"size=16k,mode=755")
        elif p.exists():
            _mount(b"/dev/null", p, None, MS_BIND)
    keep = [Path(k) for k in job["keep"]]
    for tmp in (Path("/tmp"), Path("/dev/shm"), Path("/var/tmp")):
        if tmp.is_dir():
            # A private, writable /tmp; the virtualenv comes back if it lives there (a clone in
            # /tmp, as CI may make).
            size = f"size={job['limits']['disk_mb']}m,mode=1777".encode()
            _hide_except(tmp, [k for k in keep if tmp in k.parents], data=size)
    _hide_outside_system(job["keep"])
    return ["namespaces (mount, network, pid), only the OS and Python visible"]


# Top-level directories of the operating system; every other one (/home, /root, /work, /srv,
# /opt, ...) is replaced by an empty tmpfs, keeping only the Python install and the virtualenv.
_SYSTEM_DIRS = {"bin", "boot", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "run",
                "sbin", "sys", "tmp", "usr", "var", "nix"}


def _hide_outside_system(keep: list[str]) -> None:
    keep_paths = [Path(k) for k in keep]
    for entry in sorted(Path("/").iterdir()):
        if entry.name in _SYSTEM_DIRS or entry.is_symlink():
            continue
        if entry.is_file():
            _mount(b"/dev/null", entry, None, MS_BIND)
            continue
        if not entry.is_dir():
            continue
        if any(k == entry for k in keep_paths):
            continue
        _hide_except(entry, [k for k in keep_paths if entry in k.parents])


def _hide_except(directory: Path, keep: list[Path], *,
                 data: bytes = b"size=16k,mode=755") -> None:
    """An empty tmpfs over ``directory`` with each ``keep`` path bind-mounted back, read-only.

    The kept paths are held open (O_PATH) before the tmpfs covers them and bound back from
    /proc/self/fd, so this needs no staging directory and works for /tmp itself.
    """
    held = [(path, os.open(path, os.O_PATH | os.O_DIRECTORY)) for path in keep if path.is_dir()]
    _mount(b"tmpfs", directory, b"tmpfs", MS_NOSUID | MS_NODEV, data)
    for path, fd in held:
        path.mkdir(parents=True, exist_ok=True)
        _mount(f"/proc/self/fd/{fd}".encode(), path, None, MS_BIND | MS_REC)
        _mount(b"none", path, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_REC)
        os.close(fd)


def _mount(source: bytes, target: Path | bytes, fstype: bytes | None, flags: int,
           data: bytes | None = None) -> None:
    target = target if isinstance(target, bytes) else os.fsencode(target)
    if _libc.mount(source, target, fstype, flags, data) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"mount {target!r}: {os.strerror(errno)}")


def _make_scratch(job: dict, namespaced: bool) -> Path:
    """A directory holding only a copy of the submission (in the private /tmp when namespaced)."""
    if namespaced:
        scratch = Path(SCRATCH)
        scratch.mkdir(parents=True)
    else:
        scratch = Path(tempfile.mkdtemp(prefix="autograder-submission-"))
    (scratch / job["notebook_name"]).write_bytes(job["notebook_bytes"])
    return scratch


def _open_to_others(path: Path) -> bool:
    return all(os.stat(a).st_mode & 0o001 for a in (path, *path.parents))


def _confine(job: dict, scratch: Path, uid: int | None, *, namespaced: bool) -> list[str]:
    """In the student's process, before any student code: limits, identity, files, environment."""
    limits = job["limits"]
    notes = []
    if namespaced:
        try:
            _mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        except OSError:
            notes.append("host /proc visible")
    os.chdir(scratch)
    mem = limits["memory_mb"] << 20
    for res, value in (
        (resource.RLIMIT_AS, mem),
        (resource.RLIMIT_NPROC, limits["nproc"]),
        (resource.RLIMIT_FSIZE, limits["disk_mb"] << 20),
        (resource.RLIMIT_CORE, 0),
        (resource.RLIMIT_NOFILE, 1024),
        (resource.RLIMIT_CPU, int(limits["notebook_timeout_s"]) + 5),
    ):
        try:
            resource.setrlimit(res, (value, value))
        except (ValueError, OSError):
            notes.append(f"rlimit {res} not set")
    _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    if uid is not None:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
        notes.append(f"uid {uid}")
    # Set after setuid: changing credentials clears it.
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    os.environ.clear()
    os.environ.update(PATH="/usr/local/bin:/usr/bin:/bin", HOME=str(scratch), TMPDIR="/tmp",
                      LANG="C.UTF-8", MPLBACKEND="Agg", **job.get("env", {}))
    # C-level writes to stdout/stderr go nowhere; Python-level output is captured per cell.
    devnull = os.open(os.devnull, os.O_RDWR)
    for std in (0, 1, 2):
        os.dup2(devnull, std)
    os.close(devnull)
    sys.path[:] = [p for p in sys.path if p and _readable(p)]
    return notes


def _readable(path: str) -> bool:
    try:
        os.listdir(path)
        return True
    except OSError:
        return False


class CappedText:
    """A text stream keeping at most ``cap`` characters; the rest is counted, then dropped."""

    encoding = "utf-8"
    errors = "replace"

    def __init__(self, cap: int):
        self.cap, self.parts, self.kept, self.dropped = cap, [], 0, 0

    def write(self, text: Any) -> int:
        text = str(text)
        room = self.cap - self.kept
        if room > 0:
            self.parts.append(text[:room])
            self.kept += min(room, len(text))
        self.dropped += max(0, len(text) - max(room, 0))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def text(self) -> str:
        out = "".join(self.parts)
        if self.dropped:
            out += f"\n[output limit: {self.dropped} more characters not kept]"
        return out


def _harness(chan: Channel, job: dict, isolation: list[str]) -> None:
    limits = job["limits"]
    for key, value in job["jax_config"]:
        jax.config.update(key, value)
    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell(config=config)
    shell.colors = "nocolor"
    if job.get("allowed_imports") is not None:  # the cells were checked and rewritten
        cellguard.install(shell.user_ns, tuple(job["allowed_imports"]))
    probes = sys.modules[job["probes"]]
    guard = Guard(tuple(job["own_primitives"]), extra_modules=(job["probes"],))
    chan.send({"hello": "; ".join(isolation)})
    budget = limits["output_chars"]
    for index, source in enumerate(job["cells"]):
        if index in job["skip"]:
            continue
        chan.send({"cell_start": index})
        sink = CappedText(max(0, min(budget, limits["cell_output_chars"])))
        error = _run_student_cell(shell, source, sink)
        budget -= sink.kept
        chan.send({"cell_done": index, "output": sink.text(), "error": error})
    chan.send({"ready": guard.restore()})
    while True:
        request = chan.recv()
        if request.get("bye"):
            return
        sink = CappedText(0)
        sys.stdout = sys.stderr = sink
        try:
            value = getattr(probes, request["probe"])(shell.user_ns, request["inputs"])
            raised = None
        except BaseException as err:  # noqa: BLE001 - SystemExit from student code included
            value, raised = None, (type(err).__name__, _message(err))
        finally:
            sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
        tampered = guard.restore()
        reply: dict[str, Any] = {"check": request["check"], "tampered": tampered}
        if raised is None:
            try:
                reply["value"] = to_plain(value)
            except BaseException as err:  # noqa: BLE001 - to_plain refuses non-plain data
                raised = (type(err).__name__, _message(err))
        if raised is not None:
            reply["raised"], reply["message"] = raised
        chan.send(reply)


def _message(err: BaseException) -> str:
    try:
        return str(err)[:500]
    except BaseException:  # noqa: BLE001 - a student exception's __str__ may itself raise
        return "(message unavailable)"


def _run_student_cell(shell: InteractiveShell, source: str, sink: CappedText) -> str | None:
    sys.stdout = sys.stderr = sink
    try:
        result = _run_cell(shell, source, store_history=True)
        err = result.error_before_exec or result.error_in_exec
    except BaseException as exc:  # noqa: BLE001 - a patched shell may raise anything
        err = exc
    finally:
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
    if err is None:
        return None
    return f"{type(err).__name__}: {_message(err)}"
