"""ps4_core, what is particular to it: the stubs name their tasks, the binder check's programs,
the release, and no graded answer importable. The reference, the untouched notebook, the wrong
solutions and the alternatives are graded by the contract tests (tests/contract/).
"""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat
import numpy as np

from autograder.instructor import release
from autograder.assignments.ps4_core import checks, mutants

ROOT = Path(__file__).resolve().parents[2]


def test_every_task_is_checked_and_named_in_its_stub():
    source = mutants.SOURCE.read_text()
    for task in checks.TASKS:
        assert any(check.task == task.id for check in checks.CHECKS), task.id
        assert f'NotImplementedError("{task.id}: ' in source, task.id
        assert f"# {task.id}\n" in source, task.id
        assert any(task.id in check.id for check in checks.CHECKS), task.id


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
