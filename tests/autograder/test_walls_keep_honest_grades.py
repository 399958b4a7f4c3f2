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
ARGS=<this file>``: about 20 minutes on the 2-core machine). The walls that cannot be switched off (the guard that compares by content,
the per-student output steps) were compared across the commits that brought them in
(benchmarks/README.md, "The walls and honest grades").
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from same_outputs import same_tree

REPO = Path(__file__).resolve().parents[2]
BOTH_OFF = ("--no-cell-policy", "--no-namespaces")
ASSIGNMENTS = ("ps1_primitives", "ps2_autodidax", "ps3_pitfalls", "ps4_core", "ps5_kernels")
CASES = [pytest.param("ps4_core", BOTH_OFF, id="ps4_core-both-walls-off")] + [
    pytest.param(name, (flag,), marks=pytest.mark.stability, id=f"{name}{flag}")
    for name in ASSIGNMENTS for flag in BOTH_OFF]
pytestmark = pytest.mark.timeout(1800)


def _grade_without(name: str, submitted: Path, base: Path, flags: tuple[str, ...]) -> Path:
    out = base / "_".join(flag.lstrip("-") for flag in flags)
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    proc = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", name, str(submitted), "--out", str(out),
         "--db", f"sqlite:///{base / (out.name + '.db')}", "--no-progress", *flags],
        check=False, cwd=REPO, env=env, capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out


@pytest.mark.parametrize("name, flags", CASES)
def test_an_honest_class_grades_the_same_with_the_walls_off(demo_out, tmp_path, name, flags):
    walls_on = demo_out / name / "graded"
    walls_off = _grade_without(name, demo_out / name / "submitted", tmp_path, flags)
    assert same_tree(walls_on, walls_off) == []
    # The comparison compared something: every student of the class has a results file.
    students = sorted(p.name for p in (demo_out / name / "submitted").iterdir())
    assert len(list((walls_off / "results").iterdir())) == len(students) > 1
