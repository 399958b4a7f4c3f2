"""Feedback stage: one self-contained HTML page per student.

Results first: the score, one line per task (points, passed or failed, the first failing check's
message), then every check of each task (a failed check with a snippet the student can paste
into their notebook to see the failure, where the assignment provides one), then the notebook
as graded, its markdown rendered (markdown-it-py, raw HTML and images off) and long outputs
folded. Everything from the notebook is stripped of control characters and escaped; the page
loads nothing from outside (styles inline, no scripts, no images), so it opens offline, and it
is bounded (``MAX_SHOWN`` characters of cells). Nothing hidden (check code, grading inputs,
expected values) is available here to leak.
"""

from __future__ import annotations

from html import escape

from markdown_it import MarkdownIt
from mdit_py_plugins.dollarmath import dollarmath_plugin

from autograder.grade import check_text
from autograder.grade.messages import (
    HTML_LANG,
    check_lang,
    explain,
    late_note,
    status,
    task_title,
    text,
)
from autograder.results import NOT_PASSED, CheckResult, ResultsFile, Status, StudentResult
from autograder.spec import Assignment
from autograder.text import clean_text

MAX_SHOWN = 2_000_000  # characters of the notebook's cells shown on one page
FOLD_LINES = 25  # an output longer than this is folded

# The book's palette and type (jaxcourse/_static/book_site.css), without its web fonts.
CSS = """
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--code:#f6f8fa;--ok:#1a7f37;--bad:#c4291c;
--warn:#fff8c5}
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;line-height:1.5;
color:var(--fg);max-width:52rem;margin:0 auto;padding:1.5rem 1rem 4rem}
h1{font-size:1.7rem;margin:.2rem 0}h2{font-size:1.3rem;margin-top:2.2rem;
border-bottom:1px solid var(--line);padding-bottom:.3rem}h3{font-size:1.05rem;margin-top:1.6rem}
p,li,td,th,summary{overflow-wrap:anywhere}
pre{background:var(--code);padding:.6rem .8rem;border-radius:6px;white-space:pre-wrap;
overflow-wrap:anywhere;font-size:.85rem;margin:.4rem 0}
code{font-size:.88em;background:var(--code);padding:.05rem .25rem;border-radius:4px;
overflow-wrap:anywhere}pre code{background:none;padding:0}
pre.out{background:#fff;border-left:3px solid var(--line)}
pre.err{background:#fff5f5;border-left:3px solid var(--bad)}
.score{font-size:1.5rem;font-weight:600}.muted,.role{color:var(--muted);font-size:.85rem}
.note{background:var(--warn);padding:.5rem .8rem;border-radius:6px}
table{border-collapse:collapse;width:100%;margin:.6rem 0 1rem;table-layout:fixed}
td,th{border-bottom:1px solid var(--line);padding:.4rem;text-align:left;vertical-align:top}
th.pts,td.pts,th.res,td.res{width:5rem;white-space:nowrap;overflow-wrap:normal}
.passed{color:var(--ok)}.failed,.error{color:var(--bad)}.not-run{color:var(--muted)}
.check{border:1px solid var(--line);border-radius:6px;padding:.5rem .8rem;margin:.5rem 0}
.check .head{display:flex;flex-wrap:wrap;gap:.2rem .8rem;align-items:baseline}
.check .name{flex:1 1 14rem;font-weight:500}
.cell{margin:1rem 0}.md{border-left:3px solid #eef1f4;padding:0 .8rem}
details>summary{cursor:pointer;color:var(--muted)}
.math{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.88em;color:#3a4a5e}
div.math{margin:.6rem 0;padding:.3rem .8rem;background:var(--code);border-radius:6px;
overflow-wrap:anywhere}
@media (max-width:520px){body{padding:1rem .6rem}th.pts,td.pts,th.res,td.res{width:4.3rem}
table{font-size:.9rem}}
"""

_ROLES = ("solution", "student", "provided", "test")  # role.<name> in autograder.grade.messages


def _markdown() -> MarkdownIt:
    # CommonMark with raw HTML off (it is shown as text) and images off (nothing is loaded).
    # $...$ and $$...$$ are kept as the TeX they are (the page loads no script to typeset them),
    # instead of losing backslashes to markdown's escapes (mdit-py-plugins' dollarmath).
    md = (MarkdownIt("commonmark", {"html": False}).enable("table").disable("image")
          .use(dollarmath_plugin, allow_space=False, allow_digits=False, double_inline=True))
    # A student's link is shown as text, never clickable: the page must not send the reader
    # (an instructor, a grader) anywhere the student chose. ``[text](url)`` reads "text (url)".
    md.add_render_rule("link_open", lambda self, tokens, idx, options, env: "")
    md.add_render_rule("link_close", _link_close)
    return md


def _link_close(self, tokens, idx, options, env) -> str:
    opening = next(t for t in reversed(tokens[:idx]) if t.type == "link_open")
    if opening.markup == "autolink":  # <https://...>: its text is the address already
        return ""
    return f" ({escape(str(opening.attrGet('href') or ''))})"


