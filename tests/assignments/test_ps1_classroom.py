"""The demo class and submissions built from an assignment's sources."""

from __future__ import annotations

import json

import nbformat
import pytest
from grade_inprocess import ROOT

from autograder.instructor.classroom import demo_class, make_submission, solution_sources
from autograder.instructor.release import release_path

NAME = "ps1_primitives"


def test_demo_class_layout(tmp_path):
    dest = demo_class(NAME, tmp_path / "submitted", root=ROOT)
    students = sorted(p.name for p in dest.iterdir())
    assert students == sorted(["full", "untouched", "partial", "broken", "wrong_jvp_drops_w_term",
                               "wrong_batch_axis_not_shifted", "wrong_lowering_cpu_only"])
    for student in students:
        path = dest / student / NAME / f"{NAME}.ipynb"
        assert path.is_file()
        if student == "broken":
            with pytest.raises(json.JSONDecodeError):
                json.loads(path.read_text())
        else:
            nbformat.validate(nbformat.read(path, as_version=4))
    # The untouched student hands back the released notebook itself.
    untouched = nbformat.read(dest / "untouched" / NAME / f"{NAME}.ipynb", as_version=4)
    assert untouched == nbformat.read(release_path(NAME, root=ROOT), as_version=4)


def test_solution_sources_have_no_region_markers():
    sources = solution_sources(NAME, root=ROOT)
    assert set(sources) == {"impl", "abstract_eval", "lowering", "jvp", "transpose", "batch"}
    for source in sources.values():
        assert "### BEGIN SOLUTION" not in source and "### END SOLUTION" not in source


def test_make_submission_refuses_unknown_cells():
    with pytest.raises(KeyError):
        make_submission(NAME, {"no_such_cell": "pass"}, root=ROOT)
