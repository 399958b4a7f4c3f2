"""ps3_pitfalls' reproducers ("Try it yourself" snippets) do what they say, run as a student runs
them: in a fresh kernel after the notebook's own cells (tests/reproducer_kernel.py), one kernel per
notebook.

- every check has a snippet that passes the cell policy, the same text every time, and holds no
  line of the reference solution;
- after a wrong solution (every mutant outside the demo class, dealt into as few notebooks as
  hold at most one per task), the snippet of each check the solution fails when graded raises.

The reference and the demo class's students (graded by the real command) are
tests/test_demo_reproducers.py's, for every assignment at once.

Which checks a solution fails comes from the session's in-process grading of every notebook the
contract names (``failed_checks``, tests/conftest.py: tests/contract/grade_variants.py, seed 0,
two CPU devices as the sandbox starts JAX for these checks); each wrong notebook's kernel runs the
snippets of every check of the tasks it changes, and the test then looks up those of the checks
it failed. A notebook may hold wrong
fixes of several tasks at once, since tasks share no names.
"""

from __future__ import annotations

import pytest
from grade_inprocess import ROOT
from reproducer_kernel import run_after

from autograder.assignments.ps3_pitfalls import checks, mutants, reproduce
from autograder.instructor import classroom
from autograder.worker import policy

pytestmark = pytest.mark.timeout(1800)

NAME = "ps3_pitfalls"
CHECKS = [check for check in checks.ASSIGNMENT.checks if not check.needs_gpu]
REFERENCE = classroom.solution_sources(NAME, root=ROOT)


def mutant_groups() -> list[list[str]]:
    """Every mutant outside the demo class, dealt into as few lists as hold one per task each."""
    by_task: dict[tuple[str, ...], list[str]] = {}
    for name, (_, cells) in mutants.MUTANTS.items():
        if name not in mutants.DEMO:
            by_task.setdefault(tuple(sorted(cells)), []).append(name)
    count = max(len(names) for names in by_task.values())
    return [[names[i] for names in by_task.values() if i < len(names)] for i in range(count)]


def wrong_notebooks() -> dict:
    wrong = {}
    for i, group in enumerate(mutant_groups()):
        fills = dict(REFERENCE)
        for name in group:
            fills.update(mutants.MUTANTS[name][1])
        wrong[f"mutants_{i}"] = classroom.make_submission(NAME, fills, root=ROOT)
    return wrong


WRONG = wrong_notebooks()


def changed_tasks(nb) -> set[str]:
    """The tasks whose solution cell is not the reference's."""
    cells = {c.metadata["nbgrader"]["grade_id"]: c.source for c in nb.cells
             if c.metadata.get("nbgrader", {}).get("solution")}
    return {f"ps3.{grade_id}" for grade_id, source in cells.items()
            if source != REFERENCE[grade_id]}


GROUPS = {f"mutants_{i}": group for i, group in enumerate(mutant_groups())}


@pytest.fixture(scope="module")
def grading(failed_checks):
    """failed(student): the ids of the checks that student's notebook fails, from the session's
    in-process grading of every notebook the contract names (``failed_checks``,
    tests/conftest.py); a notebook of several mutants fails what each of them fails (the tasks
    share no names)."""
    def failed(student: str) -> set[str]:
        names = GROUPS.get(student, [student])
        return {check_id for name in names for check_id in failed_checks(NAME, name)}

    return failed


@pytest.fixture(scope="module")
def codes() -> dict[str, str]:
    return {check.id: reproduce.reproducer(check.id) for check in CHECKS}


def test_every_check_has_a_snippet_that_passes_the_cell_policy(codes):
    allowed = policy.allowed_imports(checks.ASSIGNMENT)
    for check in checks.ASSIGNMENT.checks:
        if check.needs_gpu:
            assert reproduce.reproducer(check.id) is None, check.id
            continue
        code = codes[check.id]
        assert isinstance(code, str), check.id
        assert policy.check_source(code, allowed)[1] == [], check.id
        assert code.startswith(f"# {check.id}: ") and "import numpy as np" in code, check.id
        assert "your code" in code and "a correct solution" in code, check.id
        assert "autograder" not in code and "config" not in code, check.id
        assert code.rstrip().splitlines()[-1].lstrip().startswith(("np.testing.", "assert ")), \
            check.id
    assert reproduce.reproducer("ps3.no_such_check") is None


def test_snippets_are_deterministic_and_hold_no_reference_code(codes):
    again = {check.id: reproduce.reproducer(check.id) for check in CHECKS}
    assert again == codes
    fixes = {line.strip() for source in REFERENCE.values() for line in source.splitlines()
             if len(line.strip()) >= 12 and not line.strip().startswith("#")}
    for check_id, code in codes.items():
        lines = {line.strip() for line in code.splitlines()}
        assert not fixes & lines, (check_id, fixes & lines)


def test_the_wrong_notebooks_hold_every_mutant_beyond_the_demo_class():
    further = [name for group in mutant_groups() for name in group]
    assert len(further) >= 10 and set(further) == set(mutants.MUTANTS) - set(mutants.DEMO)
    assert {f"ps3.{gid}" for name in further for gid in mutants.MUTANTS[name][1]} == {
        task.id for task in checks.ASSIGNMENT.tasks}
    for group in mutant_groups():  # at most one wrong fix per task in a notebook
        tasks = [gid for name in group for gid in mutants.MUTANTS[name][1]]
        assert len(tasks) == len(set(tasks)), group


@pytest.mark.parametrize("student", sorted(WRONG))
def test_every_failed_check_has_a_snippet_that_raises(codes, grading, student):
    nb = WRONG[student]
    changed = changed_tasks(nb)
    task_of = {check.id: check.task for check in CHECKS}
    # The snippets of every check of the changed tasks, while the grading goes on.
    results = run_after(nb, {check_id: code for check_id, code in codes.items()
                             if task_of[check_id] in changed})
    failed = grading(student)
    # Each wrong fix loses points on its task (the others' cells are the reference's).
    assert {task_of[check_id] for check_id in failed} == changed, student
    quiet = sorted(check_id for check_id in failed if results[check_id] is None)
    assert quiet == [], f"{student}: these snippets ran quietly after a failed check: {quiet}"
