"""Feedback handed back through nbgrader: `feedback` lays a graded OUT's pages out as
nbgrader's generate_feedback does, and `nbgrader release_feedback` sends them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from autograder.cli import main
from autograder.grade import record

ASSIGNMENT = "ps_demo"


def _graded(tmp_path: Path) -> tuple[Path, Path, Path]:
    root = tmp_path / "course"
    (root / "assignments" / ASSIGNMENT).mkdir(parents=True)
    (root / "assignments" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").write_text("{}")
    submitted, out = root / "submitted", tmp_path / "out"
    (out / "feedback").mkdir(parents=True)
    rows = []
    for student, status in (("alice", "graded"), ("bob", "error"), ("zoe", "missing")):
        rows.append({"student_id": student, "assignment": ASSIGNMENT, "score": 1.0,
                     "max_score": 2.0, "status": status, "message": ""})
        if status == "missing":
            continue
        folder = submitted / student / ASSIGNMENT
        folder.mkdir(parents=True)
        (folder / "timestamp.txt").write_text("2026-11-20 12:00:00.000000 UTC")
        (folder / "submission_secret.txt").write_text(f"secret-of-{student}")
        (out / "feedback" / f"{student}.html").write_text(f"<p>page of {student}</p>")
    # mallory's assignment folder is a link to alice's (the grader read no notebook through it:
    # an `error` row); laid out, mallory's page would go out under alice's secret.
    rows.append({"student_id": "mallory", "assignment": ASSIGNMENT, "score": 0.0,
                 "max_score": 2.0, "status": "error", "message": "a symbolic link"})
    (submitted / "mallory").mkdir()
    (submitted / "mallory" / ASSIGNMENT).symlink_to(f"../alice/{ASSIGNMENT}")
    (out / "feedback" / "mallory.html").write_text("<p>page of mallory</p>")
    record.write_grades_csv(out, rows)
    return root, submitted, out


def test_feedback_is_laid_out_and_released_by_nbgrader(tmp_path, capsys):
    root, submitted, out = _graded(tmp_path)
    assert main(["feedback", ASSIGNMENT, str(submitted), str(out), "--root", str(root)]) == 0
    assert "feedback of 2 students" in capsys.readouterr().out
    page = root / "_build" / "nbgrader" / "feedback" / "alice" / ASSIGNMENT / f"{ASSIGNMENT}.html"
    assert page.read_text() == "<p>page of alice</p>"
    assert (page.parent / "submission_secret.txt").read_text() == "secret-of-alice"
    assert not (page.parents[1] / "zoe").exists()
    assert not (page.parents[1] / "mallory").exists()

    exchange = tmp_path / "exchange"
    exchange.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "nbgrader", "release_feedback", ASSIGNMENT, "--course=c",
         f"--Exchange.root={exchange}", f"--CourseDirectory.root={root}",
         "--CourseDirectory.feedback_directory=_build/nbgrader/feedback"],
        cwd=root, capture_output=True, text=True, check=False, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    from nbgrader.utils import notebook_hash

    for student in ("alice", "bob"):
        sent = exchange / "c" / "feedback" / (
            notebook_hash(secret=f"secret-of-{student}", notebook_id=ASSIGNMENT) + ".html")
        assert sent.read_text() == f"<p>page of {student}</p>", done.stderr[-3000:]


def test_feedback_needs_a_graded_out(tmp_path, capsys):
    root, submitted, _ = _graded(tmp_path)
    assert main(["feedback", ASSIGNMENT, str(submitted), str(tmp_path / "none"),
                 "--root", str(root)]) == 2
    assert "no grades.csv" in capsys.readouterr().err
