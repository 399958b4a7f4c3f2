"""Grader side of one submission: drive sandboxed children, compute expectations, judge.

Runs in a worker process of the pool (autograder.grading). Each worker owns a fork server that
has imported autograder.sandbox and the assignment's probes; a child is forked per (submission,
JAX config) group of checks. Expectations are computed here with real JAX while the child runs
the cells; comparison happens here. A child that hangs, crashes or exits fails only the checks it
had not answered; a fresh child (cells re-run) takes the remaining ones, within a bounded number
of restarts and the notebook's time budget.
"""

from __future__ import annotations

import hashlib
import hmac
import importlib
import multiprocessing
import multiprocessing.forkserver
import os
import signal
import socket
import sys
import time
import types
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from autograder import sandbox
from autograder.channel import Channel, ChannelError
from autograder.normalise import Notebook, NotebookError, normalise
from autograder.spec import Assignment, Check, Outcome, Verdict


@dataclass(frozen=True)
class Limits:
    cell_timeout_s: float = 60.0
    notebook_timeout_s: float = 600.0  # all children of one submission together
    memory_mb: int = 3072
    nproc: int = 512  # processes and threads of one worker slot's uid (XLA threads count)
    disk_mb: int = 256
    output_chars: int = 200_000
    cell_output_chars: int = 20_000
    max_restarts: int = 3
    namespaces: bool = True


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
    base_uid: int = 61000


_state: dict[str, Any] = {}


def init_worker(config: Config, slots: Any) -> None:
    import jax

    checks = importlib.import_module(f"{config.package}.{config.assignment}.checks")
    probes_name = f"{config.package}.{config.assignment}.probes"
    # Each forked child would otherwise re-run the worker's __main__ (multiprocessing's spawn
    # preparation); the worker needs nothing from it.
    sys.modules["__main__"] = types.ModuleType("__main__")
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["autograder.sandbox", probes_name])
    # Start the fork server now: its imports overlap with this worker's JAX start-up below.
    multiprocessing.forkserver.ensure_running()
    _state.update(
        config=config, assignment=checks.ASSIGNMENT, probes=probes_name, ctx=ctx,
        has_gpu=any(d.platform == "gpu" for d in jax.devices()),
        uid=config.base_uid + slots.get(),
    )


def check_name(check: Check) -> str:
    return f"{check.id}: {check.description}"


def grade_notebook(student_id: str, path: Path | None, problem: str = "") -> dict:
    """The worker's job: the result of one student, as plain data for the main process."""
    assignment: Assignment = _state["assignment"]
    started = time.monotonic()
    result = {"student_id": student_id, "status": "graded", "message": "", "cells": [],
              "notes": [], "tests": {}, "isolation": "", "check_seconds": 0.0}
    try:
        if path is None:
            raise NotebookError(problem)
        notebook = normalise(path.read_bytes(), _state["config"].release_cells)
    except (NotebookError, OSError) as err:
        result.update(status="error", message=str(err))
        for check in assignment.checks:
            if check.needs_gpu and not _state["has_gpu"]:
                result["tests"][check.id] = _gpu_not_run(check)
            else:
                result["tests"][check.id] = _entry(check, 0.0, "error", f"not graded: {err}")
        result["seconds"] = time.monotonic() - started
        return result
    result["notes"] += notebook.notes
    result["cells"] = [asdict(c) for c in notebook.cells]
    groups: dict[tuple, list[Check]] = {}
    for check in assignment.checks:
        if check.needs_gpu and not _state["has_gpu"]:
            result["tests"][check.id] = _gpu_not_run(check)
            continue
        groups.setdefault(tuple(check.jax_config), []).append(check)
    session = _Session(student_id, path.name, path.read_bytes(), notebook, result, started)
    for jax_config, checks in groups.items():
        session.run_group(jax_config, checks)
    result["seconds"] = time.monotonic() - started
    return result


def _gpu_not_run(check: Check) -> dict:
    return _entry(check, 0.0, "not-run", "not run: this check needs a GPU and the grading "
                  "machine has none; it is left out of the maximum score")


def _entry(check: Check, points: float, status: str, message: str) -> dict:
    return {"name": check_name(check), "points": points, "max_points": float(check.points),
            "status": status, "message": message}


