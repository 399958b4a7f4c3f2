"""ps2_autodidax's contract (autograder/README.md): the modules beside this one, put together."""

from pathlib import Path

from autograder import contract
from autograder.assignments.ps2_autodidax import checks, mutants, reproduce

ASSIGNMENT = contract.build(
    "ps2_autodidax", checks=checks, reproduce=reproduce,
    root=Path(__file__).resolve().parents[3],
    wrong=contract.wrong_solutions(mutants.MUTANTS, mutants.TASK, built="edit"),
    correct=contract.alternatives(mutants.ALTERNATIVES),
    untouched_says="NotImplementedError",
    untouched_visible_errors=("NotImplementedError", "AssertionError"),
    named_in_blame={"ps2.matmul": "matmul"},
    empty_by_design={"named_in_blame": (
        "ps2.jvp_rules, ps2.shape_rules and ps2.out_axes: each check's blame names the function "
        "it found at fault (exp_jvp, div_jvp, transpose_batch, ...) or what the rules must do, "
        "so no words name the task in every check's")},
)
