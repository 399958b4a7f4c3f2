"""Record what every check gave every demo student on this toolchain, for the cross-toolchain
test (tests/test_toolchains.py).

    .venv/bin/python scripts/record_demo_checks.py [--demo-out DIR]
    .venv311/bin/python scripts/record_demo_checks.py [--demo-out DIR]

Grades the five demo classes (``python -m autograder demo``, several minutes) unless
``--demo-out`` names the output of such a run, then writes
``tests/fixtures/toolchains/<python>-jax<version>.json``: assignment -> student -> check id ->
[status, points]. Statuses and points, not messages: a message quotes the inputs the course's
secret draws, a status does not depend on them (tests/contract/test_score_stability.py). Run it
on each toolchain after a change to a check or a demo student, and commit both files.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECORDS = ROOT / "tests" / "fixtures" / "toolchains"


def toolchain() -> str:
    import jax

    major, minor, _ = platform.python_version_tuple()
    return f"python{major}.{minor}-jax{jax.__version__}"


def per_check(demo_out: Path) -> dict[str, dict[str, dict[str, list]]]:
    """assignment -> student -> check id -> [status, points], from a demo run's results JSON."""
    found: dict[str, dict[str, dict[str, list]]] = {}
    for results in sorted(demo_out.glob("*/graded/results")):
        assignment = results.parent.parent.name
        for path in sorted(results.glob("*.json")):
            data = json.loads(path.read_text(encoding="utf-8"))
            found.setdefault(assignment, {})[data["student_id"]] = {
                t["name"].split(":", 1)[0]: [t["status"], t["points"]] for t in data["tests"]}
    return found


def _dumps(record: dict) -> str:
    """JSON with one line per student, so that a diff names the students whose checks changed."""
    lines = ["{"]
    for i, (assignment, students) in enumerate(sorted(record.items())):
        lines.append(f" {json.dumps(assignment)}: {{")
        for j, (student, checks) in enumerate(sorted(students.items())):
            comma = "," if j < len(students) - 1 else ""
            lines.append(f"  {json.dumps(student)}: {json.dumps(checks, sort_keys=True)}{comma}")
        lines.append(" }" + ("," if i < len(record) - 1 else ""))
    return "\n".join(lines + ["}"]) + "\n"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--demo-out", type=Path, help="an existing `autograder demo --out` folder")
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="demo-") as tmp:
        out = args.demo_out
        if out is None:
            out = Path(tmp)
            subprocess.run([sys.executable, "-m", "autograder", "demo", "--out", str(out)],
                           cwd=ROOT, check=True)
        record = per_check(out)
    if not record:
        raise SystemExit(f"no results under {out}/*/graded/results")
    RECORDS.mkdir(parents=True, exist_ok=True)
    dest = RECORDS / f"{toolchain()}.json"
    dest.write_text(_dumps(record), encoding="utf-8")
    print(f"{dest.relative_to(ROOT)}: {sum(len(s) for s in record.values())} students")
    return 0


if __name__ == "__main__":
    sys.exit(main())
