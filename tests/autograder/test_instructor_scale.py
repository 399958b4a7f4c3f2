"""An instructor's class at scale: regrading some students into the class's OUT, and a
SUBMITTED folder laid out wrongly said at once instead of graded as a class of errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from engine_helpers import TOY_ROOT, grade_command
from toy_notebooks import FULL, submission

from autograder.grade import grading
from autograder.instructor import exports
from autograder.limits import Limits, UsageError

CLASS = {"alice": submission(FULL), "bob": submission({"impl": True}), "carol": submission()}


def _write(dest: Path, students: dict) -> Path:
    for student, nb in students.items():
        folder = dest / student / "toy"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "toy.ipynb").write_text(json.dumps(nb))
    return dest


def _grade(submitted: Path, out: Path, db: Path, **kw):
    return grading.grade(assignment="toy", submitted=submitted, out=out, workers=2,
                         db_url=f"sqlite:///{db}", root=TOY_ROOT, package="toygrader",
                         seed="instructor-scale", progress=False, quiet=True,
                         limits=Limits(cell_timeout_s=10, cell_policy=False), **kw)


def _rows(out: Path) -> dict[str, dict]:
    return {r["student_id"]: r for r in exports.read_grades(out)}


def test_regrading_one_student_keeps_the_class(tmp_path):
    from nbgrader.api import Gradebook

    submitted = _write(tmp_path / "submitted", CLASS)
    out, db = tmp_path / "out", tmp_path / "gb.db"
    _grade(submitted, out, db)
    before = _rows(out)
    assert set(before) == set(CLASS) and before["carol"]["score"] == "0.0"
    alice = (out / "results" / "alice.json").read_bytes()

    _write(submitted, {"carol": submission(FULL)})  # carol's late fix
    run = _grade(submitted, out, db, students=["carol"])
    after = _rows(out)
    assert set(after) == set(CLASS) and {r["student_id"] for r in run.rows} == set(CLASS)
    assert after["carol"]["score"] == before["alice"]["score"] != "0.0"
    assert {k: after[k] for k in ("alice", "bob")} == {k: before[k] for k in ("alice", "bob")}
    assert (out / "results" / "alice.json").read_bytes() == alice
    page = (out / "summary.html").read_text()
    assert "3 submissions, 3 graded" in page
    # The run's table is the regraded student's; the line under it says the rest were kept.
    table = grading.summary_table(run)
    assert "carol" in table and "alice" not in table and "bob" not in table, table
    assert "1 submissions in" in table and "2 results kept" in table and "--student" in table
    with Gradebook(f"sqlite:///{db}") as gb:
        assert {s.id for s in gb.students} == set(CLASS)
        assert gb.find_submission("toy", "carol").score == float(after["carol"]["score"])

    full = tmp_path / "full"
    _grade(submitted, full, tmp_path / "full.db")
    assert (out / "grades.csv").read_bytes() == (full / "grades.csv").read_bytes()
    assert (out / "summary.html").read_bytes() == (full / "summary.html").read_bytes()


def test_unknown_student_is_a_usage_error(tmp_path):
    submitted = _write(tmp_path / "submitted", {"alice": CLASS["alice"]})
    done = grade_command(submitted, tmp_path / "out", "--student", "zed", "--student", "alice")
    assert done.returncode == 2, done.stderr
    assert "'zed'" in done.stderr and "no such student" in done.stderr
    assert not (tmp_path / "out" / "grades.csv").exists()


def _layout_error(tmp_path: Path, submitted: Path) -> str:
    with pytest.raises(UsageError) as err:
        _grade(submitted, tmp_path / "out", tmp_path / "gb.db")
    return str(err.value)


def test_empty_submitted(tmp_path):
    (tmp_path / "submitted").mkdir()
    message = _layout_error(tmp_path, tmp_path / "submitted")
    assert "is empty" in message and "<student>/toy/toy.ipynb" in message


def test_flat_submitted(tmp_path):
    (tmp_path / "submitted").mkdir()
    (tmp_path / "submitted" / "alice.ipynb").write_text(json.dumps(CLASS["alice"]))
    message = _layout_error(tmp_path, tmp_path / "submitted")
    assert "notebooks directly (alice.ipynb)" in message and "<student>/toy/" in message


@pytest.mark.parametrize("inner", ["submitted", "section-a"])
def test_one_level_too_high(tmp_path, inner):
    _write(tmp_path / "course" / inner, {"alice": CLASS["alice"]})
    message = _layout_error(tmp_path, tmp_path / "course")
    assert "one level too high" in message and f"pass {tmp_path / 'course' / inner}" in message


def test_no_student_holds_the_assignment(tmp_path):
    (tmp_path / "submitted" / "alice" / "ps1").mkdir(parents=True)
    message = _layout_error(tmp_path, tmp_path / "submitted")
    assert "holds a toy/ folder (found alice)" in message


def _renamed(nb: dict, prefix: str) -> dict:
    """``nb`` with every nbgrader grade id prefixed: another assignment's notebook."""
    nb = json.loads(json.dumps(nb))
    for cell in nb["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader")
        if meta and meta.get("grade_id"):
            meta["grade_id"] = prefix + meta["grade_id"]
    return nb


