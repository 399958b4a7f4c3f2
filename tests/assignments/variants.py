"""Grade variants of an assignment (ps1_primitives, ps4_core, ps5_kernels) in this process;
per-check verdicts as JSON.

    python tests/assignments/variants.py [--assignment NAME] [--seed N] VARIANT...

A variant is a notebook a student could hand in, built from the released notebook
(assignments/<NAME>) by autograder.instructor.classroom: ``reference`` (every solution cell filled
with the reference), ``untouched`` (the released notebook itself), ``alt:NAME`` (the reference
with the cells of ``mutants.ALTERNATIVES[NAME]``) or a name from ``mutants.MUTANTS`` (the
reference with that mutant's cells). The student's cells run with ``exec`` in a fresh namespace
per variant; autograded test cells are not run by the grader, but for the reference and the
alternatives their visible tests are run and failures reported. Unsandboxed: for the course's
own notebooks only. The tests run it in a subprocess.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import jax

from autograder.instructor.classroom import (
    make_submission,
    mutant_submission,
    mutants_module,
    solution_sources,
)
from autograder.inprocess import load, run_check

NAME = "ps4_core"  # set by --assignment
ROOT = Path(__file__).resolve().parents[2]


def cells(variant: str) -> list[tuple[dict, str]]:
    if variant == "reference":
        nb = make_submission(NAME, solution_sources(NAME, root=ROOT), root=ROOT)
    elif variant == "untouched":
        nb = make_submission(NAME, {}, root=ROOT)
    elif variant.startswith("gpu:"):
        _, fills = mutants_module(NAME).GPU_MUTANTS[variant[len("gpu:"):]]
        nb = make_submission(NAME, {**solution_sources(NAME, root=ROOT), **fills}, root=ROOT)
    elif variant.startswith("alt:"):
        _, fills = mutants_module(NAME).ALTERNATIVES[variant[len("alt:"):]]
        nb = make_submission(NAME, {**solution_sources(NAME, root=ROOT), **fills}, root=ROOT)
    else:
        nb = mutant_submission(NAME, variant, root=ROOT)
    return [(c.metadata.get("nbgrader", {}), c.source + "\n")
            for c in nb.cells if c.cell_type == "code"]


def grade(variant: str, seed: int) -> dict:
    ns: dict = {"__name__": "__main__"}
    cell_errors, visible_failures = [], []
    for meta, source in cells(variant):
        test_cell = meta.get("grade") and not meta.get("solution")
        if test_cell:
            if variant == "reference" or variant.startswith("alt:"):
                try:
                    visible = compile(source, meta["grade_id"], "exec")
                    exec(visible, dict(ns))  # noqa: S102 - our own notebook's test cell
                except Exception as err:  # noqa: BLE001 - reported, not raised
                    visible_failures.append(f"{meta['grade_id']}: {type(err).__name__}: {err}")
            continue
        try:
            exec(compile(source, meta.get("grade_id", "?"), "exec"), ns)  # noqa: S102 - trusted
        except Exception as err:  # noqa: BLE001 - a wrong solution may raise anything
            cell_errors.append(f"{meta.get('grade_id')}: {type(err).__name__}: {err}")
    assignment, probes = load(NAME)
    checks = []
    has_gpu = any(d.platform == "gpu" for d in jax.devices())
    for check in assignment.checks:
        if check.needs_gpu and not has_gpu:
            continue  # not run, as the grader reports it: neither passed nor failed
        verdict, _ = run_check(check, probes, ns, seed)
        checks.append({"id": check.id, "task": check.task, "grade_cell": check.grade_cell,
                       "max_points": check.points, "points": check.points * verdict.passed,
                       "passed": verdict.passed, "message": verdict.message,
                       "blame": check.blame})
    return {"cell_errors": cell_errors, "visible_failures": visible_failures, "checks": checks}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variants", nargs="+")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--assignment", default="ps4_core")
    args = parser.parse_args(argv)
    global NAME
    NAME = args.assignment
    json.dump({v: grade(v, args.seed) for v in args.variants}, sys.stdout, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
