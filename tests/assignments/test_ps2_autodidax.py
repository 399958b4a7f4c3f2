"""ps2_autodidax, what is particular to it: the stubs name their tasks, the release, and no graded
rule importable. The reference, the untouched notebook, the wrong solutions and the correct
alternatives (mutants.ALTERNATIVES) are graded by the contract tests (tests/contract/); the real
command grades its demo class (tests/test_demo_classes.py).
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import nbformat
import numpy as np

from autograder.instructor import release
from autograder.assignments.ps2_autodidax import checks, mutants

ROOT = Path(__file__).resolve().parents[2]
GRADED_NAMES = ("exp_jvp", "log_jvp", "div_jvp", "max_jvp", "matmul_jvp", "matmul_batch",
                "transpose_batch", "broadcast_batch", "vmap_axes")


def test_every_task_is_checked_and_named_in_its_stub():
    source = mutants.SOURCE.read_text()
    for task in checks.TASKS:
        assert any(check.task == task.id for check in checks.CHECKS), task.id
        assert f'NotImplementedError("{task.id}: ' in source, task.id
        assert f"# {task.id}\n" in source, task.id


def test_matmul_batching_runs_every_pair_of_in_axes_whatever_the_seed():
    """ps2.matmul.vmap and .jvp_of_vmap run every (x's in-axis, y's in-axis) pair that exists,
    for matrices and for stacks, unmapped on one side included (never on both), on every
    grading: a rule wrong for one pair cannot pass by the seed's luck."""
    for check in (c for c in checks.CHECKS if c.id in ("ps2.matmul.vmap",
                                                        "ps2.matmul.jvp_of_vmap")):
        for seed in range(50):
            found = set()
            for case in check.make_inputs(np.random.default_rng(seed))["cases"]:
                x = case["args"][0]
                rank = np.ndim(x) - (case["in_axes"][0] is not None)
                found.add((rank, *(None if a is None else a % (rank + 1)
                                   for a in case["in_axes"])))
            every = {(rank, px, py) for rank in (2, 3)
                     for px in (None, *range(rank + 1)) for py in (None, *range(rank + 1))
                     if (px, py) != (None, None)}
            assert found == every and len(every) == 39, (check.id, seed)


def test_a_check_of_one_jvp_rule_runs_no_other_rule_the_student_wrote():
    """ps2.jvp_rules.exp_log, .div and .max draw programs whose steps are their own ops and the
    ops whose rules the course provides, whatever the seed: a wrong div_jvp loses on .div (and on
    .nested and .closure, which combine all four), never on .max by the luck of the draw (the
    demo's wrong_div_jvp_sign failed .max under one course secret and passed under another)."""
    own = {"ps2.jvp_rules.exp_log": {"exp", "log"}, "ps2.jvp_rules.div": {"div"},
           "ps2.jvp_rules.max": {"max"}}
    from autograder.assignments.ps2_autodidax import programs

    for check in (c for c in checks.CHECKS if c.id in own):
        for seed in range(300):
            steps = check.make_inputs(np.random.default_rng(seed))["program"]["steps"]
            ops = {op for op, *_ in steps}
            assert own[check.id] <= ops <= own[check.id] | set(programs.PROVIDED), (
                check.id, seed, sorted(ops))


def test_enough_mutants_on_every_task_and_enough_alternatives():
    assert len(mutants.MUTANTS) >= 30 and len(mutants.ALTERNATIVES) >= 8
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
