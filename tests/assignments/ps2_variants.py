"""Grade variants of ps2_autodidax in this process; print per-check verdicts as JSON.

    python tests/assignments/ps2_variants.py [--seed N] VARIANT...

A variant is ``reference`` (the solution source), ``untouched`` (its solution regions cleared, as
nbgrader's release does with this course's ``code_stub``) or a name from ``mutants.MUTANTS``.
The student's cells run with ``exec`` in a fresh namespace per variant; autograded test cells
are not run by the grader, but their visible part is run (and its failures reported) for the
reference. Unsandboxed: for the course's own notebooks only. The tests run it in a subprocess.
"""

from __future__ import annotations

import argparse
import json
import re
import sys

import jupytext

from autograder.assignments.ps2_autodidax import mutants
from autograder.inprocess import load, run_check

REGION = re.compile(r"^(\s*)### BEGIN SOLUTION\n.*?^\s*### END SOLUTION\n",
                    re.MULTILINE | re.DOTALL)
HIDDEN = "### BEGIN HIDDEN TESTS"


def cells(variant: str) -> list[tuple[dict, str]]:
    fills = {} if variant in ("reference", "untouched") else mutants.MUTANTS[variant][1]
    out = []
    for cell in jupytext.read(mutants.SOURCE).cells:
        if cell.cell_type != "code":
            continue
        meta = cell.metadata.get("nbgrader", {})
        source = cell.source + "\n"
        if meta.get("solution") and variant == "untouched":
            source = REGION.sub(r"\1# YOUR CODE HERE\n", source)
        source = fills.get(meta.get("grade_id"), source)
        out.append((meta, source))
    return out


def grade(variant: str, seed: int) -> dict:
    ns: dict = {"__name__": "__main__"}
    cell_errors, visible_failures = [], []
    for meta, source in cells(variant):
        test_cell = meta.get("grade") and not meta.get("solution")
        if test_cell:
            if variant == "reference":
                try:
                    visible = compile(source.split(HIDDEN)[0], meta["grade_id"], "exec")
                    exec(visible, dict(ns))  # noqa: S102 - our own notebook's test cell
                except Exception as err:  # noqa: BLE001 - reported, not raised
                    visible_failures.append(f"{meta['grade_id']}: {type(err).__name__}: {err}")
            continue
        try:
            exec(compile(source, meta.get("grade_id", "?"), "exec"), ns)  # noqa: S102 - trusted
        except Exception as err:  # noqa: BLE001 - a wrong solution may raise anything
            cell_errors.append(f"{meta.get('grade_id')}: {type(err).__name__}: {err}")
    assignment, probes = load("ps2_autodidax")
    checks = []
    for check in assignment.checks:
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
    args = parser.parse_args(argv)
    json.dump({v: grade(v, args.seed) for v in args.variants}, sys.stdout, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
