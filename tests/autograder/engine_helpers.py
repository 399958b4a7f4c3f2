"""Helpers of the engine tests: the toy course under tests/fixtures and the real command."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
TOY_ROOT = FIXTURES / "toy_course"
if str(FIXTURES) not in sys.path:
    sys.path.insert(0, str(FIXTURES))

# Short cell limit so the infinite-loop cases stay cheap; a fixed seed for reproducible inputs.
# The hostile class tests the walls behind the cell policy, so its cells run unchecked
# (tests/autograder/test_policy_grading.py grades with the policy on).
GRADE_OPTIONS = ("--root", str(TOY_ROOT), "--package", "toygrader", "--seed", "engine-tests",
                 "--cell-timeout", "10", "--workers", "2", "--no-progress", "--no-cell-policy")


def grade_args(submitted: Path, out: Path, *extra: str, assignment: str = "toy") -> list[str]:
    return [sys.executable, "-m", "autograder", "grade", assignment, str(submitted), "--out",
            str(out), "--db", f"sqlite:///{out.parent / (out.name + '-gradebook.db')}",
            *GRADE_OPTIONS, *extra]


def grade_env(env: dict | None = None) -> dict:
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), str(FIXTURES)]), **(env or {}))


def grade_command(submitted: Path, out: Path, *extra: str, env: dict | None = None,
                  assignment: str = "toy", timeout: float = 600) -> subprocess.CompletedProcess:
    """``python -m autograder grade`` on the toy course, as an instructor would run it."""
    return subprocess.run(grade_args(submitted, out, *extra, assignment=assignment), check=False,
                          capture_output=True, text=True, env=grade_env(env), timeout=timeout,
                          cwd=REPO)


def read_grades(out: Path) -> dict[str, dict]:
    with open(out / "grades.csv", newline="") as f:
        return {row["student_id"]: row for row in csv.DictReader(f)}


def read_result(out: Path, student: str) -> dict:
    return json.loads((out / "results" / f"{student}.json").read_text())
