"""The student's side of grading: confinement, then the cells, then probes on request.

This module is imported by each worker's fork server before any submission is seen (it pulls in
NumPy, JAX without initialising a backend, and IPython), so starting a student's process is a fork,
not a fresh interpreter. ``child_main`` is the entry point of each forked child, the *keeper*:

1. the keeper starts a new session, joins the submission's cgroup (made by the grader, see
   autograder.worker.runner), wipes the command line and environment the fork server was started with
   from its own memory, and, where the kernel allows, unshares mount, network, IPC, UTS and PID
   namespaces; it moves into a root of its own (pivot_root) that holds the system directories,
   the Python install and the virtualenv, and none of the course's files, the submissions or
   the output (not even in the mount table), gives the student fresh tmpfs ``/tmp``, ``/var``,
   ``/run`` and ``/dev/shm``, and a scratch directory holding only a copy of the notebook;
2. it forks the student's process, PID 1 of the new PID namespace: when it ends, the kernel kills
   every process left in the namespace, whatever session or process group they moved to. The
   keeper itself never runs student code; on SIGTERM from the grader it kills the student's
   process and exits. The student's process sets resource limits, drops to the submission's own
   uid, clears the environment and runs the harness;
3. the harness runs the notebook's cells in an IPython shell with the tripwire armed
   (autograder.student.guard), restores whatever the cells patched, and then, per request, checks that
   nothing of the notebook's is left running on its own (threads, hooks, signal handlers),
   resets JAX's configuration to the grader's, runs one probe and sends back plain data only.

Threat model. Everything in the student's process is assumed reachable by the notebook's code:
the harness only *reports*; the grader (autograder.worker.runner) treats every frame as hostile data,
judges every value itself, and fails a check on any reported change, any tripwire exit, any
frame out of protocol. Detection in the process is best effort by construction: code that can
rewrite memory without any audit event (a C extension of its own, a syscall the seccomp filter
lets through) could forge a probe's answer. The cell policy (RestrictedPython, seccomp; see
autograder.worker.policy) is what keeps the notebook's code from getting there; these walls are built
to hold without it for everything but forging its own answers: no other submission, no later
check, no grader file, key or environment, and no process outlives the submission.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import importlib
import multiprocessing
import os
import posix
import random
import resource
import shutil
import signal
import socket
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

import IPython  # noqa: F401  (warm import for the fork server)
import jax

# JAX imports this lazily on the first device_put to a device, and it registers rules for its
# own primitives: imported before the guard's snapshot, so that is not taken for tampering.
import jax.experimental.multihost_utils
import numpy as np  # noqa: F401  (warm import for the fork server)

try:  # JAX imports it lazily at its first lowering: once here, not in every student's process
    import jaxlib.mlir.dialects.mhlo  # noqa: F401
except ImportError:  # a jaxlib without it
    pass
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

from autograder.student import cellguard, syscalls
from autograder.student.channel import Channel
from autograder.student.guard import Guard, install_tripwire, make_quiet_check
from autograder.student.plain import to_plain

CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET = 0x00020000, 0x20000000, 0x40000000
CLONE_NEWIPC, CLONE_NEWUTS = 0x08000000, 0x04000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS = 1, 38
SCRATCH = "/tmp/submission"
# Exit statuses of the namespace's parent: 0-99 is the student's own exit status (capped),
# SIGNAL_BASE + n means the student's process died of signal n, TRIPWIRE_BASE + k that the
# tripwire ended it (autograder.student.guard.TRIPWIRE_KINDS[k]).
SIGNAL_BASE = 100
TRIPWIRE_BASE = 200
# JAX options the checks rely on: reset to the grader's values before every probe, then read
# back (their effective, thread-local value); a value that does not stick fails the check.
JAX_FLAGS = (
    "jax_disable_jit", "jax_enable_x64", "jax_default_matmul_precision",
    "jax_numpy_rank_promotion", "jax_numpy_dtype_promotion", "jax_debug_nans", "jax_debug_infs",
    "jax_default_prng_impl", "jax_enable_checks", "jax_check_tracer_leaks", "jax_default_device",
    "jax_softmax_custom_jvp", "jax_enable_custom_prng", "jax_legacy_prng_key",
    "jax_threefry_partitionable", "jax_dynamic_shapes", "jax_platforms",
)
_READ_ONLY_FLAGS = ("jax_platforms",)  # fixed once the backend exists: verified only
_run_cell = InteractiveShell.run_cell  # the class's method, whatever an instance is given later

_libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)


def child_main(sock: socket.socket, secret: bytes, job: dict) -> None:
    """Forked by the fork server for one (submission, JAX config) run; never returns."""
    # The Process object keeps its arguments and the fork server's authentication key; the
    # secret and the key must not stay where they are easy to find.
    proc = multiprocessing.current_process()
    proc._args, proc._kwargs, proc._config = (), {}, {}
    sys.argv[:] = ["python"]
    sys.orig_argv[:] = ["python"]
    try:
        os.setsid()
    except OSError:
        pass
    job["in_cgroup"] = _join_cgroup(job.pop("cgroup_procs", ()))
    _wipe_command_line_and_environment()
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
        # What the student's process needs no more: where the grader's files are.
        for key in ("hide", "keep", "notebook_bytes"):
            job.pop(key, None)
    except BaseException as err:  # noqa: BLE001 - fail closed: no student code runs
        _fatal(chan, err)
    # SIGTERM (the grader's "stop") waits until the keeper can act on it.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    pid = os.fork()
    if pid:
        _keep(pid, fd, scratch if not namespaced else None)
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
        isolation += _confine(job, scratch, uid, namespaced=namespaced)
        isolation += syscalls.install()  # last wall: after the sandbox's own set-up (issue 11)
        _harness(chan, job, isolation)
    except BaseException as err:  # noqa: BLE001 - the grader reports it; nothing else to do
        _fatal(chan, err)
    os._exit(0)


def _keep(pid: int, fd: int, scratch: Path | None) -> None:
    """The keeper's life after the fork: wait for the student's process, report how it ended
    (exit status), kill it when the grader asks (SIGTERM). Never returns."""

    def stop(signum: int, frame: Any) -> None:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass

    signal.signal(signal.SIGTERM, stop)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    os.close(fd)
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
        except ChildProcessError:
            os._exit(SIGNAL_BASE + signal.SIGKILL)
    code = os.waitstatus_to_exitcode(status)
    if scratch is not None:
        shutil.rmtree(scratch, ignore_errors=True)
    if code < 0:
        os._exit(SIGNAL_BASE - code)
    if TRIPWIRE_BASE <= code < TRIPWIRE_BASE + 50:
        os._exit(code)
    os._exit(min(code, SIGNAL_BASE - 1))


def _join_cgroup(procs_files: Any) -> bool:
    """Move this process (and so everything it forks) into the submission's cgroup(s); whether
    it joined them all (none given: False)."""
    joined = bool(procs_files)
    for path in procs_files:
        try:
            with open(path, "w") as f:
                f.write(str(os.getpid()))
        except OSError:
            joined = False  # the grader checks membership from outside and says so
    return joined


def _wipe_command_line_and_environment() -> None:
    """Overwrite the fork server's argv and environment blocks in this process's memory, which
    /proc/self/cmdline and /proc/self/environ show whatever ``os.environ`` holds."""
    try:
        stat = Path("/proc/self/stat").read_text()
        fields = stat[stat.rindex(")") + 2:].split()
        # Fields 48-51 of proc(5), counted from 1, with fields 1-2 (pid, comm) cut off above.
        arg_start, arg_end, env_start, env_end = (int(f) for f in fields[45:49])
    except (OSError, ValueError, IndexError):
        return
    if 0 < env_start < env_end:
        ctypes.memset(env_start, 0, env_end - env_start)
    if 0 < arg_start < arg_end:
        name = b"python\0"[: arg_end - arg_start]
        ctypes.memmove(arg_start, name, len(name))
        ctypes.memset(arg_start + len(name), 0, arg_end - arg_start - len(name))


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
    if _libc.unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS):
        return [f"no namespaces (unshare: {os.strerror(ctypes.get_errno())})"]
    _mount(b"none", b"/", None, MS_REC | MS_PRIVATE)
    root = _new_root([Path(k) for k in job["keep"]], [Path(h) for h in job["hide"]],
                     job["limits"]["disk_mb"])
    # The old root and every mount in it leave the namespace: /proc/self/mountinfo names no
    # hidden path (the class's submissions, the output, the course), not even as a mount point.
    os.chdir(root)
    if _libc.syscall(_SYS_PIVOT_ROOT.get(os.uname().machine, -1), b".", b".") == 0:
        if _libc.umount2(b".", MNT_DETACH) != 0:
            errno = ctypes.get_errno()
            raise OSError(errno, f"umount2 of the old root: {os.strerror(errno)}")
    else:  # a root that cannot be pivoted (an initramfs): the mount table shows what is under it
        os.chroot(".")
    os.chdir("/")
    return ["namespaces (mount, network, pid, ipc, uts), only the OS and Python visible"]


# Top-level directories of the operating system, bound into the student's root as they are;
# every other one (/home, /root, /work, /srv, /opt, ...) is an empty directory there, but for
# the Python install and the virtualenv. /tmp, /var and /run are fresh tmpfs.
_SYSTEM_DIRS = {"bin", "boot", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "run",
                "sbin", "sys", "tmp", "usr", "var", "nix"}
_FRESH = {"tmp": None, "var": 16, "run": 16, "dev/shm": 16}  # MiB; None: the disk limit
_SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "ppc64le": 203, "s390x": 217}
MNT_DETACH = 2


def _new_root(keep: list[Path], hide: list[Path], disk_mb: int) -> Path:
    """The student's root, built on a tmpfs: the system directories bound from the host, fresh
    tmpfs /tmp, /var, /run and /dev/shm, the ``keep`` paths bound back read-only where they
    were. A ``hide`` path left inside what is bound (under /usr, in the virtualenv) is covered.

    The kept paths are held open (O_PATH) before the tmpfs covers /tmp (where they may live: a
    clone in /tmp, as CI may make) and bound from /proc/self/fd."""
    held = [(path, os.open(path, os.O_PATH | os.O_DIRECTORY)) for path in keep if path.is_dir()]
    entries = sorted(Path("/").iterdir())
    root = Path("/tmp")
    _mount(b"tmpfs", root, b"tmpfs", MS_NOSUID | MS_NODEV, b"size=1m,mode=755")
    bound = []
    for entry in entries:
        inside = root / entry.name
        if entry.is_symlink():
            os.symlink(os.readlink(entry), inside)
        elif not entry.is_dir():
            continue
        elif entry.name in _FRESH:
            inside.mkdir()
        elif entry.name in _SYSTEM_DIRS:
            inside.mkdir()
            _mount(os.fsencode(entry), inside, None, MS_BIND | MS_REC)
            bound.append(entry)
        else:
            inside.mkdir(mode=0o755)
    for name, mb in _FRESH.items():
        inside = root / name
        if inside.is_dir() and not inside.is_symlink():
            # Private, writable, size-bounded and gone with the namespace (nothing reaches the
            # host's disk through /run/lock or /var/tmp).
            size = disk_mb if mb is None else mb
            _mount(b"tmpfs", inside, b"tmpfs", MS_NOSUID | MS_NODEV,
                   f"size={size}m,mode=1777".encode())
    for path, fd in held:
        if not any(path.is_relative_to(b) for b in bound):
            inside = root / path.relative_to("/")
            inside.mkdir(parents=True, exist_ok=True)
            _mount(f"/proc/self/fd/{fd}".encode(), inside, None, MS_BIND | MS_REC)
            _mount(b"none", inside, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_REC)
        os.close(fd)
    for path in hide:  # what the binds brought along
        inside = root / path.relative_to("/")
        if not any(path.is_relative_to(p) for p in (*bound, *keep)) or not inside.exists():
            continue
        if inside.is_dir():
            _mount(b"tmpfs", inside, b"tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                   b"size=16k,mode=755")
        else:
            _mount(b"/dev/null", inside, None, MS_BIND)
    return root


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
    # CUDA reserves far more address space than memory when it starts (unified addressing), so
    # on a GPU the cgroup's memory.max, which counts what is really used by all of the
    # submission's processes, is the memory limit; RLIMIT_AS stays wherever there is no cgroup.
    per_process = not (job.get("gpu") and job.get("in_cgroup"))
    if not per_process:
        notes.append("memory limited by the cgroup alone (a GPU)")
    for res, value in (
        *([(resource.RLIMIT_AS, mem)] if per_process else []),
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
        notes.append("a uid of its own")
    # Set after setuid: changing credentials clears it.
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    os.environ.clear()
    posix.environ.clear()  # the bytes copy os.environ was built from
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
    # The backends start here, before the snapshot of running threads, not in the first cell
    # that needs one: their start-up may leave a thread finishing (JAX's TPU timer, cancelled),
    # which a loaded machine could still show running when the cells are done.
    jax.devices()
    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell(config=config)
    shell.colors = "nocolor"
    if job.get("allowed_imports") is not None:  # the cells were checked and rewritten
        cellguard.install(shell.user_ns, tuple(job["allowed_imports"]))
    probes = sys.modules[job["probes"]]
    prepare = getattr(probes, "prepare_process", None)
    if prepare is not None:  # what an assignment's probes need of the process, before any cell
        prepare()
    # An assignment's probes may name the modules they rely on beyond themselves (ps5: the
    # kernel build, whose isolation latch and child script the probes trust): guarded as theirs.
    guarded = tuple(getattr(probes, "GUARDED_MODULES", ()))
    guard = Guard(tuple(job["own_primitives"]), extra_modules=(job["probes"], *guarded))
    # Bound now: what the cells do to the Guard class, this module or jax.config cannot reach
    # these (the closures themselves are only reachable through the heap or frames, which the
    # tripwire ends).
    restore, quiet = guard.restore, make_quiet_check(shell.user_ns)
    reset_jax = _make_jax_reset(dict(job["jax_config"]))
    run_probe = {name: getattr(probes, name) for name in dir(probes)
                 if name.startswith("probe_")}
    send, recv, collect, to_plain_, changes = chan.send, chan.recv, gc.collect, to_plain, _changes
    # A process the notebook forked that returns into this loop is not the harness: it ends.
    harness_pid, getpid, exit_now = os.getpid(), os.getpid, os._exit
    chan.send({"hello": "; ".join(isolation)})
    install_tripwire(_trusted_prefixes(probes), TRIPWIRE_BASE, shell.user_ns)
    # Everything alive now is the grader's and the libraries' and stays alive: the collection
    # after each probe (below) need only look at what the cells and the probes made, not at JAX's
    # hundred thousand objects (0.1 ms instead of 100 ms a check).
    gc.freeze()
    budget = limits["output_chars"]
    for index, source in enumerate(job["cells"]):
        if index in job["skip"]:
            continue
        send({"cell_start": index})
        sink = CappedText(max(0, min(budget, limits["cell_output_chars"])))
        error = _run_student_cell(shell, source, sink)
        if getpid() != harness_pid:
            exit_now(0)
        budget -= sink.kept
        send({"cell_done": index, "output": sink.text(), "error": error})
    # JAX options the cells set are put back and said; everything else fails the checks.
    send({"ready": changes(restore(), quiet(), []), "config": reset_jax()[:50]})
    while True:
        request = recv()
        if type(request) is not dict or request.get("bye"):
            return
        # Between probes no code of the notebook's runs unless a thread or a signal handler
        # survived (quiet() finds those); what the last probe patched was restored after it.
        before = changes([], quiet(), reset_jax())
        sink = CappedText(0)
        sys.stdout = sys.stderr = sink
        try:
            value = run_probe[request["probe"]](shell.user_ns, request["inputs"])
            raised = None
        except BaseException as err:  # noqa: BLE001 - SystemExit from student code included
            value, raised = None, (type(err).__name__, _message(err))
        finally:
            if getpid() != harness_pid:
                exit_now(0)
            sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
        # (Whatever the probe patched shows in the restore below, after the value is made.)
        reply: dict[str, Any] = {"check": request["check"]}
        if raised is None:
            try:
                reply["value"] = to_plain_(value)
            except BaseException as err:  # noqa: BLE001 - to_plain refuses non-plain data
                raised = (type(err).__name__, _message(err))
        if raised is not None:
            reply["raised"], reply["message"] = raised
        # Whatever of the notebook's the value held is freed now, finalizers included, and
        # what they changed is found before the reply goes out.
        value = None
        collect()
        reply["tampered"] = (before + changes(restore(), quiet(), reset_jax()))[:50]
        try:
            send(reply)
        except ValueError:  # over the channel's frame limit
            send({"check": reply["check"], "tampered": reply["tampered"],
                  "raised": "ValueError", "message": "the result is too large to send"})


def _changes(patched: list[str], running: list[str], config: list[str]) -> list[str]:
    found = ([f"changed {name}" for name in patched] + [f"left {what}" for what in running]
             + [f"changed JAX's {name}" for name in config])
    return [name[:200] for name in found[:50]]


def _trusted_prefixes(probes: types.ModuleType) -> tuple[str, ...]:
    """Where the grader's and the libraries' code lives: files under these were not written by
    the student (read-only to the student's uid, or hidden)."""
    import autograder

    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, str(Path(jax.__file__).parent.parent),
             str(Path(autograder.__file__).parent), str(Path(probes.__file__).parent),
             str(Path(os.__file__).parent)}
    prefixes = {str(Path(r).resolve()) for r in roots} | roots
    return tuple(sorted(p.rstrip("/") + "/" for p in prefixes)) + ("<frozen ",)


