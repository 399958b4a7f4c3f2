"""One submission can never stop or change anyone else's grade: the class run's output steps.

A toy class of honest students is graded alone, then again next to every harmful submission
(text that is not UTF-8, ids no file system or spreadsheet takes as they are, notebooks JSON
cannot read, a worker that died, a feedback page or gradebook row that cannot be written). The
honest students' files are byte-identical in both runs; every student has a row in grades.csv,
the summary and the gradebook; the harmful ones are graded or `error` rows that say why.
"""

from __future__ import annotations

import csv
import json
import os
from html import escape
from pathlib import Path

import pytest
from engine_helpers import TOY_ROOT
from toy_notebooks import FULL, submission

from autograder.grade import feedback, grading, record
from autograder.instructor import exports
from autograder.limits import Limits

HONEST = {"alice": submission(FULL), "bob": submission({"impl": True}), "carol": submission()}
LONG_ID = "x" * 252  # results/<id>.json would be past NAME_MAX
FORMULA_IDS = ("=2+5+cmd|' -C calc'!A0", "@SUM(1+1)*cmd")
NOT_UTF8 = os.fsdecode(b"bad\xff")  # a folder name that is not UTF-8


def _markdown_surrogate() -> dict:
    nb = submission(FULL)
    nb["cells"].insert(0, {"cell_type": "markdown", "metadata": {}, "source": "odd \ud800 text"})
    return nb


def _nested() -> bytes:
    nb = json.dumps(submission(FULL)).encode()
    return nb.replace(b'"metadata": {', b'"metadata": {"deep": ' + b"[" * 100_000
                      + b"]" * 100_000 + b", ", 1)


HARMFUL: dict[str, object] = {
    "surrogate_output": submission(FULL, extra={"start": ["print(chr(0xD800))"]}),
    "surrogate_markdown": _markdown_surrogate(),
    LONG_ID: submission(FULL),
    NOT_UTF8: submission(FULL),
    "nested": _nested(),
    "huge_number": json.dumps(submission(FULL)).encode()[:-1] + b', "n": ' + b"9" * 5000 + b"}",
    FORMULA_IDS[0]: submission(FULL),
    FORMULA_IDS[1]: submission(FULL),
    "worker_died": submission(FULL),  # its worker's result is replaced by a crash (below)
    "render_fails": submission(FULL),  # its feedback page raises (below)
    "gradebook_fails": submission(FULL),  # its gradebook row raises (below)
}


def _write_class(dest: Path, students: dict, *, symlink: bool) -> Path:
    for student, content in students.items():
        folder = dest / student / "toy"  # a str of os.fsdecode: any bytes the name had
        folder.mkdir(parents=True)
        data = content if isinstance(content, bytes) else json.dumps(content).encode()
        (folder / "toy.ipynb").write_bytes(data)
    if not symlink:
        return dest
    # A notebook under a name that is not UTF-8, and a link: refused, said with its name.
    folder = dest / "symlinked" / "toy"
    folder.mkdir(parents=True)
    (folder / os.fsdecode(b"\xff.ipynb")).symlink_to(dest / "alice" / "toy" / "toy.ipynb")
    return dest


def _grade(base: Path, name: str, students: dict, *, symlink: bool = False):
    submitted = _write_class(base / f"{name}_submitted", students, symlink=symlink)
    out = base / f"{name}_out"
    run = grading.grade(assignment="toy", submitted=submitted, out=out, workers=2,
                        db_url=f"sqlite:///{base / (name + '.db')}", root=TOY_ROOT,
                        package="toygrader", seed="class-outputs",
                        limits=Limits(cell_timeout_s=10, cell_policy=False), progress=False,
                        quiet=True)
    return run, out, base / (name + ".db")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("class_outputs")
    honest = _grade(base, "honest", HONEST)
    patch = pytest.MonkeyPatch()
    real_pool, real_render, real_row = grading._run_pool, feedback.render, record._gradebook_row

    def pool(config, jobs, workers, progress, **kw):
        details = real_pool(config, jobs, workers, progress, **kw)
        details["worker_died"] = record.submission_error(
            "worker_died", "the grader failed on this submission", RuntimeError("boom"))
        return details

    def render(result, spec, detail, **options):
        if result["student_id"] == "render_fails":
            raise RuntimeError("render broke")
        return real_render(result, spec, detail, **options)

    def row(gb, missing, name, notebook, grade_cells, result, check_cells):
        if result["student_id"] == "gradebook_fails":
            raise RuntimeError("gradebook broke")
        real_row(gb, missing, name, notebook, grade_cells, result, check_cells)

    patch.setattr(grading, "_run_pool", pool)
    patch.setattr(feedback, "render", render)
    patch.setattr(record, "_gradebook_row", row)
    try:
        mixed = _grade(base, "mixed", {**HONEST, **HARMFUL}, symlink=True)
    finally:
        patch.undo()
    return honest, mixed


def _rows(out: Path) -> dict[str, dict]:
    return {r["student_id"]: r for r in exports.read_grades(out)}


def test_honest_students_are_graded_byte_identically_next_to_harmful_ones(runs):
    (_, honest, _), (_, mixed, _) = runs
    for student in HONEST:
        for sub, suffix in (("results", "json"), ("feedback", "html")):
            path = Path(sub) / f"{student}.{suffix}"
            assert (mixed / path).read_bytes() == (honest / path).read_bytes(), path
    assert {k: _rows(mixed)[k] for k in HONEST} == _rows(honest)
    assert _rows(honest)["alice"]["score"] == "5.0"


