"""Record stage: grades.csv, results/<student>.json and nbgrader's gradebook.

Only the main process calls these, so the gradebook has a single writer.
"""

from __future__ import annotations

import csv
import hashlib
import importlib.util
import io
import json
import os
import re
import sys
import tempfile
import threading
import types
import warnings
from datetime import UTC, datetime
from pathlib import Path

from autograder.results import (
    GRADEBOOK_FAILED,
    CheckResult,
    ClassResult,
    GradeRow,
    ResultsFile,
    Status,
    StudentResult,
    StudentStatus,
)
from autograder.spec import Assignment
from autograder.text import clean_text
from autograder.worker.normalise import nbgrader_meta

# GradeRow's keys (autograder.results), in grades.csv's column order.
CSV_FIELDS = ("student_id", "assignment", "score", "max_score", "status", "message")
LATE_FIELDS = ("raw_score", "late_days", "late_penalty")
_SURROGATE = re.compile("[\ud800-\udfff]")
# Student ids used as file names unchanged: every ordinary id (and so every existing output).
_ORDINARY_ID = re.compile(r"[A-Za-z0-9_@+-][A-Za-z0-9._@+-]{0,99}")
_ORDINARY_CHAR = re.compile(r"[A-Za-z0-9._@+-]")
# OWASP's CSV injection rule: a spreadsheet runs a cell starting with these as a formula. A
# leading quote is escaped too, so that reading back (``csv_field_read``) is exact.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "'")


def valid_text(text: str) -> str:
    """``text`` as valid Unicode: a lone surrogate (from a student's output, markdown or a folder
    name that is not UTF-8) cannot be written as UTF-8, so it becomes U+FFFD; other text is kept."""
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


def valid(data):
    """``data`` (plain JSON-like data from a worker) with every string made ``valid_text``."""
    if isinstance(data, str):
        return valid_text(data)
    if isinstance(data, dict):
        return {valid(k): valid(v) for k, v in data.items()}
    if isinstance(data, list):
        return [valid(v) for v in data]
    if isinstance(data, tuple):
        return tuple(valid(v) for v in data)
    return data


