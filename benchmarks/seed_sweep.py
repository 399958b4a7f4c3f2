"""Grade one check of one notebook under many seeds, in process: does a correct solution ever
fail a draw (a tolerance too tight for the numerics, an input class the rule cannot meet)?

    python benchmarks/seed_sweep.py ASSIGNMENT CHECK_ID [--variant NAME] [--seeds N]

``--variant``: ``reference`` (default) or the name of a correct alternative
(its contract's ``alternatives``: autograder/README.md).
Prints the failed seeds with their messages. Unsandboxed (``exec``): the course's own code only.
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


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("assignment")
    p.add_argument("check")
    p.add_argument("--variant", default="reference")
    p.add_argument("--seeds", type=int, default=200)
    args = p.parse_args()
    fills = solution_sources(args.assignment, root=ROOT)
    if args.variant != "reference":
        fills.update(alternatives(args.assignment)[args.variant][1])
    ns, errors = run_cells(make_submission(args.assignment, fills, root=ROOT))
    if errors:
        sys.exit(f"the notebook's cells failed: {errors}")
    spec, probes = load(args.assignment)
    check = next(c for c in spec.checks if c.id == args.check)
    started, failed = time.monotonic(), []
    for seed in range(args.seeds):
        verdict, _ = run_check(check, probes, ns, seed)
        if not verdict.passed:
            failed.append((seed, verdict.message[:300]))
    print(f"{args.assignment} {args.check} {args.variant}: {len(failed)} of {args.seeds} seeds "
          f"failed ({time.monotonic() - started:.1f} s)")
    for seed, message in failed[:10]:
        print(f"  seed {seed}: {message}")


if __name__ == "__main__":
    main()
