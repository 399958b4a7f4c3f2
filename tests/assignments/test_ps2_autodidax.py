"""ps2_autodidax, graded as a class by the real command: the reference and every correct
alternative earn every point, the untouched notebook none, and each realistic wrong solution
loses points on its own task only, with feedback that names the rule.

The class (tests/assignments/ps2_variants.py) is graded once, by ``python -m autograder grade``
in a subprocess; the visible tests, which the grader does not run, run in one more subprocess.
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import jupytext
import nbformat
import pytest
from ps2_alternatives import ALTERNATIVES

from autograder import release
from autograder.assignments.ps2_autodidax import checks, mutants

ROOT = Path(__file__).resolve().parents[2]
VARIANTS = ROOT / "tests" / "assignments" / "ps2_variants.py"
TOTAL = sum(check.points for check in checks.CHECKS)
# The class fixture grades ~47 notebooks with the real command, one worker: minutes, not seconds.
pytestmark = pytest.mark.timeout(3600)
TASK_OF = {check.id: check.task for check in checks.CHECKS}
GRADED_NAMES = ("exp_jvp", "log_jvp", "div_jvp", "max_jvp", "matmul_jvp", "matmul_batch",
                "transpose_batch", "broadcast_batch", "vmap_axes")


def _env():
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """student id -> results JSON, for the whole class graded by the real command."""
    tmp = tmp_path_factory.mktemp("ps2")
    subprocess.run([sys.executable, str(VARIANTS), "write", str(tmp / "submitted")], env=_env(),
                   cwd=ROOT, check=True, timeout=600)
    done = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", "ps2_autodidax", str(tmp / "submitted"),
         "--out", str(tmp / "out"), "--seed", "0", "--workers", "2", "--no-progress"],
        env=_env(), cwd=ROOT, capture_output=True, text=True, timeout=3000, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return {path.stem: json.loads(path.read_text())
            for path in (tmp / "out" / "results").glob("*.json")}


@pytest.fixture(scope="module")
def visible():
    names = ["reference", *ALTERNATIVES]
    done = subprocess.run([sys.executable, "-W", "error::DeprecationWarning", str(VARIANTS),
                           "visible", *names], env=_env(), cwd=ROOT, capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def _lost(result) -> dict[str, float]:
    lost: dict[str, float] = defaultdict(float)
    for test in result["tests"]:
        if test["points"] < test["max_points"]:
            lost[TASK_OF[test["name"].split(":")[0]]] += test["max_points"] - test["points"]
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


def test_reference_earns_every_point(graded):
    result = graded["reference"]
    failed = [(t["name"], t["message"]) for t in result["tests"] if t["status"] != "passed"]
    assert failed == []
    assert result["score"] == result["max_score"] == TOTAL


@pytest.mark.parametrize("name", sorted(ALTERNATIVES))
def test_correct_alternative_earns_every_point(graded, name):
    failed = [(t["name"], t["message"]) for t in graded[name]["tests"] if t["status"] != "passed"]
    assert failed == []
    assert graded[name]["score"] == TOTAL


def test_reference_and_alternatives_pass_every_visible_test(visible):
    assert {name: failures for name, failures in visible.items() if failures} == {}


def test_untouched_notebook_earns_nothing_without_crashing(graded):
    result = graded["untouched"]
    assert result["score"] == 0 and len(result["tests"]) == len(checks.CHECKS)
    for test in result["tests"]:
        assert test["status"] == "failed", test
        assert "NotImplementedError" in test["message"], test


@pytest.mark.parametrize("name", sorted(mutants.MUTANTS))
def test_mutant_loses_points_on_its_own_task(graded, name):
    result = graded[name]
    lost = _lost(result)
    assert set(lost) == {mutants.TASK[name]}, lost
    for test in result["tests"]:
        if test["status"] != "passed":
            assert test["message"], test


def test_enough_mutants_on_every_task_and_enough_alternatives():
    assert len(mutants.MUTANTS) >= 30 and len(ALTERNATIVES) >= 8
    assert set(mutants.TASK.values()) == {task.id for task in checks.TASKS}
    assert set(mutants.DEMO) <= set(mutants.MUTANTS)


def test_release_is_not_stale():
    assert release.stale("ps2_autodidax", root=ROOT) == []


def test_released_cells_parse_and_stubs_name_their_task():
    nb = nbformat.read(release.release_path("ps2_autodidax", root=ROOT), as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            ast.parse(cell.source)
    text = "\n".join(cell.source for cell in nb.cells)
    assert "BEGIN SOLUTION" not in text and "check_cell" not in text
    for task in checks.TASKS:
        assert f'NotImplementedError("{task.id}: ' in text, task.id


def test_nothing_importable_holds_a_graded_rule():
    """The course's package and the probes define none of the graded functions, and after
    importing all of them no table holds a rule for a graded primitive."""
    modules = ["jaxcourse.autodidax." + m for m in ("core", "jvp", "pytree", "batching",
                                                    "vmap", "extra")]
    modules += ["autograder.assignments.ps2_autodidax.probes",
                "autograder.assignments.ps2_autodidax.programs"]
    for name in modules:
        module = importlib.import_module(name)
        assert not set(GRADED_NAMES) & set(vars(module)), name
    from jaxcourse.autodidax import batching, core, extra, jvp

    for prim in (extra.exp_p, extra.log_p, extra.div_p, extra.max_p, extra.matmul_p):
        assert prim not in jvp.jvp_rules and prim not in batching.vmap_rules
    assert core.transpose_p not in batching.vmap_rules
    assert core.broadcast_p not in batching.vmap_rules
    for path in (ROOT / "jaxcourse").rglob("*.py"):
        text = path.read_text()
        for graded_name in GRADED_NAMES:
            assert f"def {graded_name}(" not in text, (path, graded_name)
