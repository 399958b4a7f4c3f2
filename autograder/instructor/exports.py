"""Grades where instructors keep them: Gradescope's ``results.json`` and a Canvas gradebook CSV.

Both are built from what ``grade`` wrote (``OUT/results/<student>.json`` and ``OUT/grades.csv``),
so an export never re-runs anything. nbgrader's own gradebook is written by ``grade`` itself
(autograder.grade.record), with one score per autograded cell, so ``nbgrader export`` and the
formgrader work on it directly.

Gradescope (its "Autograder Specifications"): ``results.json`` has a top-level ``score``,
``output``, ``visibility`` and ``stdout_visibility``, and one entry per test with ``name``,
``score``, ``max_score``, ``status`` (``passed``/``failed``), ``output`` and ``visibility``
(``visible``, ``hidden``, ``after_due_date`` or ``after_published``). Each of our checks becomes a
test whose output is the same message the student's feedback page shows; hidden checks' code,
inputs and expected values are never in it (the grader never writes them anywhere). A failed
check's output also carries its "Try it yourself" snippet, the one the feedback page shows
(autograder.grade.reproduce; inputs of its own, never the grading ones): such a test's output is
Markdown (``output_format: "md"``), the message escaped and the snippet in a code block.

Gradescope's score upload, for the whole class at once (an offline assignment's "Upload
scores", or a programming assignment's manual scores): a CSV of one row per student, ``SID`` to
match the roster on, ``Email`` from nbgrader's students where the gradebook has one, one column
per task named as Gradescope's own exports name questions (``<task id> (<points> pts)``, before
any late penalty), then
``Total Score`` (after any late penalty, as grades.csv) and ``Status``. A submission that could
not be graded (``error``, to be regraded) or is missing has empty score cells, never a 0.

Canvas (its gradebook import format): a CSV whose first columns identify the student
(``Student``, ``ID``, ``SIS User ID``, ``SIS Login ID``, ``Section``), then one column per
assignment, named as the gradebook names it (``Title (id)`` for an existing assignment; a new
title creates one), an optional ``Points Possible`` row under the header, and one row per student.
"""

from __future__ import annotations

import csv
import importlib
import io
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

from autograder.grade.record import csv_field, read_grades, safe_filename
from autograder.results import NOT_PASSED, CheckResult, ResultsFile, Status, StudentStatus
from autograder.text import clean_text

GRADESCOPE_VISIBILITY = ("visible", "hidden", "after_due_date", "after_published")
CANVAS_IDENTITY = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
# Gradescope's own test statuses (its specification), not autograder.results.Status: each of our
# checks is one of these two.
GRADESCOPE_PASSED, GRADESCOPE_FAILED = "passed", "failed"


def read_results(out: Path) -> list[ResultsFile]:
    """Every student's results JSON in ``OUT/results``, in student order."""
    return [json.loads(p.read_text(encoding="utf-8"))
            for p in sorted((Path(out) / "results").glob("*.json"))]


def results_path(out: Path, student_id: str) -> Path | None:
    """The results JSON of ``student_id`` (named by record.safe_filename; a folder name that was
    not UTF-8 is found by the id grades.csv shows), or None."""
    path = Path(out) / "results" / f"{safe_filename(student_id)}.json"
    if path.is_file():
        return path
    for other in sorted((Path(out) / "results").glob("*~*.json")):
        if json.loads(other.read_text(encoding="utf-8")).get("student_id") == student_id:
            return other
    return None


# Markdown's punctuation that can start or end markup in a one-line message: escaped, so that
# the message shows as it reads.
_MARKDOWN = re.compile(r"([\\`*_\[\]#|<>~])")
TRY_IT = ("**Try it yourself**: paste these lines into a new cell after your own cells and run "
          "it; they show the failure on small inputs of their own (not the grading inputs).")


def check_id_of(test: CheckResult) -> str:
    """The check id of a results entry (its name is ``"<check id>: <description>"``)."""
    return test["name"].split(": ", 1)[0]


def gradescope_reproducers(result: ResultsFile, *, status: str = StudentStatus.GRADED,
                           package: str = "autograder.assignments") -> dict[str, str]:
    """check id -> the "Try it yourself" snippet of each failed check, as the feedback page
    shows them (none for an ungradable submission, none for an assignment whose checks cannot
    be found here). Imports the assignment's checks and reproducers (and so JAX)."""
    if status == StudentStatus.ERROR:
        return {}
    from autograder.grade import reproduce

    try:
        spec = importlib.import_module(f"{package}.{result['assignment']}.checks").ASSIGNMENT
    except ImportError:
        return {}
    tests = {check_id_of(t): t for t in result.get("tests", [])}
    return reproduce.for_failed_checks(spec, result["assignment"], tests, package)


