"""Is a grade a function of the code? Grade the reference, every correct alternative and every
wrong solution of an assignment under several course secrets, in process, and list each notebook
whose score changes with them (the student and the code draw no input: runner.input_seed).

    python benchmarks/score_stability.py ASSIGNMENT [--inputs 30] [--only VARIANT ...]
                                         [--part K/N]

The notebooks are those the assignment's contract names (autograder.assignments.REGISTRY), graded
by the contract tests' harness (tests/contract/grade_variants.py) with its inputs drawn as the
grader draws them (``runner.input_seed`` of the secret and the check). The same
run as a test: tests/contract/test_score_stability.py (``make test-stability``), judged the
same way (grade_variants.stability_problems: one score per notebook, every point for the reference
and each alternative). ``--part K/N`` grades the K-th of N interleaved slices of the notebooks
(every N-th, from the K-th): the N parts together are the whole run, for machines where the whole
takes longer than one sitting. Unsandboxed (``exec``): the course's own notebooks only. Exit
status 1 when any notebook has a problem.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "contract"), str(ROOT / "tests" / "fixtures")]

from grade_variants import in_subprocesses, stability_problems

from autograder.assignments import REGISTRY, contract


def _part(text: str) -> tuple[int, int]:
    k, _, n = text.partition("/")
    if not (k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n)):
        raise argparse.ArgumentTypeError(f"expected K/N with 1 <= K <= N, got {text!r}")
    return int(k), int(n)


def part_of(variants: list[str], k: int, n: int) -> list[str]:
    """The K-th of N interleaved slices: every N-th variant from the K-th (1-based)."""
    return variants[k - 1::n]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("assignment", choices=sorted(REGISTRY))
    p.add_argument("--inputs", default="30", help="how many course secrets (30)")
    p.add_argument("--only", nargs="*", help="these variants only (reference, alt:NAME, "
                                              "wrong:NAME)")
    p.add_argument("--part", type=_part, default=(1, 1), metavar="K/N",
                   help="the K-th of N interleaved slices of the notebooks (1/1: all)")
    args = p.parse_args()
    a = contract(args.assignment)
    variants = args.only or (["reference"] + [f"alt:{n}" for n in sorted(a.alternatives)]
                             + [f"wrong:{n}" for n in sorted(a.wrong_solutions)])
    variants = part_of(variants, *args.part)
    started = time.monotonic()
    graded = in_subprocesses(REGISTRY[args.assignment], variants, inputs=args.inputs,
                             timeout=24 * 3600)
    problems = stability_problems(graded)
    for variant, report in graded.items():
        got = report["scores"]
        print(f"{'PROBLEM ' if variant in problems else 'stable  '}{variant}: "
              + " ".join(f"{s:g}" for s in sorted(set(got))))
        if variant in problems:
            print(f"    {problems[variant]}")
    print(f"{args.assignment}: {len(variants)} notebooks (part {args.part[0]}/{args.part[1]}) x "
          f"{args.inputs} inputs, {len(problems)} with a problem "
          f"({time.monotonic() - started:.0f} s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
