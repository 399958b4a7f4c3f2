"""Grades where instructors keep them: Gradescope's ``results.json`` and a Canvas gradebook CSV.

Both are built from what ``grade`` wrote (``OUT/results/<student>.json`` and ``OUT/grades.csv``),
so an export never re-runs anything. nbgrader's own gradebook is written by ``grade`` itself
(autograder.grade.record), with one score per autograded cell, so ``nbgrader export`` and the
formgrader work on it directly.

Gradescope (its "Autograder Specifications"): ``results.json`` has a top-level ``score``,
``output``, ``visibility`` and ``stdout_visibility``, and one entry per test with ``name``,
``score``, ``max_score``, ``status`` (``passed``/``failed``), ``output`` and ``visibility``
(``visible``, ``hidden``, ``after_due_date`` or ``after_published``). Each of our checks becomes a
test whose output is the same message the student's feedback page shows; hidden checks' code,
inputs and expected values are never in it (the grader never writes them anywhere).

Canvas (its gradebook import format): a CSV whose first columns identify the student
(``Student``, ``ID``, ``SIS User ID``, ``SIS Login ID``, ``Section``), then one column per
assignment, named as the gradebook names it (``Title (id)`` for an existing assignment; a new
title creates one), an optional ``Points Possible`` row under the header, and one row per student.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from autograder.grade.record import csv_field, csv_field_read, safe_filename

GRADESCOPE_VISIBILITY = ("visible", "hidden", "after_due_date", "after_published")
CANVAS_IDENTITY = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]


def read_results(out: Path) -> list[dict]:
    """Every student's results JSON in ``OUT/results``, in student order."""
    return [json.loads(p.read_text(encoding="utf-8"))
            for p in sorted((Path(out) / "results").glob("*.json"))]


def read_grades(out: Path) -> list[dict]:
    """grades.csv's rows, each field as ``grade`` had it (record.csv_field undone)."""
    with open(Path(out) / "grades.csv", newline="", encoding="utf-8") as f:
        return [{k: csv_field_read(v) for k, v in row.items()} for row in csv.DictReader(f)]


def results_path(out: Path, student_id: str) -> Path | None:
    """The results JSON of ``student_id`` (named by record.safe_filename; a folder name that was
    not UTF-8 is found by the id grades.csv shows), or None."""
    path = Path(out) / "results" / f"{safe_filename(student_id)}.json"
    if path.is_file():
        return path
    for other in sorted((Path(out) / "results").glob("*~*.json")):
        if json.loads(other.read_text(encoding="utf-8")).get("student_id") == student_id:
            return other
    return None


def gradescope_results(result: dict, *, status: str = "graded", message: str = "",
                       visibility: str = "after_published",
                       test_visibility: str = "after_published") -> dict:
    """One student's Gradescope ``results.json`` from our results JSON.

    ``visibility`` applies to the whole result, ``test_visibility`` to each check (by default
    both wait until the instructor publishes grades). A check that did not run for want of a GPU
    is left out, as it is left out of our maximum score."""
    for v in (visibility, test_visibility):
        if v not in GRADESCOPE_VISIBILITY:
            raise ValueError(f"visibility must be one of {GRADESCOPE_VISIBILITY}, not {v!r}")
    tests = []
    for number, test in enumerate(result.get("tests", []), start=1):
        if test["status"] == "not-run":
            continue
        tests.append({
            "name": test["name"],
            "number": str(number),
            "score": float(test["points"]),
            "max_score": float(test["max_points"]),
            "status": "passed" if test["status"] == "passed" else "failed",
            "output": test["message"] or "passed",
            "visibility": test_visibility,
        })
    summary = (f"{result['assignment']}: {result['score']:g} / {result['max_score']:g}"
               + (f" ({message})" if message else "")
               + (f"; {result['late_note']}, {result['raw_score']:g} before the late penalty"
                  if "late_note" in result else ""))
    if status == "error":
        summary = f"{result['assignment']}: not graded: {message}"
    return {"score": float(result["score"]), "output": summary, "visibility": visibility,
            "stdout_visibility": "hidden", "tests": tests}


def write_gradescope(out: Path, student_id: str, dest: Path, **visibility: str) -> Path:
    """``dest`` (Gradescope reads /autograder/results/results.json) for one graded student."""
    path = results_path(out, student_id)
    if path is None:
        raise FileNotFoundError(f"no results for student {student_id!r} in {out}")
    result = json.loads(path.read_text("utf-8"))
    row = next((r for r in read_grades(out) if r["student_id"] == student_id), {})
    data = gradescope_results(result, status=row.get("status", "graded"),
                              message=row.get("message", ""), **visibility)
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return dest


def canvas_csv(out: Path, *, column: str | None = None, roster: Path | None = None) -> str:
    """The Canvas gradebook import CSV for a graded class.

    ``column``: the gradebook column to fill (``"ps1_primitives (1234)"`` for an existing
    assignment; default: the assignment's name, which Canvas imports as a new column). ``roster``: a CSV exported from Canvas's gradebook (it has the identity
    columns); students are matched on ``SIS Login ID`` = our student id. Without a roster the
    student id goes in ``SIS Login ID`` and the other identity columns stay empty, which
    Canvas accepts when logins are the students' ids."""
    known: dict[str, dict] = {}
    if roster is not None:
        with open(roster, newline="", encoding="utf-8-sig") as f:
            for row in csv.DictReader(f):
                login = (row.get("SIS Login ID") or "").strip()
                if login:
                    known[login] = row
    grades = read_grades(out)
    column = column or (grades[0]["assignment"] if grades else "assignment")
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow([*CANVAS_IDENTITY, csv_field(column)])
    possible = max((float(r["max_score"]) for r in grades), default=0.0)
    writer.writerow(["Points Possible", "", "", "", "", f"{possible:g}"])
    for row in grades:
        who = known.get(row["student_id"], {})
        identity = [who.get(k, "") for k in CANVAS_IDENTITY]
        identity[3] = row["student_id"]
        # Scores are ours and never negative; every text field is kept from spreadsheet formulas.
        writer.writerow([*map(csv_field, identity), f"{float(row['score']):g}"])
    return buffer.getvalue()
