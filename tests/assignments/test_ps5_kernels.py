"""ps5_kernels, what is particular to it: the stubs name their tasks, the GPU and crash mutants,
the release, no graded answer importable, and how the GPU checks judge a kernel. The reference,
the untouched notebook, the wrong solutions and the alternatives are graded by the contract
tests (tests/contract/); native code that attacks the grader, by test_ps5_sandbox.py.
"""

from __future__ import annotations

import ast
from pathlib import Path

import jax
import nbformat
import numpy as np
import pytest

from autograder.instructor import release
from autograder.assignments.ps5_kernels import checks, mutants

ROOT = Path(__file__).resolve().parents[2]
NAME = "ps5_kernels"


def test_every_task_is_checked_and_named_in_its_stub():
    source = mutants.SOURCE.read_text()
    for task in checks.TASKS:
        assert any(check.task == task.id for check in checks.CHECKS), task.id
        assert f"{task.id}: " in source, task.id
        assert any(check.id.startswith(task.id + ".") for check in checks.CHECKS), task.id


def test_enough_mutants_of_every_kind():
    assert len(mutants.MUTANTS) >= 15
    assert {mutants.TASK[name] for name in mutants.MUTANTS} == {t.id for t in checks.TASKS}
    assert set(mutants.DEMO) <= set(mutants.MUTANTS)
    assert mutants.GPU_MUTANTS  # the race: caught only where a GPU runs the kernel


def test_kernel_and_derivative_checks_run_their_classes_whatever_the_seed():
    """Every grading runs: rows wholly far below zero (x / t under -1000, where exp(x / t)
    underflows to 0 unless shifted by the row's maximum) beside large rows of both signs; t = 0
    among the refused calls; float32 and float64 inputs to each derivative check."""
    by_id = {check.id: check for check in checks.CHECKS}
    for seed in range(50):
        rng = np.random.default_rng(seed)
        for below in by_id["ps5.kernel.large"].make_inputs(rng)["cases"][2:]:
            assert np.all(below["x"] / below["t"] < -999), seed
        ts = [case["t"] for case in by_id["ps5.kernel.refuses"].make_inputs(rng)["cases"]]
        assert 0.0 in ts and min(ts) < 0, seed
        for check_id in ("ps5.grad.grad", "ps5.grad.jit", "ps5.grad.jvp"):
            cases = by_id[check_id].make_inputs(rng)["cases"]
            assert [case["x"].dtype for case in cases] == [np.float64, np.float32], seed


def _in_axes_kinds(in_axes) -> list[str]:
    return [{(True, False): "x", (False, True): "w", (True, True): "both"}[
        (xa is not None, wa is not None)] for xa, wa in in_axes]