def test_the_roster_missing_work_and_another_assignments_notebook(tmp_path):
    """A second assignment graded into the same SUBMITTED: a student without its folder is
    `missing`, not `error`; so is a rostered student without a folder; an id not on nbgrader's
    roster is graded with a warning; another assignment's notebook is an error naming it."""
    from nbgrader.api import Gradebook

    root = tmp_path / "course"
    shutil.copytree(TOY_ROOT, root)
    release = json.loads((root / "assignments" / "toy" / "toy.ipynb").read_text())
    (root / "assignments" / "toy2").mkdir()
    (root / "assignments" / "toy2" / "toy2.ipynb").write_text(json.dumps(_renamed(release,
                                                                                  "two_")))
    submitted = _write(tmp_path / "submitted", {"alice": CLASS["alice"], "eve": CLASS["alice"],
                                                "bob": _renamed(CLASS["alice"], "two_")})
    (submitted / "carl" / "toy2").mkdir(parents=True)
    db = tmp_path / "gb.db"
    with Gradebook(f"sqlite:///{db}") as gb:
        for student in ("alice", "bob", "carl", "zoe"):
            gb.add_student(student)
    out = tmp_path / "out"
    run = grading.grade(assignment="toy", submitted=submitted, out=out, workers=2,
                        db_url=f"sqlite:///{db}", root=root, package="toygrader",
                        seed="instructor-scale", progress=False, quiet=True,
                        limits=Limits(cell_timeout_s=10, cell_policy=False))
    rows = _rows(out)
    assert {s: (r["status"], r["score"]) for s, r in rows.items()} == {
        "alice": ("graded", "5.0"), "bob": ("error", "0.0"), "eve": ("graded", "5.0"),
        "carl": ("missing", "0.0"), "zoe": ("missing", "0.0")}
    assert "another assignment, toy2" in rows["bob"]["message"]
    assert rows["zoe"]["max_score"] == rows["alice"]["max_score"] == "5.0"
    assert "on the roster" in rows["zoe"]["message"]
    assert "no folder of this assignment" in rows["carl"]["message"]
    assert run.off_roster == ["eve"]
    said = grading.summary_table(run)
    assert "2 students handed nothing in" in said and "warning: 1 submissions" in said
    page = (out / "summary.html").read_text()
    missing = page.split("Students who handed nothing in")[1].split("<h2>")[0]
    assert "carl" in missing and "zoe" in missing and "alice" not in missing
    assert "eve" in page.split("not among nbgrader")[1].split("<h2>")[0]
    assert "3 submissions, 2 graded, 1 could not be graded" in page
    assert not (out / "results" / "zoe.json").exists()


DUNDER_IMPL = """\
# toy.impl
def square_impl(x):
    return x.__mul__(x)


square_p.def_impl(square_impl)
"""


