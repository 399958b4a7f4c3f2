"""autograder.worker.points: a test cell's released points are what its checks add up to."""

from __future__ import annotations

import math

from engine_helpers import TOY_ROOT

from autograder.grade.grading import load_assignment
from autograder.worker import points
from autograder.worker.normalise import read_release


def _release(changed: dict[str, float]) -> list[dict]:
    cells = read_release(TOY_ROOT / "assignments" / "toy" / "toy.ipynb")
    for cell in cells:
        meta = cell["metadata"].get("nbgrader", {})
        if meta.get("grade_id") in changed:
            meta["points"] = changed[meta["grade_id"]]
    return cells


def _by_cell(spec) -> dict[str, list[float]]:
    found: dict[str, list[float]] = {}
    for check in spec.checks:
        found.setdefault(check.grade_cell, []).append(check.points)
    return found


def test_points_as_released_change_nothing():
    spec = load_assignment("toy", "toygrader")
    assert points.scaled(spec, _release({})) is spec and points.changes(spec, _release({})) == []


def test_a_cell_s_checks_keep_their_proportions_and_make_its_points_exactly():
    spec = load_assignment("toy", "toygrader")
    release = _release({"test_abstract": 10 / 3, "test_jvp": 7})
    new = _by_cell(points.scaled(spec, release))
    assert math.fsum(new["test_abstract"]) == 10 / 3 and new["test_jvp"] == [3.5, 3.5]
    assert abs(new["test_abstract"][0] - new["test_abstract"][1]) <= 1e-6
    assert new["test_impl"] == _by_cell(spec)["test_impl"]  # unchanged cells keep theirs
    assert points.changes(spec, release) == ["test_abstract: 2 -> 3.33333", "test_jvp: 2 -> 7"]
