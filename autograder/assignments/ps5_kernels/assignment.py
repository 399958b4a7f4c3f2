"""ps5_kernels' contract (autograder/README.md): the modules beside this one, put together.

Its wrong solutions are the ones every machine grades: ``mutants.GPU_MUTANTS`` lose points only
where a GPU runs the kernel, and ``mutants.CRASH_MUTANTS`` abort the process that runs them, so
only the sandboxed command grades those (tests/assignments/test_ps5_sandbox.py).
"""

from pathlib import Path

from autograder import contract
from autograder.assignments.ps5_kernels import checks, mutants, reproduce

ASSIGNMENT = contract.build(
    "ps5_kernels", checks=checks, reproduce=reproduce,
    root=Path(__file__).resolve().parents[3],
    wrong=contract.wrong_solutions(mutants.MUTANTS, mutants.TASK, built="edit"),
    correct=contract.alternatives(mutants.ALTERNATIVES),
    named_in_blame={"ps5.kernel": "the C++ kernel", "ps5.ffi_call": "lse_ffi",
                    "ps5.vmap": "lse_vmappable's batching", "ps5.grad": "lse's derivative"},
    empty_by_design={
        "untouched_says": ("the C++ kernel's and the CUDA kernel's stubs are C++ and CUDA "
                           "source, which raise no NotImplementedError: their checks fail on "
                           "what the kernels return"),
        "named_in_blame": ("ps5.cuda: its checks' blames name the part at fault, LSE_CU, "
                           "lse_any or LseRowsKernel")},
)
