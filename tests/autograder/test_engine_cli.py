"""The command layer: usage errors, the demo command, the no-namespace fallback, and `grade`'s
exit status when the grader itself failed on every submission."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import hostile
import pytest
from engine_helpers import FIXTURES, REPO, TOY_ROOT, grade_command, read_grades

from autograder.cli import parser
from autograder.grade.grading import GradeRun, failed_by_grader
from autograder.instructor.demo import demo
from autograder.results import (
    GRADER_FAILED,
    GRADER_FAILED_EXIT,
    PREPARE_FAILED,
    RECORD_FAILED,
    Status,
    StudentStatus,
)


def run_cli(*args):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), str(FIXTURES)]))
    return subprocess.run([sys.executable, "-m", "autograder", *args], check=False,
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=300)


def test_unknown_assignment_is_a_usage_error(tmp_path):
    proc = run_cli("grade", "no_such_assignment", str(tmp_path), "--out", str(tmp_path / "o"))
    assert proc.returncode == 2 and "unknown assignment" in proc.stderr


def test_missing_submission_dir_is_a_usage_error(tmp_path):
    proc = run_cli("grade", "toy", str(tmp_path / "missing"), "--out", str(tmp_path / "o"),
                   "--root", str(TOY_ROOT), "--package", "toygrader")
    assert proc.returncode == 2 and "not found" in proc.stderr


def test_missing_arguments_exit_2():
    assert run_cli("grade").returncode == 2


def test_commands_are_wired():
    args = parser().parse_args(["grade", "toy", "sub", "--out", "o", "--workers", "3"])
    assert args.workers == 3 and args.func.__name__ == "_grade"
    assert parser().parse_args(["release"]).func.__name__ == "_release"
    assert parser().parse_args(["release"]).assignment == []  # all of them
    assert parser().parse_args(["release", "ps1_primitives", "ps4_core"]).assignment == [
        "ps1_primitives", "ps4_core"]
    assert parser().parse_args(["demo"]).func.__name__ == "_demo"
    assert parser().parse_args(["feedback", "toy", "sub", "out"]).func.__name__ == "_feedback"
    assert parser().parse_args(["grade", "toy", "sub", "--out", "o", "--regrade-all"]).regrade_all


def test_demo_builds_and_grades_a_class(tmp_path, capsys):
    def make_class(assignment, dest, *, root):
        assert assignment == "toy" and root == TOY_ROOT
        chosen = {k: v for k, v in hostile.cases([]).items()
                  if k in ("honest_full", "honest_untouched", "bad_json")}
        return hostile.write_class(dest, chosen)

    runs = demo(root=TOY_ROOT, out=tmp_path, assignments=["toy"], package="toygrader",
                workers=2, make_class=make_class)
    table = capsys.readouterr().out
    assert "honest_full" in table and "5/5" in table and "error" in table
    scores = {r["student_id"]: r["score"] for r in runs[0].rows}
    assert scores == {"bad_json": 0.0, "honest_full": 5.0, "honest_untouched": 0.0}


def test_without_namespaces_grades_stay_exact(tmp_path):
    """Where namespaces are unavailable the limits, the channel and the guard still hold."""
    chosen = {k: v for k, v in hostile.cases([]).items()
              if k in ("honest_full", "honest_wrong_jvp", "patch_numpy", "os_exit")}
    submitted = hostile.write_class(tmp_path / "submitted", chosen)
    proc = grade_command(submitted, tmp_path / "out", "--no-namespaces")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "no namespaces (disabled)" in proc.stdout
    grades = read_grades(tmp_path / "out")
    assert {k: float(v["score"]) for k, v in grades.items()} == {k: v[1] for k, v in
                                                                 chosen.items()}
    assert json.loads((tmp_path / "out" / "results" / "os_exit.json").read_text())["score"] == 5


def _check(status: Status, message: str) -> dict:
    return {"name": "c", "points": 0.0, "max_points": 1.0, "status": status, "message": message}


def _submission(status: StudentStatus, message: str, *checks: dict) -> tuple[dict, dict]:
    row = {"student_id": "s", "assignment": "toy", "score": 0.0, "max_score": 1.0,
           "status": status, "message": message}
    return row, {"tests": {f"c{i}": c for i, c in enumerate(checks)}}


GRADER_SIDE = {
    "its worker failed": _submission(
        StudentStatus.ERROR, f"{GRADER_FAILED} (TypeError: float32 is not plain data)",
        _check(Status.ERROR, f"not graded: {GRADER_FAILED} (TypeError: ...)")),
    "its records could not be written": _submission(
        StudentStatus.ERROR, f"{RECORD_FAILED} (OSError: disk full)",
        _check(Status.PASSED, "")),
    "every check that ran could not be prepared": _submission(
        StudentStatus.GRADED, "0 of 2 checks passed",
        _check(Status.ERROR, f"{PREPARE_FAILED}: KeyError"),
        _check(Status.ERROR, f"{PREPARE_FAILED}: ValueError"),
        _check(Status.NOT_RUN, "not run: this check needs a GPU")),
}
OWN_FAILURE = {
    "a wrong answer": _submission(StudentStatus.GRADED, "0 of 1 checks passed",
                                  _check(Status.FAILED, "expected 2.0, got 3.0")),
    "a notebook that is not JSON": _submission(
        StudentStatus.ERROR, "the notebook is not valid JSON",
        _check(Status.ERROR, "not graded: the notebook is not valid JSON")),
    "a time limit": _submission(StudentStatus.GRADED, "0 of 1 checks passed",
                                _check(Status.ERROR, "stopped by its time limit twice")),
    "one check prepared, one not": _submission(
        StudentStatus.GRADED, "0 of 2 checks passed",
        _check(Status.ERROR, f"{PREPARE_FAILED}: KeyError"),
        _check(Status.FAILED, "expected 2.0, got 3.0")),
}


@pytest.mark.parametrize("case", sorted(GRADER_SIDE))
def test_a_grader_side_failure_is_told_from_the_submissions_own(case):
    assert failed_by_grader(*GRADER_SIDE[case])


@pytest.mark.parametrize("case", sorted(OWN_FAILURE))
def test_a_submissions_own_failure_is_not_the_graders(case):
    assert not failed_by_grader(*OWN_FAILURE[case])


def test_only_a_run_where_every_submission_failed_by_the_grader_says_so(tmp_path):
    def run(failures: dict, students: int) -> GradeRun:
        return GradeRun([], 1.0, 0.0, "", tmp_path, {f"s{i}": {} for i in range(students)},
                        failures)

    assert run({"s0": "x", "s1": "y"}, 2).grader_failed_all
    assert not run({"s0": "x"}, 2).grader_failed_all
    assert not run({}, 0).grader_failed_all  # an empty class was graded


def test_grade_exits_3_when_the_grader_fails_on_every_submission(tmp_path):
    """The issue's trial: inputs with a NumPy scalar fail every submission (the worker's send
    refuses them); the outputs are still written, and the command says why and exits 3."""
    assert GRADER_FAILED_EXIT == 3
    chosen = {k: v for k, v in hostile.cases([]).items() if k in ("honest_full", "honest_untouched")}
    submitted = hostile.write_class(tmp_path / "submitted", chosen)
    broken = grade_command(submitted, tmp_path / "broken", "--package", "toybroken")
    assert broken.returncode == GRADER_FAILED_EXIT, broken.stderr[-3000:]
    assert "every submission (2) failed for a grader-side reason" in broken.stderr
    assert "float32 is not plain data" in broken.stderr
    grades = read_grades(tmp_path / "broken")
    assert {row["status"] for row in grades.values()} == {"error"}
    assert all(row["message"].startswith(GRADER_FAILED) for row in grades.values())
    # The same class with the toy's own checks: one full score, one untouched notebook that
    # earns nothing; graded, so 0.
    graded = grade_command(submitted, tmp_path / "graded")
    assert graded.returncode == 0, graded.stderr[-3000:]
    assert {k: float(v["score"]) for k, v in read_grades(tmp_path / "graded").items()} == {
        "honest_full": 5.0, "honest_untouched": 0.0}


def test_grade_help_states_the_exit_statuses(capsys):
    with pytest.raises(SystemExit):
        parser().parse_args(["grade", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert f"{GRADER_FAILED_EXIT} when every submission failed for a grader-side reason" in text
    assert "2 on a usage error" in text and "0 when the class was graded" in text
