"""Grade an assignment's wrong solutions and correct alternatives with the real command and print
the table of scores: the figures an issue note quotes.

    .venv/bin/python scripts/mutant_scores.py ps4_core [--seed 0] [--workers 2]

The class is the reference, the untouched notebook, every mutant of
``autograder.assignments.<name>.mutants.MUTANTS`` and, where the module has them, its
``GPU_MUTANTS`` (graded as any other: on a machine without a GPU they lose nothing) and
``ALTERNATIVES`` (or ps1's ``CORRECT``), each built with ``autograder.instructor.classroom``; it is graded by
``python -m autograder grade`` exactly as an instructor runs it. Prints one Markdown row per
notebook: name, the task it targets, its score, and the tasks it lost points on.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.grade.grading import load_assignment
from autograder.instructor.classroom import make_submission, mutants_module, solution_sources
from autograder.instructor.release import release_path


def variants(name: str) -> dict[str, tuple[str, nbformat.NotebookNode]]:
    """student id -> (the task it targets or 'all', notebook)."""
    reference = solution_sources(name, root=ROOT)
    found = {"reference": ("all", make_submission(name, reference, root=ROOT)),
             "untouched": ("none", nbformat.read(release_path(name, root=ROOT), as_version=4))}
    module = mutants_module(name)
    tables = (("MUTANTS", "wrong"), ("GPU_MUTANTS", "wrong"), ("ALTERNATIVES", "alt"),
              ("CORRECT", "alt"))
    for table, prefix in tables:
        for mutant, (_, cells) in getattr(module, table, {}).items():
            target = ", ".join(sorted(cells)) if prefix == "wrong" else "correct"
            found[f"{prefix}_{mutant}"] = (target, make_submission(
                name, {**reference, **cells}, root=ROOT))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("assignment")
    parser.add_argument("--seed", default="0")
    parser.add_argument("--workers", default="2")
    args = parser.parse_args()
    spec = load_assignment(args.assignment, "autograder.assignments")
    task_of = {f"{c.id}: {c.description}": c.task for c in spec.checks}
    with tempfile.TemporaryDirectory() as tmp:
        submitted, out = Path(tmp) / "submitted", Path(tmp) / "out"
        chosen = variants(args.assignment)
        for student, (_, nb) in chosen.items():
            path = submitted / student / args.assignment / spec.notebook
            path.parent.mkdir(parents=True)
            nbformat.write(nb, path)
        subprocess.run([sys.executable, "-m", "autograder", "grade", args.assignment,
                        str(submitted), "--out", str(out), "--seed", args.seed, "--workers",
                        args.workers, "--no-progress", "--db", f"sqlite:///{Path(tmp) / 'g.db'}"],
                       cwd=ROOT, check=True, capture_output=True)
        print("| notebook | targets | score | lost points on |\n|---|---|---|---|")
        for student, (target, _) in chosen.items():
            result = json.loads((out / "results" / f"{student}.json").read_text())
            lost = defaultdict(float)
            for test in result["tests"]:
                if test["status"] in ("failed", "error"):
                    lost[task_of[test["name"]]] += test["max_points"]
            where = ", ".join(f"{t} (-{p:g})" for t, p in sorted(lost.items())) or "-"
            print(f"| {student} | {target} | {result['score']:g}/{result['max_score']:g} "
                  f"| {where} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
