"""Every frame from the student's process is hostile data (issue 11).

These drive the grader's side of one submission (runner._Session) with frames written by the
test in place of the sandbox: forged frames of every kind, out of turn, of the wrong types, too
large or too deep. Each must fail that submission's checks with a message, never crash the
grader, never set the row's status or message, and never put a control character anywhere.
"""

from __future__ import annotations

import json
import socket
import struct
import subprocess
import sys
import time
from dataclasses import asdict

import hostile
import pytest
from engine_helpers import TOY_ROOT

from autograder.student.channel import MAX_FRAME, Channel
from autograder.worker import runner
from autograder.worker.normalise import normalise, read_release
from autograder.worker.runner import Config, Limits, ProtocolError, _Session, _UidBlock

RELEASE = read_release(TOY_ROOT / "assignments" / "toy" / "toy.ipynb")
SECRET = b"k" * 32


class FakeChild:
    """The grader's end of a channel whose other end the test writes, as a hostile sandbox."""

    def __init__(self):
        self.mine, theirs = socket.socketpair()
        self.mine.setblocking(False)
        self.theirs = theirs
        self.chan = Channel(self.mine.fileno(), SECRET, sends_first=True)
        self.student = Channel(theirs.fileno(), SECRET, sends_first=False)
        self.killed = False

    def kill(self):
        self.killed = True

    def death(self, limits):
        return "gone"


@pytest.fixture
def session(toy_assignment):
    runner._state.update(
        assignment=toy_assignment,
        config=Config(package="toygrader", assignment="toy", release_cells=RELEASE,
                      limits=Limits(cell_timeout_s=5, notebook_timeout_s=30), secret=b"s",
                      hide=[], keep=[]))
    data = json.dumps(hostile.submission(hostile.FULL)).encode()
    notebook = normalise(data, RELEASE)
    result = {"student_id": "s", "status": "graded", "message": "", "notes": [], "tests": {},
              "isolation": "", "check_seconds": 0.0, "cells": [asdict(c) for c in notebook.cells]}
    return _Session("toy.ipynb", data, notebook, result, time.monotonic())


HELLO = {"hello": "namespaces"}
BAD_SEQUENCES = {
    "cell before hello": [{"cell_start": 0}],
    "second hello": [HELLO, HELLO],
    "fatal after cells began": [HELLO, {"cell_start": 0}, {"fatal": "x"}],
    "cell_done with a non-string error": [HELLO, {"cell_start": 0},
                                          {"cell_done": 0, "output": "", "error": 5}],
    "cell_done with a dict output": [HELLO, {"cell_start": 0},
                                     {"cell_done": 0, "output": {"d": 1}, "error": None}],
    "cell_done for another cell": [HELLO, {"cell_start": 0},
                                   {"cell_done": 1, "output": "", "error": None}],
    "cell started twice": [HELLO, {"cell_start": 0}, {"cell_start": 1}],
    "cell index out of range": [HELLO, {"cell_start": 99}],
    "cells out of order": [HELLO, {"cell_start": 1}, {"cell_done": 1, "output": "",
                                                      "error": None}, {"cell_start": 0}],
    "bool as index": [HELLO, {"cell_start": True}],
    "extra field": [HELLO, {"cell_start": 0, "status": "graded"}],
    "ready not a list": [HELLO, {"ready": "nothing", "config": []}],
    "ready of non-strings": [HELLO, {"ready": [1], "config": []}],
    "ready while a cell runs": [HELLO, {"cell_start": 0}, {"ready": [], "config": []}],
    "not a dict": [HELLO, [1, 2]],
    "two kinds at once": [HELLO, {"cell_start": 0, "ready": []}],
    "unknown kind": [HELLO, {"status": "error", "message": "forged"}],
    "a probe answer during the cells": [HELLO, {"check": "toy.impl.eager", "value": 1.0,
                                                "tampered": []}],
}


@pytest.mark.parametrize("frames", BAD_SEQUENCES.values(), ids=BAD_SEQUENCES.keys())
def test_out_of_protocol_frames_are_refused(session, frames):
    child = FakeChild()
    for frame in frames:
        child.student.send(frame)
    with pytest.raises(ProtocolError):
        session._run_cells(child)
    assert session.result["status"] == "graded" and session.result["message"] == ""


def test_a_protocol_break_fails_every_check_of_that_student_only(session, monkeypatch,
                                                                 toy_assignment):
    child = FakeChild()
    child.student.send(HELLO)
    child.student.send({"cell_start": 0})
    child.student.send({"cell_done": 0, "output": "", "error": {"not": "a string"}})
    child.close = lambda: None
    monkeypatch.setattr(session, "_start", lambda jax_config: child)
    checks = [c for c in toy_assignment.checks if not c.needs_gpu and not c.jax_config]
    session.run_group((), checks)
    assert child.killed
    for check in checks:
        test = session.result["tests"][check.id]
        assert test["status"] == "failed" and "grading protocol" in test["message"]
    assert session.result["status"] == "graded" and session.result["message"] == ""


def test_fatal_before_the_cells_is_a_note_not_the_row_status(session):
    child = FakeChild()
    child.student.send({"fatal": "\x1b[31mOSError: mount failed\x1b[0m"})
    assert session._run_cells(child) is None
    assert session.result["status"] == "graded" and session.result["message"] == ""
    assert "sandbox could not run" in session.aborted and "\x1b" not in session.aborted


