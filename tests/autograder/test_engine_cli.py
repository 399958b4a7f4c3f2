"""The command layer: usage errors, the demo command, the no-namespace fallback."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import hostile
from engine_helpers import FIXTURES, REPO, TOY_ROOT, grade_command, read_grades

from autograder.cli import parser
from autograder.instructor.demo import demo


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
    assert parser().parse_args(["demo"]).func.__name__ == "_demo"


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
