"""Record stage: grades.csv, results/<student>.json and nbgrader's gradebook.

Only the main process calls these, so the gradebook has a single writer.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import re
import sys
import threading
import types
import warnings
from pathlib import Path

from autograder.normalise import nbgrader_meta
from autograder.spec import Assignment

CSV_FIELDS = ("student_id", "assignment", "score", "max_score", "status", "message")
# C0 and C1 controls (ANSI escapes start with ESC or CSI) but tab and newline, DEL, and the
# Unicode controls that reorder or hide text.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e"
                      "\u2060-\u2069\ufeff]")


def clean_text(text: str, limit: int, *, keep_lines: bool = False) -> str:
    """``text`` without control characters, at most ``limit`` characters (said when cut)."""
    text = _CONTROL.sub("", str(text))
    if not keep_lines:
        text = text.replace("\n", " ").replace("\t", " ")
    if len(text) > limit:
        text = text[:max(0, limit - 30)] + f" [... {len(text) - limit} more characters]"
    return text


def score_of(tests: list[dict]) -> tuple[float, float]:
    """(score, max_score); checks reported ``not-run`` are left out of the maximum."""
    score = sum(t["points"] for t in tests)
    max_score = sum(t["max_points"] for t in tests if t["status"] != "not-run")
    return round(score, 6), round(max_score, 6)


def results_json(student_id: str, assignment: str, tests: list[dict]) -> dict:
    score, max_score = score_of(tests)
    return {"student_id": student_id, "assignment": assignment, "score": score,
            "max_score": max_score, "tests": tests}


def write_results(out: Path, result: dict) -> None:
    path = out / "results" / f"{result['student_id']}.json"
    path.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


def write_grades_csv(out: Path, rows: list[dict]) -> None:
    with open(out / "grades.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_FIELDS)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: row[k] for k in CSV_FIELDS})


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
        Gradebook, _ = _gradebook_api()
        _venv_on_path()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            Gradebook(db_url).close()

    thread = threading.Thread(target=work, name="gradebook", daemon=True)
    thread.start()
    return thread


def _venv_on_path() -> None:
    # nbgrader runs the `alembic` command next to the interpreter; the venv may not be on PATH.
    bindir = str(Path(sys.executable).parent)
    if bindir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = bindir + os.pathsep + os.environ.get("PATH", "")


def write_gradebook(db_url: str, assignment: Assignment, release_cells: list[dict],
                    results: list[dict], check_cells: dict[str, str]) -> None:
    """Per nbgrader grade cell, the sum of its checks' points, as the cell's auto_score.

    The assignment, notebook and grade cells are created from the release notebook's nbgrader
    metadata when absent, so ``nbgrader export`` and the formgrader work on the result.
    """
    Gradebook, MissingEntry = _gradebook_api()
    _venv_on_path()

    notebook = Path(assignment.notebook).stem
    grade_cells = {}
    for cell in release_cells:
        meta = nbgrader_meta(cell)
        if meta.get("grade") and meta.get("grade_id"):
            grade_cells[meta["grade_id"]] = (float(meta.get("points", 0)),
                                             cell.get("cell_type", "code"))
    with warnings.catch_warnings(), Gradebook(db_url) as gb:
        # nbgrader's add_submission trips SQLAlchemy autoflush warnings; they are harmless.
        warnings.simplefilter("ignore")
        gb.update_or_create_assignment(assignment.name)
        try:
            gb.find_notebook(notebook, assignment.name)
        except MissingEntry:
            gb.add_notebook(notebook, assignment.name)
        for grade_id, (points, cell_type) in grade_cells.items():
            gb.update_or_create_grade_cell(grade_id, notebook, assignment.name,
                                           max_score=points, cell_type=cell_type)
        for result in results:
            student = result["student_id"]
            try:
                gb.find_student(student)
            except MissingEntry:
                gb.add_student(student)
            try:
                gb.find_submission(assignment.name, student)
            except MissingEntry:
                gb.add_submission(assignment.name, student)
            per_cell = dict.fromkeys(grade_cells, 0.0)
            for check_id, test in result["tests_by_check"].items():
                cell = check_cells.get(check_id)
                if cell in per_cell:
                    per_cell[cell] += test["points"]
            for grade_id, score in per_cell.items():
                grade = gb.find_grade(grade_id, notebook, assignment.name, student)
                grade.auto_score = min(score, grade_cells[grade_id][0])
            gb.db.commit()