def _esc(text: object, limit: int = MAX_SHOWN) -> str:
    return escape(clean_text(str(text), limit, keep_lines=True))


def _output(shown: str, css: str, label: str, lang: str = "en") -> str:
    lines = shown.count("\n") + 1
    block = f"<pre class='{css}'>{_esc(shown)}</pre>"
    if lines <= FOLD_LINES:
        return block
    summary = text(lang, "feedback.fold", label=label, lines=lines)
    return f"<details><summary>{summary}</summary>{block}</details>"


def task_lines(assignment: Assignment, by_check: dict[str, CheckResult]) -> list[dict]:
    """One line per task: points, result and the first failing check's message."""
    lines = []
    for task in assignment.tasks:
        checks = [c for c in assignment.checks if c.task == task.id]
        if not checks:
            continue
        rows = [by_check[c.id] for c in checks]
        ran = [r for r in rows if r["status"] != Status.NOT_RUN]
        failed = [r for r in ran if r["status"] != Status.PASSED]
        lines.append({
            "task": task, "points": sum(r["points"] for r in rows),
            "max_points": sum(r["max_points"] for r in ran),
            "result": Status.NOT_RUN if not ran else Status.FAILED if failed else Status.PASSED,
            "first_failure": failed[0]["message"] if failed else "",
            "first_check": checks[rows.index(failed[0])] if failed else None})
    return lines


def message_html(lang: str, assignment: Assignment, message: str, check=None) -> str:
    """A check's message, a note or a cell's label as escaped HTML: in English as the grader
    wrote it; in Chinese from the message templates (autograder.grade.check_text), a part no
    template matches with the fixed phrases of autograder.grade.messages translated."""
    if lang == "en":
        return _esc(message)
    return check_text.message_html(assignment.name, message, lambda part: explain(lang, part),
                                   blame=getattr(check, "blame", ""))


def _snippet(lang: str, assignment: Assignment, code: str) -> str:
    return code if lang == "en" else check_text.snippet(assignment.name, code)


def _check_name(lang: str, assignment: Assignment, check, name: str) -> str:
    """``<check id>: <description>``, the description in ``lang`` where it is translated."""
    if lang == "en" or name != f"{check.id}: {check.description}":
        return _esc(name)
    return (f"{_esc(check.id)}: "
            + check_text.description(assignment.name, check.id, check.description))


def unattempted(task_ids: list[str], test: CheckResult) -> bool:
    """A check that failed because a stub still raises its NotImplementedError (``raise
    NotImplementedError("<task id>: write ...")``): its own task's, or that of a task it needs
    (ps1's transpose checks need abstract_eval); a refused cell is not one. Its snippet would
    only show that error again."""
    message = test["message"]
    return (test["status"] in NOT_PASSED
            and any(f"NotImplementedError: {task_id}:" in message for task_id in task_ids)
            and "was not run" not in message and "refused by the cell policy" not in message)


