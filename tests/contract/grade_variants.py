"""Grade the variants an assignment's contract names, in this process; per-check verdicts as JSON.

    python tests/contract/grade_variants.py CONTRACT_MODULE VARIANT... > RESULT.json

``CONTRACT_MODULE`` defines ``ASSIGNMENT`` (autograder.contract.Assignment). A variant is
``reference``, ``untouched`` (the released notebook itself), ``wrong:NAME`` or ``alt:NAME`` (the
reference with that wrong solution's or alternative's cells), or ``whole:NAME`` (that wrong
solution graded as a whole notebook whatever ``graded_as`` says). Each is built as a student would
hand it in (autograder.instructor.classroom), read back the way the grader reads a submission
(autograder.worker.normalise) and checked by the cell policy as the grader checks it
(autograder.worker.policy.apply: a refused cell is reported and not run); its cells then run with
``exec`` in one namespace, and the checks run with autograder.inprocess, as ``check_cell`` does
in the authored notebook. The visible test cells run last, each in a copy of the namespace, so
the checks see what the grader's process has (it never runs them).

``graded_as == "task"``: the reference runs once per process; each other variant runs only its
replaced cells on a copy of the reference's namespace, and only its tasks' checks.

Unsandboxed: for the course's own notebooks only; the contract tests run it in subprocesses.
"""

from __future__ import annotations

import importlib
import json
import os
import sys

import jax
import nbformat

from autograder import contract
from autograder.inprocess import run_check
from autograder.instructor import classroom
from autograder.worker import policy
from autograder.worker.normalise import normalise, read_release


def _notebook(assignment: contract.Assignment, variant: str):
    root = assignment.reference.parents[2]
    name = assignment.name
    if variant == "untouched":
        fills = {}
    else:
        fills = classroom.solution_sources(name, root=root)
        kind, _, which = variant.partition(":")
        if kind in ("wrong", "whole"):
            fills.update(assignment.wrong_solutions[which].cells)
        elif kind == "alt":
            fills.update(assignment.alternatives[which].cells)
        elif variant != "reference":
            raise ValueError(f"unknown variant {variant!r}")
    nb = classroom.make_submission(name, fills, root=root)
    checked = normalise(nbformat.writes(nb).encode(), read_release(assignment.release))
    return policy.apply(checked, assignment.spec)


def _changed_cells(assignment: contract.Assignment, variant: str) -> set[str]:
    kind, _, which = variant.partition(":")
    table = assignment.wrong_solutions if kind == "wrong" else assignment.alternatives
    return set(table[which].cells)


def _run(cells, ns: dict, report: dict) -> None:
    for cell in cells:
        if cell.cell_type != "code" or cell.role == "test":
            continue
        if not cell.run:
            if cell.note:  # refused by the cell policy
                report["refused"].append(f"{cell.grade_id}: {cell.note}")
            continue
        try:
            exec(compile(cell.source, cell.grade_id or "<added>", "exec"), ns)  # noqa: S102
        except Exception as err:  # noqa: BLE001 - a wrong solution may raise anything
            report["cell_errors"].append(f"{cell.grade_id}: {type(err).__name__}: {err}")


def _grade(assignment: contract.Assignment, probes, ns: dict, tasks: set[str] | None,
           report: dict) -> None:
    has_gpu = any(d.platform == "gpu" for d in jax.devices())
    for check in assignment.checks:
        if (tasks is not None and check.task not in tasks) or (check.needs_gpu and not has_gpu):
            continue  # a GPU check is not run here, as the grader reports it: neither way
        verdict, _ = run_check(check, probes, ns, seed=0)
        report["checks"].append({
            "id": check.id, "task": check.task, "grade_cell": check.grade_cell,
            "max_points": check.points, "points": check.points if verdict.passed else 0,
            "passed": verdict.passed, "message": verdict.message, "blame": check.blame})


def _visible(cells, ns: dict, grade_cells: set[str] | None, report: dict) -> None:
    for cell in cells:
        if cell.cell_type == "code" and cell.role == "test" and (
                grade_cells is None or cell.grade_id in grade_cells):
            try:
                exec(compile(cell.source, cell.grade_id, "exec"), dict(ns))  # noqa: S102
            except Exception as err:  # noqa: BLE001 - reported, not raised
                report["visible_failures"].append(f"{cell.grade_id}: {type(err).__name__}")


def grade(assignment: contract.Assignment, variants: list[str]) -> dict[str, dict]:
    probes = assignment.probes_module()
    by_task = assignment.graded_as == "task"
    results = {}
    base_ns: dict | None = None
    for variant in (["reference"] if by_task else []) + variants:
        if variant in results:
            continue
        report: dict = {"refused": [], "cell_errors": [], "checks": [], "visible_failures": []}
        notebook = _notebook(assignment, variant)
        if not by_task or variant in ("reference", "untouched") or variant.startswith("whole:"):
            ns: dict = {"__name__": "__main__"}
            _run(notebook.cells, ns, report)
            _grade(assignment, probes, ns, None, report)
            _visible(notebook.cells, ns, None, report)
            if variant == "reference":
                base_ns = ns
        else:
            changed = _changed_cells(assignment, variant)
            tasks = {t.id for t in assignment.tasks if t.cell in changed}
            ns = dict(base_ns)
            _run([c for c in notebook.cells if c.grade_id in changed], ns, report)
            _grade(assignment, probes, ns, tasks, report)
            _visible(notebook.cells, ns, {c.grade_cell for c in assignment.checks
                                          if c.task in tasks}, report)
        results[variant] = report
    return {v: results[v] for v in variants}


def main(argv: list[str]) -> int:
    module, *variants = argv
    assignment = importlib.import_module(module).ASSIGNMENT
    for key, value in assignment.backend_options:  # before JAX starts a backend, as the sandbox
        jax.config.update(key, value)
    # The notebooks print (ps3 teaches debug printing): everything they write, from Python or from
    # native code, goes to stderr, and only the JSON reaches the real stdout.
    result_fd = os.dup(1)
    sys.stdout.flush()
    os.dup2(2, 1)
    results = grade(assignment, variants)
    sys.stdout.flush()
    with os.fdopen(result_fd, "w", encoding="utf-8") as out:
        json.dump(results, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
