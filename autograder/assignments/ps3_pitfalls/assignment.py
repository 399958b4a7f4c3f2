"""ps3_pitfalls' contract (autograder/README.md): the modules beside this one, put together."""

from pathlib import Path

from autograder import contract
from autograder.assignments.ps3_pitfalls import checks, mutants, reproduce

ASSIGNMENT = contract.build(
    "ps3_pitfalls", checks=checks, reproduce=reproduce,
    root=Path(__file__).resolve().parents[3],
    wrong=contract.wrong_solutions(mutants.MUTANTS, mutants.TASK, built="written"),
    correct=contract.alternatives(mutants.ALTERNATIVES),
    # Twelve independent programs: a wrong fix is graded on its own task's checks only.
    graded_as="task",
    # Two stubs keep the buggy code to fix, so not every check fails with NotImplementedError.
    untouched_says="",
    untouched_visible_errors=("NotImplementedError", "AssertionError"),
    backend_options=checks.TWO_DEVICES,
)
