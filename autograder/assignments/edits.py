"""What the assignments' ``mutants`` modules share: the reference solution cells of an authored
source, and wrong solutions made by replacing one piece of text in one of those cells."""

from __future__ import annotations

from pathlib import Path

import jupytext

MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")


def reference_cells(source: Path, *, keep_stub_raise: bool = False) -> dict[str, str]:
    """Each solution cell of ``source`` as a student would have written it (markers dropped, and
    the stub's ``raise NotImplementedError(`` line too unless ``keep_stub_raise``)."""
    cells = {}
    for cell in jupytext.read(source).cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and meta.get("solution"):
            lines = [line for line in cell.source.splitlines()
                     if line.strip() not in MARKERS
                     and (keep_stub_raise or "raise NotImplementedError(" not in line)]
            cells[meta["grade_id"]] = "\n".join(lines) + "\n"
    return cells


def apply_edits(cells: dict[str, str], edits: dict) -> dict[str, tuple[str, dict[str, str]]]:
    """``edits``: name -> (description, grade_id, task, text in the cell, its replacement); each
    must match its cell exactly once, or the edit no longer applies and this fails loudly."""
    out = {}
    for name, (description, grade_id, _, old, new) in edits.items():
        source = cells[grade_id]
        if source.count(old) != 1:
            raise ValueError(f"mutant {name}: the edit no longer applies to cell {grade_id}")
        out[name] = (description, {grade_id: source.replace(old, new)})
    return out
