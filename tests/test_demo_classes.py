"""`python -m autograder demo`, end to end: the demo class of every assignment graded by the real
command, its outputs consistent with each other (grades.csv, results JSON, gradebook, feedback),
and nothing hidden in what students get back."""

from __future__ import annotations

import csv
import html
import json
from pathlib import Path

import pytest

from autograder.instructor.release import names

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENTS = names(root=ROOT)
CSV_COLUMNS = ["student_id", "assignment", "score", "max_score", "status", "message"]
TEST_KEYS = {"name", "points", "max_points", "status", "message"}
# Text of the grader's side that must never reach a student.
HIDDEN = ("BEGIN HIDDEN TESTS", "check_cell(", "make_inputs", "def expect", "autograder.assignments")


def rows(demo_out: Path, name: str) -> dict[str, dict]:
    with open(demo_out / name / "graded" / "grades.csv", newline="") as f:
        reader = csv.DictReader(f)
        assert reader.fieldnames == CSV_COLUMNS
        return {row["student_id"]: row for row in reader}


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_demo_grades_are_what_each_student_earned(demo_out, name):
    grades = rows(demo_out, name)
    submitted = {p.name for p in (demo_out / name / "submitted").iterdir()}
    assert set(grades) == submitted
    full_marks = float(grades["full"]["max_score"])
    assert full_marks > 0
    assert float(grades["full"]["score"]) == full_marks
    assert (grades["untouched"]["status"], float(grades["untouched"]["score"])) == ("graded", 0)
    assert 0 < float(grades["partial"]["score"]) < full_marks
    assert grades["broken"]["status"] == "error" and float(grades["broken"]["score"]) == 0
    assert "not valid JSON" in grades["broken"]["message"]
    wrong = [s for s in grades if s.startswith("wrong_")]
    assert wrong, "the demo class has wrong solutions"
    for student in wrong:
        assert grades[student]["status"] == "graded"
        assert float(grades[student]["score"]) < full_marks, f"{student} lost no points"


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_results_json_agrees_with_the_csv(demo_out, name):
    for student, row in rows(demo_out, name).items():
        result = json.loads((demo_out / name / "graded" / "results" / f"{student}.json").read_text())
        assert set(result) == {"student_id", "assignment", "score", "max_score", "tests"}
        assert (result["student_id"], result["assignment"]) == (student, name)
        assert result["score"] == float(row["score"])
        assert result["max_score"] == float(row["max_score"])
        if row["status"] == "error":
            continue
        for test in result["tests"]:
            assert set(test) == TEST_KEYS
            assert test["status"] in {"passed", "failed", "error", "not-run"}
            assert 0 <= test["points"] <= test["max_points"]
            assert test["status"] == "passed" or test["points"] == 0
        counted = [t for t in result["tests"] if t["status"] != "not-run"]
        assert sum(t["points"] for t in counted) == pytest.approx(result["score"])
        assert sum(t["max_points"] for t in counted) == pytest.approx(result["max_score"])


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_gradebook_holds_the_same_scores(demo_out, name):
    from nbgrader.api import Gradebook

    grades = rows(demo_out, name)
    with Gradebook(f"sqlite:///{demo_out / name / 'gradebook.db'}") as gradebook:
        for student, row in grades.items():
            if row["status"] == "error":
                continue
            submission = gradebook.find_submission(name, student)
            assert submission.score == pytest.approx(float(row["score"])), student


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_feedback_shows_each_check_and_nothing_hidden(demo_out, name):
    for student in rows(demo_out, name):
        page = (demo_out / name / "graded" / "feedback" / f"{student}.html").read_text()
        for secret in HIDDEN:
            assert secret not in page, f"{student}'s feedback shows {secret!r}"
        result = json.loads((demo_out / name / "graded" / "results" / f"{student}.json").read_text())
        for test in result["tests"]:
            assert html.escape(test["name"]) in page or test["name"] in page
