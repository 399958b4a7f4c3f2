"""Variants of ps2_autodidax: build them as nbgrader submissions, and run visible tests in-process.

    python tests/assignments/ps2_variants.py visible VARIANT...   # JSON: failures per variant
    python tests/assignments/ps2_variants.py write DEST           # SUBMITTED tree of every variant

A variant is a notebook a student could hand in, built from the released notebook by
autograder.instructor.classroom: ``reference`` (every solution cell filled with the reference),
``untouched`` (the released notebook itself), a name from ``mutants.MUTANTS`` (the reference with
that mutant's cells) or from ``ps2_alternatives.ALTERNATIVES`` (a correct solution written another
way). Grading is the real command's job (``python -m autograder grade``); this module only runs
the *visible* tests, which the grader does not run, with ``exec`` in a fresh namespace per
variant. Unsandboxed: for the course's own notebooks only.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ps2_alternatives import ALTERNATIVES

from autograder.assignments.ps2_autodidax import mutants
from autograder.instructor.classroom import make_submission, solution_sources

NAME = "ps2_autodidax"
ROOT = Path(__file__).resolve().parents[2]


def notebook(variant: str) -> nbformat.NotebookNode:
    reference = solution_sources(NAME, root=ROOT)
    if variant == "reference":
        return make_submission(NAME, reference, root=ROOT)
    if variant == "untouched":
        return make_submission(NAME, {}, root=ROOT)
    if variant in ALTERNATIVES:
        return make_submission(NAME, {**reference, **ALTERNATIVES[variant][1]}, root=ROOT)
    return make_submission(NAME, {**reference, **mutants.MUTANTS[variant][1]}, root=ROOT)


def variants() -> list[str]:
    return ["reference", "untouched", *mutants.MUTANTS, *ALTERNATIVES]


def visible_failures(variant: str) -> list[str]:
    """Run the notebook top to bottom, visible tests included (hidden regions stripped by the
    release); the failures of the test cells and any error of another cell."""
    ns: dict = {"__name__": "__main__"}
    failures = []
    for cell in notebook(variant).cells:
        if cell.cell_type != "code":
            continue
        meta = cell.metadata.get("nbgrader", {})
        try:
            exec(compile(cell.source, meta.get("grade_id", "?"), "exec"), ns)  # noqa: S102
        except Exception as err:  # noqa: BLE001 - reported, not raised
            failures.append(f"{meta.get('grade_id')}: {type(err).__name__}: {err}")
    return failures


def write(dest: Path) -> Path:
    for variant in variants():
        path = dest / variant / NAME / f"{NAME}.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook(variant), path)
    return dest


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    vis = sub.add_parser("visible")
    vis.add_argument("variants", nargs="+")
    out = sub.add_parser("write")
    out.add_argument("dest", type=Path)
    args = parser.parse_args(argv)
    if args.command == "visible":
        json.dump({v: visible_failures(v) for v in args.variants}, sys.stdout, indent=1)
    else:
        write(args.dest)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
