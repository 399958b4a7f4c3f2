"""Grades where instructors keep them, each checked against its format's published specification:
Gradescope's results.json (and the bundle's run_autograder, run as Gradescope runs it), Canvas's
gradebook import CSV, and nbgrader's gradebook (per-cell scores)."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from gradescope_run import run_autograder

from autograder.instructor import exports
from autograder.instructor.gradescope import build_bundle, unpack
from autograder.instructor.release import names

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENTS = names(root=ROOT)
VISIBILITY = {"enum": ["visible", "hidden", "after_due_date", "after_published"]}
# Gradescope's "Autograder Specifications", results.json: the fields it defines and their types.
GRADESCOPE_SCHEMA = {
    "type": "object",
    "anyOf": [{"required": ["score"]}, {"required": ["tests"]}],
    "properties": {
        "score": {"type": "number"},
        "execution_time": {"type": "number"},
        "output": {"type": "string"},
        "output_format": {"enum": ["text", "html", "simple_format", "md", "ansi"]},
        "visibility": VISIBILITY,
        "stdout_visibility": VISIBILITY,
        "extra_data": {"type": "object"},
        "tests": {"type": "array", "items": {
            "type": "object",
            "required": ["score", "max_score"],
            "properties": {
                "score": {"type": "number"}, "max_score": {"type": "number"},
                "status": {"enum": ["passed", "failed"]},
                "name": {"type": "string"}, "number": {"type": "string"},
                "output": {"type": "string"},
                "output_format": {"enum": ["text", "html", "simple_format", "md", "ansi"]},
                "tags": {"type": "array", "items": {"type": "string"}},
                "visibility": VISIBILITY, "extra_data": {"type": "object"},
            },
            "additionalProperties": False,
        }},
        "leaderboard": {"type": "array"},
    },
    "additionalProperties": False,
}
# Canvas's gradebook CSV: the identity columns, in this order, before the assignment columns.
CANVAS_IDENTITY = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
HIDDEN = ("BEGIN HIDDEN TESTS", "check_cell(", "make_inputs", "def expect", "autograder.assignments")


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_gradescope_results_follow_the_specification(demo_out, name):
    graded = demo_out / name / "graded"
    for result in exports.read_results(graded):
        data = exports.gradescope_results(result)
        jsonschema.validate(data, GRADESCOPE_SCHEMA)
        counted = [t for t in result["tests"] if t["status"] != "not-run"]
        assert [t["name"] for t in data["tests"]] == [t["name"] for t in counted]
        assert sum(t["score"] for t in data["tests"]) == pytest.approx(data["score"])
        assert data["score"] == result["score"]
        assert all(t["visibility"] == "after_published" for t in data["tests"])
        text = json.dumps(data)
        for secret in HIDDEN:
            assert secret not in text


def test_gradescope_visibility_is_checked():
    with pytest.raises(ValueError, match="visibility"):
        exports.gradescope_results({"assignment": "a", "score": 0, "max_score": 0, "tests": []},
                                   visibility="sometimes")


# run_autograder grades one notebook (a fresh sandbox that imports JAX): its own limit is 900 s.
# The demo classes' grading, which this test also waits for, has its own (tests/conftest.py).
@pytest.mark.timeout(1200)
def test_the_bundle_grades_one_submission_as_gradescope_runs_it(demo_out, tmp_path):
    name = ASSIGNMENTS[0]
    bundle = build_bundle(assignment=name, root=ROOT, dest=tmp_path / "bundle.zip")
    autograder = tmp_path / "autograder"
    unpack(bundle, autograder / "source")
    assert os.access(autograder / "source" / "run_autograder", os.X_OK)
    assert not (autograder / "source" / "solutions").exists()
    submitted = demo_out / name / "submitted" / "partial" / name
    (autograder / "submission").mkdir()
    for nb in submitted.glob("*.ipynb"):
        (autograder / "submission" / nb.name).write_bytes(nb.read_bytes())
    # JupyterLab's checkpoint of the untouched notebook sorts first: it must not be the one graded
    # (it once was: a 52/52 notebook got 0/52).
    untouched = next((demo_out / name / "submitted" / "untouched" / name).glob("*.ipynb"))
    checkpoints = autograder / "submission" / ".ipynb_checkpoints"
    checkpoints.mkdir()
    (checkpoints / f"{name}-checkpoint.ipynb").write_bytes(untouched.read_bytes())
    data = run_autograder(autograder, "partial", timeout=900)
    jsonschema.validate(data, GRADESCOPE_SCHEMA)
    # Same secret, same student id, same notebook: the grade the demo class gave.
    mine = json.loads((demo_out / name / "graded" / "results" / "partial.json").read_text())
    row = next(r for r in exports.read_grades(demo_out / name / "graded")
               if r["student_id"] == "partial")
    assert data == exports.gradescope_results(
        mine, message=row["message"], reproducers=exports.gradescope_reproducers(mine))


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_canvas_csv_follows_the_import_format(demo_out, name):
    graded = demo_out / name / "graded"
    rows = list(csv.reader(io.StringIO(exports.canvas_csv(graded))))
    assert rows[0] == [*CANVAS_IDENTITY, name]
    assert rows[1][0] == "Points Possible" and float(rows[1][5]) > 0
    grades = {r["student_id"]: r for r in exports.read_grades(graded)}
    assert {r[3] for r in rows[2:]} == set(grades)
    for row in rows[2:]:
        assert len(row) == 6
        if grades[row[3]]["status"] in ("error", "missing"):  # no grade: empty, never a 0
            assert row[5] == "", row
        else:
            assert float(row[5]) == float(grades[row[3]]["score"])


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_gradescope_scores_csv_has_every_student_and_task(demo_out, name):
    """The class-wide Gradescope export: one row per grades.csv row, a column per task whose
    cells add up to the row's score (no late policy in the demo), empty cells where there is no
    grade; every check id is its task's id and one more part, which the export relies on."""
    from autograder.grade.grading import load_assignment

    spec = load_assignment(name, "autograder.assignments")
    assert all(c.id.rsplit(".", 1)[0] == c.task for c in spec.checks)
    graded = demo_out / name / "graded"
    rows = list(csv.DictReader(io.StringIO(exports.gradescope_scores_csv(graded))))
    columns = {f"{t.id} (" for t in spec.tasks}  # in the order the results list their checks
    header = list(rows[0])
    assert header[:2] == ["SID", "Email"] and header[-2:] == ["Total Score", "Status"]
    named = [h.split("(")[0] + "(" for h in header[2:-2]]
    assert len(named) == len(columns) and set(named) == columns
    grades = {r["student_id"]: r for r in exports.read_grades(graded)}
    assert [r["SID"] for r in rows] == list(grades)
    for row in rows:
        tasks = [row[h] for h in header[2:-2]]
        if grades[row["SID"]]["status"] in ("error", "missing"):
            assert row["Total Score"] == "" and set(tasks) == {""}, row
        else:
            assert float(row["Total Score"]) == pytest.approx(float(grades[row["SID"]]["score"]))
            assert sum(map(float, tasks)) == pytest.approx(float(row["Total Score"]))


