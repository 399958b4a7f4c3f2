"""Late submissions: a per-assignment policy in ``<root>/course.toml`` and nbgrader's
``timestamp.txt``. With no policy for an assignment nothing here changes any output.

    [late.ps1_primitives]
    due = "2026-11-28 23:59"   # UTC unless it names an offset
    late_days = 3              # after these, the score is 0
    penalty_per_day = 0.1      # fraction of the score per day (or part of one) late
    max_penalty = 0.3          # optional cap on the fraction
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from autograder.limits import UsageError
from autograder.results import ResultsFile

CONFIG = "course.toml"


@dataclass(frozen=True)
class Policy:
    due: datetime
    late_days: int
    penalty_per_day: float
    max_penalty: float = 1.0


def parse_time(text: str) -> datetime | None:
    """nbgrader's ``2026-11-28 10:15:00.123456 UTC`` and the like (ISO forms, a ``T``, an offset,
    a trailing ``UTC``/``Z``, no seconds); None when it is none of them."""
    text = re.sub(r"\s*(UTC|GMT|Z)$", "+00:00", text.strip(), flags=re.IGNORECASE)
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return None
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when


def load(root: Path, assignment: str) -> Policy | None:
    path = Path(root) / CONFIG
    if not path.is_file():
        return None
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8")).get("late", {}).get(assignment)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, AttributeError) as err:
        raise UsageError(f"{path} cannot be read ({err})") from None
    if table is None:
        return None
    due = parse_time(str(table.get("due", "")))
    try:
        if due is None:
            raise ValueError(f"due {table.get('due')!r} is not a date and time")
        policy = Policy(due, int(table.get("late_days", 0)),
                        float(table.get("penalty_per_day", 0.0)),
                        float(table.get("max_penalty", 1.0)))
    except (TypeError, ValueError) as err:
        raise UsageError(f"{path} [late.{assignment}]: {err}") from None
    return policy


def lateness(policy: Policy, folder: Path) -> dict:
    """The results JSON's late fields (``late_days``, ``late_penalty``, ``late_note`` of
    autograder.results.ResultsFile) for the submission in ``folder`` (its timestamp.txt)."""
    stamp = folder / "timestamp.txt"
    try:
        text = stamp.read_text(encoding="utf-8", errors="replace")[:200]
    except OSError:
        text = None
    when = parse_time(text) if text is not None else None
    if when is None:
        # Graded as on time: an instructor can check a missing stamp; a student cannot fix it.
        why = "no timestamp.txt" if text is None else f"timestamp.txt unreadable ({text!r})"
        return {"late_days": 0, "late_penalty": 0.0, "late_note": f"{why}: graded as on time"}
    seconds = (when - policy.due).total_seconds()
    days = max(0, math.ceil(seconds / 86400))
    if days == 0:
        return {"late_days": 0, "late_penalty": 0.0, "late_note": "on time"}
    if days > policy.late_days:
        return {"late_days": days, "late_penalty": 1.0,
                "late_note": f"{days} days late, past the {policy.late_days} allowed: score 0"}
    penalty = round(min(policy.max_penalty, days * policy.penalty_per_day), 6)
    return {"late_days": days, "late_penalty": penalty,
            "late_note": f"{days} day{'s' if days > 1 else ''} late: {penalty:.0%} off"}


def apply(result: ResultsFile, late: dict) -> ResultsFile:
    """``result`` with the penalty applied to its score, the raw score kept beside it."""
    raw = result["score"]
    return dict(result, score=round(raw * (1 - late["late_penalty"]), 6), raw_score=raw, **late)
