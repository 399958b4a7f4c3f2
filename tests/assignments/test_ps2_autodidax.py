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

from autograder.assignments.ps2_autodidax import checks, mutants, programs
from autograder.instructor import release

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
    for check in (c for c in checks.CHECKS if c.id in own):
        for seed in range(300):
            inputs = check.make_inputs(np.random.default_rng(seed))
            drawn = (inputs["cases"] if check.id == "ps2.jvp_rules.exp_log" else [inputs])
            for program, n_args in ((d["program"], len(d["primals"])) for d in drawn):
                # ... and no step negates a computed value, which would cancel its tangent
                assert not checks._cancelled(program, n_args), (check.id, seed)
                ops = {op for op, *_ in program["steps"]}
                assert own[check.id] <= ops <= own[check.id] | set(programs.PROVIDED), (
                    check.id, seed, sorted(ops))


def _value(program: dict, x: float, index: int) -> float:
    vals = [np.float64(x)]
    for op, *operands in program["steps"][:index]:
        vals.append(programs.apply(op, programs.numpy_lib(), *(vals[i] for i in operands)))
    return float(vals[index])


def _second_derivative(program: dict, x: float, index: int, h: float = 1e-4) -> float:
    """|d^2/dx^2| of the program's value ``index`` at x, by a central difference."""
    at = [_value(program, x + d, index) for d in (-h, 0.0, h)]
    return abs(at[0] - 2 * at[1] + at[2]) / h ** 2


def _operands_taken(program: dict, x: float) -> list:
    """The values exp and log take, and the operand maximum takes (the larger one) at x."""
    taken = []
    for op, *operands in program["steps"]:
        if op in ("exp", "log"):
            taken.append(operands[0])
        elif op == "max":
            taken.append(max(operands, key=lambda i: _value(program, x, i)))
    return taken


def _classes_of(check_id: str, inputs: dict) -> set:
    """The input classes the draw ``inputs`` of ``check_id`` holds, read from the inputs
    themselves (not from the case names)."""
    cases = inputs["cases"]
    found = set()
    if check_id == "ps2.jvp_rules.exp_log":
        for case in cases:
            assert not checks._cancelled(case["program"], len(case["primals"]))
            ranks = {np.ndim(p) for p in case["primals"]}
            found.add("scalars" if ranks == {0} else
                      "arrays" if np.size(case["primals"][0]) > 1 else "one element")
    elif check_id == "ps2.jvp_rules.nested":
        for case in cases:
            assert not checks._cancelled(case["program"], 1)
            steps = [s for s in case["program"]["steps"] if s[0] in checks.NEW_JVP]
            assert {s[0] for s in steps} == set(checks.NEW_JVP)
            twice = {s[0] for s in steps if len(s) == 3 and s[1] == s[2]}
            if not twice:  # exp, log and the operand maximum takes: not affine in x
                assert all(_second_derivative(case["program"], case["x"], i) > 1e-3
                           for i in _operands_taken(case["program"], case["x"])), case
            found.add("distinct" if not twice else
                      "twice" if twice == {"max", "div"} else f"mixed {sorted(twice)}")
    elif check_id == "ps2.jvp_rules.closure":
        found = {"below 1" if case["x"] < 1 else "above 1" for case in cases}
    elif check_id in ("ps2.matmul.jvp", "ps2.matmul.nested"):
        key = "primals" if check_id == "ps2.matmul.jvp" else "base"
        for case in cases:
            shapes = [np.shape(a) for a in case[key]]
            assert min(s for shape in shapes for s in shape[-2:]) >= 2  # never 1 x 1 matrices
            found.add("matrices" if len(shapes[0]) == 2 else "stacks")
    elif check_id == "ps2.shape_rules.nested_vmap":
        for case in cases:
            assert any(2 in operands for _, *operands in case["program"]["steps"])  # z counts
            members = [np.ndim(a) - sum(ax[i] is not None for ax in case["levels"])
                       for i, a in enumerate(case["args"])]
            ranks, front = list(members), False
            for axes in case["levels"]:  # the innermost vmap's first
                for i, ax in enumerate(axes):
                    if ax is not None:
                        front |= ax % (ranks[i] + 1) == 0
                        ranks[i] += 1
            if len(set(members)) == 1 and not front:
                found.add("one rank, never in front")
            elif 0 in members:
                found.add("a scalar")
    elif check_id in ("ps2.out_axes.in_axes", "ps2.out_axes.out_axes"):
        for case in cases:
            assert any(2 in operands for _, *operands in case["program"]["steps"])  # z counts
            axes = case["in_axes"]
            assert axes[0] is not None
            found.add(("in", case["in_style"], axes[1] is None, axes[2] is None))
            found |= {"negative in" for a in axes if a is not None and a < 0}
            if check_id == "ps2.out_axes.out_axes":
                out = case["out_axes"]
                if case["out_style"] == "full" and out[2] is None and min(out[:2]) < 0:
                    found.add("out in full, negative, None")
                if case["out_style"] == "prefix" and min(a for a in out if a is not None) >= 0:
                    found.add("out as prefixes, non-negative")
    elif check_id == "ps2.out_axes.ints":
        for case in cases:
            assert any(1 in operands for _, *operands in case["program"]["steps"])  # y counts
            i, o = case["in_axes"], case["out_axes"]
            found.add("negative" if i < 0 and o < 0 else
                      "non-negative, moved" if i > 0 and o > 0 else (i, o))
    return found


CLASSES = {
    "ps2.jvp_rules.exp_log": {"scalars", "arrays"},
    "ps2.jvp_rules.nested": {"distinct", "twice"},
    "ps2.jvp_rules.closure": {"below 1", "above 1"},
    "ps2.matmul.jvp": {"matrices", "stacks"},
    "ps2.matmul.nested": {"matrices", "stacks"},
    "ps2.shape_rules.nested_vmap": {"one rank, never in front", "a scalar"},
    "ps2.out_axes.in_axes": {("in", "full", True, True), ("in", "prefix", False, False),
                             "negative in"},
    "ps2.out_axes.out_axes": {("in", "full", True, True), ("in", "full", False, False),
                              "negative in",
                              "out in full, negative, None", "out as prefixes, non-negative"},
    "ps2.out_axes.ints": {"negative", "non-negative, moved"},
}


def test_every_converted_check_draws_all_its_classes_whatever_the_seed():
    """The checks that became case matrices draw every input class they name on every grading:
    ranks (scalars, arrays; matrices, stacks), a value taken twice (a tie, x / x), both sides of
    the inner maximum, batch axes never in front and lower ranks, in_axes and out_axes in full
    and as prefixes, negative and non-negative, unmapped arguments and outputs."""
    by_id = {check.id: check for check in checks.CHECKS}
    for check_id, classes in CLASSES.items():
        for seed in range(100):
            inputs = by_id[check_id].make_inputs(np.random.default_rng(seed))
            assert _classes_of(check_id, inputs) == classes, (check_id, seed)


def test_jacfwd_never_takes_the_jacobian_of_one_entry():
    """ps2.matmul.jacfwd's x is at least 2 x 2: never a batch of one, where a batch axis can be
    anywhere and a wrong matmul_batch passes."""
    check = next(c for c in checks.CHECKS if c.id == "ps2.matmul.jacfwd")
    for seed in range(100):
        assert min(np.shape(check.make_inputs(np.random.default_rng(seed))["x"])) >= 2, seed


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
