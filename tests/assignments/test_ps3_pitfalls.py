"""ps3_pitfalls, what is particular to it: each test cell calls the in-process grader and each
stub names its task, every grading runs every input class, the release hides the solutions, and
grading a wrong fix on its own task's checks (the contract's ``graded_as="task"``) agrees with
grading the whole notebook. The reference, the untouched notebook, every wrong fix and every
correct alternative are graded by the contract tests (tests/contract/).
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.assignments.ps3_pitfalls.checks import ASSIGNMENT
from autograder.assignments.ps3_pitfalls.mutants import DEMO
from autograder.instructor.release import release_path

ROOT = Path(__file__).resolve().parents[2]
NAME = "ps3_pitfalls"
SOURCE = ROOT / "solutions" / NAME / f"{NAME}.md"
HARNESS = ROOT / "tests" / "contract" / "grade_variants.py"


# The tests. -------------------------------------------------------------------------------------


def _nbgrader_cells() -> dict[str, dict]:
    import jupytext

    return {c.metadata["nbgrader"]["grade_id"]: {**c.metadata["nbgrader"], "source": c.source}
            for c in jupytext.read(SOURCE).cells if "nbgrader" in c.metadata}


def test_each_test_cell_calls_the_grader_and_each_stub_names_its_task():
    cells = _nbgrader_cells()
    for gid, meta in cells.items():
        if meta["grade"]:
            assert f'check_cell("ps3_pitfalls", "{gid}", globals())' in meta["source"]
        if meta["solution"]:  # the task id is in the stub's comment, so it survives the release
            assert f"# ps3.{gid}:" in meta["source"].split("### BEGIN SOLUTION")[0]


# The input classes every grading runs, per check (checks._cases): the same for every seed, so a
# grade depends on the code and not on the student id that seeds the draws.
_CLASSES = {
    "ps3.pure": ["rank 0, float32", "rank 1, float32", "rank 2, float32", "rank 3, float32",
                 "rank 1, float16", "rank 2, bfloat16", "rank 2, float32, repeated slopes"],
    "ps3.loop": ["rank 0", "rank 1", "rank 2", "rank 3"],
    "ps3.method": ["random values", "values beyond every clip", "float16", "bfloat16"],
    "ps3.placement": ["a dict, second device", "a list, second device", "one leaf, second device",
                      "a dict, first device", "a list, first device"],
    "ps3.divide": ["rank 2", "rank 3", "rank 4"],
    "ps3.safe_log": ["rank 0", "rank 1", "rank 2", "rank 3", "rank 4"],
    "ps3.log_or_y": ["x of rank 1, fallback of rank 0", "x of rank 2, fallback of rank 0",
                     "x of rank 3, fallback of rank 0", "x of rank 4, fallback of rank 0",
                     "x of rank 2, fallback of rank 1", "x of rank 3, fallback of rank 2",
                     "x of rank 2, fallback of rank 2", "x of rank 1, fallback of rank 2"],
    "ps3.smooth_step": ["rank 1", "rank 2", "rank 3", "rank 4"],
}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_grading_runs_every_input_class(seed):
    import numpy as np

    for check in ASSIGNMENT.checks:
        if check.task not in _CLASSES:
            continue
        inputs = check.make_inputs(np.random.default_rng([seed, len(check.id)]))
        names = [case["case"] for case in inputs["cases"]]
        want = _CLASSES[check.task]
        if check.id == "ps3.smooth_step.vmap":  # vmap over axis -2 needs rank 2 or more
            want = want[1:]
        if check.id == "ps3.pure.grad":  # a sum over x: float32 only (checks._inputs_pure_grad)
            want = [name for name in want if "16" not in name]
        assert names == want, check.id
        if check.task == "ps3.pure":  # every case: a slope of every class the text names
            for case in inputs["cases"]:
                slopes = case["slopes"]
                assert 0.0 in slopes and 1.0 in slopes, (check.id, case["case"])
                assert any(0 < s < 1 for s in slopes) and any(s > 1 for s in slopes), check.id
                assert any(s < 0 for s in slopes), (check.id, case["case"])
                assert np.asarray(case["x"], case["dtype"]).dtype.name == case["dtype"]
        if check.task == "ps3.method":  # every case: clips None, positive and 0.0, all mapped
            for case in inputs["cases"]:
                clips = [spec[2] for spec in case["specs"]]
                assert None in clips and 0.0 in clips and any(c and c > 0 for c in clips)
                assert 0.0 in [clips[k] for k in case["pytree_specs"]], check.id
        if check.task == "ps3.safe_log":  # every case expects some p log p != 0, and some 0
            for case in inputs["cases"]:
                p = np.asarray(case["p"], case["dtype"])
                assert (p > 0).any() and ((p > 0) & (p != 1)).any(), (check.id, case["case"])
                assert case["case"] == "rank 0" or (p <= 0).any(), (check.id, case["case"])


def test_every_method_grading_has_values_beyond_every_clip():
    """Whatever the seed (the real grader's differs per student and per submission), every
    ps3.method check runs x with a value above +clip and one below -clip in every column, for
    every clipped Normaliser it builds (the doubled ones of ps3.method.pytree included): an apply
    that loses clip (tree_unflatten dropping the auxiliary data) or clips one side only fails
    every check, not only under the draws where a random x happens to reach the clip. Each class
    has its own number of rows, so ps3.method.compiles's second class compiles afresh."""
    import numpy as np

    def z(x, mean, scale):
        return (np.asarray(x, np.float32) - np.asarray(mean, np.float32)) / np.asarray(
            scale, np.float32)

    def beyond(z, clip):
        return bool(((z > clip).any(axis=-2) & (z < -clip).any(axis=-2)).all())

    for check in [c for c in ASSIGNMENT.checks if c.task == "ps3.method"]:
        for seed in range(100):
            cases = check.make_inputs(np.random.default_rng([seed, len(check.id)]))["cases"]
            assert len({np.shape(case["x"]) for case in cases}) == len(cases), (check.id, seed)
            case = cases[1]
            for mean, scale, clip in case["specs"]:
                if clip is not None:
                    for k in (1.0, 2.0):  # as given, and doubled by jax.tree.map
                        assert beyond(z(case["x"], k * np.float32(mean), k * np.float32(scale)),
                                      clip), (check.id, seed)
            mean, scale, clip = case["batched"]
            assert beyond(z(case["xb"], mean, scale), clip), (check.id, seed)


# Checks whose classes are argument values (a wrong solution that ignores or bounds the argument
# is right for one of them): each class's own range, disjoint from the other's.
_ARGUMENT_CLASSES = {
    "ps3.benchmark.simulated": ("repeats", {
        "repeats below the default, slow leaf first": {3, 4},
        "repeats below the default, slow leaf last": {3, 4},
        "repeats above the default, slow leaf first": {6, 7},
        "repeats above the default, slow leaf last": {6, 7}}),
    "ps3.debug_print.vmap": ("steps", {"2 or 3 steps": {2, 3}, "4 or 5 steps": {4, 5}}),
    "ps3.callback.jit": ("bins", {"2 or 3 bins": {2, 3}, "4 or 5 bins": {4, 5}}),
    "ps3.callback.vmap": ("bins", {"2 or 3 bins": {2, 3}, "4 or 5 bins": {4, 5}}),
}


def test_every_benchmark_print_and_callback_grading_runs_every_class():
    """Whatever the seed, ps3.benchmark.simulated runs repeats below and above the default,
    ps3.debug_print.vmap two step counts and ps3.callback two bin counts: a benchmark that bounds
    repeats by the default, a newton_sqrt that ignores steps or a histogram that ignores bins
    fails every grading, not only those whose one draw misses its constant; each benchmark case
    has calls of different lengths and a slow leaf of its own, each callback case its offset
    counts and a batch of batches; ps3.donate runs lr and beta as floats and as 0-d arrays. The
    one-draw check ps3.debug_print.runtime holds its classes in every draw."""
    import numpy as np

    by_id = {check.id: check for check in ASSIGNMENT.checks}
    for seed in range(100):
        def draw(check_id, seed=seed):
            return by_id[check_id].make_inputs(np.random.default_rng([seed, len(check_id)]))

        for check_id, (arg, classes) in _ARGUMENT_CLASSES.items():
            cases = draw(check_id)["cases"]
            assert [case["case"] for case in cases] == list(classes), (check_id, seed)
            for case in cases:
                assert case[arg] in classes[case["case"]], (check_id, seed, case["case"])
            if check_id.startswith("ps3.callback"):  # own compiled versions; v longer than bins
                assert len({(len(c["batch"][0]), c["bins"]) for c in cases}) == len(cases)
                for case in cases:
                    assert all(len(v) > case["bins"] for v in case["batch"]), (check_id, seed)
                    assert case["batch"][0][0] == 1.0, (check_id, seed)
            if check_id.startswith("ps3.callback"):  # counts offset: values come from the host
                for case in cases:
                    assert case["offset"] > 0 and np.shape(case["nested"])[:2] == (2, 2)
            if check_id == "ps3.benchmark.simulated":  # the mean is no median, no single call
                assert {case["slow_leaf"] for case in cases} == {0, 1}, seed
                for case in cases:
                    steady = case["compute_s"][1:1 + case["repeats"]]
                    assert abs(np.mean(steady) / np.median(steady) - 1) > 0.1, (seed, steady)
                    assert abs(np.mean(steady) / max(steady) - 1) > 0.1, (seed, steady)
            if check_id == "ps3.debug_print.vmap":  # a above every index, one not an integer
                for case in cases:
                    assert min(case["a"]) > 5 and case["a"][0] % 1, (seed, case["a"])
        for check_id in ("ps3.donate.xla", "ps3.donate.only"):
            cases = draw(check_id)["cases"]  # lr and beta as floats and as 0-d arrays
            assert [case["scalars"] for case in cases] == ["float", "array"], (check_id, seed)
            for case in cases:  # lr and beta never coincide, nor their next values
                lr2, beta2 = case["next"]
                assert max(case["lr"], lr2) < 0.5 < min(case["beta"], beta2), (check_id, seed)
        calls = draw("ps3.debug_print.runtime")["calls"]
        (a, steps), (b, _), again, zero = calls
        assert steps >= 2 and again == [a, steps] and zero == [b, 0] and a != b, (seed, calls)
        assert min(a, b) > 5 and a % 1 and not b % 1, (seed, calls)


def _released_code_cells():
    import nbformat

    nb = nbformat.read(release_path(NAME, root=ROOT), as_version=4)
    return [c for c in nb.cells if c.cell_type == "code"]


def test_release_hides_solutions_and_hidden_tests():
    released = "\n".join(c.source for c in _released_code_cells())
    for secret in ("BEGIN SOLUTION", "BEGIN HIDDEN TESTS", "check_cell", "fori_loop(0, steps, body, (x, v))",
                   "donate_argnums=(0, 1)", "jax.device_put(batch, device)", "jax.nn.softmax"):
        assert secret not in released, secret


def test_every_released_cell_parses_and_every_stub_names_its_task():
    cells = _released_code_cells()
    for cell in cells:
        ast.parse(cell.source)  # a SyntaxError here is what the student would hit
    stubs = {c.metadata["nbgrader"]["grade_id"]: c.source for c in cells
             if c.metadata.get("nbgrader", {}).get("solution")}
    assert {f"ps3.{gid}" for gid in stubs} == {t.id for t in ASSIGNMENT.tasks}
    for gid, source in stubs.items():
        # A stub raises NotImplementedError naming its task, or keeps the buggy code to fix.
        named = f'raise NotImplementedError("ps3.{gid}:' in source
        buggy = gid in ("method", "donate") and source.split("# YOUR CODE HERE")[0].count("\n") > 1
        assert named or buggy, gid


@pytest.mark.timeout(1800)  # two ps3 notebooks graded whole: minutes on a loaded machine
def test_a_demo_mutant_graded_whole_matches_the_shortcut():
    """The contract tests grade a wrong fix by running its cells after the reference's, on its
    own task's checks; graded as a whole notebook on every check, it loses the same ones."""
    name = DEMO[-1]
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    done = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", str(HARNESS),
         "autograder.assignments.ps3_pitfalls.assignment", f"wrong:{name}", f"whole:{name}"],
        env=env, cwd=ROOT, capture_output=True, text=True, timeout=1800, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    shortcut, whole = (json.loads(done.stdout)[v] for v in (f"wrong:{name}", f"whole:{name}"))
    lost = {c["id"] for c in whole["checks"] if not c["passed"]}
    assert lost and lost == {c["id"] for c in shortcut["checks"] if not c["passed"]}
