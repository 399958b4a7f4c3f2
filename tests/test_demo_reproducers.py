"""The reproducers of the demo classes' feedback do what they say, run as a student would run
them: in a fresh kernel after the student's own cells, each snippet shown under a failed check
raises; after the reference solution's cells (the student's rules replaced by the reference's),
every snippet of the assignment runs to the end.

The demo classes are graded once per session by the real command (tests/conftest.py, with a
limit of its own added to these tests' limit).
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from reproducer_kernel import run_after

from autograder.grade import reproduce
from autograder.grade.grading import load_assignment
from autograder.instructor.classroom import make_submission, solution_sources
from autograder.instructor.demo import assignment_names

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENTS = assignment_names("autograder.assignments")
# A test runs a kernel per notebook (ps5's compile C++ in it), each cell limited to 300 s.
pytestmark = pytest.mark.timeout(2400)


def _failed(graded, student: str, spec) -> list[str]:
    result = json.loads((graded / "results" / f"{student}.json").read_text())
    by_name = {f"{c.id}: {c.description}": c for c in spec.checks}
    return [by_name[t["name"]].id for t in result["tests"]
            if t["status"] in ("failed", "error") and not by_name[t["name"]].needs_gpu]


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_every_snippet_passes_after_the_reference(name):
    spec = load_assignment(name, "autograder.assignments")
    codes = {c.id: reproduce.reproducer(name, c.id) for c in spec.checks if not c.needs_gpu}
    assert None not in codes.values(), [k for k, v in codes.items() if v is None]
    reference = make_submission(name, solution_sources(name, root=ROOT), root=ROOT)
    raised = {k: v for k, v in run_after(reference, codes).items() if v is not None}
    assert raised == {}, raised


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_each_failed_checks_snippet_fails_after_the_students_cells(name, demo_out):
    spec = load_assignment(name, "autograder.assignments")
    graded, submitted = demo_out / name / "graded", demo_out / name / "submitted"
    wrong = {}
    for result in sorted((graded / "results").glob("*.json")):
        student = result.stem
        failed = _failed(graded, student, spec)
        if student == "broken" or not failed:
            continue
        nb = nbformat.read(submitted / student / name / spec.notebook, as_version=4)
        shown = {c: reproduce.reproducer(name, c) for c in failed}
        passed = [c for c, err in run_after(nb, shown).items() if err is None]
        if passed:
            wrong[student] = passed
    assert wrong == {}, f"snippets that pass although their check failed: {wrong}"
