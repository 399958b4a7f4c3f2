"""Feedback handed back through nbgrader: ``python -m autograder feedback ASSIGNMENT SUBMITTED
OUT`` lays the feedback pages of a graded OUT out as nbgrader's ``generate_feedback`` would,
``<feedback folder>/<student>/<assignment>/<notebook>.html`` (the course's nbgrader_config.py
names the folder: ``_build/nbgrader/feedback``) beside the submission's
``timestamp.txt`` and ``submission_secret.txt``, so that ``nbgrader release_feedback`` sends them
and students fetch them with ``nbgrader fetch_feedback``."""

from __future__ import annotations

from pathlib import Path

from autograder.grade import record
from autograder.grade.record import write_atomic
from autograder.limits import UsageError
from autograder.results import StudentStatus
from autograder.worker import submission
from autograder.worker.normalise import NotebookError

# What nbgrader's release_feedback reads beside each page (the secret names the page it sends).
_BESIDE = ("timestamp.txt", "submission_secret.txt")


def lay_out(*, assignment: str, notebook: str, submitted: Path, graded: Path,
            dest: Path) -> list[str]:
    """Copy each student's feedback page from ``graded`` (a `grade` OUT) into ``dest`` (the
    course's feedback folder); the students whose page was laid out."""
    if not (graded / "grades.csv").is_file():
        raise UsageError(f"{graded} holds no grades.csv (run `grade` first)")
    done = []
    for row in record.read_grades(graded):
        if row["assignment"] != assignment or row["status"] == StudentStatus.MISSING:
            continue
        student = row["student_id"]
        page = graded / "feedback" / f"{record.safe_filename(student)}.html"
        source = submitted / student / assignment
        # A student id that is not a plain folder name has no place in nbgrader's tree.
        # A linked assignment folder is another's (the grader read no notebook through it).
        if (not page.is_file() or record.safe_filename(student) != student
                or not source.is_dir() or source.is_symlink()):
            continue
        folder = dest / student / assignment
        folder.mkdir(parents=True, exist_ok=True)
        write_atomic(folder / f"{Path(notebook).stem}.html", page.read_text(encoding="utf-8"))
        for name in _BESIDE:
            # Read as the grader reads the notebook (never through a link, the assignment
            # folder's included): a folder linked to another student's would hand this page
            # out under that student's secret, in place of theirs.
            try:
                data = submission.read_beside(source, name)
            except NotebookError:
                data = None
            if data is not None:
                write_atomic(folder / name, data)
        done.append(student)
    return done
