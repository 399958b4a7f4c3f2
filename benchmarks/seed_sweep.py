"""Grade checks of one notebook under many seeds, in process: does a correct solution ever fail a
draw (a tolerance too tight for the numerics, an input class the rule cannot meet), or does a
wrong one pass some draws and not others (an input class only some draws reach: its score would
move with the course secret and the student id)?

    python benchmarks/seed_sweep.py ASSIGNMENT CHECK_ID [CHECK_ID ...] [--variant NAME]
                                    [--seeds N]

``--variant``: ``reference`` (default), the name of a correct alternative, or ``wrong:NAME``, a
wrong solution (both from its contract's ``alternatives`` and ``wrong_solutions``:
autograder/README.md). Prints, per check, the seeds at which the verdict differs from the
expected one (failed for a correct notebook, passed for a wrong one), with the first messages.
Exit status 1 when a correct notebook fails a draw, or a wrong one passes some draws of a check
and fails others. Unsandboxed (``exec``): the course's own code only.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "assignments")]

from grade_inprocess import run_cells

from autograder.assignments import contract
from autograder.inprocess import load, run_check
from autograder.instructor.classroom import make_submission, solution_sources


def alternatives(assignment: str) -> dict:
    """name -> (description, cells) of the assignment's correct alternatives (its contract)."""
    return {name: (alt.description, dict(alt.cells))
            for name, alt in contract(assignment).alternatives.items()}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("assignment")
    p.add_argument("checks", nargs="+", metavar="CHECK_ID")
    p.add_argument("--variant", default="reference")
    p.add_argument("--seeds", type=int, default=200)
    args = p.parse_args()
    fills = solution_sources(args.assignment, root=ROOT)
    wrong = args.variant.startswith("wrong:")
    if wrong:
        fills.update(contract(args.assignment).wrong_solutions[args.variant[6:]].cells)
    elif args.variant != "reference":
        fills.update(alternatives(args.assignment)[args.variant][1])
    ns, errors = run_cells(make_submission(args.assignment, fills, root=ROOT))
    if errors:
        sys.exit(f"the notebook's cells failed: {errors}")
    spec, probes = load(args.assignment)
    status = 0
    for check_id in args.checks:
        check = next(c for c in spec.checks if c.id == check_id)
        started, odd = time.monotonic(), []
        for seed in range(args.seeds):
            verdict, _ = run_check(check, probes, ns, seed)
            if verdict.passed == wrong:
                odd.append((seed, verdict.message[:300]))
        said = "passed" if wrong else "failed"
        print(f"{args.assignment} {check_id} {args.variant}: {len(odd)} of {args.seeds} seeds "
              f"{said} ({time.monotonic() - started:.1f} s)")
        if wrong and len(odd) == args.seeds:
            continue  # a wrong rule this check does not test: it passes every draw
        for seed, message in odd[:10]:
            print(f"  seed {seed}: {message}" if message else f"  seed {seed}")
        if odd:
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
