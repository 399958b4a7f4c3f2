"""The assignment plug-in contract, as one typed value: :class:`Assignment`.

Every assignment fills it in the same way, in ``autograder/assignments/<name>/assignment.py``
(``ASSIGNMENT = contract.Assignment(...)``, usually through :func:`build`), and is listed in
``autograder.assignments.REGISTRY``. What each field means, how the grader and the tests use it,
and how to add an assignment: ``autograder/README.md``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType, ModuleType
from typing import Literal

from autograder import spec
from autograder.worker import policy

Cells = Mapping[str, str]  # solution cell grade_id -> the source a student would hand in there


@dataclass(frozen=True)
class Task:
    """A rule the student writes, where, for how much, and without which JAX calls."""

    id: str  # "ps1.jvp": in the stub's comment and message, the checks and the feedback line
    title: str
    cell: str  # grade_id of the solution cell the rule is written in
    points: float  # the sum of the points of the task's checks
    banned: tuple[str, ...] = ()  # JAX calls no student cell may use (autograder.worker.banned)
    # Words every failed check's blame of this task contains (the rule's name, "JVP rule"), so
    # the feedback names the rule at fault; "" where the assignment promises no such words.
    named_in_blame: str = ""


@dataclass(frozen=True)
class WrongSolution:
    """A realistic mistake: the reference with ``cells`` replaced. It must lose points on
    ``task``'s checks and on no other task's."""

    description: str
    task: str
    cells: Cells
    # "edit": one text edit of a reference cell, so it follows the source when that changes
    # (autograder.assignments.edits); "written": its cells written out whole.
    built: Literal["edit", "written"]


@dataclass(frozen=True)
class Alternative:
    """A correct solution written differently from the reference: the reference with
    ``cells`` replaced. It must earn every point and pass every visible test."""

    description: str
    cells: Cells


@dataclass(frozen=True)
class Assignment:
    name: str  # the folder under solutions/, assignments/ and the package: "ps1_primitives"
    package: str  # the package holding <name>.checks and <name>.probes: "autograder.assignments"
    spec: spec.Assignment  # <name>.checks.ASSIGNMENT: the checks, with their tasks and extra
    tasks: tuple[Task, ...]
    reference: Path  # the authored source: solutions/<name>/<name>.md, reference in its cells
    release: Path  # the student notebook generated from it: assignments/<name>/<name>.ipynb
    wrong_solutions: Mapping[str, WrongSolution]
    alternatives: Mapping[str, Alternative]
    reproducer: Callable[[str], str | None]  # check id -> the snippet of autograder.grade.reproduce
    # "notebook": a wrong solution or alternative is graded as a whole notebook, on every check.
    # "task": the tasks share no names, so it is graded by running its cells after the
    # reference's and only its own tasks' checks (ps3: twelve independent programs).
    graded_as: Literal["notebook", "task"] = "notebook"
    # What every check of the untouched notebook says ("NotImplementedError": the stubs raise),
    # or "" where a stub keeps buggy code for the student to fix instead.
    untouched_says: str = ""
    # Whether running the untouched notebook's cells raises nothing (the stubs raise only when
    # called); the visible test cells are not counted.
    untouched_cells_run: bool = True
    # The exceptions the untouched notebook's visible tests may fail with (every one fails);
    # () where any may (ps5: the stub kernel's error comes back as a JaxRuntimeError).
    untouched_visible_errors: tuple[str, ...] = ()
    # Whether a wrong solution's cells run without raising (its mistake shows in the checks).
    wrong_cells_run: bool = False
    # JAX options set before JAX starts a backend in the student's process (the sandbox does
    # the same): jax_num_cpu_devices.
    backend_options: tuple[tuple[str, object], ...] = ()
    # Why a field the tests read is empty, where that is by design: "untouched_says", and
    # "named_in_blame" (naming each task whose words are ""). The contract tests skip what an
    # empty field cannot show, with this reason, and fail on an empty field with none.
    empty_by_design: Mapping[str, str] = field(default_factory=dict)

    @property
    def checks(self) -> tuple[spec.Check, ...]:
        return self.spec.checks

    @property
    def allowed_imports(self) -> tuple[str, ...]:
        """Top-level modules a student cell may import (autograder.worker.policy)."""
        return policy.allowed_imports(self.spec)

    @property
    def probes(self) -> str:
        """The module imported in the student's process before any of its code runs."""
        return f"{self.package}.{self.name}.probes"

    def probes_module(self) -> ModuleType:
        return importlib.import_module(self.probes)

    def task(self, task_id: str) -> Task:
        return next(t for t in self.tasks if t.id == task_id)


def tasks_of(assignment: spec.Assignment, *,
             named_in_blame: Mapping[str, str] | None = None) -> tuple[Task, ...]:
    """The contract's tasks of a checks module's ``ASSIGNMENT``: each task's cell is its id
    without the assignment's prefix (the rule autograder.worker.policy applies to name a refused
    task), and its points are its checks'."""
    return tuple(
        Task(id=t.id, title=t.title, cell=t.id.split(".", 1)[-1],
             points=sum(c.points for c in assignment.checks if c.task == t.id), banned=t.banned,
             named_in_blame=(named_in_blame or {}).get(t.id, ""))
        for t in assignment.tasks)


def wrong_solutions(mutants: Mapping[str, tuple[str, Cells]], task_of: Mapping[str, str], *,
                    built: Literal["edit", "written"]) -> Mapping[str, WrongSolution]:
    """``mutants`` in the shape the mutants modules keep (name -> (description, cells)), with
    the task each must lose on."""
    return MappingProxyType({
        name: WrongSolution(description, task_of[name], MappingProxyType(dict(cells)), built)
        for name, (description, cells) in mutants.items()})


def alternatives(correct: Mapping[str, tuple[str, Cells]]) -> Mapping[str, Alternative]:
    return MappingProxyType({name: Alternative(description, MappingProxyType(dict(cells)))
                             for name, (description, cells) in correct.items()})


def build(name: str, *, checks: ModuleType, reproduce: ModuleType, root: Path,
          wrong: Mapping[str, WrongSolution], correct: Mapping[str, Alternative],
          package: str = "autograder.assignments",
          named_in_blame: Mapping[str, str] | None = None, **options) -> Assignment:
    """The contract of the assignment ``name`` whose modules are already imported: ``checks``
    (``ASSIGNMENT``), ``reproduce`` (``reproducer(check_id)``); ``root`` holds solutions/ and
    assignments/. ``options`` are the optional fields of :class:`Assignment`."""
    return Assignment(
        name=name, package=package, spec=checks.ASSIGNMENT,
        tasks=tasks_of(checks.ASSIGNMENT, named_in_blame=named_in_blame),
        reference=Path(root) / "solutions" / name / f"{name}.md",
        release=Path(root) / "assignments" / name / f"{name}.ipynb",
        wrong_solutions=wrong, alternatives=correct, reproducer=reproduce.reproducer, **options)
