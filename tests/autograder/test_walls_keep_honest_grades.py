"""The walls against hostile notebooks change no honest grade (issue 26's last "Done means").

A demo class (tests/conftest.py's ``demo_out`` graded it once for the session, every wall on) is
graded again by the real command with the walls that can be switched off switched off, both at
once (in ``make test``) and, with ``--stability``, each alone:

- ``--no-cell-policy``: the allowlist cell policy (autograder/worker/policy.py: the AST
  constructs, class dunders, builtins and library calls a cell may use, the per-task banned
  calls) and its run-time guards (``type()``, ``functools.wraps``, format strings, NumPy's
  foreign-buffer constructors);
- ``--no-namespaces``: the student's namespaces, and with them the root of its own
  (``pivot_root``) that hides the mount table's paths.

No demo student uses a construct the policy refuses, so ``grades.csv``, every results JSON and
every feedback page (but for the times a notebook prints itself) must come out byte-identical.
ps4_core's class is the cheapest (seconds a notebook) and runs in ``make test`` with both walls
off; every class with each wall off runs with ``--stability`` (``make test-stability
ARGS=<this file>``: about 20 minutes on the 2-core machine). The walls that cannot be switched
off (the guard that compares by content, the per-student output steps) were compared across the
commits that brought them in (benchmarks/README.md, "The walls and honest grades").
"""

from __future__ import annotations

import pytest
from same_outputs import grade_class, same_tree

from autograder.course import assignment_names

BOTH_OFF = ("--no-cell-policy", "--no-namespaces")
ASSIGNMENTS = assignment_names("autograder.assignments")
CASES = [pytest.param("ps4_core", BOTH_OFF, id="ps4_core-both-walls-off")] + [
    pytest.param(name, (flag,), marks=pytest.mark.stability, id=f"{name}{flag}")
    for name in ASSIGNMENTS for flag in BOTH_OFF]
pytestmark = pytest.mark.timeout(1800)


@pytest.mark.parametrize("name, flags", CASES)
def test_an_honest_class_grades_the_same_with_the_walls_off(demo_out, tmp_path, name, flags):
    walls_on = demo_out / name / "graded"
    walls_off = tmp_path / "_".join(flag.lstrip("-") for flag in flags)
    proc = grade_class(name, demo_out / name / "submitted", walls_off, *flags, timeout=1500)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert same_tree(walls_on, walls_off) == []
    # The comparison compared something: every student of the class has a results file.
    students = sorted(p.name for p in (demo_out / name / "submitted").iterdir())
    assert len(list((walls_off / "results").iterdir())) == len(students) > 1
