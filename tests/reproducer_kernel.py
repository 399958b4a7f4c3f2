"""Run reproducers as a student would: in a fresh Jupyter kernel, after the notebook's cells.

``run_after(nb, codes)`` executes every code cell of ``nb`` except its autograded test cells (as
the grader does), then each reproducer in a cell of its own, and returns, per reproducer, None
when it ran to the end or ``"ErrorName: message"`` when it raised. One kernel per notebook: the
reproducers are independent cells, so one that raises does not stop the next.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]


def _is_test_cell(cell) -> bool:
    meta = cell.metadata.get("nbgrader", {})
    return bool(meta.get("grade")) and not meta.get("solution")


def run_after(nb: nbformat.NotebookNode, codes: dict[str, str], *,
              timeout: int = 300) -> dict[str, str | None]:
    nb = copy.deepcopy(nb)
    nb.cells = [c for c in nb.cells if c.cell_type == "code" and not _is_test_cell(c)]
    first = len(nb.cells)
    order = list(codes)
    for key in order:
        nb.cells.append(nbformat.v4.new_code_cell(codes[key]))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    client = NotebookClient(nb, timeout=timeout, allow_errors=True, kernel_name="python3",
                            resources={"metadata": {"path": str(ROOT)}})
    client.execute(env=env)
    found: dict[str, str | None] = {}
    for key, cell in zip(order, nb.cells[first:]):
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        found[key] = f"{errors[0]['ename']}: {errors[0]['evalue']}" if errors else None
    return found


def raised_after(nb: nbformat.NotebookNode, codes: dict[str, str]) -> dict[str, str]:
    """The snippets that raised after ``nb``'s cells, with what they raised."""
    return {key: error for key, error in run_after(nb, codes).items() if error is not None}


def passed_after(nb: nbformat.NotebookNode, codes: dict[str, str], ids: list[str]) -> list[str]:
    """Of the snippets of ``ids``, those that ran to the end after ``nb``'s cells."""
    outcome = run_after(nb, {check_id: codes[check_id] for check_id in ids})
    return [check_id for check_id, error in outcome.items() if error is None]


def snippet_problems(assignment, reproducer, codes: dict[str, str]) -> list[str]:
    """What is wrong with an assignment's snippets, by what every assignment asks of them:
    none for a GPU check, one for every other check, passing the cell policy, named after its
    check, showing the student's result beside a correct one, free of grader code and of
    changes to the JAX configuration. Empty when all is well."""
    from autograder.worker import policy

    allowed = policy.allowed_imports(assignment)
    problems = []
    for check in assignment.checks:
        if check.needs_gpu:
            if reproducer(check.id) is not None:
                problems.append(f"{check.id}: a snippet for a GPU check")
            continue
        code = codes.get(check.id)
        if not isinstance(code, str):
            problems.append(f"{check.id}: no snippet")
            continue
        if policy.check_source(code, allowed)[1]:
            problems.append(f"{check.id}: refused by the cell policy")
        if not (code.startswith(f"# {check.id}: ") and "import numpy as np" in code):
            problems.append(f"{check.id}: no heading or no numpy import")
        if "your code" not in code or "a correct solution" not in code:
            problems.append(f"{check.id}: does not show both results")
        if "autograder" in code or "config" in code:
            problems.append(f"{check.id}: grader code or a configuration change")
    return problems