def _make_jax_reset(overrides: dict) -> Any:
    """A function putting JAX's options back to the grader's values (the fork server's defaults,
    then the check group's); it returns the names that were off and the ones that stayed off."""
    from jax._src import config as jax_config

    holders = {name: jax.config._value_holders[name] for name in JAX_FLAGS
               if name in jax.config._value_holders}
    wanted = {name: overrides.get(name, holder.value) for name, holder in holders.items()}
    unset = jax_config.config_ext.unset
    # A device option the grader gives as a platform's name ("cpu") is the same option when the
    # notebook gives that platform's first device, as ps5's setup cell does
    # (jax.devices("cpu")[0]): no note to the student, nothing to set back. The very device
    # object, so nothing else passes for it.
    same = {name: _first_device(value) for name, value in wanted.items()
            if name == "jax_default_device" and isinstance(value, str)}
    items = tuple((name, holder, wanted[name], same.get(name, wanted[name]),
                   type(holder).set_local, type(holder)._set, name in _READ_ONLY_FLAGS)
                  for name, holder in holders.items())

    def reset() -> list[str]:
        off = []
        for name, holder, value, alias, set_local, set_global, read_only in items:
            current = holder.value
            if (current is alias or current == value) and holder.get_local() is unset:
                continue
            off.append(name)
            if not read_only:
                try:
                    set_local(holder, unset)
                    set_global(holder, value)
                except Exception:  # noqa: BLE001, S110 - verified just below
                    pass
            if holder.value != value:
                off.append(f"{name} (could not be reset)")
        return off

    return reset


def _first_device(platform: str) -> Any:
    """The first device of ``platform``, or None where there is no such platform."""
    try:
        return jax.devices(platform)[0]
    except RuntimeError:
        return None


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
