"""Grader side of one submission: drive sandboxed children, compute expectations, judge.

Runs in a worker process of the pool (autograder.grade.grading). Each worker owns a fork server that
has imported autograder.student.sandbox and the assignment's probes; a child is forked per (submission,
JAX config) group of checks. Expectations are computed here with real JAX while the child runs
the cells, once per worker for all the submissions it grades (a check's inputs depend on the
course secret and the check alone: ``input_seed``); comparison happens here. A child that hangs, crashes or exits fails only the checks it
had not answered; a fresh child (cells re-run) takes the remaining ones, within a bounded number
of restarts and the notebook's time budget.

A time limit never fails a check silently: the machine may just be busy (another class grading on
the same cores). A cell or a check stopped by its limit runs once more in a fresh process with
twice the limit (``TIME_LIMIT_SCALE``); stopped again, it is ``error`` (to be regraded), never
``failed``, and so is every check the notebook's time budget did not reach. Once a rule has been
stopped twice, its remaining checks are ``error`` without running, and a later first stop of
another rule is not retried (the loop is the notebook's, not the machine's); time-outs do not use
up the restarts a crashing notebook is allowed, so no other rule is charged for one.

Every frame from the child is hostile data (see autograder.student.sandbox for the threat model): each
is checked against the protocol (which message may come when, the type and size of every field)
and any deviation fails the submission's remaining checks; nothing a frame says sets the row's
status or message, and every string from it is stripped of control characters and capped. Any
change the harness reports (a patched library, a thread left running, a trace hook) fails the
checks it could have reached; a tripwire exit fails every check not yet answered.

One submission never touches another: each child gets a uid no other child of any grading run on
the machine gets (a block of uids per worker, held by a lock file), its own cgroup (memory and
process limits for all its processes together, where the machine lets us make one), and when
it is done or killed, everything in its cgroup and everything running under its uid is killed
and waited for before the next submission starts.
"""

from __future__ import annotations

import copy
import dataclasses
import errno
import fcntl
import functools
import hashlib
import hmac
import importlib
import multiprocessing
import multiprocessing.forkserver
import os
import re
import signal
import socket
import subprocess
import sys
import time
import types
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from autograder.limits import Limits
from autograder.results import (
    OBJECT_ADDRESS,
    PREPARE_FAILED,
    CheckResult,
    Status,
    StudentResult,
    StudentStatus,
    check_result,
)
from autograder.spec import Assignment, Check, Outcome, Verdict
from autograder.student import sandbox
from autograder.student.channel import Channel, ChannelError
from autograder.student.guard import TRIPWIRE_KINDS
from autograder.text import clean_text
from autograder.worker import points, policy, submission
from autograder.worker.hidden import hide_values
from autograder.worker.normalise import Notebook, NotebookError, normalise


def python_paths() -> list[str]:
    """What the sandbox keeps visible of the Python that runs the grader: its virtualenv and its
    install (``sys.prefix``, ``sys.base_prefix``), and the folder of every link on the way from
    ``sys.executable`` to the binary: a virtualenv's ``bin/python`` may link through a folder
    outside both (a shim folder, ``/opt/.../bin``), and the kernel processes of ps5 start that
    same ``sys.executable``. Each folder as named and as resolved."""
    paths = {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()}
    link = Path(os.path.abspath(sys.executable))
    for _ in range(40):  # a loop of links ends here too
        if not link.is_symlink():
            break
        link = Path(os.path.abspath(link.parent / os.readlink(link)))
        paths |= {link.parent, link.parent.resolve()}
    return sorted(str(p) for p in paths)


@dataclass
class Config:
    """What every worker needs, sent once when the pool starts."""

    package: str
    assignment: str
    release_cells: list
    limits: Limits
    secret: bytes
    hide: list
    keep: list
    # The course's other released assignments: name -> their nbgrader grade ids, to tell a
    # notebook of another assignment (autograder.worker.normalise.foreign).
    other_assignments: dict = dataclasses.field(default_factory=dict)
    # Blocks of UID_BLOCK uids from here, one block per worker. AUTOGRADER_BASE_UID moves a
    # run's range (the tests do, to find their own processes beside other grading runs).
    base_uid: int = dataclasses.field(default_factory=lambda: int(
        os.environ.get("AUTOGRADER_BASE_UID", BASE_UID)))


_state: dict[str, Any] = {}
BASE_UID = 1_000_000
UID_BLOCK = 4096
UID_BLOCKS = 1024
UID_LOCKS = Path("/tmp/.autograder-uid-blocks")
MAX_NOTES = 40
NOTE_CHARS = 500
# Environment the fork server (and so every sandbox) starts with: JAX's and XLA's own settings
# only, so /proc/self/environ in the sandbox shows nothing of the grader's.
_SANDBOX_ENV_PREFIXES = ("JAX_", "XLA_", "TF_CPP_")


# A cell or check stopped by its time limit runs once more with this many times the limit.
TIME_LIMIT_SCALE = 2.0
TIME_ERROR = "status error: to be regraded, not a wrong answer"


class ProtocolError(Exception):
    """A frame from the child that the protocol does not allow at that point."""


