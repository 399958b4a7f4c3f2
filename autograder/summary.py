"""The instructor's view of a graded class: ``OUT/summary.html``.

Per task, the distribution of the class's points (an inline SVG bar chart, so the page loads
nothing from outside); the checks that failed most often (wrong answers), each with its most
common message; apart from them the tasks not attempted, the checks that ran out of time and the
cells the cell policy refused, each with its students; and the submissions that could not be
graded, with the reason. Built in the main process from the
same results the feedback pages and ``grades.csv`` come from.
"""

from __future__ import annotations

from collections import Counter
from html import escape

from autograder.feedback import CSS, task_lines
from autograder.record import clean_text
from autograder.spec import Assignment

MOST_FAILED = 12  # checks listed in "failed most often"
_BAR_W, _BAR_GAP, _CHART_H = 34, 8, 90


def _esc(text: object, limit: int = 500) -> str:
    return escape(clean_text(str(text), limit))


def _chart(counts: list[tuple[str, int]], students: int, title: str) -> str:
    """A bar per points value: how many students got it. Plain SVG, labelled for screen readers."""
    width = len(counts) * (_BAR_W + _BAR_GAP) + _BAR_GAP
    bars = []
    for i, (label, n) in enumerate(counts):
        h = round(_CHART_H * n / max(students, 1))
        x = _BAR_GAP + i * (_BAR_W + _BAR_GAP)
        bars.append(
            f"<rect x='{x}' y='{_CHART_H - h + 16}' width='{_BAR_W}' height='{h}' "
            f"fill='#4c78a8'><title>{_esc(label)} points: {n}</title></rect>"
            f"<text x='{x + _BAR_W / 2}' y='{_CHART_H + 12 - h}' font-size='11' "
            f"text-anchor='middle'>{n}</text>"
            f"<text x='{x + _BAR_W / 2}' y='{_CHART_H + 30}' font-size='11' "
            f"text-anchor='middle'>{_esc(label)}</text>")
    return (f"<svg role='img' viewBox='0 0 {width} {_CHART_H + 36}' width='{width}' "
            f"style='max-width:100%;height:auto' aria-label='{_esc(title)}'>"
            + "".join(bars) + "</svg>")


