"""ps4_core: the reference earns every point, the untouched notebook none, each realistic wrong
solution loses points on its own task only, and each correct alternative earns every point.

The notebooks run in one subprocess (tests/assignments/variants.py), which keeps the JAX
configuration the checks set and the objects the notebooks define out of this test process.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import jupytext
import nbformat
import numpy as np
import pytest

from autograder import release
from autograder.assignments.ps4_core import checks, mutants

ROOT = Path(__file__).resolve().parents[2]
TOTAL = sum(check.points for check in checks.CHECKS)
ALTERNATIVES = [f"alt:{name}" for name in sorted(mutants.ALTERNATIVES)]


@pytest.fixture(scope="module")
def graded():
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    env = dict(os.environ, PYTHONPATH=path)
    variants = ["reference", "untouched", *ALTERNATIVES, *mutants.MUTANTS]
    done = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning",
         str(ROOT / "tests" / "assignments" / "variants.py"), *variants],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=1200, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def _lost(result) -> dict[str, float]:
    lost: dict[str, float] = defaultdict(float)
    for check in result["checks"]:
        if not check["passed"]:
            lost[check["task"]] += check["max_points"]
    return dict(lost)


def test_points_of_each_test_cell_match_its_checks():
    cells = {c.metadata["nbgrader"]["grade_id"]: c.metadata["nbgrader"]
             for c in jupytext.read(mutants.SOURCE).cells if "nbgrader" in c.metadata}
    per_cell: dict[str, float] = defaultdict(float)
    for check in checks.CHECKS:
        assert cells[check.grade_cell]["grade"] and not cells[check.grade_cell]["solution"]
        per_cell[check.grade_cell] += check.points
    graded_cells = {gid: meta["points"] for gid, meta in cells.items() if meta.get("grade")}
    assert per_cell == graded_cells


def test_every_task_is_checked_and_named_in_its_stub():
    source = mutants.SOURCE.read_text()
    for task in checks.TASKS:
        assert any(check.task == task.id for check in checks.CHECKS), task.id
        assert f'NotImplementedError("{task.id}: ' in source, task.id
        assert f"# {task.id}\n" in source, task.id
        assert any(task.id in check.id for check in checks.CHECKS), task.id


def test_reference_earns_every_point(graded):
    result = graded["reference"]
    assert result["cell_errors"] == [] and result["visible_failures"] == []
    failed = [(c["id"], c["message"]) for c in result["checks"] if not c["passed"]]
    assert failed == []
    assert sum(c["points"] for c in result["checks"]) == TOTAL


def test_untouched_notebook_earns_nothing_without_crashing(graded):
    result = graded["untouched"]
    assert result["cell_errors"] == []  # stubs define everything; they raise only when called
    assert sum(c["points"] for c in result["checks"]) == 0
    for check in result["checks"]:
        assert "NotImplementedError" in check["message"], check


@pytest.mark.parametrize("name", ALTERNATIVES)
def test_correct_alternative_earns_every_point(graded, name):
    result = graded[name]
    assert result["cell_errors"] == [] and result["visible_failures"] == []
    failed = [(c["id"], c["message"]) for c in result["checks"] if not c["passed"]]
    assert failed == []


@pytest.mark.parametrize("name", sorted(mutants.MUTANTS))
def test_mutant_loses_points_on_its_own_task(graded, name):
    result = graded[name]
    assert result["cell_errors"] == []
    lost = _lost(result)
    assert set(lost) == {mutants.TASK[name]}, lost
    for check in result["checks"]:
        if not check["passed"]:
            assert check["blame"] and check["message"], check


def _needed(program: dict, n_args: int = 3) -> set[int]:
    """The values (arguments included) the outputs of a program need, walking back from them."""
    needed, stack = set(), list(program["outs"])
    while stack:
        k = stack.pop()
        if k not in needed:
            needed.add(k)
            if k >= n_args:
                stack.extend(program["steps"][k - n_args][1:])
    return needed


def test_binder_check_always_leaves_an_input_unused_and_needs_the_constant():
    """Whatever the seed (the real grader's differs per student and per submission), a pass that
    drops the binder of an unused input, or the constvars, is caught by ps4.dce.values: its
    programs read inputs 0 and 1 and the constant 2, and their outputs need one input only."""
    (check,) = [c for c in checks.CHECKS if c.id == "ps4.dce.values"]
    for seed in range(200):
        for case in check.make_inputs(np.random.default_rng(seed))["cases"]:
            needed = _needed(case["program"])
            assert {0, 1} - needed and 2 in needed, seed


def test_release_is_not_stale():
    assert release.stale("ps4_core", root=ROOT) == []


def test_released_cells_parse_and_stubs_name_their_task():
    nb = nbformat.read(release.release_path("ps4_core", root=ROOT), as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            ast.parse(cell.source)
    text = "\n".join(cell.source for cell in nb.cells)
    assert "BEGIN SOLUTION" not in text and "check_cell" not in text
    for task in checks.TASKS:
        assert f'NotImplementedError("{task.id}: ' in text, task.id


def test_enough_mutants_and_alternatives():
    assert len(mutants.MUTANTS) >= 20
    assert len(mutants.ALTERNATIVES) >= 6
    assert set(mutants.DEMO) <= set(mutants.MUTANTS)
    assert {mutants.TASK[name] for name in mutants.MUTANTS} == {t.id for t in checks.TASKS}


def test_no_graded_answer_is_importable():
    """The course package the student's process imports holds none of the three answers."""
    from jaxcourse.autodidax.core import broadcast_p
    from jaxcourse.core import transpose

    assert broadcast_p not in transpose.transpose_rules
    package = ROOT / "jaxcourse"
    text = "\n".join(p.read_text() for p in package.rglob("*.py"))
    for name in ("def dce_jaxpr", "def fold_constants", "def broadcast_transpose"):
        assert name not in text, name