def _with_reproducer(message: str, snippet: str) -> str:
    fence = "`" * max(3, 1 + max((len(r) for r in re.findall("`+", snippet)), default=0))
    escaped = _MARKDOWN.sub(r"\\\1", message)
    return f"{escaped}\n\n{TRY_IT}\n\n{fence}python\n{snippet.rstrip()}\n{fence}\n"


def gradescope_results(result: ResultsFile, *, status: str = StudentStatus.GRADED,
                       message: str = "",
                       visibility: str = "after_published",
                       test_visibility: str = "after_published",
                       reproducers: dict[str, str] | None = None) -> dict:
    """One student's Gradescope ``results.json`` from our results JSON.

    ``visibility`` applies to the whole result, ``test_visibility`` to each check (by default
    both wait until the instructor publishes grades). A check that did not run for want of a GPU
    is left out, as it is left out of our maximum score. ``reproducers``: check id -> snippet
    (``gradescope_reproducers``), put under each failed check's message."""
    for v in (visibility, test_visibility):
        if v not in GRADESCOPE_VISIBILITY:
            raise ValueError(f"visibility must be one of {GRADESCOPE_VISIBILITY}, not {v!r}")
    tests = []
    for number, test in enumerate(result.get("tests", []), start=1):
        if test["status"] == Status.NOT_RUN:
            continue
        tests.append({
            "name": test["name"],
            "number": str(number),
            "score": float(test["points"]),
            "max_score": float(test["max_points"]),
            "status": (GRADESCOPE_PASSED if test["status"] == Status.PASSED
                       else GRADESCOPE_FAILED),
            "output": test["message"] or "passed",
            "visibility": test_visibility,
        })
        snippet = (reproducers or {}).get(check_id_of(test))
        if snippet is not None and test["status"] in NOT_PASSED:
            tests[-1].update(output=_with_reproducer(tests[-1]["output"], snippet),
                             output_format="md")
    summary = (f"{result['assignment']}: {result['score']:g} / {result['max_score']:g}"
               + (f" ({message})" if message else "")
               + (f"; {result['late_note']}, {result['raw_score']:g} before the late penalty"
                  if "late_note" in result else ""))
    if status == StudentStatus.ERROR:
        summary = f"{result['assignment']}: not graded: {message}"
    return {"score": float(result["score"]), "output": summary, "visibility": visibility,
            "stdout_visibility": "hidden", "tests": tests}


def write_gradescope(out: Path, student_id: str, dest: Path, *,
                     package: str = "autograder.assignments", **visibility: str) -> Path:
    """``dest`` (Gradescope reads /autograder/results/results.json) for one graded student,
    each failed check with its snippet (``gradescope_reproducers``)."""
    path = results_path(out, student_id)
    if path is None:
        raise FileNotFoundError(f"no results for student {student_id!r} in {out}")
    result = json.loads(path.read_text("utf-8"))
    row = next((r for r in read_grades(out) if r["student_id"] == student_id), {})
    status = row.get("status", StudentStatus.GRADED)
    data = gradescope_results(result, status=status, message=row.get("message", ""),
                              reproducers=gradescope_reproducers(result, status=status,
                                                                 package=package),
                              **visibility)
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return dest


NO_GRADE = (StudentStatus.ERROR, StudentStatus.MISSING)


def import_score(row: dict) -> str:
    """A grades.csv row's score for an import: empty where there is no grade (``error``: to be
    regraded; ``missing``: the course's policy decides), never a silent 0."""
    return "" if row.get("status") in NO_GRADE else f"{float(row['score']):g}"


def _task_of(check_name: str) -> str:
    """A check's task from its results name (``ps1.jvp.grad: ...`` -> ``ps1.jvp``): every check
    id is its task's id and one more part (tests/test_exports.py holds the five to it)."""
    return ".".join(check_name.split(":", 1)[0].split(".")[:2])


def gradescope_scores_csv(out: Path, *, emails: dict[str, str] | None = None) -> str:
    """The class's scores as Gradescope's score upload reads them (the module's docstring)."""
    grades = read_grades(out)
    results = {r["student_id"]: r for r in read_results(out)}
    tasks: dict[str, float] = {}  # task -> its maximum, as the results' max_score counts it
    for result in results.values():
        counted = [t for t in result["tests"] if t["status"] != Status.NOT_RUN]  # GPU checks
        for test in result["tests"]:
            tasks.setdefault(_task_of(test["name"]), 0.0)
        for task in {_task_of(t["name"]) for t in counted}:
            tasks[task] = max(tasks[task], sum(float(t["max_points"]) for t in counted
                                               if _task_of(t["name"]) == task))
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(["SID", "Email", *(f"{t} ({p:g} pts)" for t, p in tasks.items()),
                     "Total Score", "Status"])
    for row in grades:
        sid = row["student_id"]
        earned = dict.fromkeys(tasks, "")
        result = results.get(sid)
        if result is not None and row.get("status") not in NO_GRADE:
            for task in tasks:
                got = sum(float(t["points"]) for t in result["tests"]
                          if _task_of(t["name"]) == task)
                earned[task] = f"{got:g}"
        writer.writerow([csv_field(sid), csv_field((emails or {}).get(sid, "")),
                         *earned.values(), import_score(row), csv_field(str(row["status"]))])
    return buffer.getvalue()


