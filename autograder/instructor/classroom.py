"""Submissions built from an assignment's sources: full, untouched, partial, wrong and broken.

Generic over assignments: the wrong ones come from ``autograder.assignments.<name>.mutants``
(``MUTANTS``, ``DEMO`` and optionally ``PARTIAL``; the contract: autograder/README.md), the rest
from the authored source and the released student notebook. Used by the tests and ``make demo``.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import nbformat

from autograder.instructor.release import REGIONS, release_path, source_notebook

BROKEN = '{"cells": [{"cell_type": "code", "source": "1 +'  # a notebook cut off mid-write


def _is_solution(cell) -> bool:
    return bool(cell.metadata.get("nbgrader", {}).get("solution"))


def solution_sources(name: str, *, root: Path) -> dict[str, str]:
    """grade_id -> the reference source of each solution cell, region markers removed."""
    markers = {line for pair in REGIONS for line in pair}
    sources = {}
    for cell in source_notebook(name, root=root).cells:
        if _is_solution(cell):
            kept = [line for line in cell.source.splitlines() if line.strip() not in markers]
            sources[cell.metadata["nbgrader"]["grade_id"]] = "\n".join(kept)
    return sources


def make_submission(name: str, fills: dict[str, str], *, root: Path) -> nbformat.NotebookNode:
    """The released notebook with the solution cells named in ``fills`` replaced."""
    nb = nbformat.read(release_path(name, root=root), as_version=4)
    unknown = set(fills)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if _is_solution(cell) and grade_id in fills:
            cell.source = fills[grade_id]
            unknown.discard(grade_id)
    if unknown:
        raise KeyError(f"{name} has no solution cells {sorted(unknown)}")
    return nb


def mutants_module(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(f"autograder.assignments.{name}.mutants")
    except ModuleNotFoundError:
        return None


def mutant_submission(name: str, mutant: str, *, root: Path) -> nbformat.NotebookNode:
    """The reference solution with one mutant's cells swapped in."""
    _, cells = mutants_module(name).MUTANTS[mutant]
    return make_submission(name, {**solution_sources(name, root=root), **cells}, root=root)


def demo_submissions(name: str, *, root: Path) -> dict[str, nbformat.NotebookNode | str]:
    """student id -> notebook (or, for the broken one, raw text)."""
    solutions = solution_sources(name, root=root)
    mutants = mutants_module(name)
    partial_ids = getattr(mutants, "PARTIAL", None) or list(solutions)[: len(solutions) // 2]
    students: dict[str, nbformat.NotebookNode | str] = {
        "full": make_submission(name, solutions, root=root),
        "untouched": make_submission(name, {}, root=root),
        "partial": make_submission(name, {k: solutions[k] for k in partial_ids}, root=root),
    }
    for mutant in getattr(mutants, "DEMO", ()):
        students[f"wrong_{mutant}"] = mutant_submission(name, mutant, root=root)
    students["broken"] = BROKEN
    return students


def demo_class(assignment: str, dest: Path, *, root: Path) -> Path:
    """Write dest/<student>/<assignment>/<notebook>.ipynb for the demo class; returns dest."""
    dest = Path(dest)
    notebook = release_path(assignment, root=root).name
    for student, submission in demo_submissions(assignment, root=root).items():
        path = dest / student / assignment / notebook
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(submission, str):
            path.write_text(submission)
        else:
            nbformat.write(submission, path)
    return dest
