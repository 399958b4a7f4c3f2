"""The grader-side types of an assignment: its tasks, its checks, a probe's outcome, a verdict.

Each assignment's ``checks.py`` defines ``ASSIGNMENT``, a :class:`Assignment` of these; the
whole plug-in contract (probes, plain data, reproducers, wrong and correct solutions) and how the
grader uses every field is written once, in autograder/README.md (autograder.contract).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Task:
    """A rule the student writes. Its id appears in the stub's comment, its
    ``NotImplementedError`` message, its checks and its feedback line."""

    id: str  # e.g. "ps1.jvp"
    title: str  # e.g. "multiply_add_value_and_jvp, the JVP rule"
    # Dotted JAX names that do this task's work for it (``"jax.jvp"`` for a JVP rule): no student
    # cell may use them, and the task's text says so. See autograder.worker.banned.
    banned: tuple[str, ...] = ()


@dataclass(frozen=True)
class Outcome:
    """What a probe produced in the student's process, as the grader received it."""

    value: Any = None  # plain data, when the probe returned
    raised: str | None = None  # the exception's type name, when the probe raised
    message: str = ""  # the exception's message (truncated by the engine)


@dataclass(frozen=True)
class Verdict:
    passed: bool
    # Shown to the student: says what went wrong, never an expected value or hidden code.
    message: str = ""


@dataclass(frozen=True)
class Check:
    id: str  # unique in the assignment, e.g. "ps1.jvp.jit"
    task: str  # the Task.id this check grades; feedback names that rule
    description: str  # what is checked, in the student's words
    points: float
    grade_cell: str  # nbgrader grade_id of the autograded test cell these points count toward
    probe: str  # name of a function in probes.py
    make_inputs: Callable[[np.random.Generator], dict]  # grader side; returns plain data
    expect: Callable[[dict], Any]  # grader side, computed with real JAX from the inputs
    judge: Callable[[Any, Outcome], Verdict]  # (expected, outcome) -> Verdict
    # Said in the feedback when the check fails: which rule, and which part of it, is at fault.
    blame: str = ""
    # JAX config applied in the student's process before its code runs, e.g.
    # (("jax_enable_x64", True),). Checks with different configs run in separate processes.
    jax_config: tuple[tuple[str, Any], ...] = ()
    # Runs only where the grader sees a GPU; elsewhere the check is reported `not-run`.
    needs_gpu: bool = False
    timeout_s: float = 60.0
    # When the first run's verdict fails: the inputs of a second run of the same probe, whose
    # value (a dict) is merged over the first's and judged again. For work a probe can skip
    # whenever the first run's result is right (ps1: evaluating eagerly, when jit was right).
    retry: Callable[[dict], dict] | None = None


@dataclass(frozen=True)
class Assignment:
    name: str  # e.g. "ps1_primitives"
    notebook: str  # e.g. "ps1_primitives.ipynb"
    tasks: tuple[Task, ...]
    checks: tuple[Check, ...]
    # Read by the engine: "own_primitives" (names of primitives the notebook defines, whose
    # entries in JAX's rule registries the guard lets the cells change) and "allowed_imports"
    # (modules a student cell may import beyond autograder.worker.policy.BASE_IMPORTS).
    extra: dict = field(default_factory=dict)

    def task(self, task_id: str) -> Task:
        return next(t for t in self.tasks if t.id == task_id)
