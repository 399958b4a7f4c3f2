"""Grading inputs depend on the course secret and the check alone: every student, whatever code
they hand in, meets the same inputs (one grade per code, by construction), another secret draws
new ones, and grading the same file again gives byte-identical output. The draws are made once
per worker and each submission gets its own copy; no message shows a drawn value."""

from __future__ import annotations

import copy
import dataclasses
import json
import time

import numpy as np
import pytest
import toy_notebooks
from engine_helpers import grade_command, read_result

from autograder.assignments.ps1_primitives.checks import ASSIGNMENT
from autograder.grade.grading import load_assignment
from autograder.instructor.demo import assignment_names
from autograder.limits import Limits
from autograder.student.channel import MAX_FRAME, encode
from autograder.worker import runner
from autograder.worker.hidden import hidden_numbers
from autograder.worker.normalise import normalise, read_release
from autograder.worker.runner import Config, input_seed

RELEASE = read_release(toy_notebooks.RELEASE)
ASSIGNMENTS = assignment_names("autograder.assignments")


def _notebook(nb: dict):
    return normalise(json.dumps(nb).encode(), RELEASE)


def _inputs(check, secret: bytes = b"course secret"):
    return check.make_inputs(np.random.default_rng(input_seed(secret, check.id)))


def _same(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)
    return a == b


def test_another_course_secret_draws_new_inputs():
    for check in ASSIGNMENT.checks:  # inputs of every kind of check move with the secret
        assert not _same(_inputs(check), _inputs(check, b"another secret")), check.id
        assert _same(_inputs(check), _inputs(check)), check.id


def _session(student_nb: dict, secret: bytes = b"course secret") -> runner._Session:
    """The runner's view of one submission, as grade_notebook builds it (no child started)."""
    runner._state["config"] = Config(package="autograder.assignments", assignment="ps1_primitives",
                                     release_cells=RELEASE, limits=Limits(), secret=secret,
                                     hide=[], keep=[])
    data = json.dumps(student_nb).encode()
    result = {"student_id": "s", "status": "graded", "message": "", "notes": [], "tests": {},
              "isolation": "", "check_seconds": 0.0, "cells": []}
    return runner._Session("toy.ipynb", data, _notebook(student_nb), result, time.monotonic())


def _counted(checks, calls: list) -> list:
    """The checks with an ``expect`` that records its call and computes nothing (the draw is
    what is compared; real JAX would cost minutes over every assignment)."""
    def expect(inputs, check_id):
        calls.append(check_id)
        return {"drawn": copy.deepcopy(inputs)}
    return [dataclasses.replace(c, expect=lambda inputs, i=c.id: expect(inputs, i))
            for c in checks]


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_the_runner_draws_the_same_inputs_for_every_student_and_code(assignment, monkeypatch):
    """Every check of every assignment: the inputs ``_Session._expectations`` hands out are the
    same for two submissions of different code (and the runner knows no student id), drawn
    afresh for each; with the draws kept (one worker), ``expect`` runs once per check and each
    submission gets a copy no judge can change for the next."""
    monkeypatch.setattr(runner, "_PREPARED", {})
    spec = load_assignment(assignment, "autograder.assignments")
    calls: list = []
    groups: dict[tuple, list] = {}
    for check in _counted(spec.checks, calls):
        groups.setdefault(tuple(check.jax_config), []).append(check)
    full = toy_notebooks.submission(toy_notebooks.FULL)
    other = toy_notebooks.submission({"impl": "# toy.impl\ndef square_impl(x):\n    return x*x  \n"})
    drawn = []
    for nb in (full, other):
        runner._PREPARED.clear()  # a fresh worker: drawn again, not served from the first
        session = _session(nb)
        drawn.append({key: session._expectations(key, checks) for key, checks in groups.items()})
        assert session.result["tests"] == {}  # no check failed to be prepared
    assert _same(drawn[0], drawn[1])
    runner._PREPARED.clear()
    calls.clear()
    first = {key: _session(full)._expectations(key, checks) for key, checks in groups.items()}
    for prepared in first.values():  # a judge that mutates what it was given
        for inputs, expected in prepared.values():
            inputs.clear()
            expected["drawn"] = None
    again = {key: _session(other)._expectations(key, checks) for key, checks in groups.items()}
    assert _same(again, drawn[0])
    assert sorted(calls) == sorted(c.id for c in spec.checks)  # once each, for both


