"""Late submissions: a per-assignment policy in ``<root>/course.toml`` and nbgrader's
``timestamp.txt``. With no policy for an assignment nothing here changes any output.

    [late.ps1_primitives]
    due = "2026-11-28 23:59"   # UTC unless it names an offset
    late_days = 3              # after these, the score is 0
    penalty_per_day = 0.1      # fraction of the score per day (or part of one) late
    max_penalty = 0.3          # optional cap on the fraction

    [late]
    timezone = "America/Los_Angeles"   # optional: nbgrader's Exchange.timezone, to read
                                       # an ambiguous zone name (CST) in timestamp.txt

    [late.ps1_primitives.extensions]   # optional, per student id
    alice = 2                          # days added to the due date
    bob = "2026-12-02 12:00"           # or a due date of their own
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from autograder.grade import stamps
from autograder.limits import UsageError
from autograder.results import ResultsFile
from autograder.worker import submission
from autograder.worker.normalise import NotebookError

CONFIG = "course.toml"


@dataclass(frozen=True)
class Policy:
    due: datetime
    late_days: int
    penalty_per_day: float
    max_penalty: float = 1.0
    # student id -> that student's due date (course.toml's [late.NAME.extensions])
    extensions: dict[str, datetime] = dataclasses.field(default_factory=dict)
    zone: str | None = None  # the course's time zone ([late] timezone)


def for_student(policy: Policy | None, student_id: str) -> Policy | None:
    """``policy`` as it applies to one student: their extension's due date, no others."""
    if policy is None:
        return None
    return dataclasses.replace(policy, due=policy.extensions.get(student_id, policy.due),
                               extensions={})


def parse_time(text: str, zone: str | None = None) -> datetime | None:
    """A time as nbgrader writes it (autograder.grade.stamps); None when it cannot be read."""
    return stamps.read(text, zone)[0]


def load(root: Path, assignment: str) -> Policy | None:
    path = Path(root) / CONFIG
    if not path.is_file():
        return None
    try:
        tables = tomllib.loads(path.read_text(encoding="utf-8")).get("late", {})
        table = tables.get(assignment)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, AttributeError) as err:
        raise UsageError(f"{path} cannot be read ({err})") from None
    if table is None:
        return None
    zone = tables.get("timezone")
    if zone is not None and (not isinstance(zone, str) or stamps.read(f"2026-01-01 00:00 {zone}"
                                                                      )[0] is None):
        raise UsageError(f"{path} [late] timezone {zone!r} is not a time zone of the tz "
                         f"database (such as 'America/Los_Angeles')")
    due = parse_time(str(table.get("due", "")), zone)
    try:
        if due is None:
            raise ValueError(f"due {table.get('due')!r} is not a date and time")
        policy = Policy(due, int(table.get("late_days", 0)),
                        float(table.get("penalty_per_day", 0.0)),
                        float(table.get("max_penalty", 1.0)),
                        _extensions(due, table.get("extensions", {}), zone), zone)
    except (TypeError, ValueError) as err:
        raise UsageError(f"{path} [late.{assignment}]: {err}") from None
    return policy


def _extensions(due: datetime, table: object, zone: str | None) -> dict[str, datetime]:
    if not isinstance(table, dict):
        raise TypeError("extensions must be a table of student id = days or a due date")
    found = {}
    for student, value in table.items():
        if isinstance(value, bool):
            raise TypeError(f"extensions.{student}: {value!r} is neither days nor a date")
        if isinstance(value, int | float):
            found[student] = due + timedelta(days=value)
            continue
        when = parse_time(str(value), zone)
        if when is None:
            raise ValueError(f"extensions.{student}: {value!r} is neither days nor a date")
        found[student] = when
    return found


def lateness(policy: Policy, folder: Path) -> dict:
    """The results JSON's late fields (``late_days``, ``late_penalty``, ``late_note``, ``due``,
    ``submitted_at``, ``timestamp_problem`` of autograder.results.ResultsFile) for the
    submission in ``folder`` (its timestamp.txt), under ``policy`` (for_student's)."""
    refused = ""
    try:
        # Never followed: a link to the course's secret would be shown back in the feedback.
        data = submission.read_beside(folder, "timestamp.txt")
        text = None if data is None else data.decode("utf-8", errors="replace")[:200]
    except NotebookError as err:
        text, refused = None, str(err)
    due = {"due": _utc(policy.due)}
    when, why = stamps.read(text, policy.zone) if text is not None else (None, "")
    if when is None:
        # Graded as on time, and listed (summary, the run's output): an instructor can check a
        # missing stamp; a student cannot fix it.
        shown = ("no timestamp.txt" if text is None and not refused else
                 f"timestamp.txt unreadable ({refused or text!r})")
        why = ("no timestamp.txt" if text is None and not refused else
               f"timestamp.txt unreadable: {refused or why}")
        return {"late_days": 0, "late_penalty": 0.0, "late_note": f"{shown}: graded as on time",
                "timestamp_problem": why, **due}
    due["submitted_at"] = _utc(when)
    seconds = (when - policy.due).total_seconds()
    days = max(0, math.ceil(seconds / 86400))
    if days == 0:
        return {"late_days": 0, "late_penalty": 0.0, "late_note": "on time", **due}
    if days > policy.late_days:
        return {"late_days": days, "late_penalty": 1.0,
                "late_note": f"{days} days late, past the {policy.late_days} allowed: score 0",
                **due}
    penalty = round(min(policy.max_penalty, days * policy.penalty_per_day), 6)
    return {"late_days": days, "late_penalty": penalty,
            "late_note": f"{days} day{'s' if days > 1 else ''} late: {penalty:.0%} off", **due}


def _utc(when: datetime) -> str:
    return when.astimezone(UTC).isoformat()


def apply(result: ResultsFile, late: dict) -> ResultsFile:
    """``result`` with the penalty applied to its score, the raw score kept beside it."""
    raw = result["score"]
    return dict(result, score=round(raw * (1 - late["late_penalty"]), 6), raw_score=raw, **late)