def gradebook_emails(db_url: str) -> dict[str, str]:
    """Student id -> email, from nbgrader's students (``nbgrader db student add --email``)."""
    from autograder.grade.record import _gradebook_api, _venv_on_path

    _venv_on_path()
    gradebook, _ = _gradebook_api()
    with gradebook(db_url) as gb:
        return {s.id: s.email for s in gb.students if s.email}


def canvas_csv(out: Path, *, column: str | None = None, roster: Path | None = None,
               warn: Callable[[str], None] | None = None) -> str:
    """The Canvas gradebook import CSV for a graded class.

    ``column``: the gradebook column to fill (``"ps1_primitives (1234)"`` for an existing
    assignment; default: the assignment's name, which Canvas imports as a new column). ``roster``: a CSV exported from Canvas's gradebook (it has the identity
    columns); students are matched on ``SIS Login ID`` = our student id. Without a roster the
    student id goes in ``SIS Login ID`` and the other identity columns stay empty, which
    Canvas accepts when logins are the students' ids.

    With a roster, mismatches are said (``warn``, by default a line on stderr each): a roster
    student without a graded submission gets a row with an empty score, which Canvas's import
    leaves as it is (a blank cell changes no grade; Canvas's missing-submission policy, where
    the course sets one, gives the 0), after the graded rows in roster order; a graded student
    the roster does not have keeps their row, with their id alone to match on."""
    warn = warn or (lambda line: print(line, file=sys.stderr))
    known: dict[str, dict] = {}
    if roster is not None:
        with open(roster, newline="", encoding="utf-8-sig") as f:
            for row in csv.DictReader(f):
                login = (row.get("SIS Login ID") or "").strip()
                if login:
                    known[login] = row
    grades = read_grades(out)
    column = column or (grades[0]["assignment"] if grades else "assignment")
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow([*CANVAS_IDENTITY, csv_field(column)])
    possible = max((float(r["max_score"]) for r in grades), default=0.0)
    writer.writerow(["Points Possible", "", "", "", "", f"{possible:g}"])
    for row in grades:
        who = known.get(row["student_id"], {})
        identity = [who.get(k, "") for k in CANVAS_IDENTITY]
        identity[3] = row["student_id"]
        # Scores are ours and never negative; every text field is kept from spreadsheet formulas.
        writer.writerow([*map(csv_field, identity), import_score(row)])
    ungraded = [row["student_id"] for row in grades if row.get("status") == StudentStatus.ERROR]
    if ungraded:
        warn(f"warning: {_some(ungraded)} could not be graded (status error: regrade them); "
             "their scores are empty, not 0")
    if roster is not None:
        graded = {row["student_id"] for row in grades}
        missing = [login for login in known if login not in graded]
        for login in missing:
            identity = [known[login].get(k, "") or "" for k in CANVAS_IDENTITY]
            writer.writerow([*map(csv_field, identity), ""])
        unknown = [row["student_id"] for row in grades if row["student_id"] not in known]
        if missing:
            warn(f"warning: {_some(missing)} in the roster {roster} had no graded submission: "
                 "their rows have an empty score, which Canvas's import leaves as it is (set "
                 "Canvas's missing-submission policy, or grade their work, for a 0 or a grade)")
        if unknown:
            warn(f"warning: {_some(unknown)} graded in {out} {'is' if len(unknown) == 1 else 'are'}"
                 f" not in the roster {roster} (no SIS Login ID matches): "
                 f"{'its row has' if len(unknown) == 1 else 'their rows have'} the id alone, "
                 "which Canvas's import reports as unmatched unless it is a login it knows")
    return buffer.getvalue()


def _some(ids: list[str], shown: int = 20) -> str:
    """"3 students (a, b, c)", the first ``shown`` ids named, each made printable."""
    names = ", ".join(clean_text(i, 60) for i in ids[:shown])
    more = f", and {len(ids) - shown} more" if len(ids) > shown else ""
    return f"{len(ids)} student{'s' if len(ids) != 1 else ''} ({names}{more})"
