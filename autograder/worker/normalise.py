"""First stage: turn a submitted file into the cells to run, whatever state the file is in.

Invalid JSON or a file that is not a notebook is a :class:`NotebookError` (the submission gets
status ``error``). Everything else is repaired: cell ids are not trusted, outputs are dropped (a
pre-filled output never counts), the kernelspec is ignored, cells with the grade_id of a provided
or test cell in the release notebook are replaced by the release version (deleted ones are put
back), the student's solution cells and any cells they added are kept in order, and autograded
test cells are not run (the engine runs the checks itself).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

MAX_NOTEBOOK_BYTES = 64 << 20
MAX_CELL_CHARS = 200_000


class NotebookError(Exception):
    """The submission cannot be read as a notebook; the message says why, for the student."""


@dataclass(frozen=True)
class Cell:
    cell_type: str  # "code", "markdown" or "raw"
    source: str
    role: str  # "solution", "provided", "test", "student" or "text"
    grade_id: str | None = None
    run: bool = False
    note: str = ""
    code: str = ""  # what the sandbox runs when not the source itself (autograder.worker.policy)


@dataclass(frozen=True)
class Notebook:
    cells: tuple[Cell, ...]
    notes: tuple[str, ...] = field(default=())

    @property
    def code_to_run(self) -> list[str]:
        return [c.code or c.source for c in self.cells if c.run]


def nbgrader_meta(cell: dict) -> dict:
    meta = cell.get("metadata")
    meta = meta.get("nbgrader") if isinstance(meta, dict) else None
    return meta if isinstance(meta, dict) else {}


def release_role(meta: dict) -> str | None:
    if not meta.get("grade_id"):
        return None
    if meta.get("solution"):
        return "solution"
    if meta.get("grade"):
        return "test"
    if meta.get("locked"):
        return "provided"
    return None


def read_release(path: Path) -> list[dict]:
    """The release notebook's cells; each provided or test cell with ``also``, its source in the
    translated releases beside it (``zh/<notebook>``: the same code, comments and messages in
    Chinese), so that a student who worked in the Chinese notebook has edited no cell."""
    cells = [dict(c, source=_source(c)) for c in
             json.loads(path.read_text(encoding="utf-8"))["cells"]]
    translated = {}
    for other in sorted(path.parent.glob(f"*/{path.name}")):
        for cell in json.loads(other.read_text(encoding="utf-8"))["cells"]:
            grade_id = nbgrader_meta(cell).get("grade_id")
            if grade_id:
                translated.setdefault(grade_id, []).append(_source(cell))
    for cell in cells:
        grade_id = nbgrader_meta(cell).get("grade_id")
        cell["also"] = [s for s in translated.get(grade_id, ()) if s != cell["source"]]
    return cells


def grade_ids(cells: list) -> set[str]:
    """The nbgrader grade ids of a notebook's cells (of any cells: a student's file is data)."""
    ids = set()
    for cell in cells:
        grade_id = nbgrader_meta(cell).get("grade_id") if isinstance(cell, dict) else None
        if isinstance(grade_id, str) and grade_id:
            ids.add(grade_id)
    return ids


def foreign(cells: list, release: list[dict], others: dict[str, frozenset[str]]) -> str | None:
    """The other assignment whose notebook this is (by the nbgrader cell ids only it has), if
    the notebook has none of the release's own ids."""
    ids, own = grade_ids(cells), grade_ids(release)
    theirs = {name: other - own for name, other in others.items()}
    if ids & (own - set().union(*others.values())):
        return None
    for name in sorted(theirs):
        if ids & theirs[name]:
            return name
    return None


def normalise(data: bytes, release: list[dict], *, assignment: str = "",
              others: dict[str, frozenset[str]] | None = None) -> Notebook:
    """``others``: the other assignments' grade ids, to say when a notebook is one of theirs
    (a NotebookError naming it) instead of grading it as an unattempted ``assignment``."""
    try:
        return _normalise(data, release, assignment, others or {})
    except NotebookError:
        raise
    except Exception as err:  # noqa: BLE001 - RecursionError, MemoryError, ValueError...
        # Whatever the file holds (100,000 nested lists, a 5,000-digit number past int()'s
        # limit, ...), reading it fails for this submission alone.
        raise NotebookError(f"the file could not be read as a notebook ({type(err).__name__}: "
                            f"{str(err)[:200]})") from None