def test_every_student_has_a_row_a_results_file_and_a_gradebook_entry(runs):
    from nbgrader.api import Gradebook

    _, (run, out, db) = runs
    shown = {record.valid_text(s) for s in [*HONEST, *HARMFUL, "symlinked"]}
    rows = _rows(out)
    assert set(rows) == shown and {r["student_id"] for r in run.rows} == shown
    for folder in [*HONEST, *HARMFUL, "symlinked"]:
        assert (out / "results" / f"{record.safe_filename(folder)}.json").is_file(), folder
    page = (out / "summary.html").read_text(encoding="utf-8")
    with Gradebook(f"sqlite:///{db}") as gb:
        for student in shown - {"gradebook_fails"}:
            assert gb.find_submission("toy", student).score == float(rows[student]["score"])
    for student, row in rows.items():
        assert row["max_score"] == "5.0", student  # the GPU check is not-run for everyone
        if row["status"] == "error":
            assert row["message"] and escape(row["message"][:60]) in page
    # Every file is valid UTF-8 (a lone surrogate would not be).
    for path in out.rglob("*"):
        if path.is_file():
            path.read_bytes().decode("utf-8")


def test_each_harmful_submission_is_graded_or_an_error_that_says_why(runs):
    _, (_, out, _) = runs
    rows = _rows(out)
    for student in ("surrogate_output", "surrogate_markdown", LONG_ID, *FORMULA_IDS):
        assert (rows[student]["status"], rows[student]["score"]) == ("graded", "5.0"), student
    page = (out / "feedback" / "surrogate_markdown.html").read_text(encoding="utf-8")
    assert "odd \ufffd text" in page
    output = (out / "feedback" / "surrogate_output.html").read_text(encoding="utf-8")
    assert "\ufffd" in output
    long_name = record.safe_filename(LONG_ID)  # a name the file system takes
    assert len(long_name) < 100
    assert json.loads((out / "results" / f"{long_name}.json").read_text())["student_id"] == LONG_ID
    assert (out / "feedback" / f"{long_name}.html").is_file()
    for student in ("nested", "huge_number"):
        assert rows[student]["status"] == "error"
        assert "could not be read as a notebook" in rows[student]["message"]
    assert rows["worker_died"]["status"] == "error" and "boom" in rows["worker_died"]["message"]
    assert rows["render_fails"]["status"] == "error"
    assert "render broke" in rows["render_fails"]["message"]
    assert rows["gradebook_fails"]["status"] == "error"
    assert "gradebook broke" in rows["gradebook_fails"]["message"]
    assert rows["symlinked"]["status"] == "error" and "\ufffd.ipynb" in rows["symlinked"]["message"]
    assert rows[record.valid_text(NOT_UTF8)]["student_id"] == "bad\ufffd"


def test_no_csv_field_starts_a_spreadsheet_formula(runs):
    _, (_, out, _) = runs
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        raw = list(csv.reader(f))
    canvas = list(csv.reader(exports.canvas_csv(out).splitlines()))
    for table in (raw, canvas):
        for line in table:
            assert not any(field.startswith(("=", "+", "-", "@", "\t", "\r")) for field in line)
    assert [r for r in raw if r[0] == "'" + FORMULA_IDS[0]]
    logins = {line[3] for line in canvas[2:]}
    assert {"'" + FORMULA_IDS[0], "'" + FORMULA_IDS[1], "alice"} <= logins
    assert canvas[1][5] == "5"  # Points Possible: the assignment's maximum


def test_exports_find_every_student_by_the_id_grades_csv_shows(runs, tmp_path):
    _, (_, out, _) = runs
    for student in _rows(out):
        dest = exports.write_gradescope(out, student, tmp_path / "results.json")
        data = json.loads(dest.read_text(encoding="utf-8"))
        assert data["score"] == float(_rows(out)[student]["score"])


def test_links_in_student_markdown_are_text_never_clickable():
    md = feedback._markdown()
    html = md.render("[docs](https://example.org/x) <https://example.org/y> "
                     "[js](javascript:alert(1)) [ref][1] <a href='https://example.org/z'>a</a>"
                     "\n\n[1]: https://example.org/r\n")
    assert "<a" not in html  # the raw <a href> is shown escaped, as text
    assert "docs (https://example.org/x)" in html and "https://example.org/y" in html
    assert "ref (https://example.org/r)" in html and "[js](javascript:alert(1))" in html


def test_ordinary_ids_are_their_own_file_names_and_others_never_collide():
    for student in ("alice", "s123", "a.b-c_d@e+f", "-x", "x" * 100):
        assert record.safe_filename(student) == student
    odd = ["x" * 101, "x" * 252, ".hidden", "..", "a/b", "a b", "josé", NOT_UTF8,
           os.fsdecode(b"bad\xfe"), "bad\ufffd", "\ud800", *FORMULA_IDS, "x" * 252 + "y"]
    names = [record.safe_filename(s) for s in odd]
    assert len(set(names)) == len(odd)
    for name in names:
        assert "~" in name and len(name.encode()) < 120 and not name.startswith(".")
        assert all(c.isascii() and c.isprintable() and c not in "/\\ " for c in name), name
    assert record.safe_filename(NOT_UTF8).startswith("bad%FF~")


def test_csv_fields_round_trip_and_never_start_a_formula():
    for text in ("alice", "=1+1", "+1", "-1", "@x", "\tx", "\rx", "'x", "''", "", "a=b"):
        field = record.csv_field(text)
        assert not field.startswith(("=", "+", "-", "@", "\t", "\r"))
        assert record.csv_field_read(field) == text
    assert record.csv_field("alice") == "alice" and record.csv_field("3 of 5") == "3 of 5"