def test_summary_lists_unattempted_timed_out_refused_and_ungradable_apart(tmp_path):
    import hostile

    from autograder.grade import summary

    students = {"stub": submission({"impl": True}), "wrong": submission(hostile.WITH_WRONG_JVP),
                "refused": submission(dict(FULL, impl=DUNDER_IMPL)),
                "looping": submission(dict(FULL, jvp=hostile.LOOPING_JVP))}
    submitted = _write(tmp_path / "submitted", students)
    (submitted / "broken" / "toy").mkdir(parents=True)
    (submitted / "broken" / "toy" / "toy.ipynb").write_text('{"cells": [')
    out = tmp_path / "out"
    grading.grade(assignment="toy", submitted=submitted, out=out, workers=2,
                  db_url=f"sqlite:///{tmp_path / 'gb.db'}", root=TOY_ROOT, package="toygrader",
                  seed="instructor-scale", progress=False, quiet=True,
                  limits=Limits(cell_timeout_s=10, cell_policy=True))
    spec = grading.load_assignment("toy", "toygrader")
    results = [dict(r, tests_by_check={c.id: t for c, t in zip(spec.checks, r["tests"])})
               for r in map(json.loads, (p.read_text() for p in (out / "results").glob("*.json")))
               if r["student_id"] != "broken"]
    kinds = summary._failures(spec, results)
    who = {kind: {s for _, s, _ in items} for kind, items in kinds.items()}
    # refused's jvp checks fail on JAX's missing impl rule: wrong, not unattempted.
    assert who == {"wrong": {"wrong", "refused"}, "unattempted": {"stub"}, "timed_out": {"looping"},
                   "refused": {"refused"}}, {k: [t["message"] for *_, t in v]
                                             for k, v in kinds.items()}
    assert {c.split(".")[1] for c, *_ in kinds["unattempted"]} == {"abstract", "jvp"}
    page = (out / "summary.html").read_text()
    for title, _ in summary._KINDS.values():
        assert title in page
    wrong_table = page.split("Checks that failed most often")[1].split("<h2>")[0]
    assert "toy.jvp" in wrong_table and "toy.jvp: write" not in wrong_table
    assert page.split("Submissions that could not be graded")[1].count("broken") == 1


def test_late_times_are_read_leniently():
    from autograder.grade import late

    assert late.parse_time("2026-11-28 10:15:00.123456 UTC").isoformat() == \
        "2026-11-28T10:15:00.123456+00:00"
    assert late.parse_time("2026-11-28T10:15Z").hour == 10
    assert late.parse_time("2026-11-28 11:15:00+01:00").utcoffset().total_seconds() == 3600
    assert late.parse_time("yesterday") is None


def test_late_policy_is_applied_from_timestamps(tmp_path):
    from autograder.grade import late

    root = tmp_path / "course"
    shutil.copytree(TOY_ROOT, root)
    (root / "course.toml").write_text('[late.toy]\ndue = "2026-11-20 12:00"\nlate_days = 3\n'
                                      'penalty_per_day = 0.1\n')
    stamps = {"ontime": "2026-11-20 11:59:59.5 UTC", "two_days": "2026-11-22 08:00:00 UTC",
              "too_late": "2026-11-25 12:00:01 UTC", "unreadable": "last tuesday"}
    submitted = _write(tmp_path / "submitted", dict.fromkeys(stamps, submission(FULL)))
    for student, stamp in stamps.items():
        (submitted / student / "toy" / "timestamp.txt").write_text(stamp + "\n")
    out = tmp_path / "out"
    grading.grade(assignment="toy", submitted=submitted, out=out, workers=2,
                  db_url=f"sqlite:///{tmp_path / 'gb.db'}", root=root, package="toygrader",
                  seed="instructor-scale", progress=False, quiet=True,
                  limits=Limits(cell_timeout_s=10, cell_policy=False))
    rows = _rows(out)
    assert {s: (r["score"], r["raw_score"], r["late_days"]) for s, r in rows.items()} == {
        "ontime": ("5.0", "5.0", "0"), "two_days": ("4.0", "5.0", "2"),
        "too_late": ("0.0", "5.0", "6"), "unreadable": ("5.0", "5.0", "0")}
    result = json.loads((out / "results" / "two_days.json").read_text())
    assert (result["score"], result["raw_score"], result["late_penalty"]) == (4.0, 5.0, 0.2)
    assert "unreadable" in json.loads((out / "results" / "unreadable.json").read_text())[
        "late_note"]
    page = (out / "feedback" / "two_days.html").read_text()
    assert "2 days late: 20% off" in page and "before the late penalty: 5" in page
    assert ",,,two_days,,4\r\n" in exports.canvas_csv(out)
    assert exports.gradescope_results(result)["score"] == 4.0
    assert late.load(TOY_ROOT, "toy") is None  # no course.toml: nothing changes
