"""Grade notebooks in this process with autograder.inprocess; per-check verdicts as JSON.

    python tests/assignments/grade_inprocess.py ASSIGNMENT NOTEBOOK... [--seed N]

prints ``{notebook: {"cell_errors": [...], "warnings": [...], "checks": [{"id", "task",
"grade_cell", "points", "max_points", "status", "message", "blame"}]}}``. The student's cells run with ``exec`` in one
namespace (autograded test cells are skipped, as the engine does); nothing is sandboxed, so use
it on trusted notebooks only: the reference, mutants, the demo class. Each notebook defines its
own primitive, so several notebooks can share one process; run a few processes, not one per check.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import jax
import nbformat

from autograder.inprocess import load, run_check

ROOT = Path(__file__).resolve().parents[2]


def is_test_cell(cell) -> bool:
    meta = cell.metadata.get("nbgrader", {})
    return bool(meta.get("grade")) and not meta.get("solution")


def run_cells(nb) -> tuple[dict, list[str]]:
    ns: dict = {"__name__": "__main__"}
    errors = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or is_test_cell(cell):
            continue
        try:
            exec(compile(cell.source, f"<cell {index}>", "exec"), ns)
        except Exception as err:  # a wrong submission may raise anything; grading goes on
            errors.append(f"cell {index}: {type(err).__name__}: {err}")
    return ns, errors


def grade(path: Path, assignment: str, seed: int = 0) -> dict:
    nb = nbformat.read(path, as_version=4)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = _grade(nb, assignment, seed)
    result["warnings"] = sorted({f"{w.category.__name__}: {w.message}" for w in caught})
    return result


def _grade(nb, assignment: str, seed: int) -> dict:
    ns, errors = run_cells(nb)
    spec, probes = load(assignment)
    has_gpu = any(d.platform == "gpu" for d in jax.devices())
    checks = []
    for check in spec.checks:
        row = {"id": check.id, "task": check.task, "grade_cell": check.grade_cell,
               "max_points": check.points, "blame": check.blame}
        if check.needs_gpu and not has_gpu:
            checks.append({**row, "points": 0, "status": "not-run", "message": "no GPU"})
            continue
        verdict, _ = run_check(check, probes, ns, seed)
        checks.append({**row, "points": check.points if verdict.passed else 0,
                       "status": "passed" if verdict.passed else "failed",
                       "message": verdict.message})
    return {"cell_errors": errors, "checks": checks}


def grade_notebooks(assignment: str, notebooks: list[Path], *, processes: int = 2,
                    seed: int = 0) -> dict[str, dict]:
    """notebook stem -> :func:`grade`'s result, from ``processes`` parallel subprocesses."""
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    groups = [notebooks[i::processes] for i in range(processes) if notebooks[i::processes]]
    running = [
        subprocess.Popen(
            [sys.executable, __file__, assignment, *map(str, group), "--seed", str(seed)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
        for group in groups
    ]
    results = {}
    for proc in running:
        out, err = proc.communicate(timeout=600)
        if proc.returncode != 0:
            raise RuntimeError(err[-3000:])
        results.update({Path(k).stem: v for k, v in json.loads(out).items()})
    return results


def write(nb: nbformat.NotebookNode, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignment")
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    results = {str(p): grade(p, args.assignment, args.seed) for p in args.notebooks}
    json.dump(results, sys.stdout, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
