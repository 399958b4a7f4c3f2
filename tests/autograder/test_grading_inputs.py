"""Grading inputs depend on the course secret, the student and the submission's code: one changed
character draws new inputs, while grading the same file again gives byte-identical output."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
import toy_notebooks
from engine_helpers import grade_command

from autograder.assignments.ps1_primitives.checks import ASSIGNMENT
from autograder.grade.grading import load_assignment
from autograder.instructor.demo import assignment_names
from autograder.student.channel import MAX_FRAME, encode
from autograder.worker.normalise import normalise, read_release
from autograder.worker.runner import code_digest, input_seed

RELEASE = read_release(toy_notebooks.RELEASE)


def _notebook(nb: dict):
    return normalise(json.dumps(nb).encode(), RELEASE)


def _with_source(nb: dict, grade_id: str, source: str) -> dict:
    nb = copy.deepcopy(nb)
    for cell in nb["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("grade_id") == grade_id:
            cell["source"] = source
    return nb


def _inputs(check, code: str):
    rng = np.random.default_rng(input_seed(b"course secret", "alice", check.id, code))
    return check.make_inputs(rng)


def _same(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b)
    return a == b


def test_one_changed_character_draws_new_inputs():
    full = toy_notebooks.submission(toy_notebooks.FULL)
    source = "".join(next(c["source"] for c in full["cells"]
                          if c["metadata"].get("nbgrader", {}).get("grade_id") == "impl"))
    edited = _with_source(full, "impl", source.replace("x", "x ", 1))
    a, b = code_digest(_notebook(full)), code_digest(_notebook(edited))
    assert a != b
    for check in ASSIGNMENT.checks:  # inputs of every kind of check move with the code
        assert not _same(_inputs(check, a), _inputs(check, b)), check.id
        assert _same(_inputs(check, a), _inputs(check, a)), check.id


def test_outputs_and_markdown_do_not_change_the_inputs():
    full = toy_notebooks.submission(toy_notebooks.FULL)
    run = copy.deepcopy(full)
    for cell in run["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "ran\n"}]
            cell["execution_count"] = 7
        else:
            cell["source"] = "# Rewritten notes\n"
    assert code_digest(_notebook(full)) == code_digest(_notebook(run))


def test_grading_the_same_file_twice_is_byte_identical(tmp_path):
    students = {"full": toy_notebooks.submission(toy_notebooks.FULL),
                "partial": toy_notebooks.submission({"impl": True}),
                "untouched": toy_notebooks.submission()}
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
    assert {"grades.csv", "summary.html"} <= {str(f) for f in files}
    assert len(files) == 2 + 2 * len(students)
    for name in files:
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes(), name


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
