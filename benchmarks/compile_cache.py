"""What the tests' shared JAX compilation cache saves, and that it changes no verdict.

    python benchmarks/compile_cache.py ASSIGNMENT [--every K] [--rounds R]

Grades the contract's reference, its untouched notebook and every K-th wrong solution in process
(tests/contract/grade_variants.py, as the tests' ``graded`` fixture does), once without a
compilation cache and once with a fresh one (cold: the state a CI run starts in), alternating
which goes first over R rounds so that a machine whose load drifts favours neither. Prints each
time, the ratio, the load average, and every check whose verdict or message differs (messages
compared with object ids masked: a tracer's id is printed in some). Exit status 1 when any does.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "contract"), str(ROOT / "tests" / "fixtures")]

from grade_variants import in_subprocesses

from autograder.assignments import REGISTRY

_IDS = re.compile(r"(0x[0-9a-f]+|object id \d+)")


def _verdicts(graded: dict) -> dict:
    return {variant: [(c["id"], c["passed"], _IDS.sub("ID", c["message"]))
                      for c in report["checks"]] for variant, report in graded.items()}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("assignment", choices=sorted(REGISTRY))
    p.add_argument("--every", type=int, default=5, help="every K-th wrong solution (default 5)")
    p.add_argument("--rounds", type=int, default=1)
    args = p.parse_args()
    module = REGISTRY[args.assignment]
    wrong = sorted(importlib.import_module(module).ASSIGNMENT.wrong_solutions)[::args.every]
    variants = ["reference", "untouched", *(f"wrong:{w}" for w in wrong)]
    times: dict[str, list[float]] = {"plain": [], "cache": []}
    found: dict[str, dict] = {}
    for round_ in range(args.rounds):
        for kind in (("plain", "cache") if round_ % 2 == 0 else ("cache", "plain")):
            with tempfile.TemporaryDirectory() as cache:
                started = time.monotonic()
                graded = in_subprocesses(module, variants, processes=1,
                                         compile_cache=Path(cache) if kind == "cache" else None)
                times[kind].append(time.monotonic() - started)
            found[kind] = _verdicts(graded)
            print(f"round {round_ + 1} {kind}: {times[kind][-1]:.1f} s "
                  f"(load average {os.getloadavg()[0]:.1f})", flush=True)
    plain, cache = sum(times["plain"]), sum(times["cache"])
    print(f"{args.assignment}: {len(variants)} variants, without the cache {plain:.1f} s, with a "
          f"cold one {cache:.1f} s: {plain / cache:.2f}x")
    differ = [(v, a, b) for v in found["plain"]
              for a, b in zip(found["plain"][v], found["cache"][v], strict=True) if a != b]
    for variant, a, b in differ:
        print(f"DIFFERS {variant}: {a} | {b}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
