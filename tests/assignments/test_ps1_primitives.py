"""ps1_primitives, what is particular to it: graded by the real command, a partial notebook earns
its tasks only, cheats earn nothing for the rules they skip, and wrong solutions lose points on
their own task, as the in-process grading of the contract tests says; the stubs name their tasks,
the release is not stale and catches leaks. The reference, the untouched notebook, every wrong
solution and every correct alternative are graded by the contract tests (tests/contract/).

The class here (partial, cheats, three wrong solutions that hold the in-process grading to the
sandbox) is graded once by the real command, ``python -m autograder grade ... --seed 0``, in a
module fixture (``PS1_GRADED=OUT`` reuses the results of such a run on the same class instead).
``scripts/mutant_scores.py ps1_primitives`` grades every wrong solution by the real command.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import nbformat
import pytest

from autograder.instructor import release
from autograder.assignments import contract
from autograder.assignments.ps1_primitives.checks import ASSIGNMENT
from autograder.assignments.ps1_primitives.mutants import CORRECT, MUTANTS, PARTIAL, TASK
from autograder.instructor.classroom import make_submission, solution_sources

ROOT = Path(__file__).resolve().parents[2]
NAME = "ps1_primitives"
TASK_OF_CHECK = {check.id: check.task for check in ASSIGNMENT.checks}
# How each rule is called in the checks' messages and blame (the contract's named_in_blame).
RULE = {task.id: task.named_in_blame for task in contract(NAME).tasks}

# Submissions that write no working rule of a task but try to earn its points:
# {name: ({grade_id: source} on top of the untouched notebook, tasks that must earn nothing)}.
JNP_JVP = '''
def weighted_sum_value_and_jvp(primals, tangents, *, axis):
    x, w = primals
    xt, wt = (ad.instantiate_zeros(t) for t in tangents)
    out = weighted_sum(x, w, axis=axis)
    return out, (jnp.tensordot(xt, w, axes=([axis], [0]))
                 + jnp.tensordot(x, wt, axes=([axis], [0])))


ad.primitive_jvps[weighted_sum_p] = weighted_sum_value_and_jvp
'''
CHEATS = {
    # weighted_sum rewritten with jax.numpy: every transformation "works" without any rule.
    "cheat_jnp_function": ({"batch": '''
def weighted_sum(x, w, *, axis):
    return jnp.tensordot(x, w, axes=([axis], [0]))
'''}, set(RULE)),
    # bind patched on the primitive object.
    "cheat_patched_bind": ({"batch": '''
weighted_sum_p.bind = lambda x, w, *, axis: jnp.tensordot(x, w, axes=([axis], [0]))
'''}, set(RULE)),
    # "rejects ill-formed operands" by rejecting everything.
    "cheat_always_type_error": ({"abstract_eval": '''
def weighted_sum_abstract_eval(x, w, *, axis):
    raise TypeError("no")


weighted_sum_p.def_abstract_eval(weighted_sum_abstract_eval)
'''}, set(RULE)),
    # The case: a JVP written with jax.numpy, transpose and batching rules left undone.
    # JAX then transposes and batches jnp itself; none of that may count for those two rules.
    "cheat_jnp_jvp_only": (None, {"ps1.transpose", "ps1.batch"}),
}


def _cheat_cells(name: str) -> dict[str, str]:
    cells, _ = CHEATS[name]
    if cells is not None:
        return cells
    solutions = solution_sources(NAME, root=ROOT)
    return {**{k: solutions[k] for k in ("impl", "abstract_eval", "lowering")}, "jvp": JNP_JVP}


# Wrong solutions graded by the real command too, to hold the in-process grading to it. The
# wrong lowering makes every jitted run of the JVP, transpose and batching checks wrong: they
# pass only through the check's retry, the eager run (autograder.worker.runner's second request).
WHOLE = ("jvp_drops_w_term", "batch_assumes_axis0", "lowering_contracts_first_axis")


def submissions() -> dict[str, nbformat.NotebookNode]:
    solutions = solution_sources(NAME, root=ROOT)
    class_ = {"partial": make_submission(NAME, {k: solutions[k] for k in PARTIAL}, root=ROOT)}
    for name in WHOLE:
        class_[name] = make_submission(NAME, {**solutions, **MUTANTS[name][1]}, root=ROOT)
    for name in CHEATS:
        class_[name] = make_submission(NAME, _cheat_cells(name), root=ROOT)
    return class_


def lost_by_task(result: dict) -> dict[str, float]:
    lost: dict[str, float] = defaultdict(float)
    for test in result["tests"]:
        if test["status"] in ("failed", "error"):
            lost[TASK_OF_CHECK[test["name"].split(":")[0]]] += test["max_points"]
    return dict(lost)


def _reuse(path: str) -> dict[str, dict] | None:
    """Results of an earlier run of the same command on exactly ``submissions()`` (the folder
    ``--out`` named), so a class graded once can be asserted on again without regrading it."""
    results = {p.stem: json.loads(p.read_text()) for p in Path(path).glob("results/*.json")}
    wanted = set(submissions())
    return {k: v for k, v in results.items() if k in wanted} if wanted <= set(results) else None


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict[str, dict]:
    if os.environ.get("PS1_GRADED") and (reused := _reuse(os.environ["PS1_GRADED"])):
        return reused
    work = tmp_path_factory.mktemp("ps1")
    submitted = work / "submitted"
    for student, nb in submissions().items():
        path = submitted / student / NAME / f"{NAME}.ipynb"
        path.parent.mkdir(parents=True)
        nbformat.write(nb, path)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    run = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", NAME, str(submitted), "--out",
         str(work / "out"), "--seed", "0", "--workers", "2", "--no-progress",
         "--db", f"sqlite:///{work / 'gradebook.db'}"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=3000, check=False)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    results = {p.stem: json.loads(p.read_text()) for p in (work / "out" / "results").glob("*.json")}
    # The record the course notes quote: score and points lost per task, per submission.
    summary = {name: {"score": r["score"], "max_score": r["max_score"], "lost": lost_by_task(r)}
               for name, r in sorted(results.items())}
    (work / "summary.json").write_text(json.dumps(summary, indent=1))
    print(f"\nps1 class graded: {work / 'summary.json'}\n{run.stdout}")
    return results


def _status(result: dict) -> dict[str, str]:
    return {t["name"].split(":")[0]: t["status"] for t in result["tests"]}


def test_partial_earns_its_tasks_only(graded):
    done = {f"ps1.{grade_id}" for grade_id in PARTIAL}
    for check_id, status in _status(graded["partial"]).items():
        if TASK_OF_CHECK[check_id] in done:
            assert status in ("passed", "not-run"), check_id
        else:
            assert status == "failed", check_id


@pytest.mark.parametrize("cheat", sorted(CHEATS))
def test_cheats_earn_nothing_for_the_rules_they_skip(graded, cheat):
    _, tasks = CHEATS[cheat]
    for test in graded[cheat]["tests"]:
        if TASK_OF_CHECK[test["name"].split(":")[0]] in tasks:
            assert test["points"] == 0, (cheat, test["name"])


def test_the_real_command_and_the_contract_agree_on_wrong_solutions(graded):
    """Three wrong solutions are also in the real command's class: the sandboxed run takes their
    points on the task the contract declares (where the in-process grading of tests/contract
    takes them), and the real feedback names it."""
    for mutant in WHOLE:
        task = TASK[mutant]
        assert set(lost_by_task(graded[mutant])) == {task}, mutant
        for test in graded[mutant]["tests"]:
            if test["status"] == "failed":
                assert test["message"].startswith(f"[{task}]"), test
                assert RULE[task] in test["message"], test


def test_at_least_thirty_mutants_and_eight_alternatives():
    assert len(MUTANTS) >= 30 and len(CORRECT) >= 8
    assert ASSIGNMENT.extra["own_primitives"] == ("weighted_sum",)


def test_two_classes_some_draws_missed_are_in_every_grading():
    """ps1.abstract_eval.rejects_*: the well-formed call contracts the last axis, written -1 (a
    rule that refuses or misreads -1 failed only when the draw spelled it so); ps1.batch.nested:
    an inner vmap of w alone under an outer vmap of x (a rule that broadcasts with NumPy fails
    only there), and an inner vmap of x alone on a negative axis. Whatever the seed."""
    import numpy as np

    from autograder.assignments.ps1_primitives.checks import W_ONLY, X_ONLY

    by_id = {check.id: check for check in ASSIGNMENT.checks}
    for seed in range(200):
        for check_id in ("ps1.abstract_eval.rejects_operands", "ps1.abstract_eval.rejects_dtypes"):
            good = by_id[check_id].make_inputs(np.random.default_rng(seed))["good"]
            assert good["axis"] == -1 and len(good["x_shape"]) == 3
            assert good["w_shape"] == [good["x_shape"][-1]]
        cases = by_id["ps1.batch.nested"].make_inputs(np.random.default_rng(seed))["cases"]
        assert any(tuple(c["in_axes"][0]) in W_ONLY and c["in_axes"][1][0] is not None
                   for c in cases), seed
        assert any(tuple(c["in_axes"][0]) in X_ONLY and c["axis"] < 0 for c in cases), seed


def test_each_kind_of_batch_layout_meets_both_axis_signs_in_every_grading():
    """ps1.batch's checks of mixed layouts, not nested: x alone, w alone and both batched each
    meet a negative and a non-negative contracted axis that can tell two axes apart (over a
    batch of one, an axis longer than 1). A rule that shifts a negative axis by one when only x
    is batched passed 2 to 4 seeds of 30 of .edges, .float64 and .bfloat16 before. Every layout
    is still drawn. Whatever the seed."""
    import numpy as np

    from autograder.assignments.ps1_primitives.checks import BOTH, MIXED, W_ONLY, X_ONLY

    kind = {**dict.fromkeys(X_ONLY, "x"), **dict.fromkeys(W_ONLY, "w"),
            **dict.fromkeys(BOTH, "both")}
    by_id = {check.id: check for check in ASSIGNMENT.checks}
    ids = ("ps1.batch.out_axes", "ps1.batch.edges", "ps1.batch.float64", "ps1.batch.bfloat16",
           "ps1.batch.traced")
    for seed in range(200):
        for check_id in ids:
            cases = by_id[check_id].make_inputs(np.random.default_rng(seed))["cases"]
            met = set()
            for c in cases:
                x_axis, w_axis = c["in_axes"][0]
                example = list(np.shape(c["x"]))
                batch = example.pop(x_axis) if x_axis is not None else np.shape(c["w"])[w_axis]
                if batch > 1 or example[c["axis"]] > 1:
                    met.add((kind[tuple(c["in_axes"][0])], c["axis"] < 0))
            assert len(met) == 6, (check_id, seed, sorted(met))
            assert {tuple(c["in_axes"][0]) for c in cases} == set(MIXED), (check_id, seed)


def test_each_transpose_layout_meets_each_operand_in_every_grading():
    """ps1.transpose's checks that name both operands transpose every layout they draw with
    respect to x and with respect to w, and each operand meets an axis that is neither the last
    nor of size 1. A rule that broadcasts w against x's last axis is right on exactly those
    other layouts: taking the operands in turn let it pass .edges, .float64 and .traced at 17, 6
    and 5 seeds of 60. Whatever the seed."""
    import numpy as np

    by_id = {check.id: check for check in ASSIGNMENT.checks}
    for seed in range(200):
        for check_id in ("ps1.transpose.edges", "ps1.transpose.float64",
                         "ps1.transpose.traced"):
            cases = [c for c in by_id[check_id].make_inputs(np.random.default_rng(seed))["cases"]
                     if c["wrt"] in ("x", "w")]
            seen = {}
            for c in cases:
                seen.setdefault((np.shape(c["x"]), c["axis"]), set()).add(c["wrt"])
            assert all(wrt == {"x", "w"} for wrt in seen.values()), (check_id, seed)
            for operand in ("x", "w"):
                assert any(
                    c["axis"] % np.ndim(c["x"]) != np.ndim(c["x"]) - 1
                    and np.shape(c["x"])[c["axis"]] > 1
                    for c in cases if c["wrt"] == operand), (check_id, seed, operand)


def test_every_released_cell_parses_and_each_stub_names_its_task():
    nb = nbformat.read(release.release_path(NAME, root=ROOT), as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            ast.parse(cell.source)
    stubs = {c.metadata["nbgrader"]["grade_id"]: c.source
             for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")}
    assert {f"ps1.{grade_id}" for grade_id in stubs} == {t.id for t in ASSIGNMENT.tasks}
    for grade_id, source in stubs.items():
        assert f"# ps1.{grade_id}: " in source
        assert f'raise NotImplementedError("ps1.{grade_id}: ' in source


def test_release_is_not_stale():
    assert release.stale(NAME, root=ROOT) == []


def test_stale_catches_leaks_and_edits(tmp_path):
    # A copy of the course whose student notebook was edited by hand and leaks a solution line.
    (tmp_path / "solutions").symlink_to(ROOT / "solutions")
    (tmp_path / "nbgrader_config.py").symlink_to(ROOT / "nbgrader_config.py")
    target = release.release_path(NAME, root=tmp_path)
    target.parent.mkdir(parents=True)
    nb = nbformat.read(release.release_path(NAME, root=ROOT), as_version=4)
    impl = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "impl")
    impl.source = impl.source.replace("# YOUR CODE HERE", "x, w = np.asarray(x), np.asarray(w)")
    nbformat.write(nb, target)
    problems = release.stale(NAME, root=tmp_path)
    assert any("out of date" in p for p in problems)
    assert any("solution or hidden-test code" in p for p in problems)