def test_glue_and_batching_checks_run_every_class_whatever_the_seed():
    """What each class promises holds in every draw: ranks 1, 2 and 3-4 for the float32 and
    float64 kernel and ffi_call checks; rows of one element; float16 and bfloat16; every pair of
    a narrower and a wider float; x's batch axis at 0, past 0 and negative; w batched with and
    without x; all nine (outer, inner) mixes of nested vmap, only-x-batched among them (where a
    loop of kernel calls fails: the demo's wrong_vmap_sequential lost ps5.vmap.nested under
    one course secret and kept it under another before these were classes)."""
    by_id = {check.id: check for check in checks.CHECKS}
    for seed in range(100):
        def cases(check_id):
            return by_id[check_id].make_inputs(np.random.default_rng(seed))["cases"]

        for check_id in ("ps5.kernel.f32", "ps5.kernel.f64", "ps5.ffi_call.float32",
                         "ps5.ffi_call.float64"):
            ranks = [case["x"].ndim for case in cases(check_id)]
            assert ranks[:2] == [1, 2] and ranks[2] in (3, 4), (seed, check_id, ranks)
        odd, one = cases("ps5.kernel.odd")
        assert odd["x"].shape[-1] in (3, 5, 7) and one["x"].shape[-1] == 1, seed
        w_cases = cases("ps5.kernel.w_shape")
        assert [np.asarray(case["w"]).shape[:-1] for case in w_cases] == [
            (1,), (1,), (1, 1), (1, 1)], seed
        # Each w shape with an odd and an even row, and several rows (x of rank 2 or more).
        assert [case["x"].shape[-1] % 2 for case in w_cases] == [1, 0, 1, 0], seed
        assert all(case["x"].ndim >= 2 for case in w_cases), seed
        assert [str(case["x"].dtype) for case in cases("ps5.ffi_call.narrow")] == [
            "float16", "bfloat16"], seed
        # Both floats: ffi_always_float32 passed at 30 seeds of 60 of one case of either dtype.
        assert [str(case["x"].dtype) for case in cases("ps5.ffi_call.vmap_method")] == [
            "float32", "float64"], seed
        for check_id, wider in (("ps5.ffi_call.w_wider", "w"), ("ps5.ffi_call.x_wider", "x")):
            pairs = {(str(c["x"].dtype), str(c["w"].dtype)) for c in cases(check_id)}
            want = {("float16", "float32"), ("bfloat16", "float32"), ("float16", "float64"),
                    ("bfloat16", "float64"), ("float32", "float64")}
            assert pairs == (want if wider == "w" else {(b, a) for a, b in want}), seed
        x_axes = [case["in_axes"][0][0] for case in cases("ps5.vmap.x")]
        assert x_axes[0] == 0 and x_axes[1] > 0 and x_axes[2] < 0, seed
        assert [_in_axes_kinds(c["in_axes"]) for c in cases("ps5.vmap.w")] == [["w"], ["both"]]
        nested = cases("ps5.vmap.nested")
        assert sorted(tuple(_in_axes_kinds(c["in_axes"])) for c in nested) == sorted(
            (o, i) for o in ("x", "w", "both") for i in ("x", "w", "both")), seed
        assert {str(c["x"].dtype) for c in nested} == {"float32", "float64"}, seed
        assert all(c["jit"] for c in nested), seed


def test_kernel_checks_not_about_rank_see_every_row_and_each_dtype_whatever_the_seed():
    """ps5.kernel.odd, .empty's several rows, .large and .precise draw x of rank 3 or 4 with more
    rows than its first axis holds (a kernel that takes the rows from the first axis passed
    them at 17 to 31 seeds of 60); .large draws each kind of large x in float32 and in float64
    (a kernel that stores its result as a float passed at 12 of 60); .precise's x / t is past
    800, where exp(x / t) overflows unless shifted (an unshifted kernel passed at 3 of 60)."""
    by_id = {check.id: check for check in checks.CHECKS}
    for seed in range(200):
        def cases(check_id):
            inputs = by_id[check_id].make_inputs(np.random.default_rng(seed))
            return inputs.get("cases", [inputs])

        several = (cases("ps5.kernel.odd") + cases("ps5.kernel.empty")[1:]
                   + cases("ps5.kernel.large") + cases("ps5.kernel.precise"))
        for case in several:
            shape = case["x"].shape
            assert len(shape) in (3, 4) and np.prod(shape[1:-1]) > 1, (seed, shape)
        assert [str(c["x"].dtype) for c in cases("ps5.kernel.large")] == [
            "float32", "float64"] * 2, seed
        precise = cases("ps5.kernel.precise")[0]
        assert precise["x"].dtype == np.float64 and (precise["x"] / precise["t"]).min() > 800


def _w_batch_sizes(case) -> list[int]:
    """The batch size of each vmap level that batches w, from the outer one in."""
    shape, sizes = list(np.shape(case["w"])), []
    for _, w_axis in case["in_axes"]:
        if w_axis is not None:
            sizes.append(shape.pop(w_axis))
    return sizes