def input_seed(secret: bytes, student_id: str, check_id: str) -> int:
    digest = hmac.new(secret, f"{student_id}\0{check_id}".encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big")


class _Child:
    def __init__(self, job: dict):
        ctx = _state["ctx"]
        parent, child = socket.socketpair()
        secret = os.urandom(32)
        self.process = ctx.Process(target=sandbox.child_main, args=(child, secret, job))
        self.process.start()
        child.close()
        parent.setblocking(False)
        self.sock = parent
        self.chan = Channel(parent.fileno(), secret, sends_first=True)
        self.killed = False

    def kill(self) -> None:
        self.killed = True
        for target in (lambda: os.killpg(self.process.pid, signal.SIGKILL), self.process.kill):
            try:
                target()
            except (OSError, ValueError):
                pass
        self.close()

    def close(self) -> None:
        self.process.join(timeout=10)
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
        return f"the process was killed ({name}); a common cause is the memory limit"


class _Session:
    """All children of one submission."""

    def __init__(self, student_id: str, notebook_name: str, data: bytes, notebook: Notebook,
                 result: dict, started: float):
        self.config: Config = _state["config"]
        self.limits = self.config.limits
        self.student_id = student_id
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

    def run_group(self, jax_config: tuple, checks: list[Check]) -> None:
        expected: dict | None = None
        pending = list(checks)
        while pending:
            if self.restarts > self.limits.max_restarts or time.monotonic() >= self.deadline:
                why = ("the notebook's time budget was used up" if time.monotonic() >= self.deadline
                       else "too many restarts of the notebook's process")
                for check in pending:
                    self._fail(check, f"not run: {why}")
                return
            child = self._start(jax_config)
            try:
                if expected is None:
                    # While the child starts and runs the cells (they wait in the channel).
                    expected = self._expectations(jax_config, checks)
                    pending = [c for c in pending if c.id not in self.result["tests"]]
                ready = self._run_cells(child)
                if ready is None:
                    self.restarts += 1
                    continue
                self._note_tampering("your notebook's cells", ready)
                while pending:
                    check = pending[0]
                    if not self._probe(child, check, expected[check.id]):
                        pending.pop(0)
                        self.restarts += 1
                        break
                    pending.pop(0)
                else:
                    try:
                        child.chan.send({"bye": True}, time.monotonic() + 5)
                    except (OSError, TimeoutError):
                        pass
            finally:
                if not child.killed:
                    child.close()

    def _expectations(self, jax_config: tuple, checks: list[Check]) -> dict:
        import jax

        expected = {}
        previous = {key: getattr(jax.config, key) for key, _ in jax_config}
        try:
            for key, value in jax_config:
                try:
                    jax.config.update(key, value)
                except RuntimeError:  # set before a backend starts (jax_num_cpu_devices): it
                    pass  # is for the student's process, which applies it before its first cell
            for check in checks:
                rng = np.random.default_rng(input_seed(self.config.secret, self.student_id,
                                                       check.id))
                try:
                    inputs = check.make_inputs(rng)
                    expected[check.id] = (inputs, check.expect(inputs))
                except Exception as err:  # noqa: BLE001 - a grader bug must not stop the class
                    self.result["tests"][check.id] = _entry(
                        check, 0.0, "error", f"grader error while preparing this check: "
                        f"{type(err).__name__}")
        finally:
            for key, value in previous.items():
                jax.config.update(key, value)
        return expected

    def _start(self, jax_config: tuple) -> _Child:
        assignment: Assignment = _state["assignment"]
        limits = asdict(self.limits)
        limits["uid"] = _state["uid"]
        job = {
            "cells": self.notebook.code_to_run, "skip": sorted(self.skip),
            "jax_config": list(jax_config), "probes": _state["probes"],
            "own_primitives": list(assignment.extra.get("own_primitives", ())),
            "limits": limits, "hide": self.config.hide, "keep": self.config.keep,
            "notebook_name": self.notebook_name, "notebook_bytes": self.data,
        }
        return _Child(job)

    def _run_cells(self, child: _Child) -> list[str] | None:
        """Run the cells; the tampering list when the child is ready for probes, else None."""
        current = None
        cell_deadline = None
        while True:
            deadline = self.deadline if cell_deadline is None else min(self.deadline,
                                                                      cell_deadline)
            try:
                message = child.chan.recv(deadline)
            except TimeoutError:
                child.kill()
                if current is not None and cell_deadline <= self.deadline:
                    self._skip(current, f"time limit of {self.limits.cell_timeout_s:g} s per "
                               "cell exceeded")
                return None
            except (EOFError, OSError, ChannelError) as err:
                reason = (child.death(self.limits) if not isinstance(err, ChannelError)
                          else "the notebook's code wrote to the grader's channel")
                if isinstance(err, ChannelError):
                    child.kill()
                if current is not None:
                    self._skip(current, reason)
                else:
                    self.result["notes"].append(f"the notebook's process failed: {reason}")
                    self.restarts = self.limits.max_restarts  # it will not go better next time
                return None
            if "hello" in message:
                self.result["isolation"] = str(message["hello"])
            elif "fatal" in message:
                self.result["notes"].append(f"sandbox error: {message['fatal']}")
                if not self.result["isolation"]:  # before any student code: the grader's fault
                    self.result.update(status="error",
                                       message=f"the sandbox failed: {message['fatal']}")
            elif "cell_start" in message:
                current = int(message["cell_start"])
                cell_deadline = time.monotonic() + self.limits.cell_timeout_s
            elif "cell_done" in message:
                index = int(message["cell_done"])
                error = message.get("error")
                if isinstance(error, str) and error.startswith("MemoryError"):
                    # What the cell allocated may still be referenced and starve every later
                    # check: start again without this cell.
                    child.kill()
                    self._skip(index, f"MemoryError: the memory limit of "
                                      f"{self.limits.memory_mb} MiB was reached")
                    return None
                self.cell_reports.setdefault(index, {"output": str(message.get("output", "")),
                                                     "error": error})
                current = cell_deadline = None
            elif "ready" in message:
                self._publish_cells()
                return [str(x) for x in message["ready"]]

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
        deadline = min(self.deadline, time.monotonic() + check.timeout_s)
        t0 = time.monotonic()
        try:
            child.chan.send({"check": check.id, "probe": check.probe, "inputs": inputs}, deadline)
            reply = child.chan.recv(deadline)
        except TimeoutError:
            child.kill()
            limit = ("the notebook's time budget" if deadline == self.deadline
                     else f"the time limit of {check.timeout_s:g} s")
            self._fail(check, f"{limit} was exceeded while running this check")
            return False
        except ChannelError:
            child.kill()
            self._fail(check, "the result channel was tampered with; this check earns nothing")
            return False
        except (EOFError, OSError):
            self._fail(check, f"the process ended while running this check: "
                              f"{child.death(self.limits)}")
            return False
        self.result["check_seconds"] += time.monotonic() - t0
        if not isinstance(reply, dict) or reply.get("check") != check.id:
            child.kill()
            self._fail(check, "the process answered out of turn; this check earns nothing")
            return False
        self._note_tampering(f"check {check.id}", reply.get("tampered", []))
        if "raised" in reply:
            outcome = Outcome(raised=str(reply["raised"]), message=str(reply.get("message", "")))
        else:
            outcome = Outcome(value=reply.get("value"))
        try:
            verdict = check.judge(expected, outcome)
        except Exception as err:  # noqa: BLE001 - a judge must never crash the class
            verdict = Verdict(False, f"the result could not be judged ({type(err).__name__})")
        if verdict.passed:
            self.result["tests"][check.id] = _entry(check, float(check.points), "passed", "")
        else:
            self._fail(check, verdict.message)
        return True

    def _fail(self, check: Check, why: str) -> None:
        assignment: Assignment = _state["assignment"]
        task = assignment.task(check.task)
        blame = f" {check.blame}" if check.blame else ""
        message = f"[{task.id}] {why.rstrip('.')}.{blame}"
        self.result["tests"][check.id] = _entry(check, 0.0, "failed", message)

    def _note_tampering(self, when: str, names: list) -> None:
        if names:
            shown = ", ".join(str(n) for n in names[:8]) + (" ..." if len(names) > 8 else "")
            note = f"{when} changed {shown}; restored before grading"
            if note not in self.result["notes"]:
                self.result["notes"].append(note)
