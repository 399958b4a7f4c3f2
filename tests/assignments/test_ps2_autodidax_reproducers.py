"""ps2_autodidax's reproducers ("Try it yourself" snippets) do what they say, run as a student runs
them: in a fresh kernel after the notebook's own cells (tests/reproducer_kernel.py).

- every check has a snippet that passes the cell policy, the same text every time, and computing
  them leaves the grader's JAX configuration as it was;
- after two correct solutions written other ways than the reference, every snippet runs to the
  end (all of a notebook's snippets in one kernel);
- after a wrong solution (mutants of every task beyond the demo class's), the snippet of each
  check the solution fails when graded raises.

The reference and the demo class's students (graded by the real command) are
tests/test_demo_reproducers.py's, for every assignment at once.

Which checks a solution fails comes from the session's in-process grading of every notebook the
contract names (``failed_checks``, tests/conftest.py: tests/contract/grade_variants.py, seed 0).
"""

from __future__ import annotations

import jax
import pytest
from grade_inprocess import ROOT
from reproducer_kernel import passed_after, raised_after, snippet_problems

from autograder.assignments.ps2_autodidax import checks, mutants, reproduce
from autograder.instructor import classroom

pytestmark = pytest.mark.timeout(1800)

NAME = "ps2_autodidax"
CHECKS = [check for check in checks.CHECKS if not check.needs_gpu]
REFERENCE = classroom.solution_sources(NAME, root=ROOT)
# Mutants beyond the demo class's, a few per task, the ones whose mistakes show only on some
# inputs first: rank-2 operands, ties, tracers, batch axes in front, prefixes, negative axes.
FURTHER = (
    "exp_jvp_forgets_dx", "log_jvp_divides_by_log", "max_jvp_ties_sum", "max_jvp_numpy_where",
    "matmul_jvp_operands_swapped", "matmul_batch_reports_x_axis", "matmul_batch_with_numpy",
    "transpose_batch_keeps_bdim", "broadcast_batch_axes_unshifted", "transpose_batch_with_numpy",
    "in_axes_prefix_one_leaf", "in_axes_negative_unnormalised", "out_axes_none_never_raises",
)
WRONG = {name: classroom.mutant_submission(NAME, name, root=ROOT) for name in FURTHER}
CORRECT = ("alt_all_a", "alt_all_b")  # every task written the first, the second other way


@pytest.fixture(scope="module")
def codes() -> dict[str, str]:
    return {check.id: reproduce.reproducer(check.id) for check in CHECKS}


@pytest.fixture(scope="module")
def failed(failed_checks) -> dict[str, list[str]]:
    """student -> the ids of the checks their notebook fails (the session's in-process grading
    of every notebook the contract names: ``failed_checks``, tests/conftest.py)."""
    return {student: failed_checks(NAME, student) for student in WRONG}


def test_every_check_has_a_snippet_that_passes_the_cell_policy(codes):
    assert snippet_problems(checks.ASSIGNMENT, reproduce.reproducer, codes) == []
    for check in CHECKS:
        code = codes[check.id]
        assert "\nimport numpy as np\n" in code, check.id
        assert "assert " in code or "raise AssertionError" in code, check.id
    assert reproduce.reproducer("ps2.no_such_check") is None


def test_snippets_hold_no_line_of_the_reference_solution(codes):
    lines = {line.strip() for source in REFERENCE.values() for line in source.splitlines()
             if len(line.strip()) >= 20 and not line.strip().startswith(("def ", "#", '"""'))}
    for check_id, code in codes.items():
        assert not [line for line in lines if line in code], check_id


def test_snippets_are_deterministic_and_leave_the_configuration_alone(codes):
    before = dict(jax.config.values)
    again = {check.id: reproduce.build(check.id) for check in CHECKS}  # not the cached ones
    assert again == codes
    assert dict(jax.config.values) == before


@pytest.mark.parametrize("alternative", CORRECT)
def test_every_snippet_runs_after_a_correct_alternative(alternative, codes):
    cells = mutants.ALTERNATIVES[alternative][1]
    nb = classroom.make_submission(NAME, {**REFERENCE, **cells}, root=ROOT)
    assert raised_after(nb, codes) == {}


@pytest.mark.parametrize("student", sorted(WRONG))
def test_the_snippet_of_each_failed_check_raises(student, codes, failed):
    ids = failed[student]
    assert ids, f"{student} fails no check: nothing to reproduce"
    assert passed_after(WRONG[student], codes, ids) == [], (
        f"snippets that pass although {student} failed their check")


def test_the_wrong_solutions_cover_every_task(failed):
    tasks = {check.id: check.task for check in CHECKS}
    assert {tasks[i] for ids in failed.values() for i in ids} == {t.id for t in checks.TASKS}
    for name in FURTHER:  # each further mutant loses points on its own task
        assert {tasks[i] for i in failed[name]} == {mutants.TASK[name]}, name
    assert {mutants.TASK[name] for name in FURTHER} == {t.id for t in checks.TASKS}
    assert len(FURTHER) >= 8 and set(mutants.DEMO).isdisjoint(FURTHER)
