"""Late work in nbgrader's gradebook: ``nbgrader export`` shows the scores grades.csv shows under
a late policy with a per-student extension; nbgrader's zone names are read, and a stamp that
cannot be read is listed (summary, the run's output), not silently on time."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from datetime import UTC, datetime

import pytest
from engine_helpers import TOY_ROOT
from toy_notebooks import FULL, submission

from autograder.grade import grading, late, stamps
from autograder.instructor import exports
from autograder.limits import Limits, UsageError

STAMPS = {"late_pst": "2026-11-20 08:00:00.250000 PST",  # 16:00 UTC: 1 day late
          "extended": "2026-11-22 10:00:00.000000 UTC",  # 2 days late, 3 days' extension
          "ambiguous": "2026-11-20 11:00:00.000000 CST"}  # US Central or China: unreadable


# A release that changed test cells' points (the released notebook's nbgrader metadata, which
# nbgrader's generate_assignment also writes into the gradebook): test_abstract 2 -> 4 (its two
# checks of 1 become 2 each), test_jvp 2 -> 1 (0.5 each). The toy's maximum, GPU check left out,
# goes from 5 to 6.
NEW_POINTS = {"test_abstract": 4, "test_jvp": 1}


def _release_points(root, changed: dict[str, int]) -> None:
    path = root / "assignments" / "toy" / "toy.ipynb"
    nb = json.loads(path.read_text())
    for cell in nb["cells"]:
        meta = cell["metadata"].get("nbgrader", {})
        if meta.get("grade_id") in changed:
            meta["points"] = changed[meta["grade_id"]]
    path.write_text(json.dumps(nb))


@pytest.mark.parametrize("changed", [{}, NEW_POINTS], ids=["points-as-written", "points-changed"])
def test_nbgrader_export_agrees_with_grades_csv(tmp_path, capsys, changed):
    root = tmp_path / "course"
    shutil.copytree(TOY_ROOT, root)
    _release_points(root, changed)
    full = 6.0 if changed else 5.0
    (root / "course.toml").write_text(
        '[late.toy]\ndue = "2026-11-20 12:00"\nlate_days = 3\npenalty_per_day = 0.1\n'
        '[late.toy.extensions]\nextended = 3\n')
    for student, stamp in STAMPS.items():
        folder = tmp_path / "submitted" / student / "toy"
        folder.mkdir(parents=True)
        (folder / "toy.ipynb").write_text(json.dumps(submission(FULL)))
        (folder / "timestamp.txt").write_text(stamp)
    out, db = tmp_path / "out", f"sqlite:///{tmp_path / 'gb.db'}"
    run = grading.grade(assignment="toy", submitted=tmp_path / "submitted", out=out, workers=2,
                        db_url=db, root=root, package="toygrader", seed="late-gradebook",
                        progress=False, limits=Limits(cell_timeout_s=10, cell_policy=False))
    said = capsys.readouterr().out
    rows = {r["student_id"]: r for r in exports.read_grades(out)}
    assert {s: (r["score"], r["late_days"]) for s, r in rows.items()} == {
        "late_pst": (str(full * 0.9), "1"), "extended": (str(full), "0"),
        "ambiguous": (str(full), "0")}
    # Every output carries the release's maximum: grades.csv, results, feedback, summary.
    assert {r["max_score"] for r in rows.values()} == {str(full)}
    result = json.loads((out / "results" / "extended.json").read_text())
    assert result["max_score"] == full
    weights = {t["name"].split(":")[0]: t["max_points"] for t in result["tests"]}
    assert weights["toy.abstract.jit"] == (2.0 if changed else 1.0)
    assert weights["toy.jvp.x64"] == (0.5 if changed else 1.0)
    assert f"of {full:g} points" in (out / "summary.html").read_text()
    assert f"{full:g}" in (out / "feedback" / "extended.html").read_text()
    assert ("points from the release: test_abstract: 2 -> 4; test_jvp: 2 -> 1" in said) == bool(
        changed)
    assert "1 timestamps could not be read" in said and "ambiguous: timestamp.txt" in said
    listed = (out / "summary.html").read_text().split("Timestamps that could not be read")[1]
    assert "ambiguous" in listed.split("<h2>")[0] and "CST" in listed.split("<h2>")[0]
    assert "late_pst" not in listed.split("<h2>")[0]
    assert run.rows

    dest = tmp_path / "export.csv"
    done = subprocess.run([sys.executable, "-m", "nbgrader", "export", f"--db={db}",
                           f"--to={dest}"], cwd=tmp_path, capture_output=True, text=True,
                          check=False, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    with open(dest, newline="") as f:
        exported = {r["student_id"]: r for r in csv.DictReader(f)}
    for student, row in rows.items():
        got = exported[student]
        assert float(got["score"]) == pytest.approx(float(row["score"])), (student, got)
        assert float(got["raw_score"]) == pytest.approx(float(row["raw_score"])), student
        assert float(got["max_score"]) == pytest.approx(float(row["max_score"])), student
        assert got["duedate"].startswith("2026-11-20 12:00:00")
    assert exported["late_pst"]["timestamp"].startswith("2026-11-20 16:00:00.25")
    assert float(exported["late_pst"]["late_submission_penalty"]) == pytest.approx(full * 0.1)
    assert exported["ambiguous"]["timestamp"] == ""
    from nbgrader.api import Gradebook

    with Gradebook(db) as gb:
        extended = gb.find_submission("toy", "extended")
        assert extended.extension.days == 3 and not extended.total_seconds_late
        assert gb.find_submission("toy", "late_pst").extension is None


@pytest.mark.parametrize(("text", "zone", "expected"), [
    ("2026-11-20 08:00:00.250000 PST", None, "2026-11-20T16:00:00.250000+00:00"),
    ("2026-07-20 08:00:00.000000 PDT", None, "2026-07-20T15:00:00+00:00"),
    ("2026-11-20 18:00:00.000000 CET", None, "2026-11-20T17:00:00+00:00"),
    ("2026-11-20 20:00:00.000000 CST", "Asia/Shanghai", "2026-11-20T12:00:00+00:00"),
    ("2026-11-20 06:00:00.000000 CST", "America/Chicago", "2026-11-20T12:00:00+00:00"),
    ("2026-11-20 12:00:00.000000 UTC", None, "2026-11-20T12:00:00+00:00"),
    ("2026-11-20 04:00:00 -0800", None, "2026-11-20T12:00:00+00:00"),
    ("2026-11-20T13:00:00+01:00", None, "2026-11-20T12:00:00+00:00"),
    ("2026-11-20 13:00 Europe/Paris", None, "2026-11-20T12:00:00+00:00"),
])
def test_nbgrader_timestamps_are_read(text, zone, expected):
    when, why = stamps.read(text, zone)
    assert why == "" and when.astimezone(UTC).isoformat() == expected


@pytest.mark.parametrize(("text", "why"), [
    ("2026-11-20 11:00:00.000000 CST", "means several offsets"),
    ("2026-11-20 11:00:00 XYZT", "unknown time zone name 'XYZT'"),
    ("last tuesday", "is not a date and time"),
    ("", "it is empty"),
])
def test_unreadable_timestamps_say_why(text, why):
    when, said = stamps.read(text)
    assert when is None and why in said


def test_extensions_and_the_course_zone_are_checked(tmp_path):
    (tmp_path / "course.toml").write_text(
        '[late]\ntimezone = "America/Chicago"\n[late.toy]\ndue = "2026-11-20 12:00 CST"\n'
        '[late.toy.extensions]\nbob = "2026-11-22 12:00 CST"\ncarol = 1.5\n')
    policy = late.load(tmp_path, "toy")
    assert policy.due == datetime(2026, 11, 20, 18, tzinfo=UTC)
    assert late.for_student(policy, "bob").due == datetime(2026, 11, 22, 18, tzinfo=UTC)
    assert late.for_student(policy, "carol").due == datetime(2026, 11, 22, 6, tzinfo=UTC)
    assert late.for_student(policy, "dave").due == policy.due
    for bad in ('[late]\ntimezone = "Mars/Olympus"\n[late.toy]\ndue = "2026-11-20 12:00"\n',
                '[late.toy]\ndue = "2026-11-20 12:00"\n[late.toy.extensions]\nbob = "soon"\n'):
        (tmp_path / "course.toml").write_text(bad)
        with pytest.raises(UsageError):
            late.load(tmp_path, "toy")
