"""ps1_primitives' contract (autograder/README.md): the modules beside this one, put together."""

from pathlib import Path

from autograder import contract
from autograder.assignments.ps1_primitives import checks, mutants, reproduce

ASSIGNMENT = contract.build(
    "ps1_primitives", checks=checks, reproduce=reproduce,
    root=Path(__file__).resolve().parents[3],
    wrong=contract.wrong_solutions(mutants.MUTANTS, mutants.TASK, built="written"),
    correct=contract.alternatives(mutants.CORRECT),
    # How the checks' blame names each rule, so the feedback says which rule is at fault.
    named_in_blame={"ps1.impl": "impl rule", "ps1.abstract_eval": "abstract evaluation rule",
                    "ps1.lowering": "lowering rule", "ps1.jvp": "JVP rule",
                    "ps1.transpose": "transpose rule", "ps1.batch": "batching rule"},
    untouched_says="NotImplementedError",
    untouched_visible_errors=("NotImplementedError", "AssertionError"),
)