# On a GPU, JAX takes 75% of the device's memory when its client starts: every worker and every
# student's process would each try to. They allocate what they use instead.
GPU_ENV = {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}
# XLA's CPU compiler in the student's process: the checks run its programs on arrays of a few
# elements, so compiling them is most of a submission's time and running them next to none. The
# loop emitters and no LLVM optimisation compile the same programs in about 55% of the time (same
# values to the checks' tolerances: the whole suite grades unchanged with them). Only without a
# GPU (the optimisation level also applies to the XLA code that ps5's speed check measures
# against), and only the flags this jaxlib's XLA knows: it aborts the process on an unknown one,
# which would leave every submission ungraded (jaxlib 0.11 removed the first flag; the second is
# still there).
FAST_COMPILE_FLAGS = ("--xla_cpu_use_fusion_emitters=false", "--xla_backend_optimization_level=0")
# The flags each pinned jaxlib accepts, measured with xla_flags_accepted (test_student_env.py
# measures them again on the installed jaxlib); any other jaxlib is asked when grading starts.
KNOWN_FAST_COMPILE_FLAGS = {
    "0.10.2": FAST_COMPILE_FLAGS,
    "0.12.1": ("--xla_backend_optimization_level=0",),
}


def xla_flags_accepted(flags: tuple[str, ...], timeout: float = 120) -> tuple[str, ...]:
    """The flags the installed XLA accepts, each tried alone: a subprocess per flag, in parallel,
    starts JAX's CPU client with that flag in XLA_FLAGS (where XLA parses and checks them)."""
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    tries = [(flag, subprocess.Popen([sys.executable, "-c", "import jax; jax.devices('cpu')"],
                                     env=dict(env, XLA_FLAGS=flag), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
             for flag in flags]
    accepted = []
    for flag, proc in tries:
        try:
            if proc.wait(timeout=timeout) == 0:
                accepted.append(flag)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return tuple(accepted)


@functools.cache
def fast_compile_flags() -> tuple[str, ...]:
    """The FAST_COMPILE_FLAGS this jaxlib accepts: from the table, else asked once per process."""
    from jaxlib import version

    known = KNOWN_FAST_COMPILE_FLAGS.get(version.__version__)
    return known if known is not None else xla_flags_accepted(FAST_COMPILE_FLAGS)


def student_env(has_gpu: bool) -> dict[str, str]:
    """What the student's process adds to its emptied environment (autograder.student.sandbox)."""
    env = dict(GPU_ENV)
    if not has_gpu and fast_compile_flags():
        env["XLA_FLAGS"] = " ".join([os.environ.get("XLA_FLAGS", ""), *fast_compile_flags()]).strip()
    return env


def init_worker(config: Config) -> None:
    for key, value in GPU_ENV.items():
        os.environ.setdefault(key, value)
    import jax

    checks = importlib.import_module(f"{config.package}.{config.assignment}.checks")
    probes_name = f"{config.package}.{config.assignment}.probes"
    # Each forked child would otherwise re-run the worker's __main__ (multiprocessing's spawn
    # preparation); the worker needs nothing from it.
    sys.modules["__main__"] = types.ModuleType("__main__")
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["autograder.student.sandbox", probes_name])
    # Start the fork server now: its imports overlap with this worker's JAX start-up below. It
    # starts with an empty environment (but JAX's settings); its argv and what remains are wiped
    # from each child's memory (autograder.student.sandbox).
    saved = dict(os.environ)
    try:
        os.environ.clear()
        os.environ.update({k: v for k, v in saved.items()
                           if k.startswith(_SANDBOX_ENV_PREFIXES)},
                          PATH="/usr/local/bin:/usr/bin:/bin", LANG="C.UTF-8")
        multiprocessing.forkserver.ensure_running()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    _state.update(
        config=config, assignment=points.scaled(checks.ASSIGNMENT, config.release_cells),
        probes=probes_name, ctx=ctx,
        has_gpu=any(d.platform == "gpu" for d in jax.devices()),
        uids=_UidBlock(config.base_uid), cgroups=_Cgroups.find(),
    )


class _UidBlock:
    """Uids for this worker's children: a block no other worker of any run holds (an flock on
    a file per block, released when the worker ends), used in order, never twice in a row."""

    def __init__(self, base: int):
        self.base, self.next, self.lock = base, 0, None
        try:
            UID_LOCKS.mkdir(mode=0o700, exist_ok=True)
        except OSError:
            pass
        for block in range(UID_BLOCKS):
            try:
                fd = os.open(UID_LOCKS / f"{block}.lock", os.O_RDWR | os.O_CREAT, 0o600)
            except OSError:
                break
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue
            self.lock, self.base = fd, base + block * UID_BLOCK
            break
        else:
            self.base = base + (os.getpid() % UID_BLOCKS) * UID_BLOCK

    def take(self) -> int:
        uid = self.base + self.next % UID_BLOCK
        self.next += 1
        _kill_uid(uid)  # a block is reused only after a worker of an earlier run ended
        return uid


def _kill_uid(uid: int) -> None:
    """SIGKILL every process running as ``uid``, until none is left (uids are per child)."""
    if os.geteuid() != 0:
        return
    for _ in range(100):
        found = False
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                if os.stat(entry.path).st_uid != uid:
                    continue
                os.kill(int(entry.name), signal.SIGKILL)
                found = True
            except OSError:
                continue
        if not found:
            return
        time.sleep(0.01)


class _Cgroups:
    """Memory and process limits over all of one child's processes (cgroup v2, else v1)."""

    def __init__(self, version: int, roots: dict[str, Path]):
        self.version, self.roots, self.count = version, roots, 0

    @classmethod
    def find(cls) -> _Cgroups | None:
        # AUTOGRADER_CGROUPS=off measures the fallback (per-process limits only).
        if os.geteuid() != 0 or os.environ.get("AUTOGRADER_CGROUPS") == "off":
            return None
        mounts: dict[str, Path] = {}
        try:
            for line in Path("/proc/self/mountinfo").read_text().splitlines():
                left, _, right = line.partition(" - ")
                point, (fstype, _, options) = Path(left.split()[4]), right.split()[:3]
                if fstype == "cgroup2":
                    mounts.setdefault("v2", point)
                elif fstype == "cgroup":
                    for controller in ("memory", "pids"):
                        if controller in options.split(","):
                            mounts.setdefault(controller, point)
        except (OSError, ValueError):
            return None
        if "v2" in mounts:
            root = mounts["v2"]
            try:
                wanted = {"memory", "pids"}
                if wanted <= set((root / "cgroup.controllers").read_text().split()):
                    (root / "cgroup.subtree_control").write_text("+memory +pids")
                    parent = root / "autograder"
                    parent.mkdir(exist_ok=True)
                    (parent / "cgroup.subtree_control").write_text("+memory +pids")
                    return cls(2, {"v2": parent})
            except OSError:
                pass
        if "memory" in mounts and "pids" in mounts:
            try:
                roots = {}
                for controller in ("memory", "pids"):
                    parent = mounts[controller] / "autograder"
                    parent.mkdir(exist_ok=True)
                    roots[controller] = parent
                return cls(1, roots)
            except OSError:
                pass
        return None

    def make(self, limits: Limits) -> list[Path]:
        """New cgroup(s) for one child; the directories (their cgroup.procs joined by the
        keeper before it forks the student's process)."""
        self.count += 1
        name = f"{os.getpid()}-{self.count}"
        dirs = []
        memory = limits.memory_mb << 20
        for controller, parent in self.roots.items():
            path = parent / name
            path.mkdir()
            dirs.append(path)
            if self.version == 2:
                _write(path / "memory.max", memory)
                _write(path / "memory.swap.max", 0)
                _write(path / "pids.max", limits.nproc)
            elif controller == "memory":
                _write(path / "memory.limit_in_bytes", memory)
                _write(path / "memory.memsw.limit_in_bytes", memory)
            else:
                _write(path / "pids.max", limits.nproc)
        return dirs

    @staticmethod
    def destroy(dirs: list[Path]) -> None:
        """Kill everything in the cgroup(s), wait until they are empty, remove them."""
        for path in dirs:
            if (path / "cgroup.kill").exists():
                _write(path / "cgroup.kill", 1)
        for _ in range(200):
            left = False
            for path in dirs:
                try:
                    pids = (path / "cgroup.procs").read_text().split()
                except OSError:
                    continue
                for pid in pids:
                    left = True
                    try:
                        os.kill(int(pid), signal.SIGKILL)
                    except (OSError, ValueError):
                        pass
            if not left:
                break
            time.sleep(0.01)
        for path in dirs:
            for _ in range(100):
                try:
                    path.rmdir()
                    break
                except OSError as err:
                    if err.errno != errno.EBUSY:
                        break
                    time.sleep(0.01)


def _write(path: Path, value: int) -> None:
    try:
        path.write_text(str(value))
    except OSError:
        pass


def grade_notebook(student_id: str, path: Path | None, problem: str = "",
                   only: frozenset[str] | None = None) -> StudentResult:
    """The worker's job: the result of one student, as plain data for the main process.

    ``only``: the ids of the checks to run (all when None); the cluster backend sends a class's
    GPU checks to workers with a GPU and the rest anywhere."""
    assignment: Assignment = _state["assignment"]
    if only is not None:
        assignment = dataclasses.replace(
            assignment, checks=tuple(c for c in assignment.checks if c.id in only))
    started = time.monotonic()
    result: StudentResult = {
        "student_id": student_id, "status": StudentStatus.GRADED, "message": "", "cells": [],
        "notes": [], "tests": {}, "isolation": "", "check_seconds": 0.0}
    try:
        if path is None:
            raise NotebookError(problem)
        data = submission.read(path)
        notebook = normalise(data, _state["config"].release_cells, assignment=assignment.name,
                             others=_state["config"].other_assignments)
        if _state["config"].limits.cell_policy:
            try:
                notebook = policy.apply(notebook, assignment)
            except (RecursionError, MemoryError, ValueError) as err:
                # Code nested too deep to parse or walk: the notebook's error, not the class's.
                raise NotebookError(f"the notebook's code could not be checked "
                                    f"({type(err).__name__})") from None
    except (NotebookError, OSError) as err:
        result.update(status=StudentStatus.ERROR, message=str(err))
        for check in assignment.checks:
            if check.needs_gpu and not _state["has_gpu"]:
                result["tests"][check.id] = gpu_not_run(check)
            else:
                result["tests"][check.id] = not_graded(check, str(err), strip_addresses=True)
        result["seconds"] = time.monotonic() - started
        return result
    result["notes"] += notebook.notes
    result["cells"] = [asdict(c) for c in notebook.cells]
    groups: dict[tuple, list[Check]] = {}
    for check in assignment.checks:
        if check.needs_gpu and not _state["has_gpu"]:
            result["tests"][check.id] = gpu_not_run(check)
            continue
        groups.setdefault(tuple(check.jax_config), []).append(check)
    session = _Session(path.name, data, notebook, result, started)
    for jax_config, checks in groups.items():
        session.run_group(jax_config, checks)
    result["seconds"] = time.monotonic() - started
    return result


def not_graded(check: Check, why: str, *, strip_addresses: bool = False) -> CheckResult:
    """The entry of a check of a submission that could not be graded (``why``: the
    submission's message), here and in the main process (autograder.grade.grading)."""
    return check_result(check, 0.0, Status.ERROR, f"not graded: {why}",
                        strip_addresses=strip_addresses)


def gpu_not_run(check: Check) -> CheckResult:
    """The entry of a GPU check where no GPU was there to run it (here, and in the main process
    for a worker that failed)."""
    return check_result(check, 0.0, Status.NOT_RUN, "not run: this check needs a GPU and the "
                        "grading machine has none; it is left out of the maximum score")


def _entry(check: Check, points: float, status: Status, message: str) -> CheckResult:
    """A check's entry as the worker reports it: object addresses dropped from the message
    (autograder.results.check_result)."""
    return check_result(check, points, status, message, strip_addresses=True)


def input_seed(secret: bytes, check_id: str) -> int:
    """The seed of one check's inputs: the course secret and the check, nothing else. Neither
    the student nor the submission's text draws them, so two students who hand in the same code
    get the same grade whatever bug it holds, and so does one who adds a space. They stay hidden
    by other means: they change with the course secret, and no feedback shows their values
    (autograder.worker.hidden; the reproducer runs public inputs of its own)."""
    digest = hmac.new(secret, check_id.encode("utf-8"), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big")


# (course secret, check id, JAX config) -> (inputs, expectation): drawn and computed with real
# JAX once per worker process, then served to every submission it grades (they depend on nothing
# else; ``expect`` is a large part of grading time). Each submission gets a deep copy, so neither
# a judge nor ``retry`` can change what the next one is judged against; the student's process only
# ever receives the inputs, encoded into a frame.
_PREPARED: dict[tuple[bytes, str, tuple], tuple[dict, Any]] = {}


def _prepare(secret: bytes, jax_config: tuple, checks: list[Check]) -> dict[str, str]:
    """Draw and compute the checks' inputs and expectations into ``_PREPARED``, under
    ``jax_config``; check id -> the error's name for those the grader could not make (not kept:
    the next submission tries again, and gets the same error)."""
    import jax

    failed = {}
    previous = {key: getattr(jax.config, key) for key, _ in jax_config}
    try:
        for key, value in jax_config:
            try:
                jax.config.update(key, value)
            except RuntimeError:  # set before a backend starts (jax_num_cpu_devices): it
                pass  # is for the student's process, which applies it before its first cell
        for check in checks:
            rng = np.random.default_rng(input_seed(secret, check.id))
            try:
                inputs = check.make_inputs(rng)
                _PREPARED[secret, check.id, jax_config] = (inputs, check.expect(inputs))
            except Exception as err:  # noqa: BLE001 - a grader bug must not stop the class
                failed[check.id] = type(err).__name__
    finally:
        for key, value in previous.items():
            jax.config.update(key, value)
    return failed


class _Child:
    """One sandboxed child (keeper and student's process) and everything it may leave behind."""

    def __init__(self, job: dict, limits: Limits):
        ctx = _state["ctx"]
        cgroups: _Cgroups | None = _state["cgroups"]
        self.uid = job["limits"]["uid"]
        self.cgroup_dirs: list[Path] = []
        if cgroups is not None:
            try:
                self.cgroup_dirs = cgroups.make(limits)
            except OSError:
                self.cgroup_dirs = []
        job["cgroup_procs"] = [str(d / "cgroup.procs") for d in self.cgroup_dirs]
        parent, child = socket.socketpair()
        secret = os.urandom(32)
        self.process = ctx.Process(target=sandbox.child_main, args=(child, secret, job))
        self.process.start()
        child.close()
        parent.setblocking(False)
        self.sock = parent
        self.chan = Channel(parent.fileno(), secret, sends_first=True)
        self.killed = self.closed = False

    def kill(self) -> None:
        """Stop everything of this child: the keeper kills the student's process (PID 1 of its
        namespace: the kernel then kills the rest); the cgroup and the uid catch what is left."""
        self.killed = True
        pid = self.process.pid
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass
        self.process.join(timeout=2)
        if self.process.exitcode is None:
            for target in (lambda: os.killpg(pid, signal.SIGKILL), self.process.kill):
                try:
                    target()
                except (OSError, ValueError):
                    pass
        self.close()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.process.join(timeout=10)
        if self.process.exitcode is None:
            self.process.kill()
            self.process.join(timeout=10)
        _Cgroups.destroy(self.cgroup_dirs)
        _kill_uid(self.uid)
        self.sock.close()

    def death(self, limits: Limits) -> str:
        """Why the child is gone, in the student's terms."""
        self.process.join(timeout=10)
        code = self.process.exitcode
        if code is None:
            self.kill()
            return "the process stopped answering and was killed"
        if code == sandbox.SIGNAL_BASE - 1:
            return "the sandbox could not run the notebook"
        if sandbox.TRIPWIRE_BASE <= code < sandbox.TRIPWIRE_BASE + len(TRIPWIRE_KINDS):
            return tripwire_message(code - sandbox.TRIPWIRE_BASE)
        if 0 <= code < sandbox.SIGNAL_BASE:
            return (f"the notebook's code ended its own process (sys.exit/os._exit, status "
                    f"{code})")
        sig = code - sandbox.SIGNAL_BASE if code > 0 else -code
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        if sig in (signal.SIGSEGV, signal.SIGABRT, signal.SIGBUS):
            return (f"the process crashed ({name}); a common cause is exceeding the memory limit "
                    f"of {limits.memory_mb} MiB")
        if sig == signal.SIGXCPU:
            return "the process used up its CPU time limit"
        if sig == signal.SIGXFSZ:
            return f"the process wrote more than the file size limit of {limits.disk_mb} MiB"
        return (f"the process was killed ({name}); a common cause is the memory limit of "
                f"{limits.memory_mb} MiB for all of the notebook's processes together")


def tripwire_message(kind: int) -> str:
    return (f"TAMPERING: the notebook's code {TRIPWIRE_KINDS[kind]}; its process was stopped "
            "and no check after that point earns points")


class _Session:
    """All children of one submission."""

    def __init__(self, notebook_name: str, data: bytes, notebook: Notebook,
                 result: StudentResult, started: float):
        self.config: Config = _state["config"]
        self.limits = self.config.limits
        self.notebook_name = notebook_name
        self.data = data
        self.notebook = notebook
        self.result = result
        self.deadline = started + self.limits.notebook_timeout_s
        self.restarts = 0
        self.skip: dict[int, str] = {}  # cell index -> why it is no longer run
        self.cell_reports: dict[int, dict] = {}
        run_positions = [i for i, c in enumerate(notebook.cells) if c.run]
        self.position = dict(enumerate(run_positions))  # run index -> notebook cell index
        self.output_left = self.limits.output_chars
        # Set once the submission's process broke the protocol or tripped the tripwire: every
        # check not yet answered fails with this, in this group and the next.
        self.aborted: str | None = None
        # Time limits: cells and tasks stopped once (now run with the longer limit), tasks
        # stopped twice, and whether any stop was confirmed (then a first stop is final).
        self.slow_cells: set[int] = set()
        self.slow_tasks: set[str] = set()
        self.timed_out_tasks: set[str] = set()
        self.confirmed_loop = False
        self.retry_now: str | None = None  # a check to ask again first, in a fresh process
        self.time_stop = False  # the last child was stopped by a time limit, not a crash

    def run_group(self, jax_config: tuple, checks: list[Check]) -> None:
        expected: dict | None = None
        pending = list(checks)
        while pending:
            if self.aborted:
                for check in pending:
                    self._fail(check, self.aborted)
                return
            if time.monotonic() >= self.deadline:
                for check in pending:
                    self._time_error(check, "not run: the notebook's time budget of "
                                     f"{self.limits.notebook_timeout_s:g} s was used up")
                return
            for check in [c for c in pending if c.task in self.timed_out_tasks]:
                self._time_error(check, "not run: an earlier check of this rule was stopped by "
                                 "its time limit twice")
                pending.remove(check)
            if not pending:
                return
            if self.restarts > self.limits.max_restarts:
                for check in pending:
                    self._fail(check, "not run: too many restarts of the notebook's process")
                return
            child = self._start(jax_config)
            try:
                if expected is None:
                    # While the child starts and runs the cells (they wait in the channel).
                    expected = self._expectations(jax_config, checks)
                    pending = [c for c in pending if c.id not in self.result["tests"]]
                try:
                    ready = self._run_cells(child)
                except ProtocolError as err:
                    child.kill()
                    self._abort(f"the notebook's process broke the grading protocol ({err})")
                    continue
                if ready is None:
                    self._count_restart()
                    continue
                if ready:
                    # Patched libraries, threads or hooks left by the cells: no check can trust
                    # this process.
                    why = self._tampering("your notebook's cells", ready)
                    for check in pending:
                        self._fail(check, why)
                    # It waits for a probe that will never come: stopped now, not after
                    # close()'s 10 s wait for it to end by itself.
                    child.kill()
                    return
                while pending:
                    check = pending[0]
                    try:
                        alive = self._probe(child, check, expected[check.id])
                    except ProtocolError as err:
                        child.kill()
                        self._abort(f"the notebook's process broke the grading protocol ({err})")
                        alive = False
                    if self.retry_now == check.id:
                        # Stopped by its time limit once: again first, in a fresh process, with
                        # the longer limit; a time-out is not a crash, so no restart is used.
                        self.retry_now = None
                        self.time_stop = False
                        break
                    pending.pop(0)
                    if not alive:
                        self._count_restart()
                        break
                else:
                    try:
                        child.chan.send({"bye": True}, time.monotonic() + 5)
                    except (OSError, TimeoutError, ValueError):
                        pass
            finally:
                child.close()

    def _abort(self, why: str) -> None:
        if self.aborted is None:
            self.aborted = why
            self._add_note(why)

    def _add_note(self, note: str) -> None:
        note = clean_text(note, NOTE_CHARS)
        notes = self.result["notes"]
        if note not in notes and len(notes) < MAX_NOTES:
            notes.append(note)

    def _expectations(self, jax_config: tuple, checks: list[Check]) -> dict:
        """check id -> (inputs, expectation), this submission's own copy (``_PREPARED``); a
        check whose inputs or expectation the grader could not make is answered here."""
        secret = self.config.secret
        missing = [c for c in checks if (secret, c.id, jax_config) not in _PREPARED]
        if missing:
            failed = _prepare(secret, jax_config, missing)
            for check in missing:
                if check.id in failed:
                    self.result["tests"][check.id] = _entry(
                        check, 0.0, Status.ERROR, f"{PREPARE_FAILED}: {failed[check.id]}")
        return {c.id: copy.deepcopy(_PREPARED[secret, c.id, jax_config]) for c in checks
                if (secret, c.id, jax_config) in _PREPARED}

    def _start(self, jax_config: tuple) -> _Child:
        assignment: Assignment = _state["assignment"]
        limits = asdict(self.limits)
        limits["uid"] = _state["uids"].take()
        job = {
            "cells": self.notebook.code_to_run, "skip": sorted(self.skip),
            "jax_config": list(jax_config), "probes": _state["probes"],
            "own_primitives": list(assignment.extra.get("own_primitives", ())),
            "allowed_imports": (list(policy.allowed_imports(assignment))
                                if self.limits.cell_policy else None),
            "limits": limits, "hide": self.config.hide, "keep": self.config.keep,
            "gpu": _state["has_gpu"], "env": student_env(_state["has_gpu"]),
            "notebook_name": self.notebook_name, "notebook_bytes": self.data,
        }
        return _Child(job, self.limits)

    def _run_cells(self, child: _Child) -> list[str] | None:
        """Run the cells; when the child is ready for probes, the list of what it found changed
        (empty: nothing); None when the child is gone. ProtocolError on a frame out of turn."""
        current = None
        cell_deadline = None
        started = hello = False
        last = -1
        n_cells = len(self.notebook.code_to_run)
        while True:
            deadline = self.deadline if cell_deadline is None else min(self.deadline,
                                                                      cell_deadline)
            try:
                message = child.chan.recv(deadline)
            except TimeoutError:
                child.kill()
                if current is not None and cell_deadline <= self.deadline:
                    if current in self.slow_cells or self.confirmed_loop:
                        again = (f", and again with {self._cell_limit(current):g} s"
                                 if current in self.slow_cells else "")
                        self.confirmed_loop = True
                        self._skip(current, f"time limit of {self.limits.cell_timeout_s:g} s per "
                                   f"cell exceeded{again} (checks that fail after it are marked "
                                   "error, to be regraded)")
                    else:
                        self.slow_cells.add(current)  # once more, with the longer limit
                    self.time_stop = True
                return None
            except (EOFError, OSError, ChannelError) as err:
                if isinstance(err, ChannelError):
                    # Bytes that are not the harness's: the cell is not run again.
                    child.kill()
                    reason = "the notebook's code wrote to the grader's channel"
                    if current is None:
                        self._abort(reason)
                    else:
                        self._skip(current, reason)
                    return None
                reason = child.death(self.limits)
                if reason.startswith("TAMPERING"):
                    self._abort(reason)
                    return None
                if current is not None:
                    self._skip(current, reason)
                else:
                    self._add_note(f"the notebook's process failed: {reason}")
                    self.restarts = self.limits.max_restarts  # it will not go better next time
                return None
            kind = _frame_kind(message, ("hello", "fatal", "cell_start", "cell_done", "ready"))
            if kind == "hello":
                _expect_fields(message, {"hello": str})
                if started or hello:
                    raise ProtocolError("hello after the cells began")
                hello = True
                self.result["isolation"] = clean_text(message["hello"], 300) or "?"
            elif kind == "fatal":
                _expect_fields(message, {"fatal": str})
                if started:
                    raise ProtocolError("a sandbox error after the cells began")
                child.kill()
                self._abort("the sandbox could not run the notebook: "
                            f"{clean_text(message['fatal'], 300)}")
                return None
            elif kind == "cell_start":
                _expect_fields(message, {"cell_start": int})
                index = message["cell_start"]
                if (current is not None or not last < index < n_cells or index in self.skip
                        or not hello):
                    raise ProtocolError("a cell started out of order")
                started, current, last = True, index, index
                cell_deadline = time.monotonic() + self._cell_limit(index)
            elif kind == "cell_done":
                _expect_fields(message, {"cell_done": int, "output": str, "error": (str, None)})
                index = message["cell_done"]
                if index != current:
                    raise ProtocolError("a cell finished that had not started")
                error = message["error"]
                if error is not None and error.startswith("MemoryError"):
                    # What the cell allocated may still be referenced and starve every later
                    # check: start again without this cell.
                    child.kill()
                    self._skip(index, f"MemoryError: the memory limit of "
                                      f"{self.limits.memory_mb} MiB was reached")
                    return None
                output = clean_text(message["output"], min(self.output_left,
                                                           self.limits.cell_output_chars + 100),
                                    keep_lines=True)
                self.output_left -= len(output)
                self.cell_reports.setdefault(index, {
                    "output": OBJECT_ADDRESS.sub("", output),
                    "error": None if error is None else OBJECT_ADDRESS.sub(
                        "", clean_text(error, 1000, keep_lines=True))})
                current = cell_deadline = None
            else:  # ready
                _expect_fields(message, {"ready": list, "config": list})
                if current is not None or not hello:
                    raise ProtocolError("ready while a cell was running")
                changed = _strings(message["ready"])
                for name in _strings(message["config"])[:8]:
                    self._add_note(f"your notebook changed JAX's option {name}; it was set back "
                                   "to the grader's value for the checks")
                self._publish_cells()
                return changed

    def _skip(self, run_index: int, why: str) -> None:
        self.skip[run_index] = why
        self.cell_reports[run_index] = {"output": "", "error": f"not completed: {why}"}
        self._publish_cells()

    def _publish_cells(self) -> None:
        for run_index, report in self.cell_reports.items():
            cell = self.result["cells"][self.position[run_index]]
            cell["output"], cell["error"] = report["output"], report["error"]
        self.result["skipped"] = {self.position[i]: why for i, why in self.skip.items()}

    def _probe(self, child: _Child, check: Check, prepared: tuple) -> bool:
        """Run one check; False when the child is gone (the check has been failed)."""
        inputs, expected = prepared
        deadline = min(self.deadline, time.monotonic() + self._check_limit(check))
        outcome = self._ask(child, check, inputs, deadline)
        if outcome is None:
            return self._asked_ok
        verdict = self._judge(check, expected, outcome)
        retried: dict = {}
        if not verdict.passed and check.retry is not None and outcome.raised is None:
            # A second run of the probe, for what its first run left out (ps1: the eager
            # evaluation, needed only when the jitted one is wrong); judged on both values.
            retried = check.retry(inputs)
            second = self._ask(child, check, retried, deadline)
            if second is None:
                return self._asked_ok
            if second.raised is not None or type(outcome.value) is not dict \
                    or type(second.value) is not dict:
                outcome = second
            else:
                outcome = Outcome(value={**outcome.value, **second.value})
            verdict = self._judge(check, expected, outcome)
        if verdict.passed:
            self.result["tests"][check.id] = _entry(check, float(check.points), Status.PASSED, "")
        else:
            # The judge's words, and what the student's process said, without a hidden value.
            message = hide_values(verdict.message, inputs, retried, expected)
            self._fail_verdict(check, clean_text(message, 1000))
        return True

    @staticmethod
    def _judge(check: Check, expected: Any, outcome: Outcome) -> Verdict:
        try:
            return check.judge(expected, outcome)
        except Exception as err:  # noqa: BLE001 - a judge must never crash the class
            return Verdict(False, f"the result could not be judged ({type(err).__name__})")

    def _ask(self, child: _Child, check: Check, inputs: dict, deadline: float) -> Outcome | None:
        """One request and its reply, as an Outcome; None when the check was failed on the way
        (the child gone, time out, a forged frame, tampering), with ``_asked_ok`` saying whether
        the child can take the next check."""
        t0 = time.monotonic()
        self._asked_ok = False
        try:
            child.chan.send({"check": check.id, "probe": check.probe, "inputs": inputs}, deadline)
            reply = child.chan.recv(deadline)
        except TimeoutError:
            child.kill()
            self._timed_out(check, budget=deadline == self.deadline)
            return None
        except ChannelError:
            child.kill()
            self._fail(check, "the notebook's code wrote to the grader's channel while this "
                              "check ran; this check earns nothing")
            return None
        except (EOFError, OSError):
            reason = child.death(self.limits)
            if reason.startswith("TAMPERING"):
                self._abort(reason)
                self._fail(check, reason)
            else:
                self._fail(check, f"the process ended while running this check: {reason}")
            return None
        self.result["check_seconds"] += time.monotonic() - t0
        if _frame_kind(reply, ("check",)) != "check" or reply["check"] != check.id:
            raise ProtocolError("an answer to a check that was not asked")
        if "raised" in reply:
            _expect_fields(reply, {"check": str, "tampered": list, "raised": str,
                                   "message": str})
            outcome = Outcome(raised=clean_text(reply["raised"], 100),
                              message=clean_text(reply["message"], 500))
        else:
            _expect_fields(reply, {"check": str, "tampered": list, "value": object})
            outcome = Outcome(value=reply["value"])
        tampered = _strings(reply["tampered"])
        if tampered:
            # The names come from the student's process, which holds this check's inputs.
            self._fail(check, hide_values(self._tampering(
                f"while check {check.id} ran, your notebook's code", tampered), inputs))
            self._asked_ok = True
            return None
        return outcome

    def _count_restart(self) -> None:
        """A fresh child is needed: a crash uses up one of the allowed restarts, a time-out
        (the machine may be busy) does not; the notebook's time budget bounds both."""
        if not self.time_stop:
            self.restarts += 1
        self.time_stop = False

    def _cell_limit(self, run_index: int) -> float:
        scale = TIME_LIMIT_SCALE if run_index in self.slow_cells else 1.0
        return self.limits.cell_timeout_s * scale

    def _check_limit(self, check: Check) -> float:
        return check.timeout_s * (TIME_LIMIT_SCALE if check.task in self.slow_tasks else 1.0)

    def _timed_out(self, check: Check, *, budget: bool) -> None:
        """A check stopped by a time limit: asked again once with the longer limit, else
        ``error``; the rule's remaining checks follow without running."""
        if budget:
            self._time_error(check, "the notebook's time budget of "
                             f"{self.limits.notebook_timeout_s:g} s ran out during this check")
            return
        self.time_stop = True
        limit = self._check_limit(check)
        if check.task in self.slow_tasks or self.confirmed_loop:
            self.confirmed_loop = True
            self.timed_out_tasks.add(check.task)
            self._time_error(check, f"the time limit of {limit:g} s was exceeded while running "
                             "this check" + (" (the second time, with the longer limit)"
                                             if check.task in self.slow_tasks else ""))
        else:
            self.slow_tasks.add(check.task)
            self.retry_now = check.id

    def _time_error(self, check: Check, why: str) -> None:
        self._fail(check, f"{why.rstrip('.')}; {TIME_ERROR}", status=Status.ERROR)

    def _fail_verdict(self, check: Check, why: str) -> None:
        if any(w.startswith("time limit") for w in self.skip.values()):
            # A cell stopped by its time limit may be what this check misses: not the rule's
            # fault as far as the grader can tell, so not a silent 0 either.
            self._fail(check, f"{why.rstrip('.')} (a cell was stopped by its time limit: "
                       f"{TIME_ERROR})", status=Status.ERROR)
        else:
            self._fail(check, why)

    def _fail(self, check: Check, why: str, status: Status = Status.FAILED) -> None:
        assignment: Assignment = _state["assignment"]
        task = assignment.task(check.task)
        blame = f" {_sentence(check.blame)}" if check.blame and status == Status.FAILED else ""
        refused = policy.refusal_of_task(self.notebook, task.id)
        if refused:  # the cause first: what the check then saw follows from it
            message = f"[{task.id}]{refused}.{REFUSED_THEN}{why.rstrip('.')}.{blame}"
        else:
            message = f"[{task.id}] {why.rstrip('.')}.{blame}"
        self.result["tests"][check.id] = _entry(check, 0.0, status, message)

    def _tampering(self, who: str, names: list[str]) -> str:
        shown = "; ".join(names[:6]) + (" ..." if len(names) > 6 else "")
        why = f"TAMPERING: {who} {shown}; this check earns nothing"
        self._add_note(why)
        return why


# A failed check's message when the cell policy refused its task's cell: the refusal, then this,
# then what the check saw (a stub's NotImplementedError, a NameError).
REFUSED_THEN = " What the check then saw: "
_FIRST_WORD = re.compile(r"[a-z]+(?=[ ,;:])")


def _sentence(text: str) -> str:
    """``text`` as a sentence after a full stop: its first word capitalised when it is a plain
    word ("the JVP rule ..."), never when it is code (``div_jvp: ...``, ``jnp.sum``)."""
    return text[:1].upper() + text[1:] if _FIRST_WORD.match(text) else text


def _frame_kind(message: Any, kinds: tuple[str, ...]) -> str:
    """The one protocol key a frame has (of ``kinds``); ProtocolError for anything else."""
    if type(message) is not dict:
        raise ProtocolError("a frame that is not a message")
    found = [k for k in kinds if k in message]
    if len(found) != 1:
        raise ProtocolError("a frame of no known kind")
    return found[0]


def _expect_fields(message: dict, fields: dict[str, Any]) -> None:
    """Exactly these keys, each of its type (bool is not an int; None where listed)."""
    if set(message) != set(fields):
        raise ProtocolError("a frame with unexpected fields")
    for key, kind in fields.items():
        value = message[key]
        allowed = kind if isinstance(kind, tuple) else (kind,)
        if kind is object:
            continue
        ok = any((value is None) if a is None else (type(value) is a) for a in allowed)
        if not ok:
            raise ProtocolError(f"field {key} of the wrong type")


def _strings(items: list) -> list[str]:
    """A list of short clean strings from a hostile list (at most 50)."""
    if not all(type(x) is str for x in items):
        raise ProtocolError("a list of names holding something else")
    return [clean_text(x, 200) for x in items[:50]]
