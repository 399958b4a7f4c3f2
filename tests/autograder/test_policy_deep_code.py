"""Code the cell policy cannot walk (nested past the parser's or the interpreter's depth) makes
that notebook an `error` that says why; it never reaches the class's worker-failure path."""

from __future__ import annotations

import json

from engine_helpers import TOY_ROOT
from toy_notebooks import FULL, submission

from autograder.grade import grading
from autograder.instructor import exports
from autograder.limits import Limits

DEEP = {"unary": "x = " + "-" * 100_000 + "1\n", "sum": "x = " + " + ".join(["1"] * 100_000)}


def test_code_too_deep_to_check_is_that_notebooks_error(tmp_path):
    students = {"honest": submission(FULL),
                **{name: submission(FULL, extra={"start": [code]}) for name, code in DEEP.items()}}
    for student, nb in students.items():
        folder = tmp_path / "submitted" / student / "toy"
        folder.mkdir(parents=True)
        (folder / "toy.ipynb").write_text(json.dumps(nb))
    out = tmp_path / "out"
    grading.grade(assignment="toy", submitted=tmp_path / "submitted", out=out, workers=1,
                  db_url=f"sqlite:///{tmp_path / 'gradebook.db'}", root=TOY_ROOT,
                  package="toygrader", seed="deep-code", limits=Limits(cell_timeout_s=10),
                  progress=False, quiet=True)
    rows = {r["student_id"]: r for r in exports.read_grades(out)}
    assert (rows["honest"]["status"], rows["honest"]["score"]) == ("graded", "5.0")
    # Past the parser's depth: the policy cannot read it.
    assert rows["unary"]["status"] == "error", rows["unary"]
    assert "could not be checked" in rows["unary"]["message"], rows["unary"]
    # A long flat sum is within reach of some processes' recursion limit and not others': either
    # way the notebook is graded or is its own error, never the grader's failure.
    assert (rows["sum"]["status"], rows["sum"]["score"]) in (("graded", "5.0"), ("error", "0.0"))
    for name in DEEP:
        assert "grader failed" not in rows[name]["message"]
        assert rows[name]["max_score"] == "5.0"