def render(assignment: Assignment, results: list[dict], rows: list[dict]) -> str:
    """``results``: each student's results JSON plus ``tests_by_check``; ``rows``: grades.csv's."""
    graded = [r for r, row in zip(results, rows) if row["status"] != "error"]
    scores = sorted(r["score"] for r in graded)
    top = max((r["max_score"] for r in graded), default=0)
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>{_esc(assignment.name)}: class summary</title>",
        f"<style>{CSS}</style></head><body>",
        f"<h1>{_esc(assignment.name)}: class summary</h1>",
        (f"<p>{len(rows)} submissions, {len(graded)} graded, "
         f"{len(rows) - len(graded)} could not be graded.</p>"),
    ]
    if scores:
        median = scores[len(scores) // 2] if len(scores) % 2 else (
            scores[len(scores) // 2 - 1] + scores[len(scores) // 2]) / 2
        parts.append(f"<p class='score'>Mean {sum(scores) / len(scores):.1f}, median "
                     f"{median:g} of {top:g} points</p>")

    parts.append("<h2>Points per task</h2>")
    per_task: dict[str, Counter] = {}
    maxima: dict[str, float] = {}
    for r in graded:
        for line in task_lines(assignment, r["tests_by_check"]):
            per_task.setdefault(line["task"].id, Counter())[line["points"]] += 1
            maxima[line["task"].id] = max(maxima.get(line["task"].id, 0), line["max_points"])
    for task in assignment.tasks:
        if task.id not in per_task:
            continue
        counts = sorted(per_task[task.id].items())
        parts.append(f"<h3>{_esc(task.id)}: {_esc(task.title)} (of {maxima[task.id]:g})</h3>")
        parts.append(_chart([(f"{p:g}", n) for p, n in counts], len(graded),
                            f"students by points in {task.id}"))
        parts.append("<p class='muted'>Under each bar the points earned, above it the number of "
                     "students who earned them.</p>")

    by_kind = _failures(assignment, graded)
    parts.append("<h2>Checks that failed most often</h2>")
    parts.append("<p class='muted'>Wrong answers only: unattempted tasks, time-outs and cells the "
                 "cell policy refused are listed apart below.</p>")
    failures: Counter = Counter()
    messages: dict[str, Counter] = {}
    for check_id, _, t in by_kind["wrong"]:
        failures[check_id] += 1
        messages.setdefault(check_id, Counter())[t["message"]] += 1
    if failures:
        parts.append("<table><tr><th>Check</th><th class='pts'>Failed</th><th>Most common "
                     "message</th></tr>")
        for check_id, n in failures.most_common(MOST_FAILED):
            message, times = messages[check_id].most_common(1)[0]
            parts.append(f"<tr><td>{_esc(check_id)}</td><td class='pts'>{n} of {len(graded)}"
                         f"</td><td>{_esc(message)} <span class='muted'>({times}x)</span></td>"
                         "</tr>")
        parts.append("</table>")
    else:
        parts.append("<p>No check failed.</p>")
    for kind, (title, key) in _KINDS.items():
        parts.append(f"<h2>{title}</h2>")
        parts.append(_students_table(by_kind[kind], len(graded), assignment if key else None))

    parts.append("<h2>Submissions that could not be graded</h2>")
    errored = [row for row in rows if row["status"] == "error"]
    if errored:
        parts.append("<table><tr><th>Student</th><th>Why</th></tr>")
        for row in errored:
            parts.append(f"<tr><td>{_esc(row['student_id'])}</td><td>{_esc(row['message'])}"
                         "</td></tr>")
        parts.append("</table>")
    else:
        parts.append("<p>None.</p>")
    parts.append("</body></html>\n")
    return "\n".join(parts)


# How a failed check's message shows why (autograder.runner.TIME_ERROR, autograder.policy).
_TIMED_OUT = "to be regraded"
_REFUSED = ("was not run", "refused by the cell policy")
_KINDS = {"unattempted": ("Tasks not attempted (the stub still raises NotImplementedError)",
                          "task"),
          "timed_out": ("Checks that ran out of time (to be regraded)", ""),
          "refused": ("Checks whose cell the cell policy refused", "")}


def _kind(check_task: str, test: dict) -> str:
    message = test["message"]
    if test["status"] == "error" and _TIMED_OUT in message:
        return "timed_out"
    if any(m in message for m in _REFUSED):
        return "refused"
    # A stub raises NotImplementedError("<task>: write ..."); JAX's own NotImplementedError (a
    # rule another task needs is missing) is a wrong answer as far as this check can tell.
    if f"NotImplementedError: {check_task}:" in message:
        return "unattempted"
    return "wrong"


def _failures(assignment: Assignment, graded: list[dict]) -> dict[str, list]:
    """Per kind, (check id, student, test) of each failed or errored check."""
    task_of = {c.id: c.task for c in assignment.checks}
    kinds: dict[str, list] = {"wrong": [], **{k: [] for k in _KINDS}}
    for r in graded:
        for check_id, t in r["tests_by_check"].items():
            if t["status"] in ("failed", "error"):
                kind = _kind(task_of.get(check_id, check_id), t)
                kinds[kind].append((check_id, r["student_id"], t))
    return kinds


def _students_table(items: list, graded: int, assignment: Assignment | None) -> str:
    """Per check (per task when ``assignment`` is given), how many students and who."""
    task_of = {c.id: c.task for c in assignment.checks} if assignment else {}
    who: dict[str, dict] = {}
    for check_id, student, _ in items:
        who.setdefault(task_of.get(check_id, check_id), {})[student] = None
    if not who:
        return "<p>None.</p>"
    rows = ["<table><tr><th>" + ("Task" if assignment else "Check")
            + "</th><th class='pts'>Students</th><th>Who</th></tr>"]
    for key, students in sorted(who.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        rows.append(f"<tr><td>{_esc(key)}</td><td class='pts'>{len(students)} of {graded}</td>"
                    f"<td>{_esc(', '.join(students), 2000)}</td></tr>")
    return "\n".join(rows + ["</table>"])
