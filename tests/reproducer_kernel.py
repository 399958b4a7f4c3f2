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
