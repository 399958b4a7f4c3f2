"""ps5_kernels: the reference earns every point available here, the untouched notebook none, each
realistic wrong solution loses points on its own task only, each correct alternative earns every
point; and, graded by the real sandboxed command, native code that attacks the grader earns
nothing and harms no other student.

The notebooks run in two subprocesses (tests/assignments/variants.py), which keep the kernels they
compile and register out of this test process.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import jax
import jupytext
import nbformat
import pytest

from autograder import release
from autograder.assignments.ps5_kernels import checks, mutants

ROOT = Path(__file__).resolve().parents[2]
NAME = "ps5_kernels"
# Where the machine has a GPU, the GPU checks are graded too (scripts/gpu_check.sh runs these).
HAS_GPU = any(d.platform == "gpu" for d in jax.devices())
TOTAL_HERE = sum(c.points for c in checks.CHECKS if not c.needs_gpu or HAS_GPU)
ALTERNATIVES = [f"alt:{name}" for name in sorted(mutants.ALTERNATIVES)]


def _run(variants: list[str]) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH",
                                                                                  "")]))
    return subprocess.Popen(
        [sys.executable, "-W", "error::DeprecationWarning",
         str(ROOT / "tests" / "assignments" / "variants.py"), "--assignment", NAME, *variants],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)


@pytest.fixture(scope="module")
def graded():
    variants = ["reference", "untouched", *ALTERNATIVES, *mutants.MUTANTS]
    running = [_run(variants[i::2]) for i in range(2)]
    found = {}
    for proc in running:
        out, err = proc.communicate(timeout=1500)
        assert proc.returncode == 0, err[-3000:]
        found.update(json.loads(out))
    return found


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
    assert per_cell == {gid: meta["points"] for gid, meta in cells.items() if meta.get("grade")}


def test_every_task_is_checked_and_named_in_its_stub():
    source = mutants.SOURCE.read_text()
    for task in checks.TASKS:
        assert any(check.task == task.id for check in checks.CHECKS), task.id
        assert f"{task.id}: " in source, task.id
        assert any(check.id.startswith(task.id + ".") for check in checks.CHECKS), task.id


def test_reference_earns_every_point(graded):
    result = graded["reference"]
    assert result["cell_errors"] == [] and result["visible_failures"] == []
    assert [(c["id"], c["message"]) for c in result["checks"] if not c["passed"]] == []
    assert sum(c["points"] for c in result["checks"]) == TOTAL_HERE


def test_untouched_notebook_earns_nothing_without_crashing(graded):
    result = graded["untouched"]
    assert result["cell_errors"] == []  # the stubs compile and define every name
    assert sum(c["points"] for c in result["checks"]) == 0
    for check in result["checks"]:
        assert check["message"], check


@pytest.mark.parametrize("name", ALTERNATIVES)
def test_correct_alternative_earns_every_point(graded, name):
    result = graded[name]
    assert result["cell_errors"] == [] and result["visible_failures"] == []
    assert [(c["id"], c["message"]) for c in result["checks"] if not c["passed"]] == []


@pytest.mark.parametrize("name", sorted(mutants.MUTANTS))
def test_mutant_loses_points_on_its_own_task(graded, name):
    result = graded[name]
    lost = _lost(result)
    assert set(lost) == {mutants.TASK[name]}, (lost, result["cell_errors"])
    for check in result["checks"]:
        if not check["passed"]:
            assert check["blame"] and check["message"], check


def test_enough_mutants_of_every_kind():
    assert len(mutants.MUTANTS) >= 15
    assert {mutants.TASK[name] for name in mutants.MUTANTS} == {t.id for t in checks.TASKS}
    assert set(mutants.DEMO) <= set(mutants.MUTANTS)
    assert mutants.GPU_MUTANTS  # the race: caught only where a GPU runs the kernel


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