def _normalise(data: bytes, release: list[dict], assignment: str,
               others: dict[str, frozenset[str]]) -> Notebook:
    if len(data) > MAX_NOTEBOOK_BYTES:
        raise NotebookError(f"the notebook is larger than {MAX_NOTEBOOK_BYTES >> 20} MiB")
    if not data.strip():
        raise NotebookError("the file is empty: nothing was saved into it")
    try:
        nb = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise NotebookError(f"the file is not valid JSON ({err})") from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise NotebookError("the file is JSON but not a Jupyter notebook (no list of cells)")
    other = foreign(nb["cells"], release, others)
    if other is not None:
        raise NotebookError(f"this is the notebook of another assignment, {other} (its nbgrader "
                            f"cell ids are {other}'s), not of {assignment or 'this one'}: "
                            f"the student submitted the wrong file")
    notes: list[str] = []
    known = {}
    for cell in release:
        meta = nbgrader_meta(cell)
        if release_role(meta):
            known[meta["grade_id"]] = cell
    # Student cells keyed by the release cell they follow (None: before the first one).
    solutions: dict[str, Cell] = {}
    added: dict[str | None, list[Cell]] = {None: []}
    after: str | None = None
    replaced: list[str] = []
    for raw in nb["cells"]:
        if not isinstance(raw, dict):
            notes.append("a cell that was not a JSON object was ignored")
            continue
        kind = raw.get("cell_type") if raw.get("cell_type") in ("code", "markdown", "raw") else None
        if kind is None:
            notes.append("a cell of unknown type was ignored")
            continue
        source = _source(raw)
        grade_id = nbgrader_meta(raw).get("grade_id")
        role = release_role(nbgrader_meta(known[grade_id])) if grade_id in known else None
        if role == "solution" and grade_id not in solutions:
            solutions[grade_id] = _student_cell(kind, source, "solution", grade_id)
            after = grade_id
        elif role in ("provided", "test"):
            if source not in (known[grade_id]["source"], *known[grade_id].get("also", ())):
                replaced.append(grade_id)
            after = grade_id
        else:
            role_name = "student" if kind == "code" else "text"
            added.setdefault(after, []).append(_student_cell(kind, source, role_name, None))
    cells = list(added[None])
    restored: list[str] = []
    for rel in release:
        meta = nbgrader_meta(rel)
        role = release_role(meta)
        if role is None:
            continue
        grade_id = meta["grade_id"]
        if role == "solution":
            cells.append(solutions.get(grade_id) or _student_cell(
                rel.get("cell_type", "code"), rel["source"], "solution", grade_id))
        else:
            if grade_id not in _seen_ids(nb["cells"]):
                restored.append(grade_id)
            is_code = rel.get("cell_type") == "code"
            cells.append(Cell(rel.get("cell_type", "code"), rel["source"], role, grade_id,
                              run=is_code and role == "provided",
                              note="test cell: graded by the autograder's own checks"
                              if role == "test" else ""))
        cells.extend(added.get(grade_id, []))
    # Named by grade id, so the student knows which cell of theirs the grader did not run.
    if replaced:
        notes.append(f"{len(replaced)} edited provided or test cell(s) were restored from the "
                     f"release ({', '.join(replaced)})")
    if restored:
        notes.append(f"{len(restored)} deleted provided or test cell(s) were put back "
                     f"({', '.join(restored)})")
    return Notebook(tuple(cells), tuple(notes))


def _seen_ids(raw_cells: list) -> set:
    return {nbgrader_meta(c).get("grade_id") for c in raw_cells if isinstance(c, dict)}


def _student_cell(kind: str, source: str, role: str, grade_id: str | None) -> Cell:
    if len(source) > MAX_CELL_CHARS:
        return Cell(kind, source[:MAX_CELL_CHARS], role, grade_id, run=False,
                    note=f"cell too large ({len(source)} characters): shown truncated, not run")
    return Cell(kind, source, role, grade_id, run=kind == "code")


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    if isinstance(source, list):
        return "".join(s for s in source if isinstance(s, str))
    return source if isinstance(source, str) else ""