def test_every_level_that_batches_w_batches_several_whatever_the_seed():
    """Over a batch of one, a rule that hands the batched w to the kernel unchanged is right (w
    still holds n weights): it passed ps5.vmap.w at 2 seeds of 60 while a level could batch
    one. Every level of ps5.vmap.w and .nested that batches w now batches 2 to 5."""
    by_id = {check.id: check for check in checks.CHECKS}
    for seed in range(200):
        for check_id in ("ps5.vmap.w", "ps5.vmap.nested"):
            for case in by_id[check_id].make_inputs(np.random.default_rng(seed))["cases"]:
                sizes = _w_batch_sizes(case)
                assert all(size >= 2 for size in sizes), (check_id, seed, sizes)
                assert sizes or check_id == "ps5.vmap.nested", (check_id, seed)


def test_release_is_not_stale():
    assert release.stale(NAME, root=ROOT) == []


def test_released_cells_parse_and_stubs_name_their_task():
    nb = nbformat.read(release.release_path(NAME, root=ROOT), as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            ast.parse(cell.source)
    text = "\n".join(cell.source for cell in nb.cells)
    assert "BEGIN SOLUTION" not in text and "check_cell" not in text
    for task in checks.TASKS:
        assert f"{task.id}: " in text, task.id


def test_no_graded_answer_is_importable():
    """The course package holds no weighted log-sum-exp kernel, rule or derivative."""
    text = "\n".join(p.read_text() for p in (ROOT / "jaxcourse").rglob("*.*")
                     if p.suffix in (".py", ".cc", ".cu"))
    for needle in ("LseImpl", "LseCuda", "def lse", "logsumexp"):
        assert needle not in text, needle


def _speed_check():
    return next(c for c in checks.CHECKS if c.id == "ps5.cuda.speed")


def _expect_as_the_grader(check, inputs):
    """check.expect(inputs) under the check's JAX options, as the grader computes it."""
    before = {key: getattr(jax.config, key) for key, _ in check.jax_config}
    for key, value in check.jax_config:
        jax.config.update(key, value)
    try:
        return check.expect(inputs)
    finally:
        for key, value in before.items():
            jax.config.update(key, value)


@pytest.mark.parametrize("y", ["right", "zeros", "missing", "short"])
def test_speed_counts_only_for_a_kernel_with_the_right_values(y):
    """On a GPU an untouched notebook's kernel, which writes nothing, was fast and earned the
    speed check's points (found by scripts/gpu_check.sh on an H100): the timed call's values are
    judged first. Judged here without a GPU, on the inputs the check draws."""
    import numpy as np

    from autograder.spec import Outcome

    check = _speed_check()
    inputs = check.make_inputs(np.random.default_rng(3))
    expected = _expect_as_the_grader(check, inputs)
    assert expected.shape == tuple(inputs["shape"][:-1])
    value = {"right": expected, "zeros": np.zeros_like(expected), "missing": None,
             "short": expected[:-1]}[y]
    reply = {"kernel": 1e-3, "xla": 1e-3} | ({} if value is None else {"y": value})
    verdict = check.judge(expected, Outcome(value=reply))
    assert verdict.passed == (y == "right"), verdict.message
    if y != "right":
        assert "speed does not count" in verdict.message
    slow = check.judge(expected, Outcome(value={"kernel": 1.0, "xla": 1e-3, "y": expected}))
    assert not slow.passed and "times as long" in slow.message


def test_a_kernel_that_writes_nothing_never_passes_the_gpu_values_check():
    """On a GPU the untouched notebook's CUDA kernel, which writes nothing, passed ps5.cuda.values
    on seeds that drew an empty x (found by scripts/gpu_check.sh on an H100): every draw now
    has calls with rows to write as well as an empty one. Judged here without a GPU."""
    import numpy as np

    from autograder.spec import Outcome

    check = next(c for c in checks.CHECKS if c.id == "ps5.cuda.values")
    for seed in range(40):
        expected = _expect_as_the_grader(check, check.make_inputs(np.random.default_rng(seed)))
        assert [y.shape[0] == 0 for y in expected] == [False, False, True]
        assert check.judge(expected, Outcome(value=expected)).passed
        for wrong in ([np.zeros_like(y) for y in expected], [np.full_like(y, np.nan)
                                                              for y in expected],
                      expected[:-1], [y[:-1] for y in expected]):
            verdict = check.judge(expected, Outcome(value=wrong))
            assert not verdict.passed, seed
