"""Is a grade a function of the code? Grade the reference, every correct alternative and every
wrong solution of an assignment under several seeds, in process, and list each notebook whose
score changes with the seed.

    python benchmarks/score_stability.py ASSIGNMENT [--seeds N] [--only NAME ...]

A seed stands for everything a grading's inputs derive from besides the code (the course's
secret and the student's id: ``runner.input_seed``), so a notebook whose score differs between
seeds would get different grades for different students. Works for the assignments whose wrong
solutions and alternatives live in ``mutants.py`` (ps1's correct ones are ``CORRECT``).
Unsandboxed (``exec``): the course's own notebooks only. Exit status 1 when any score varies.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "assignments")]

import jax

from autograder.inprocess import load, run_check
from autograder.instructor.classroom import make_submission, mutants_module, solution_sources


def notebooks(name: str) -> dict[str, dict[str, str]]:
    """variant -> solution cell fills (the reference's, with some cells swapped)."""
    reference = solution_sources(name, root=ROOT)
    mutants = mutants_module(name)
    correct = {**getattr(mutants, "CORRECT", {}), **getattr(mutants, "ALTERNATIVES", {})}
    found = {"reference": reference}
    found.update({f"alt:{k}": {**reference, **v[1]} for k, v in correct.items()})
    found.update({k: {**reference, **v[1]} for k, v in mutants.MUTANTS.items()})
    return found


def namespace(name: str, fills: dict[str, str]) -> dict:
    ns: dict = {"__name__": "__main__"}
    for cell in make_submission(name, fills, root=ROOT).cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type != "code" or (meta.get("grade") and not meta.get("solution")):
            continue
        try:
            exec(compile(cell.source, meta.get("grade_id", "?"), "exec"), ns)  # noqa: S102
        except Exception:  # noqa: BLE001, S112 - a wrong solution may raise anything
            continue
    return ns


def scores(name: str, ns: dict, seeds: range) -> list[float]:
    assignment, probes = load(name)
    has_gpu = any(d.platform == "gpu" for d in jax.devices())
    checks = [c for c in assignment.checks if has_gpu or not c.needs_gpu]
    return [sum(c.points for c in checks if run_check(c, probes, ns, seed)[0].passed)
            for seed in seeds]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("assignment")
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--only", nargs="*", help="these variants only")
    args = p.parse_args()
    jax.config.update("jax_num_cpu_devices", 2)  # ps3's placement task asks for a second one
    variants = notebooks(args.assignment)
    if args.only:
        variants = {k: v for k, v in variants.items() if k in args.only}
    started, unstable = time.monotonic(), 0
    for variant, fills in variants.items():
        got = scores(args.assignment, namespace(args.assignment, fills), range(args.seeds))
        stable = len(set(got)) == 1
        unstable += not stable
        print(f"{'stable  ' if stable else 'VARIES  '}{variant}: "
              + (f"{got[0]:g}" if stable else " ".join(f"{s:g}" for s in got)), flush=True)
    print(f"{args.assignment}: {len(variants)} notebooks x {args.seeds} seeds, {unstable} with "
          f"a score that depends on the seed ({time.monotonic() - started:.0f} s)")
    return 1 if unstable else 0


if __name__ == "__main__":
    sys.exit(main())
