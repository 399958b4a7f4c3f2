"""The whole hostile/faulty class graded by ONE run of the real command; exact points each."""

from __future__ import annotations

import re

import hostile
import pytest
from engine_helpers import REPO, grade_command, read_grades, read_result

from autograder.record import _gradebook_api

SECRET_ENV = "GRADER_ONLY_TOKEN"
SECRET_VALUE = "tok-7f3a9c-grader-env"
HTML_PROBE = "<script>alert('feedback')</script>"


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("hostile")
    submitted, out = base / "submitted", base / "out"
    snoop_paths = [str(submitted), str(out), str(REPO / "tests"), str(REPO / "autograder"),
                   str(REPO / "tests" / "fixtures" / "toygrader"), str(base)]
    cases = hostile.cases(snoop_paths)
    cases["html_in_output"] = (hostile.submission(
        hostile.FULL, extra={"start": [f"print({HTML_PROBE!r})"]}), 5)
    hostile.write_class(submitted, cases)
    # A decoy result another run left in OUT: student code must not be able to overwrite it.
    (out / "results").mkdir(parents=True)
    proc = grade_command(submitted, out, env={SECRET_ENV: SECRET_VALUE})
    return {"proc": proc, "out": out, "cases": cases, "submitted": submitted, "base": base}


def test_run_completes(graded):
    assert graded["proc"].returncode == 0, graded["proc"].stderr[-3000:]
    assert set(read_grades(graded["out"])) == set(graded["cases"])
    assert "Warning" not in graded["proc"].stderr  # JAX deprecations included
    assert "submissions in" in graded["proc"].stdout  # the summary table


@pytest.mark.parametrize("student", sorted(hostile.cases([]).keys()) + ["html_in_output"])
def test_exact_points(graded, student):
    row = read_grades(graded["out"])[student]
    expected = graded["cases"][student][1]
    assert float(row["score"]) == expected, row
    assert float(row["max_score"]) == 5.0  # the GPU check is not-run here and left out
    assert row["status"] == ("error" if student in hostile.ERRORS else "graded"), row


def test_results_json_matches_csv(graded, toy_assignment):
    for student, row in read_grades(graded["out"]).items():
        result = read_result(graded["out"], student)
        assert set(result) == {"student_id", "assignment", "score", "max_score", "tests"}
        assert result["score"] == float(row["score"]) == sum(t["points"] for t in result["tests"])
        assert [t["name"].split(":")[0] for t in result["tests"]] == [
            c.id for c in toy_assignment.checks]
        for test in result["tests"]:
            assert set(test) == {"name", "points", "max_points", "status", "message"}
            assert test["status"] in {"passed", "failed", "error", "not-run"}


def test_failures_name_the_rule(graded):
    result = read_result(graded["out"], "honest_wrong_jvp")
    failed = [t for t in result["tests"] if t["status"] == "failed"]
    assert {t["name"].split(":")[0] for t in failed} == {"toy.jvp.grad", "toy.jvp.x64"}
    for test in failed:
        assert test["message"].startswith("[toy.jvp]") and "square_jvp" in test["message"]
    loop = read_result(graded["out"], "infinite_loop_rule")
    assert any("time limit" in t["message"] for t in loop["tests"] if t["status"] == "failed")


def test_crash_reasons_are_reported(graded):
    out = graded["out"]
    os_exit = (out / "feedback" / "os_exit.html").read_text()
    assert "os._exit" in os_exit and "status 3" in os_exit
    loop = (out / "feedback" / "infinite_loop_cell.html").read_text()
    assert "time limit of 10 s per cell" in loop
    flood = (out / "feedback" / "output_flood.html").read_text()
    assert "output limit" in flood and len(flood) < 200_000
    assert "edited provided or test cell" in (out / "feedback" / "edited_tests.html").read_text()
    assert "put back" in (out / "feedback" / "deleted_tests.html").read_text()
    assert "not valid JSON" in read_grades(out)["bad_json"]["message"]
    memory = (out / "feedback" / "memory_flood.html").read_text()
    assert "MemoryError: the memory limit of 3072 MiB was reached" in memory


def test_tampering_is_noted_and_undone(graded):
    text = (graded["out"] / "feedback" / "patch_numpy.html").read_text()
    assert "numpy.allclose" in text and "restored before grading" in text
    text = (graded["out"] / "feedback" / "patch_jax.html").read_text()
    assert "jax.grad" in text and "sys.modules" in text


def test_nothing_leaks_from_the_grader(graded, toy_assignment):
    feedback = "".join(p.read_text() for p in (graded["out"] / "feedback").iterdir())
    # The snooping cell prints these markers only when a read, write or connection worked.
    for marker in ("READ-OK /", "WROTE-OK /", "NETWORK-REACHED 1", "NETWORK-REACHED 8",
                   SECRET_VALUE, "engine-tests"):
        assert marker not in feedback
    # Hidden directories are absent or empty from inside the sandbox.
    listings = re.findall(r"LISTED (/\S+) (\[[^\]]*\])", feedback)
    assert all(content == "[]" for _, content in listings)
    assert feedback.count("hidden: /") + len(listings) >= 6
    checks_source = (REPO / "tests/fixtures/toygrader/toy/checks.py").read_text()
    for line in checks_source.splitlines():
        if "blame=" in line or "lambda" in line:
            assert line.strip() not in feedback
    assert HTML_PROBE not in feedback and "&lt;script&gt;" in feedback


def test_outputs_not_overwritten_by_students(graded):
    out = graded["out"]
    assert read_grades(out)["snoop_files_env"]["score"] == "5.0"
    assert "student,100" not in (out / "grades.csv").read_text()
    assert not (graded["submitted"] / "grades.csv").exists()


def test_gradebook_holds_per_cell_scores(graded):
    Gradebook, _ = _gradebook_api()
    db = graded["out"].parent / "out-gradebook.db"
    cells = ("test_impl", "test_abstract", "test_jvp", "test_gpu")
    with Gradebook(f"sqlite:///{db}") as gb:
        scores = {(student, cell): gb.find_grade(cell, "toy", "toy", student).score
                  for student in graded["cases"] for cell in cells}
        assert gb.find_grade_cell("test_abstract", "toy", "toy").max_score == 2.0
    assert scores[("honest_full", "test_abstract")] == 2.0
    assert scores[("honest_wrong_jvp", "test_jvp")] == 0.0
    assert scores[("honest_impl_only", "test_impl")] == 1.0
    for student, row in read_grades(graded["out"]).items():
        assert sum(scores[(student, c)] for c in cells) == float(row["score"])


def test_honest_students_grade_the_same_alone(graded, tmp_path):
    """Grading only the honest students (a second, separate run) gives byte-identical results:
    hostile classmates change nothing, and grading twice gives the same grades."""
    honest = {k: graded["cases"][k] for k in hostile.HONEST}
    submitted = hostile.write_class(tmp_path / "submitted", honest)
    proc = grade_command(submitted, tmp_path / "out")
    assert proc.returncode == 0, proc.stderr[-3000:]
    for student in hostile.HONEST:
        assert read_result(tmp_path / "out", student) == read_result(graded["out"], student)
