"""Points from one place: the released notebook's test cells.

Each check counts toward one nbgrader test cell (``Check.grade_cell``), and its ``points`` in the
assignment's checks.py are its weight within that cell. What the cell is worth is what the
released notebook's nbgrader metadata says, the value ``release`` (nbgrader's generate_assignment)
also wrote into the gradebook: an instructor who changes a test cell's points in the source and
releases changes what the next `grade` scores against, in the results, feedback, summary,
grades.csv, the gradebook and so `nbgrader export`. The checks of a cell keep their proportions;
their points are scaled so that together they make the cell's points exactly.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction

from autograder.spec import Assignment
from autograder.worker.normalise import nbgrader_meta


def released_points(release_cells: list[dict]) -> dict[str, float]:
    """grade id -> points of each graded (test) cell of the released notebook."""
    found = {}
    for cell in release_cells:
        meta = nbgrader_meta(cell)
        if meta.get("grade") and meta.get("grade_id") and "points" in meta:
            found[meta["grade_id"]] = float(meta["points"])
    return found


def scaled(spec: Assignment, release_cells: list[dict]) -> Assignment:
    """``spec`` with each check's points scaled to its cell's points in the release; the same
    object when nothing differs. A cell whose checks weigh nothing keeps them at nothing."""
    cells = released_points(release_cells)
    totals: dict[str, Fraction] = {}
    for check in spec.checks:
        totals[check.grade_cell] = totals.get(check.grade_cell, Fraction(0)) + Fraction(
            check.points)
    factor = {cell: Fraction(cells[cell]) / total for cell, total in totals.items()
              if cell in cells and total and Fraction(cells[cell]) != total}
    if not factor:
        return spec
    checks, given = [], {cell: Fraction(0) for cell in factor}
    last = {check.grade_cell: check.id for check in spec.checks}
    for check in spec.checks:
        cell = check.grade_cell
        if cell not in factor:
            checks.append(check)
            continue
        if last[cell] == check.id:  # the remainder: the cell's checks add up to it exactly
            share = Fraction(cells[cell]) - given[cell]
        else:
            share = Fraction(check.points) * factor[cell]
            share = Fraction(round(share * 10**6), 10**6)
        given[cell] += share
        checks.append(dataclasses.replace(check, points=float(share)))
    return dataclasses.replace(spec, checks=tuple(checks))


def changes(spec: Assignment, release_cells: list[dict]) -> list[str]:
    """What the release changed, for the run's output: "cell: checks' points -> release's"."""
    cells = released_points(release_cells)
    totals: dict[str, float] = {}
    for check in spec.checks:
        totals[check.grade_cell] = totals.get(check.grade_cell, 0.0) + float(check.points)
    return [f"{cell}: {totals[cell]:g} -> {cells[cell]:g}" for cell in sorted(totals)
            if cell in cells and totals[cell] and cells[cell] != totals[cell]]