def safe_filename(student_id: str) -> str:
    """The file name (without suffix) of a student's results and feedback: the id itself when it
    is an ordinary one; otherwise (too long for the file system, not UTF-8, a path part, a
    character a shell or a browser would read) a readable escape of it, cut short, and a hash of
    the whole id so that no two students share a file (``~`` is in no ordinary id)."""
    if _ORDINARY_ID.fullmatch(student_id):
        return student_id
    escaped = "".join(c if _ORDINARY_CHAR.match(c) else "".join(f"%{b:02X}" for b in _bytes(c))
                      for c in student_id[:60])
    escaped = escaped.replace(".", "%2E", 1) if escaped.startswith(".") else escaped
    digest = hashlib.sha256(student_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{escaped[:80]}~{digest}"


def _bytes(char: str) -> bytes:
    try:  # a folder name's byte that is not UTF-8 is the byte itself again (os.fsencode)
        return char.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return char.encode("utf-8", "surrogatepass")


def csv_field(text: str) -> str:
    """A text field of a CSV file we write, never read as a formula by a spreadsheet."""
    return "'" + text if text.startswith(_FORMULA_START) else text


def csv_field_read(text: str) -> str:
    """The text ``csv_field`` was given."""
    return text.removeprefix("'")


def read_grades(out: Path) -> list[dict]:
    """grades.csv's rows, each field as ``grade`` had it (record.csv_field undone)."""
    with open(Path(out) / "grades.csv", newline="", encoding="utf-8") as f:
        return [{k: csv_field_read(v) for k, v in row.items()} for row in csv.DictReader(f)]


def submission_error(student_id: str, why: str, err: BaseException) -> StudentResult:
    """The details of a submission no worker graded (``why``: who failed, in the student's
    words); every check it lacks becomes an ``error`` when the class is recorded
    (grading.grade). Built here alone, for the local pool and the Dask cluster."""
    return {"student_id": student_id, "status": StudentStatus.ERROR, "tests": {}, "cells": [],
            "notes": [],
            "message": f"{why} ({type(err).__name__}: {clean_text(str(err), 300)})"}


def score_of(tests: list[CheckResult]) -> tuple[float, float]:
    """(score, max_score); checks reported ``not-run`` are left out of the maximum."""
    score = sum(t["points"] for t in tests)
    max_score = sum(t["max_points"] for t in tests if t["status"] != Status.NOT_RUN)
    return round(score, 6), round(max_score, 6)


def results_json(student_id: str, assignment: str, tests: list[CheckResult]) -> ResultsFile:
    score, max_score = score_of(tests)
    return {"student_id": student_id, "assignment": assignment, "score": score,
            "max_score": max_score, "tests": tests}


def write_atomic(path: Path, text: str | bytes) -> None:
    """``path`` holds either its old content or all of ``text``, whenever the run is stopped."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        if isinstance(text, bytes):
            with os.fdopen(fd, "wb") as f:
                f.write(text)
        else:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
                f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# What a class's result carries beside its results file's keys: the grades.csv row's status and
# message (kept in resume's side file) and the checks by id.
_NOT_IN_RESULTS_FILE = ("status", "message", "tests_by_check")


def write_results(out: Path, result: ResultsFile, name: str | None = None) -> None:
    """``name``: the file's name, ``safe_filename`` of the student's id as found on disk."""
    path = out / "results" / f"{name or safe_filename(result['student_id'])}.json"
    kept = {k: v for k, v in result.items() if k not in _NOT_IN_RESULTS_FILE}
    write_atomic(path, json.dumps(kept, indent=2) + "\n")


def write_grades_csv(out: Path, rows: list[GradeRow], late: bool = False) -> None:
    """``late``: a late policy applies, so the score before the penalty is a column too."""
    fields = (*CSV_FIELDS, *LATE_FIELDS) if late else CSV_FIELDS
    text = io.StringIO(newline="")
    writer = csv.DictWriter(text, fieldnames=fields)
    writer.writeheader()
    for row in rows:
        writer.writerow({k: csv_field(row.get(k, "")) if isinstance(row.get(k, ""), str)
                         else row[k] for k in fields})
    write_atomic(out / "grades.csv", text.getvalue())


def _gradebook_api():
    """nbgrader.api's Gradebook and MissingEntry, without importing ``nbgrader/__init__.py``:
    that pulls in the Jupyter server extensions (seconds of imports) the gradebook never uses."""
    if "nbgrader" not in sys.modules:
        spec = importlib.util.find_spec("nbgrader")
        package = types.ModuleType("nbgrader")
        package.__path__ = list(spec.submodule_search_locations)
        package.__spec__ = spec
        sys.modules["nbgrader"] = package
    from nbgrader.api import Gradebook, MissingEntry

    return Gradebook, MissingEntry


def prepare_gradebook(db_url: str) -> threading.Thread:
    """Import nbgrader and create the gradebook's tables in a background thread, so the (slow)
    imports and nbgrader's ``alembic`` subprocess overlap with grading instead of following it.
    ``write_gradebook`` waits for it."""

    def work() -> None:
        from autograder.grade.stopping import shielded

        Gradebook, _ = _gradebook_api()
        _venv_on_path()
        # Ctrl-C is the main process's to handle (autograder.grade.stopping), not alembic's.
        with warnings.catch_warnings(), shielded():
            warnings.simplefilter("ignore")
            try:
                Gradebook(db_url).close()
            except Exception:  # noqa: BLE001 - write_gradebook opens it again and says why
                return

    thread = threading.Thread(target=work, name="gradebook", daemon=True)
    thread.start()
    return thread


def _venv_on_path() -> None:
    # nbgrader runs the `alembic` command next to the interpreter; the venv may not be on PATH.
    bindir = str(Path(sys.executable).parent)
    if bindir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = bindir + os.pathsep + os.environ.get("PATH", "")


def grade_cell_maxima(assignment: Assignment, results: list[ClassResult]) -> dict[str, float]:
    """Per grade cell that has checks, the points it can earn as the grader scores them
    (``score_of``): its checks' points, less those of checks that ran for no student of
    ``results`` (GPU checks where no GPU was seen: ``not-run``). The gradebook's maximum is then
    grades.csv's and Canvas's (52 for ps1 without a GPU, not the 54 of the notebook's points)."""
    ran = {check_id for r in results for check_id, t in r["tests_by_check"].items()
           if t["status"] != Status.NOT_RUN}
    maxima: dict[str, float] = {}
    for c in assignment.checks:
        counted = c.id in ran or not results
        maxima[c.grade_cell] = maxima.get(c.grade_cell, 0.0) + (float(c.points) if counted else 0)
    return {cell: round(points, 6) for cell, points in maxima.items()}


def write_gradebook(db_url: str, assignment: Assignment, release_cells: list[dict],
                    results: list[ClassResult], check_cells: dict[str, str], *,
                    duedate: datetime | None = None) -> dict[str, str]:
    """Per nbgrader grade cell, the sum of its checks' points, as the cell's auto_score.

    The assignment, notebook and grade cells are created from the release notebook's nbgrader
    metadata when absent, so ``nbgrader export`` and the formgrader work on the result; a grade
    cell's maximum is the grader's (``grade_cell_maxima``; the notebook's points for a cell no
    check counts toward). Each student is written on their own: the returned {student id: why}
    are those that failed, and the others' rows are written all the same. Under a late policy
    (``duedate``: the assignment's, aware) nbgrader's own late columns are filled: the
    assignment's due date, each submission's timestamp and extension, its notebook's
    ``late_submission_penalty`` in points, so that ``nbgrader export`` shows grades.csv's score.
    """
    Gradebook, MissingEntry = _gradebook_api()
    _venv_on_path()

    notebook = Path(assignment.notebook).stem
    maxima = grade_cell_maxima(assignment, results)
    grade_cells = {}
    for cell in release_cells:
        meta = nbgrader_meta(cell)
        if meta.get("grade") and meta.get("grade_id"):
            grade_cells[meta["grade_id"]] = (
                maxima.get(meta["grade_id"], float(meta.get("points", 0))),
                cell.get("cell_type", "code"))
    with warnings.catch_warnings(), Gradebook(db_url) as gb:
        # nbgrader's add_submission trips SQLAlchemy autoflush warnings; they are harmless.
        warnings.simplefilter("ignore")
        gb.update_or_create_assignment(assignment.name, duedate=_naive_utc(duedate))
        try:
            gb.find_notebook(notebook, assignment.name)
        except MissingEntry:
            gb.add_notebook(notebook, assignment.name)
        for grade_id, (points, cell_type) in grade_cells.items():
            gb.update_or_create_grade_cell(grade_id, notebook, assignment.name,
                                           max_score=points, cell_type=cell_type)
        failed = {}
        for result in results:
            try:
                _gradebook_row(gb, MissingEntry, assignment.name, notebook, grade_cells,
                               result, check_cells)
                _late_columns(gb, assignment.name, notebook, result, duedate)
            except Exception as err:  # noqa: BLE001 - one student's row must not stop the class
                gb.db.rollback()
                failed[result["student_id"]] = (
                    f"{GRADEBOOK_FAILED} ({type(err).__name__}: "
                    f"{clean_text(str(err), 300)})")
    return failed


def roster(db_url: str) -> list[str]:
    """The ids of nbgrader's students (its gradebook), sorted; [] when it has none."""
    Gradebook, _ = _gradebook_api()
    _venv_on_path()
    with warnings.catch_warnings(), Gradebook(db_url) as gb:
        warnings.simplefilter("ignore")
        return sorted(student.id for student in gb.students)


def _naive_utc(when: datetime | None) -> datetime | None:
    """nbgrader keeps times as naive UTC."""
    return None if when is None else when.astimezone(UTC).replace(tzinfo=None)


def _late_columns(gb, name: str, notebook: str, result: ClassResult,
                  duedate: datetime | None) -> None:
    submission = gb.find_submission(name, result["student_id"])
    stamp = result.get("submitted_at")
    submission.timestamp = _naive_utc(datetime.fromisoformat(stamp)) if stamp else None
    due = result.get("due")
    extension = (datetime.fromisoformat(due) - duedate) if due and duedate else None
    submission.extension = extension if extension else None
    raw = result.get("raw_score", result["score"])
    gb.find_submission_notebook(notebook, name, result["student_id"]).late_submission_penalty = (
        round(float(raw) - float(result["score"]), 6))
    gb.db.commit()


def _gradebook_row(gb, MissingEntry, name: str, notebook: str, grade_cells: dict,
                   result: ClassResult,
                   check_cells: dict[str, str]) -> None:
    student = result["student_id"]
    try:
        gb.find_student(student)
    except MissingEntry:
        gb.add_student(student)
    try:
        gb.find_submission(name, student)
    except MissingEntry:
        gb.add_submission(name, student)
    per_cell = dict.fromkeys(grade_cells, 0.0)
    for check_id, test in result["tests_by_check"].items():
        cell = check_cells.get(check_id)
        if cell in per_cell:
            per_cell[cell] += test["points"]
    for grade_id, score in per_cell.items():
        grade = gb.find_grade(grade_id, notebook, name, student)
        grade.auto_score = min(score, grade_cells[grade_id][0])
    gb.db.commit()
