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

from autograder.grade import similarity
from autograder.grade.feedback import CSS, message_html, task_lines
from autograder.grade.messages import HTML_LANG, check_lang, explain, task_title, text
from autograder.results import NOT_PASSED, CheckResult, ClassResult, GradeRow, Status, StudentStatus
from autograder.spec import Assignment
from autograder.text import clean_text

MOST_FAILED = 12  # checks listed in "failed most often"
_BAR_W, _BAR_GAP, _CHART_H = 34, 8, 90


def _esc(text: object, limit: int = 500) -> str:
    return escape(clean_text(str(text), limit))


def _chart(counts: list[tuple[str, int]], students: int, title: str, lang: str = "en") -> str:
    """A bar per points value: how many students got it. Plain SVG, labelled for screen readers."""
    width = len(counts) * (_BAR_W + _BAR_GAP) + _BAR_GAP
    bars = []
    for i, (label, n) in enumerate(counts):
        h = round(_CHART_H * n / max(students, 1))
        x = _BAR_GAP + i * (_BAR_W + _BAR_GAP)
        bars.append(
            f"<rect x='{x}' y='{_CHART_H - h + 16}' width='{_BAR_W}' height='{h}' "
            f"fill='#4c78a8'><title>{text(lang, 'summary.bar_title', label=_esc(label), n=n)}"
            "</title></rect>"
            f"<text x='{x + _BAR_W / 2}' y='{_CHART_H + 12 - h}' font-size='11' "
            f"text-anchor='middle'>{n}</text>"
            f"<text x='{x + _BAR_W / 2}' y='{_CHART_H + 30}' font-size='11' "
            f"text-anchor='middle'>{_esc(label)}</text>")
    return (f"<svg role='img' viewBox='0 0 {width} {_CHART_H + 36}' width='{width}' "
            f"style='max-width:100%;height:auto' aria-label='{_esc(title)}'>"
            + "".join(bars) + "</svg>")


