"""Does machine load change a grade? Grade an assignment's demo class on a quiet machine, then
again while one spinning process per core (tests/same_outputs.py) competes with the grader, and
compare the outputs: grades.csv and results byte for byte, feedback pages but for printed times.

    python benchmarks/grades_under_load.py ASSIGNMENT [--load N]

Prints both wall times and their ratio (the load's cost, not a limit), the CPU the generator got,
and each output file that differs. Exit status 1 when any does. The test
tests/autograder/test_grades_under_load.py makes the same comparison for ps4_core's class.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from same_outputs import busy_cores, grade_class, same_tree

from autograder.instructor.classroom import demo_class


def _grade(name: str, submitted: Path, out: Path) -> float:
    started = time.monotonic()
    proc = grade_class(name, submitted, out, timeout=3600)
    if proc.returncode:
        raise SystemExit(proc.stdout[-3000:] + proc.stderr[-3000:])
    return time.monotonic() - started


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("assignment")
    p.add_argument("--load", type=int, default=os.cpu_count() or 2,
                   help="spinning processes (default: one per core)")
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="under-load-") as tmp:
        base = Path(tmp)
        submitted = demo_class(args.assignment, base / "submitted", root=ROOT)
        quiet_s = _grade(args.assignment, submitted, base / "quiet")
        with busy_cores(args.load) as load:
            loaded_s = _grade(args.assignment, submitted, base / "loaded")
        differ = same_tree(base / "quiet", base / "loaded")
        students = len(list(submitted.iterdir()))
    print(f"{args.assignment}: {students} students; quiet {quiet_s:.0f} s, under a load of "
          f"{args.load} processes {loaded_s:.0f} s (x{loaded_s / quiet_s:.2f}); the generator "
          f"kept {load.cores_kept_busy:.2f} of {os.cpu_count()} cores busy")
    print("identical outputs" if not differ else "DIFFER: " + ", ".join(differ))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
