"""Is a grade a function of the code? Grade the reference, every correct alternative and every
wrong solution of an assignment under several course secrets and student ids, in process, and
list each notebook whose score changes with them.

    python benchmarks/score_stability.py ASSIGNMENT [--inputs 10x3] [--only VARIANT ...]

The notebooks are those the assignment's contract names (autograder.assignments.REGISTRY), graded
by the contract tests' harness (tests/contract/grade_variants.py) with its inputs drawn as the
grader draws them (``runner.input_seed`` of the secret, the id, the check and the code). The same
run as a test: tests/contract/test_score_stability.py (``make test-stability``). Unsandboxed
(``exec``): the course's own notebooks only. Exit status 1 when any score varies.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "contract"), str(ROOT / "tests" / "fixtures")]

from grade_variants import in_subprocesses

from autograder.assignments import REGISTRY, contract


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("assignment", choices=sorted(REGISTRY))
    p.add_argument("--inputs", default="10x3", help="course secrets x student ids (10x3)")
    p.add_argument("--only", nargs="*", help="these variants only (reference, alt:NAME, "
                                              "wrong:NAME)")
    args = p.parse_args()
    a = contract(args.assignment)
    variants = args.only or (["reference"] + [f"alt:{n}" for n in sorted(a.alternatives)]
                             + [f"wrong:{n}" for n in sorted(a.wrong_solutions)])
    started = time.monotonic()
    graded = in_subprocesses(REGISTRY[args.assignment], variants, inputs=args.inputs,
                             timeout=24 * 3600)
    unstable = 0
    for variant, report in graded.items():
        got = report["scores"]
        stable = len(set(got)) == 1
        unstable += not stable
        print(f"{'stable  ' if stable else 'VARIES  '}{variant}: "
              + (f"{got[0]:g}" if stable else " ".join(f"{s:g}" for s in got)))
        for line in ([] if stable else report["failed_inputs"][:5]):
            print(f"    {line}")
    print(f"{args.assignment}: {len(variants)} notebooks x {args.inputs} inputs, {unstable} with a "
          f"score that depends on them ({time.monotonic() - started:.0f} s)")
    return 1 if unstable else 0


if __name__ == "__main__":
    sys.exit(main())