def render(result: ResultsFile, assignment: Assignment, detail: StudentResult, *,
           lang: str = "en") -> str:
    """``result``: the results JSON; ``detail``: the worker's report (cells, notes, per-check);
    ``lang``: the page's language (autograder.grade.messages), which changes only what it says."""
    lang = check_lang(lang)
    by_check = detail["tests_by_check"]
    reproducers = detail.get("reproducers", {})
    student = _esc(result["student_id"])
    parts = [
        f"<!DOCTYPE html><html lang='{HTML_LANG[lang]}'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        "<title>" + text(lang, "feedback.title", assignment=_esc(assignment.name),
                         student=student) + "</title>",
        f"<style>{CSS}</style></head><body>",
        f"<h1>{_esc(assignment.name)}</h1>",
        f"<p class='muted'>{text(lang, 'feedback.for', student=student)}</p>",
        "<p class='score' id='score'>" + text(
            lang, "feedback.score", score=f"{result['score']:g}",
            max_score=f"{result['max_score']:g}") + "</p>",
    ]
    gpu_left_out = sum(t["max_points"] for t in by_check.values()
                       if t["status"] == Status.NOT_RUN)
    if gpu_left_out:  # on the first screen: the maximum is not the notebook's points
        parts.append("<p class='note' id='gpu'>" + text(
            lang, "feedback.gpu_left_out", points=f"{gpu_left_out:g}",
            max_score=f"{result['max_score']:g}") + "</p>")
    if "late_note" in result:  # only where the course has a late policy (autograder.grade.late)
        parts.append("<p class='note' id='late'>" + text(
            lang, "feedback.late", note=_esc(late_note(lang, result["late_note"])),
            raw=f"{result['raw_score']:g}") + "</p>")
    if detail.get("message"):
        parts.append(f"<p class='note'>{message_html(lang, assignment, detail['message'])}</p>")
    for note in detail.get("notes", []):
        parts.append(f"<p class='note'>{message_html(lang, assignment, note)}</p>")

    def title(task) -> str:
        return _esc(task_title(lang, assignment.name, task.id, task.title))

    parts.append(f"<h2 id='results'>{text(lang, 'feedback.results')}</h2>")
    parts.append(f"<table><tr><th>{text(lang, 'feedback.task')}</th>"
                 f"<th class='pts'>{text(lang, 'feedback.points')}</th>"
                 f"<th class='res'>{text(lang, 'feedback.result')}</th></tr>")
    lines = task_lines(assignment, by_check)
    task_ids = [t.id for t in assignment.tasks]
    for line in lines:
        task = line["task"]
        why = (f"<div class='muted'>"
               f"{message_html(lang, assignment, line['first_failure'], line['first_check'])}</div>"
               if line["first_failure"] else "")
        parts.append(
            f"<tr><td><a href='#{_esc(task.id)}'>{_esc(task.id)}</a>: {title(task)}{why}"
            f"</td><td class='pts'>{line['points']:g} / {line['max_points']:g}</td>"
            f"<td class='res {line['result']}'>{status(lang, line['result'])}</td></tr>")
    parts.append("</table>")

    parts.append(f"<h2 id='checks'>{text(lang, 'feedback.checks')}</h2>")
    parts.append(f"<p class='muted'>{text(lang, 'feedback.checks_intro')}</p>")
    for line in lines:
        task = line["task"]
        parts.append(f"<h3 id='{_esc(task.id)}'>{_esc(task.id)}: {title(task)} "
                     f"({line['points']:g} / {line['max_points']:g})</h3>")
        checks = [c for c in assignment.checks if c.task == task.id]
        stubs = [c for c in checks if unattempted(task_ids, by_check[c.id])]
        # Every check fails with a stub's error (a task not attempted): nothing else to read.
        not_attempted = bool(stubs) and all(
            c in stubs for c in checks if by_check[c.id]["status"] != Status.NOT_RUN)
        folded = line["result"] == Status.PASSED or not_attempted  # one line, the checks folded
        if folded:
            key = "feedback.not_attempted" if not_attempted else "feedback.all_passed"
            parts.append(f"<details><summary>{text(lang, key, n=len(checks))}</summary>")
        for check in checks:
            t = by_check[check.id]
            parts.append(
                f"<div class='check' id='check-{_esc(check.id)}'><div class='head'>"
                f"<span class='res {_esc(t['status'])}'>{_esc(status(lang, t['status']))}</span>"
                f"<span class='name'>{_check_name(lang, assignment, check, t['name'])}</span>"
                f"<span class='pts'>{t['points']:g} / {t['max_points']:g}</span></div>")
            if t["status"] != Status.PASSED and t["message"]:
                parts.append(f"<p>{message_html(lang, assignment, t['message'], check)}</p>")
            if t["status"] in NOT_PASSED and check.id in reproducers:
                # Open under an attempted rule that fails; closed under a stub's error.
                shown = "" if check in stubs else " open"
                code = _snippet(lang, assignment, reproducers[check.id])
                parts.append(f"<details class='repro'{shown}><summary>"
                             f"{text(lang, 'feedback.try_it')}</summary>"
                             f"<pre class='repro'>{_esc(code)}</pre></details>")
            parts.append("</div>")
        if folded:
            parts.append("</details>")

    parts.append(f"<h2 id='notebook'>{text(lang, 'feedback.notebook')}</h2>")
    markdown = _markdown()
    shown = 0
    cells = detail.get("cells", [])
    for number, cell in enumerate(cells):
        shown += sum(len(cell.get(k) or "") for k in ("source", "output", "error"))
        if shown > MAX_SHOWN:
            parts.append("<p class='note'>" + text(lang, "feedback.more_cells",
                                                   n=len(cells) - number, limit=MAX_SHOWN)
                         + "</p>")
            break
        label = _esc(text(lang, f"role.{cell['role']}")) if cell["role"] in _ROLES else ""
        if cell.get("note"):
            note = message_html(lang, assignment, cell["note"])
            label = f"{label}{'；' if lang == 'zh' else '; '}{note}" if label else note
        if cell["cell_type"] != "code":
            source = clean_text(cell["source"], MAX_SHOWN, keep_lines=True)
            parts.append(f"<div class='cell md'>{markdown.render(source)}</div>")
            continue
        parts.append("<div class='cell'>")
        if label:
            parts.append(f"<div class='role'>{label}</div>")
        parts.append(f"<pre>{_esc(cell['source'])}</pre>")
        if cell.get("output"):
            parts.append(_output(cell["output"], "out", text(lang, "feedback.output"), lang))
        if cell.get("error"):
            parts.append(_output(cell["error"], "err", text(lang, "feedback.error"), lang))
        parts.append("</div>")
    parts.append("</body></html>\n")
    return "\n".join(parts)
