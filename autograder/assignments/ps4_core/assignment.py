"""ps4_core's contract (autograder/README.md): the modules beside this one, put together."""

from pathlib import Path

from autograder import contract
from autograder.assignments.ps4_core import checks, mutants, reproduce

ASSIGNMENT = contract.build(
    "ps4_core", checks=checks, reproduce=reproduce,
    root=Path(__file__).resolve().parents[3],
    wrong={**contract.wrong_solutions(mutants.MUTANTS, mutants.TASK, built="edit"),
           **contract.wrong_solutions(mutants.BLIND, mutants.BLIND_TASK, built="written")},
    correct=contract.alternatives({**mutants.ALTERNATIVES, **mutants.BLIND_ALTERNATIVES}),
    untouched_says="NotImplementedError",
    untouched_visible_errors=("NotImplementedError", "AssertionError"),
    wrong_cells_run=True,
    empty_by_design={"named_in_blame": (
        "ps4.broadcast_transpose, ps4.dce and ps4.fold_constants: each blame says what the rule "
        "must do (sum the cotangents, keep the equations an output needs, fold what reads only "
        "constants), under the task's feedback line that names it")},
)