def test_control_characters_and_sizes_are_cleaned(session):
    child = FakeChild()
    child.student.send({"hello": "ns\x1b]0;pwned\x07" + "x" * 5000})
    child.student.send({"cell_start": 0})
    # (Sizes below the socket's buffer: nothing reads until _run_cells runs.)
    child.student.send({"cell_done": 0, "output": "\x1b[2Jhi\r\u202eevil" + "y" * 30_000,
                        "error": "E\x1b[0m" * 300})
    child.student.send({"ready": ["\x1b[31m" + "n" * 1000] * 60, "config": []})
    changed = session._run_cells(child)
    assert len(changed) == 50 and all(len(c) <= 200 and "\x1b" not in c for c in changed)
    assert len(session.result["isolation"]) <= 300 and "\x1b" not in session.result["isolation"]
    cell = session.result["cells"][session.position[0]]
    assert "\x1b" not in cell["output"] and "\r" not in cell["output"]
    assert "\u202e" not in cell["output"] and len(cell["output"]) < 25_000
    assert len(cell["error"]) <= 1000 and "\x1b" not in cell["error"]


def test_oversized_and_malformed_frames(session):
    child = FakeChild()
    child.student.send(HELLO)
    child.student.send({"cell_start": 0})
    # A header announcing more than a frame may hold: refused before anything is read.
    child.theirs.sendall(struct.pack(">I", MAX_FRAME + 1) + b"\0" * 32)
    assert session._run_cells(child) is None and child.killed
    assert "channel" in session.result["cells"][session.position[0]]["error"]
    with pytest.raises(ValueError, match="limit"):
        child.student.send({"output": "x" * (MAX_FRAME + 10)})
    nested: list = []
    for _ in range(200):
        nested = [nested]
    # Plain data has one definition (autograder.student.plain): the student's side cannot even
    # encode what the grader's side would refuse.
    deep = FakeChild()
    deep.student.send(HELLO)
    with pytest.raises(TypeError, match="nested too deeply"):
        deep.student.send(nested)


def _probe_reply(session, toy_assignment, reply):
    check = next(c for c in toy_assignment.checks if c.id == "toy.impl.eager")
    child = FakeChild()
    child.student.send(reply)
    inputs = {"x": __import__("numpy").ones(3, "float32")}
    alive = session._probe(child, check, (inputs, inputs["x"]))
    return alive, session.result["tests"].get(check.id)


@pytest.mark.parametrize("reply", [
    {"check": "toy.impl.eager", "tampered": [], "raised": 5, "message": ""},
    {"check": "toy.abstract.jit", "tampered": [], "value": 1.0},
    {"check": "toy.impl.eager", "tampered": [], "value": 1.0, "passed": True},
    {"check": "toy.impl.eager", "tampered": "none", "value": 1.0},
    {"check": "toy.impl.eager", "value": 1.0},
    {"check": "toy.impl.eager", "tampered": [], "raised": "E", "message": None},
    {"hello": "again"},
    "passed",
], ids=str)
def test_malformed_probe_answers_are_refused(session, toy_assignment, reply):
    with pytest.raises(ProtocolError):
        _probe_reply(session, toy_assignment, reply)


def test_a_reported_change_fails_the_check(session, toy_assignment):
    x = __import__("numpy").ones(3, "float32")
    alive, test = _probe_reply(session, toy_assignment, {
        "check": "toy.impl.eager", "tampered": ["changed numpy.allclose"], "value": x})
    assert alive and test["status"] == "failed" and "TAMPERING" in test["message"]
    alive, test = _probe_reply(session, toy_assignment, {
        "check": "toy.impl.eager", "tampered": [], "value": x})
    assert alive and test["status"] == "passed"


def test_uid_blocks_differ_between_workers():
    first, second = _UidBlock(1_000_000), _UidBlock(1_000_000)
    uids = {first.take(), first.take(), second.take()}
    assert len(uids) == 3 and abs(first.base - second.base) >= runner.UID_BLOCK


def test_one_cgroup_caps_all_processes_of_a_submission():
    """The keeper joins the submission's cgroup before it forks, as this child does; forked
    children then share one memory limit (RLIMIT_AS alone is per process)."""
    cgroups = runner._Cgroups.find()
    if cgroups is None:
        pytest.skip("no writable cgroup here: the per-process limits are all there is")
    dirs = cgroups.make(Limits(memory_mb=384, nproc=64))
    try:
        hogs = hostile.FORKED_HOGS.replace("900 << 20", "160 << 20")
        join = "import os, sys\nfor p in sys.argv[1:]:\n    open(p, 'w').write(str(os.getpid()))\n"
        proc = subprocess.run([sys.executable, "-c", join + hogs,
                               *[str(d / "cgroup.procs") for d in dirs]],
                              capture_output=True, text=True, timeout=300, check=False)
    finally:
        runner._Cgroups.destroy(dirs)
    assert "hogs killed:" in proc.stdout, proc.stderr[-2000:]
    assert "hogs killed: 0" not in proc.stdout  # 4 x 160 MiB do not fit in 384 MiB together
    assert not any(d.exists() for d in dirs)
