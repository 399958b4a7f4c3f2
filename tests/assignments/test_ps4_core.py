"""ps4_core, what is particular to it: the stubs name their tasks, the binder check's programs,
the release, and no graded answer importable. The reference, the untouched notebook, the wrong
solutions and the alternatives are graded by the contract tests (tests/contract/).
"""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat
import numpy as np

from autograder.assignments.ps4_core import checks, mutants, probes, programs
from autograder.instructor import release
from jaxcourse.core.jaxprs import Lit, make_jaxpr

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


def test_binder_check_always_leaves_an_input_unused_and_reads_the_constant():
    """Whatever the course secret, a pass that drops the binder of an unused input, or the
    constvars, is caught by ps4.dce.values: the programs of its first two classes read inputs 0
    and 1 and the constant 2, and their outputs need one input only; in its third the constant
    is read by dead code only (the blind set's wrong_11 dropped such a constvar)."""
    (check,) = [c for c in checks.CHECKS if c.id == "ps4.dce.values"]
    for seed in range(200):
        first, second, dead_const = check.make_inputs(np.random.default_rng(seed))["cases"]
        for case in (first, second):
            needed = _needed(case["program"])
            assert {0, 1} - needed and 2 in needed, seed
        assert 2 not in _needed(dead_const["program"]), seed
        assert any(2 in step[1:] for step in dead_const["program"]["steps"]), seed


def _producers(program: dict, n_args: int) -> dict[int, list]:
    """Value index -> the step that computes it (a call step computes two values)."""
    found, n = {}, n_args
    for step in program["steps"]:
        for _ in range(2 if step[0] in programs.CALLS else 1):
            found[n] = step
            n += 1
    return found


def _needed_values(program: dict, n_args: int) -> set[int]:
    producers, needed, stack = _producers(program, n_args), set(), list(program["outs"])
    while stack:
        k = stack.pop()
        if k not in needed:
            needed.add(k)
            if k >= n_args:
                stack.extend(producers[k][1:])
    return needed


def _call_outputs(program: dict, n_args: int) -> tuple[str, int, int]:
    """The one call step of ``program``, and the indices of its two values."""
    found, n = [], n_args
    for step in program["steps"]:
        if step[0] in programs.CALLS:
            found.append((step[0], n, n + 1))
        n += 2 if step[0] in programs.CALLS else 1
    (call,) = found
    return call


def test_every_dce_check_runs_its_classes_of_several_outputs_whatever_the_seed():
    """ps4.dce.structure always has a jit and a cond equation of two outputs whose second output
    alone is needed, ps4.dce.chains one of each that nothing needs (checks.DCE_STRUCTURE and
    DCE_CHAINS), whatever the seed."""
    by_id = {c.id: c for c in checks.CHECKS}
    for check_id, read in (("ps4.dce.structure", "second"), ("ps4.dce.chains", "none")):
        for seed in range(100):
            calls = []
            for case in by_id[check_id].make_inputs(np.random.default_rng(seed))["cases"]:
                if not case.get("case"):
                    continue
                call, first, second = _call_outputs(case["program"], 3)
                needed = _needed_values(case["program"], 3)
                calls.append(call)
                assert first not in needed, (check_id, seed)
                assert (second in needed) == (read == "second"), (check_id, seed)
            assert sorted(calls) == ["cond2", "jit2"], (check_id, seed)


def test_every_fold_check_runs_its_other_classes_whatever_the_seed():
    """Besides float64 sin/cos/neg/add/mul, ps4.fold_constants.structure always folds float32
    programs and jit and cond equations of two outputs over constants, and .consts a comparison
    of constants (a bool value) that a kept select reads."""
    by_id = {c.id: c for c in checks.CHECKS}
    for check_id, kinds in (("ps4.fold_constants.structure", checks.FOLD_STRUCTURE),
                            ("ps4.fold_constants.consts", checks.FOLD_CONSTS)):
        for seed in range(100):
            cases = by_id[check_id].make_inputs(np.random.default_rng(seed))["cases"]
            names = [case.get("case") for case in cases]
            specials = names[4:4 + len(kinds)]
            assert [checks.FOLD_SPECIAL[kind] for kind in kinds] == specials, (check_id, seed)
            for kind, case in zip(kinds, cases[4:]):
                ops = [step[0] for step in case["program"]["steps"]]
                if kind == "float32":
                    assert {c.dtype for c in [*case["consts"], case["x"]]} == {np.dtype(np.float32)}
                    assert "scale" not in ops
                else:
                    assert {"compare": "select"}.get(kind, kind) in ops


def _fold_facts(case) -> set[str]:
    """The features (checks.FOLD_FEATURES) the jaxpr the probe hands fold_constants holds, read
    off that jaxpr itself."""
    consts = [np.asarray(c) for c in case["consts"]]
    lits = [np.float64(v) for v in case.get("lits", [])]
    f = programs.build(case["program"], programs.ours())
    jaxpr = probes._with_literals(make_jaxpr(f)(*consts, np.asarray(case["x"]), *lits).jaxpr,
                                  len(consts), lits)
    constant = set(jaxpr.constvars)
    folded, kept = set(), []
    for eqn in jaxpr.eqns:
        if all(isinstance(a, Lit) or a in constant for a in eqn.inputs):
            constant.update(eqn.out_binders)
            folded.update(eqn.out_binders)
        else:
            kept.append(eqn)
    read = [a for eqn in kept for a in eqn.inputs]
    facts = set()
    if any(all(isinstance(a, Lit) for a in eqn.inputs) for eqn in jaxpr.eqns):
        facts.add("literal_only")
    if any(a in folded and a.aval.shape == () for a in read) and any(
            v.aval.shape == () for v in jaxpr.constvars):
        facts.add("scalar")
    if any(a in jaxpr.constvars for a in read) and any(a in folded for a in read):
        facts.add("both_kinds")
    if any(a in jaxpr.constvars for a in jaxpr.outs):
        facts.add("const_out")
    repeats = [e for e in jaxpr.eqns if len(e.inputs) == 2 and e.inputs[0] is e.inputs[1]]
    if any(e in kept for e in repeats) and any(e not in kept for e in repeats):
        facts.add("repeated")
    return facts


def test_every_fold_feature_is_in_the_jaxpr_of_its_case_whatever_the_seed():
    """The program features of constant folding a case names (checks.FOLD_FEATURES: literal-only
    equations, rank-0 folded values, both kinds of constvars kept, a constant returned, a
    variable read twice) are in the jaxpr its probe stages, under every seed."""
    for check in (c for c in checks.CHECKS if c.task == "ps4.fold_constants"):
        for seed in range(8):
            drawn = set()
            for case in check.make_inputs(np.random.default_rng(seed))["cases"]:
                named = {k for k, name in checks.FOLD_FEATURES.items()
                         if name in case.get("classes", [""])[0]}
                assert named <= _fold_facts(case), (check.id, seed, case["classes"])
                drawn |= named
            assert drawn, check.id


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
