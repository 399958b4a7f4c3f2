"""The class folder around ``grade``: is SUBMITTED laid out as nbgrader's, and regrading some
students into an OUT that already holds the class (``grade --student``)."""

from __future__ import annotations

import json
from pathlib import Path

from autograder.grade import record
from autograder.grade.record import read_grades
from autograder.limits import UsageError
from autograder.results import ClassResult, GradeRow
from autograder.spec import Assignment


def _names(paths: list[Path], limit: int = 5) -> str:
    names = sorted(p.name for p in paths)
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def _dirs(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.iterdir() if p.is_dir())
    except OSError:
        return []


def check_layout(submitted: Path, spec: Assignment) -> None:
    """A usage error when no student folder holds an ``<assignment>/`` folder: the instructor
    pointed at the wrong folder, and a class of `error` rows would hide that."""
    entries = sorted(submitted.iterdir())
    students = [p for p in entries if p.is_dir()]
    if any((p / spec.name).is_dir() for p in students):
        return
    expected = f"expected {submitted}/<student>/{spec.name}/{spec.notebook}"
    if not entries:
        raise UsageError(f"{submitted} is empty; {expected}")
    flat = [p for p in entries if p.suffix == ".ipynb"]
    if flat:
        raise UsageError(f"{submitted} holds notebooks directly ({_names(flat)}), not a folder "
                         f"per student; {expected}")
    higher = [p for p in students if any((s / spec.name).is_dir() for s in _dirs(p))]
    if higher:
        raise UsageError(f"{submitted} looks one level too high: {higher[0]} holds "
                         f"<student>/{spec.name}/ folders (pass {higher[0]}); {expected}")
    raise UsageError(f"no folder in {submitted} holds a {spec.name}/ folder (found "
                     f"{_names(students) or 'no folders'}); {expected}")


def pick(jobs: list[tuple], students: list[str], submitted: Path) -> list[tuple]:
    """The jobs of ``students`` (folder names, or the ids grades.csv shows)."""
    by_id = {}
    for job in jobs:
        by_id[job[0]] = by_id[record.valid_text(job[0])] = job
    missing = [s for s in students if s not in by_id]
    if missing:
        raise UsageError(f"--student {', '.join(repr(s) for s in missing)}: no such student "
                         f"folder in {submitted} (found {len(jobs)} students)")
    picked = {by_id[s][0] for s in students}
    return [job for job in jobs if job[0] in picked]


def keep_old(out: Path, spec: Assignment, all_jobs: list[tuple], rows: list[GradeRow],
             results: list[ClassResult]) -> tuple[list[GradeRow], list[ClassResult]]:
    """``rows`` and ``results`` (the class in SUBMITTED), then the students of the earlier
    grades.csv in OUT who are no longer in SUBMITTED, as that file had them (``grade
    --student`` regrades some students without dropping anyone)."""
    if not (out / "grades.csv").is_file():
        return rows, results
    present = {record.valid_text(job[0]) for job in all_jobs}
    rows, results = list(rows), list(results)
    for row in read_grades(out):
        sid = row["student_id"]
        if sid in present:
            continue
        present.add(sid)
        result = None
        path = out / "results" / f"{record.safe_filename(sid)}.json"
        try:
            result = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            pass
        if not isinstance(result, dict) or result.get("student_id") != sid:
            result = {"student_id": sid, "score": float(row["score"]), "tests": [],
                      "max_score": float(row["max_score"])}
        tests = result.get("tests", [])
        result = dict(result, tests_by_check=({c.id: t for c, t in zip(spec.checks, tests)}
                                              if len(tests) == len(spec.checks) else {}))
        rows.append(dict(row, score=result["score"], max_score=result["max_score"]))
        results.append(result)
    return rows, results
