"""ps4_core's reproducers ("Try it yourself" snippets) do what they say, run as a student runs
them: in a fresh kernel after the notebook's own cells (tests/reproducer_kernel.py).

- every check has a snippet that passes the cell policy, the same text every time;
- after each correct alternative, every snippet runs to the end;
- after a wrong solution (every mutant outside the demo class), the snippet of each check the
  solution fails when graded raises.

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

from autograder.assignments.ps4_core import checks, mutants, reproduce
from autograder.instructor import classroom

pytestmark = pytest.mark.timeout(1800)

NAME = "ps4_core"
CHECKS = [check for check in checks.CHECKS if not check.needs_gpu]
# Wrong solutions: every mutant outside the demo class (all three tasks).
WRONG = {name: classroom.mutant_submission(NAME, name, root=ROOT)
         for name in mutants.MUTANTS if name not in mutants.DEMO}


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
        assert "your code:" in codes[check.id] and "a correct solution:" in codes[check.id]
    assert reproduce.reproducer("ps4.no_such_check") is None


def test_snippets_are_deterministic_and_leave_the_configuration_alone(codes):
    before = jax.config.jax_enable_x64
    again = {check.id: reproduce.reproducer(check.id) for check in CHECKS}
    assert again == codes
    assert jax.config.jax_enable_x64 == before


@pytest.mark.parametrize("alternative", sorted(mutants.ALTERNATIVES))
def test_every_snippet_runs_after_a_correct_alternative(alternative, codes):
    _, fills = mutants.ALTERNATIVES[alternative]
    nb = classroom.make_submission(
        NAME, {**classroom.solution_sources(NAME, root=ROOT), **fills}, root=ROOT)
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
    assert len(WRONG) >= 8