def test_canvas_csv_takes_identities_from_a_roster(demo_out, tmp_path):
    graded = demo_out / ASSIGNMENTS[0] / "graded"
    roster = tmp_path / "roster.csv"
    with roster.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow([*CANVAS_IDENTITY, "Something else (99)"])
        w.writerow(["Full, Student", "101", "S101", "full", "Section A", "3"])
    rows = list(csv.reader(io.StringIO(
        exports.canvas_csv(graded, column="ps (123)", roster=roster))))
    assert rows[0][-1] == "ps (123)"
    full = next(r for r in rows if r[3] == "full")
    assert full[:5] == ["Full, Student", "101", "S101", "full", "Section A"]


def test_export_command(demo_out, tmp_path):
    graded = demo_out / ASSIGNMENTS[0] / "graded"
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    run = subprocess.run([sys.executable, "-m", "autograder", "export", "canvas", str(graded)],
                         cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[0].startswith("Student,ID,SIS User ID")
    dest = tmp_path / "r.json"
    run = subprocess.run([sys.executable, "-m", "autograder", "export", "gradescope", str(graded),
                          "full", "--dest", str(dest)], cwd=ROOT, env=env, capture_output=True,
                         text=True, check=False)
    assert run.returncode == 0, run.stderr
    jsonschema.validate(json.loads(dest.read_text()), GRADESCOPE_SCHEMA)
    run = subprocess.run([sys.executable, "-m", "autograder", "export", "gradescope", str(graded),
                          "nobody"], cwd=ROOT, env=env, capture_output=True, text=True,
                         check=False)
    assert run.returncode == 2 and "no results" in run.stderr
    run = subprocess.run([sys.executable, "-m", "autograder", "export", "gradescope-scores",
                          str(graded)], cwd=ROOT, env=env, capture_output=True, text=True,
                         check=False)
    assert run.returncode == 0, run.stderr
    # (text mode reads the CSV's \r\n line ends as \n)
    assert run.stdout == exports.gradescope_scores_csv(graded).replace("\r\n", "\n")


def _graded(tmp_path: Path, students: dict[str, float]) -> Path:
    """A graded class as ``grade`` writes it (grades.csv and results JSON), without grading."""
    from autograder.grade import record

    out = tmp_path / "graded"
    (out / "results").mkdir(parents=True)
    rows = []
    for student, score in students.items():
        tests = [{"name": "c: check", "points": score, "max_points": 2.0, "status": "passed",
                  "message": ""}]
        record.write_results(out, record.results_json(student, "ps", tests))
        rows.append({"student_id": student, "assignment": "ps", "score": score,
                     "max_score": 2.0, "status": "graded", "message": "=HYPERLINK(\"x\")"})
    record.write_grades_csv(out, rows)
    return out


def test_no_csv_export_field_starts_a_spreadsheet_formula(tmp_path):
    formula = ["=2+5+cmd|' -C calc'!A0", "@SUM(1+1)*cmd", "+1", "-1", "'quoted"]
    out = _graded(tmp_path, {"alice": 2.0, **dict.fromkeys(formula, 1.0)})
    for text in ((out / "grades.csv").read_text(encoding="utf-8"), exports.canvas_csv(out)):
        for row in csv.reader(io.StringIO(text)):
            assert not any(f.startswith(("=", "+", "-", "@", "\t", "\r")) for f in row), row
    # The ids (and messages) read back exactly, so every export finds its student.
    grades = exports.read_grades(out)
    assert [g["student_id"] for g in grades] == ["alice", *formula]
    assert grades[0]["message"] == "=HYPERLINK(\"x\")"
    for student in formula:
        dest = exports.write_gradescope(out, student, tmp_path / "r.json")
        assert json.loads(dest.read_text())["score"] == 1.0
    canvas = list(csv.reader(io.StringIO(exports.canvas_csv(out))))
    assert canvas[1][5] == "2" and canvas[2][3] == "alice"
    assert [r[3] for r in canvas[3:]] == ["'" + f for f in formula]


def test_gradescope_finds_a_student_whose_id_is_no_file_name(tmp_path):
    long_id = "x" * 252
    out = _graded(tmp_path, {long_id: 1.0, "bob": 2.0})
    dest = exports.write_gradescope(out, long_id, tmp_path / "r.json")
    assert json.loads(dest.read_text())["score"] == 1.0
    assert exports.results_path(out, "nobody") is None


def test_canvas_csv_says_which_students_the_roster_and_the_grades_do_not_share(tmp_path):
    """Issue 30: roster students without a submission had no row, and graded students the
    roster lacks passed without a word. Now the first get a row with an empty score (Canvas's
    import leaves a blank cell's grade as it is) and each mismatch is said on stderr."""
    out = _graded(tmp_path, {"alice": 2.0, "stranger": 1.0})
    roster = tmp_path / "roster.csv"
    with roster.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow([*CANVAS_IDENTITY, "ps (1)"])
        w.writerow(["    Points Possible", "", "", "", "", "2"])  # Canvas's own export has it
        w.writerow(["Alice, A", "1", "S1", "alice", "Section A", ""])
        w.writerow(["Bob, B", "2", "S2", "bob", "Section A", ""])
    said: list[str] = []
    rows = list(csv.reader(io.StringIO(exports.canvas_csv(out, roster=roster, warn=said.append))))
    by_login = {r[3]: r for r in rows[2:]}
    assert set(by_login) == {"alice", "stranger", "bob"}
    assert by_login["alice"] == ["Alice, A", "1", "S1", "alice", "Section A", "2"]
    assert by_login["bob"] == ["Bob, B", "2", "S2", "bob", "Section A", ""]
    assert by_login["stranger"] == ["", "", "", "stranger", "", "1"]
    assert len(said) == 2
    assert "1 student (bob)" in said[0] and "no graded submission" in said[0]
    assert "1 student (stranger)" in said[1] and "not in the roster" in said[1]
    # The command says it on stderr; stdout stays the CSV alone.
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    run = subprocess.run([sys.executable, "-m", "autograder", "export", "canvas", str(out),
                          "--roster", str(roster)], cwd=ROOT, env=env, capture_output=True,
                         text=True, check=False)
    assert run.returncode == 0, run.stderr
    assert run.stderr.count("warning:") == 2 and "bob" in run.stderr
    assert list(csv.reader(io.StringIO(run.stdout))) == rows
    # Without mismatches, nothing is said.
    said.clear()
    exports.canvas_csv(_graded(tmp_path / "2", {"alice": 2.0, "bob": 1.0}), roster=roster,
                       warn=said.append)
    assert said == []


def test_gradescope_scores_take_emails_from_the_gradebook_and_leave_no_grade_empty(tmp_path):
    from autograder.grade import record

    out = _graded(tmp_path, {"alice": 2.0, "=bob": 1.0})
    rows = exports.read_grades(out)
    rows.append({"student_id": "carol", "assignment": "ps", "score": 0.0, "max_score": 2.0,
                 "status": "error", "message": "a time limit: to be regraded"})
    record.write_grades_csv(out, rows)
    db = f"sqlite:///{tmp_path / 'gb.db'}"
    record._venv_on_path()
    gradebook, _ = record._gradebook_api()
    with gradebook(db) as gb:
        gb.add_student("alice", email="alice@example.edu")
        gb.add_student("carol")
    emails = exports.gradebook_emails(db)
    assert emails == {"alice": "alice@example.edu"}
    got = list(csv.reader(io.StringIO(exports.gradescope_scores_csv(out, emails=emails))))
    assert got == [["SID", "Email", "c (2 pts)", "Total Score", "Status"],
                   ["alice", "alice@example.edu", "2", "2", "graded"],
                   ["'=bob", "", "1", "1", "graded"],
                   ["carol", "", "", "", "error"]]
    canvas = list(csv.reader(io.StringIO(exports.canvas_csv(out))))
    assert canvas[-1][3:] == ["carol", "", ""]  # no grade: empty, not 0