def render(assignment: Assignment, results: list[ClassResult], rows: list[GradeRow], *,
           lang: str = "en", retried: dict[str, str] | None = None,
           missing: list[GradeRow] | None = None, off_roster: list[str] | None = None,
           similarity_link: bool = False) -> str:
    """``results``: each student's results JSON plus ``tests_by_check``; ``rows``: grades.csv's;
    ``lang``: the page's language (autograder.grade.messages); ``retried``: the students graded
    again after their worker died (student id -> what the first attempt raised); ``missing``:
    the rows of students who handed nothing in; ``off_roster``: ids not among nbgrader's
    students; ``similarity_link``: whether the run wrote similarity.html beside the page."""
    lang = check_lang(lang)
    graded = [r for r, row in zip(results, rows) if row["status"] != StudentStatus.ERROR]
    scores = sorted(r["score"] for r in graded)
    top = max((r["max_score"] for r in graded), default=0)
    parts = [
        f"<!DOCTYPE html><html lang='{HTML_LANG[lang]}'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>{text(lang, 'summary.title', assignment=_esc(assignment.name))}</title>",
        f"<style>{CSS}</style></head><body>",
        f"<h1>{text(lang, 'summary.title', assignment=_esc(assignment.name))}</h1>",
        "<p>" + text(lang, "summary.counts", n=len(rows), graded=len(graded),
                     errored=len(rows) - len(graded)) + "</p>",
    ]
    if similarity_link:
        parts.append(similarity.link(lang))
    if scores:
        median = scores[len(scores) // 2] if len(scores) % 2 else (
            scores[len(scores) // 2 - 1] + scores[len(scores) // 2]) / 2
        parts.append("<p class='score'>" + text(
            lang, "summary.mean", mean=f"{sum(scores) / len(scores):.1f}", median=f"{median:g}",
            top=f"{top:g}") + "</p>")

    parts.append(f"<h2>{text(lang, 'summary.per_task')}</h2>")
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
        title = _esc(task_title(lang, assignment.name, task.id, task.title))
        parts.append("<h3>" + text(lang, "summary.task_heading", task=_esc(task.id), title=title,
                                   max_points=f"{maxima[task.id]:g}") + "</h3>")
        parts.append(_chart([(f"{p:g}", n) for p, n in counts], len(graded),
                            text(lang, "summary.chart_label", task=task.id), lang))
        parts.append(f"<p class='muted'>{text(lang, 'summary.chart_note')}</p>")

    by_kind = _failures(assignment, graded)
    parts.append(f"<h2>{text(lang, 'summary.most_failed')}</h2>")
    parts.append(f"<p class='muted'>{text(lang, 'summary.most_failed_note')}</p>")
    failures: Counter = Counter()
    messages: dict[str, Counter] = {}
    for check_id, _, t in by_kind["wrong"]:
        failures[check_id] += 1
        messages.setdefault(check_id, Counter())[t["message"]] += 1
    check_of = {c.id: c for c in assignment.checks}

    def shown(message: str, check) -> str:  # the English page as it always was
        return (_esc(message) if lang == "en"
                else message_html(lang, assignment, clean_text(message, 500), check))

    if failures:
        parts.append(f"<table><tr><th>{text(lang, 'summary.check')}</th>"
                     f"<th class='pts'>{text(lang, 'summary.failed')}</th>"
                     f"<th>{text(lang, 'summary.common_message')}</th></tr>")
        for check_id, n in failures.most_common(MOST_FAILED):
            message, times = messages[check_id].most_common(1)[0]
            parts.append(f"<tr><td>{_esc(check_id)}</td><td class='pts'>"
                         f"{text(lang, 'summary.n_of', n=n, total=len(graded))}</td>"
                         f"<td>{shown(message, check_of.get(check_id))} <span class='muted'>"
                         f"{text(lang, 'summary.times', times=times)}</span></td></tr>")
        parts.append("</table>")
    else:
        parts.append(f"<p>{text(lang, 'summary.no_failure')}</p>")
    for kind, (_, key) in _KINDS.items():
        parts.append(f"<h2>{text(lang, _KIND_KEYS[kind])}</h2>")
        parts.append(_students_table(by_kind[kind], len(graded), assignment if key else None,
                                     lang))

    parts.append(f"<h2>{text(lang, 'summary.not_graded')}</h2>")
    errored = [row for row in rows if row["status"] == StudentStatus.ERROR]
    if errored:
        parts.append(f"<table><tr><th>{text(lang, 'summary.student')}</th>"
                     f"<th>{text(lang, 'summary.why')}</th></tr>")
        for row in errored:
            parts.append(f"<tr><td>{_esc(row['student_id'])}</td>"
                         f"<td>{_esc(explain(lang, row['message']))}</td></tr>")
        parts.append("</table>")
    else:
        parts.append(f"<p>{text(lang, 'summary.none')}</p>")
    parts.append(f"<h2>{text(lang, 'summary.missing')}</h2>")
    parts.append(_pairs([(r["student_id"], r["message"]) for r in missing or []], lang))
    if off_roster:
        parts.append(f"<h2>{text(lang, 'summary.off_roster')}</h2>")
        parts.append(f"<p>{_esc(', '.join(off_roster), 4000)}</p>")
    if any("due" in r for r in results):
        parts.append(f"<h2>{text(lang, 'summary.stamps')}</h2>")
        parts.append(_pairs([(r["student_id"], r["timestamp_problem"]) for r in results
                             if r.get("timestamp_problem")], lang))
    parts.append(f"<h2>{text(lang, 'summary.retried')}</h2>")
    parts.append(f"<p class='muted'>{text(lang, 'summary.retried_note')}</p>")
    parts.append(_pairs(sorted((retried or {}).items()), lang))
    parts.append("</body></html>\n")
    return "\n".join(parts)


def _pairs(items: list[tuple[str, str]], lang: str) -> str:
    """A table of (student, why), or "None."."""
    if not items:
        return f"<p>{text(lang, 'summary.none')}</p>"
    rows = [(f"<table><tr><th>{text(lang, 'summary.student')}</th>"
             f"<th>{text(lang, 'summary.why')}</th></tr>")]
    rows += [f"<tr><td>{_esc(who)}</td><td>{_esc(why)}</td></tr>" for who, why in items]
    return "\n".join(rows + ["</table>"])


# How a failed check's message shows why (autograder.worker.runner.TIME_ERROR,
# autograder.worker.policy).
_TIMED_OUT = "to be regraded"
_REFUSED = ("was not run", "refused by the cell policy")
_KINDS = {"unattempted": ("Tasks not attempted (the stub still raises NotImplementedError)",
                          "task"),
          "timed_out": ("Checks that ran out of time (to be regraded)", ""),
          "refused": ("Checks whose cell the cell policy refused", "")}
# Each kind's heading in autograder.grade.messages (its English entry is the title above).
_KIND_KEYS = {"unattempted": "summary.unattempted", "timed_out": "summary.timed_out",
              "refused": "summary.refused"}


def _kind(check_task: str, test: CheckResult) -> str:
    message = test["message"]
    if test["status"] == Status.ERROR and _TIMED_OUT in message:
        return "timed_out"
    if any(m in message for m in _REFUSED):
        return "refused"
    # A stub raises NotImplementedError("<task>: write ..."); JAX's own NotImplementedError (a
    # rule another task needs is missing) is a wrong answer as far as this check can tell.
    if f"NotImplementedError: {check_task}:" in message:
        return "unattempted"
    return "wrong"


def _failures(assignment: Assignment, graded: list[ClassResult]) -> dict[str, list]:
    """Per kind, (check id, student, test) of each failed or errored check."""
    task_of = {c.id: c.task for c in assignment.checks}
    kinds: dict[str, list] = {"wrong": [], **{k: [] for k in _KINDS}}
    for r in graded:
        for check_id, t in r["tests_by_check"].items():
            if t["status"] in NOT_PASSED:
                kind = _kind(task_of.get(check_id, check_id), t)
                kinds[kind].append((check_id, r["student_id"], t))
    return kinds


def _students_table(items: list, graded: int, assignment: Assignment | None,
                    lang: str = "en") -> str:
    """Per check (per task when ``assignment`` is given), how many students and who."""
    task_of = {c.id: c.task for c in assignment.checks} if assignment else {}
    who: dict[str, dict] = {}
    for check_id, student, _ in items:
        who.setdefault(task_of.get(check_id, check_id), {})[student] = None
    if not who:
        return f"<p>{text(lang, 'summary.none')}</p>"
    rows = ["<table><tr><th>" + text(lang, "summary.task" if assignment else "summary.check")
            + f"</th><th class='pts'>{text(lang, 'summary.students')}</th>"
            f"<th>{text(lang, 'summary.who')}</th></tr>"]
    for key, students in sorted(who.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        rows.append(f"<tr><td>{_esc(key)}</td><td class='pts'>"
                    f"{text(lang, 'summary.n_of', n=len(students), total=graded)}</td>"
                    f"<td>{_esc(', '.join(students), 2000)}</td></tr>")
    return "\n".join(rows + ["</table>"])