def test_the_kept_draws_belong_to_one_secret(monkeypatch):
    monkeypatch.setattr(runner, "_PREPARED", {})
    checks = _counted(ASSIGNMENT.checks[:3], [])
    one = _session(toy_notebooks.submission())._expectations((), checks)
    two = _session(toy_notebooks.submission(), b"another secret")._expectations((), checks)
    assert one.keys() == two.keys() and not any(_same(one[k], two[k]) for k in one)


def test_grading_the_same_file_twice_is_byte_identical(tmp_path):
    students = {"full": toy_notebooks.submission(toy_notebooks.FULL),
                "partial": toy_notebooks.submission({"impl": True}),
                "untouched": toy_notebooks.submission(),
                # Puts the values it is handed into its error, for the feedback to show.
                "echo": toy_notebooks.submission({**toy_notebooks.FULL, "impl": ECHO})}
    outs = []
    for run in ("first", "second"):
        submitted = tmp_path / run / "submitted"
        for student, nb in students.items():
            folder = submitted / student / "toy"
            folder.mkdir(parents=True)
            (folder / "toy.ipynb").write_text(json.dumps(nb))
        out = tmp_path / run / "out"
        proc = grade_command(submitted, out)
        assert proc.returncode == 0, proc.stderr[-2000:]
        outs.append(out)
    files = sorted(p.relative_to(outs[0]) for p in outs[0].rglob("*") if p.is_file())
    assert {"grades.csv", "summary.html", "similarity.html"} <= {str(f) for f in files}
    # grades.csv, the summary and the similarity page; per student a results file, a feedback page and the side
    # file a rerun reads (.resume/<student>.json: its digest, status and message).
    assert len(files) == 3 + 3 * len(students)
    assert sum(f.parts[0] == ".resume" for f in files) == len(students)
    for name in files:
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes(), name
    # The echo's error reached the feedback without the hidden values it printed.
    spec = load_assignment("toy", "toygrader")
    tests = {t["name"]: t for t in read_result(outs[0], "echo")["tests"]}
    shown = 0
    for check in spec.checks:
        message = next(t["message"] for name, t in tests.items() if check.id in name)
        if "hidden" in message:
            shown += 1
            assert "raised ValueError: hidden " in message, message
            values = hidden_numbers(_inputs(check, b"engine-tests"))
            assert values.size and not any(repr(v) in message for v in values.tolist()), message
            assert "…" in message
    assert shown >= 2  # eager, and under grad (square_impl evaluates the primal)


ECHO = """\
# toy.impl
def square_impl(x):
    raise ValueError(f"hidden {[float(v) for v in x.ravel()]}")


square_p.def_impl(square_impl)
"""


@pytest.mark.parametrize("assignment", assignment_names("autograder.assignments"))
def test_every_request_fits_in_one_frame(assignment):
    """A check's inputs travel to the student's process in one frame of at most MAX_FRAME bytes;
    a larger one is the grader's own error and fails the whole submission. GPU checks included:
    no GPU is needed to draw their inputs, and ps5's speed check once sent 64 MiB."""
    spec = load_assignment(assignment, "autograder.assignments")
    for check in spec.checks:
        for seed in range(40):
            inputs = check.make_inputs(np.random.default_rng(seed))
            size = len(encode({"check": check.id, "probe": check.probe, "inputs": inputs}))
            assert size <= MAX_FRAME, (check.id, seed, size)
