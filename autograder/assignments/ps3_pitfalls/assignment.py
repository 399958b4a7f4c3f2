"""ps3_pitfalls' contract (autograder/README.md): the modules beside this one, put together."""

import re
from pathlib import Path

from autograder import contract
from autograder.assignments.ps3_pitfalls import checks, mutants, reproduce

ASSIGNMENT = contract.build(
    "ps3_pitfalls", checks=checks, reproduce=reproduce,
    root=Path(__file__).resolve().parents[3],
    wrong={**contract.wrong_solutions(mutants.MUTANTS, mutants.TASK, built="written"),
           **contract.wrong_solutions(mutants.BLIND, mutants.BLIND_TASK, built="written")},
    correct=contract.alternatives({**mutants.ALTERNATIVES, **mutants.BLIND_ALTERNATIVES}),
    # Twelve independent programs: a wrong fix is graded on its own task's checks only.
    graded_as="task",
    untouched_says="",
    # Every check's blame starts with the function (or class) the task fixes: its title's first
    # word (``leaky_relu(x, slope): ...``).
    named_in_blame={t.id: re.match(r"\w+", t.title)[0] for t in checks.TASKS},
    empty_by_design={"untouched_says": (
        "two stubs keep the buggy code to fix, so not every check of the untouched notebook "
        "fails with NotImplementedError")},
    untouched_visible_errors=("NotImplementedError", "AssertionError"),
    backend_options=checks.TWO_DEVICES,
)
