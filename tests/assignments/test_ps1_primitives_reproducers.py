"""ps1_primitives' reproducers ("Try it yourself" snippets): every check that can run without a
GPU has one; each passes the cell policy; after a wrong solution's cells every snippet of a check
that solution fails raises.

Wrong solutions: mutants spread over the six tasks, beyond the demo class's. The checks each fails
come from the session's in-process grading of every notebook the contract names
(``failed_checks``, tests/conftest.py, seed 0); the snippets of those checks then run in one fresh
kernel after its cells (reproducer_kernel.run_after), as a student would paste them. The demo
class's students, graded by the real command, and the reference (every snippet runs to the end
after its cells) are tests/test_demo_reproducers.py's, for every assignment at once.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import jax
import pytest
from grade_inprocess import ROOT
from reproducer_kernel import run_after

from autograder.assignments.ps1_primitives import reproduce as ps1_reproduce
from autograder.assignments.ps1_primitives.checks import ASSIGNMENT
from autograder.assignments.ps1_primitives.mutants import DEMO, MUTANTS, TASK
from autograder.grade import reproduce
from autograder.instructor.classroom import (
    mutant_submission,
    solution_sources,
)
from autograder.worker import policy

pytestmark = pytest.mark.timeout(1800)

NAME = "ps1_primitives"
CPU_CHECKS = [c.id for c in ASSIGNMENT.checks if not c.needs_gpu]
GPU_CHECKS = [c.id for c in ASSIGNMENT.checks if c.needs_gpu]
TASK_OF = {c.id: c.task for c in ASSIGNMENT.checks}
X64_CHECKS = {c.id for c in ASSIGNMENT.checks if dict(c.jax_config).get("jax_enable_x64")}
# Further wrong solutions, beyond the demo class's: two or so per task, among them those whose
# checks measure how a result is computed (NumPy on tracers, jnp instead of the primitive, a host
# callback) and those that fail on one class of input only (axis -1, an axis in front of the last
# two, a batch axis other than 0).
EXTRA = ("impl_swapaxes", "impl_upcasts", "abstract_eval_negative_axis", "abstract_eval_asserts",
         "lowering_host_callback", "jvp_jax_numpy", "jvp_ignores_symbolic_zeros",
         "transpose_numpy", "transpose_x_only", "transpose_ignores_symbolic_zero", "batch_wrong_out_axis", "batch_numpy",
         "jvp_zero_times_primitive", "batch_never_applies_primitive")
# A snippet that raises one of these is broken itself, not reproducing the student's mistake.
SNIPPET_BUGS = ("NameError", "SyntaxError", "ImportError", "ModuleNotFoundError",
                "UnboundLocalError")


def _codes() -> dict[str, str]:
    return {check_id: ps1_reproduce.reproducer(check_id) for check_id in CPU_CHECKS}


# The snippets themselves ----------------------------------------------------------------------

def test_extra_mutants_cover_every_task():
    assert {TASK[m] for m in EXTRA} == {t.id for t in ASSIGNMENT.tasks}
    assert len(EXTRA) >= 8 and not set(EXTRA) & set(DEMO) and set(EXTRA) <= set(MUTANTS)


def test_every_check_without_gpu_has_a_snippet_the_cell_policy_accepts():
    roots = policy.allowed_imports(ASSIGNMENT)
    for check_id in GPU_CHECKS:
        assert ps1_reproduce.reproducer(check_id) is None
        assert reproduce.reproducer(NAME, check_id) is None
    for check_id, code in _codes().items():
        assert isinstance(code, str) and code.startswith(f"# {check_id}: "), check_id
        assert reproduce.reproducer(NAME, check_id) == code  # found by the framework
        _, refusals = policy.check_source(code, roots)
        assert refusals == [], (check_id, refusals)
        lines = code.splitlines()
        assert lines[1].startswith("import "), check_id  # its own imports first
        assert "your code" in code and "a correct solution" in code, check_id
        assert "assert" in code, check_id
        assert ("with jax.enable_x64(True):" in code) == (check_id in X64_CHECKS), check_id
        assert "jax.config" not in code and "enable_x64(False)" not in code, check_id


def test_snippets_are_deterministic_fast_and_leave_jax_config_alone():
    x64 = jax.config.jax_enable_x64
    first = _codes()
    start = time.perf_counter()
    again = _codes()  # ps1_reproduce.reproducer itself is not cached: this computes them again
    elapsed = time.perf_counter() - start
    assert again == first
    assert elapsed < 0.5 * len(first), elapsed
    assert jax.config.jax_enable_x64 == x64


def test_snippets_hold_no_line_of_the_reference_solution():
    reference = {line.strip() for source in solution_sources(NAME, root=ROOT).values()
                 for line in source.splitlines() if len(line.strip()) > 12}
    for check_id, code in _codes().items():
        leaked = reference & {line.strip() for line in code.splitlines()}
        assert not leaked, (check_id, leaked)
        # The grader's expectations and probes stay in the grader.
        assert "tensordot" not in code and "checks" not in code and "probe" not in code, check_id


# Running them after a solution's cells ---------------------------------------------------------

def _wrong_notebooks() -> dict:
    return {f"wrong_{m}": mutant_submission(NAME, m, root=ROOT) for m in EXTRA}


@pytest.fixture(scope="module")
def runs(failed_checks) -> dict:
    """Which checks each wrong notebook fails (the session's in-process grading,
    ``failed_checks``), and the results of those checks' snippets after its cells (one kernel
    per notebook, two at a time)."""
    codes = _codes()
    wrong = _wrong_notebooks()
    failed = {name: failed_checks(NAME, name) for name in wrong}
    with ThreadPoolExecutor(max_workers=2) as pool:
        pending = {name: pool.submit(run_after, nb, {i: codes[i] for i in failed[name]})
                   for name, nb in wrong.items()}
        return {"failed": failed,
                "snippets": {name: future.result() for name, future in pending.items()}}


@pytest.mark.parametrize("student", [f"wrong_{m}" for m in EXTRA])
def test_every_failed_check_has_a_snippet_that_raises(runs, student):
    failed = runs["failed"][student]
    assert failed, f"{student} fails no check"
    # each mutant loses points on its own task
    assert TASK[student.removeprefix("wrong_")] in {TASK_OF[c] for c in failed}
    results = runs["snippets"][student]
    assert set(results) == set(failed)
    passed = sorted(check_id for check_id, err in results.items() if err is None)
    assert passed == [], f"{student}: these snippets ran to the end although the check failed"
    broken = {check_id: err for check_id, err in results.items() if err.startswith(SNIPPET_BUGS)}
    assert broken == {}, f"{student}: these snippets are broken themselves"
