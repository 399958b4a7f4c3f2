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

from autograder.record import clean_text
from autograder.spec import Assignment

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

_ROLES = {"solution": "your solution", "student": "a cell you added",
          "provided": "provided (read-only)", "test": "test cell"}


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


def _output(text: str, css: str, label: str) -> str:
    lines = text.count("\n") + 1
    block = f"<pre class='{css}'>{_esc(text)}</pre>"
    if lines <= FOLD_LINES:
        return block
    return f"<details><summary>{label} ({lines} lines): show</summary>{block}</details>"


def task_lines(assignment: Assignment, by_check: dict) -> list[dict]:
    """One line per task: points, result and the first failing check's message."""
    lines = []
    for task in assignment.tasks:
        checks = [c for c in assignment.checks if c.task == task.id]
        if not checks:
            continue
        rows = [by_check[c.id] for c in checks]
        ran = [r for r in rows if r["status"] != "not-run"]
        failed = [r for r in ran if r["status"] != "passed"]
        lines.append({
            "task": task, "points": sum(r["points"] for r in rows),
            "max_points": sum(r["max_points"] for r in ran),
            "result": "not-run" if not ran else "failed" if failed else "passed",
            "first_failure": failed[0]["message"] if failed else ""})
    return lines


def render(result: dict, assignment: Assignment, detail: dict) -> str:
    """``result``: the results JSON; ``detail``: the worker's report (cells, notes, per-check)."""
    by_check = detail["tests_by_check"]
    reproducers = detail.get("reproducers", {})
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>{_esc(assignment.name)}: feedback for {_esc(result['student_id'])}</title>",
        f"<style>{CSS}</style></head><body>",
        f"<h1>{_esc(assignment.name)}</h1>",
        f"<p class='muted'>Feedback for {_esc(result['student_id'])}</p>",
        f"<p class='score' id='score'>Score: {result['score']:g} / {result['max_score']:g}</p>",
    ]
    if "late_note" in result:  # only where the course has a late policy (autograder.late)
        parts.append(f"<p class='note' id='late'>Submitted {_esc(result['late_note'])}; "
                     f"score before the late penalty: {result['raw_score']:g}</p>")
    if detail.get("message"):
        parts.append(f"<p class='note'>{_esc(detail['message'])}</p>")
    for note in detail.get("notes", []):
        parts.append(f"<p class='note'>{_esc(note)}</p>")

    parts.append("<h2 id='results'>Results by task</h2>")
    parts.append("<table><tr><th>Task</th><th class='pts'>Points</th><th class='res'>Result</th>"
                 "</tr>")
    lines = task_lines(assignment, by_check)
    for line in lines:
        task = line["task"]
        why = (f"<div class='muted'>{_esc(line['first_failure'])}</div>"
               if line["first_failure"] else "")
        parts.append(
            f"<tr><td><a href='#{_esc(task.id)}'>{_esc(task.id)}</a>: {_esc(task.title)}{why}"
            f"</td><td class='pts'>{line['points']:g} / {line['max_points']:g}</td>"
            f"<td class='res {line['result']}'>{line['result']}</td></tr>")
    parts.append("</table>")

    parts.append("<h2 id='checks'>Checks, task by task</h2>")
    parts.append("<p class='muted'>Every check ran your rules on inputs drawn for your "
                 "submission. Under a failed check, <em>Try it yourself</em> gives a few lines to "
                 "paste into a new cell after your own: they show the failure on small inputs of "
                 "their own (not the grading inputs).</p>")
    for line in lines:
        task = line["task"]
        parts.append(f"<h3 id='{_esc(task.id)}'>{_esc(task.id)}: {_esc(task.title)} "
                     f"({line['points']:g} / {line['max_points']:g})</h3>")
        checks = [c for c in assignment.checks if c.task == task.id]
        folded = line["result"] == "passed"  # nothing to act on: one line, the checks folded
        if folded:
            parts.append(f"<details><summary>all {len(checks)} checks passed: show them"
                         "</summary>")
        for check in checks:
            t = by_check[check.id]
            parts.append(
                f"<div class='check' id='check-{_esc(check.id)}'><div class='head'>"
                f"<span class='res {_esc(t['status'])}'>{_esc(t['status'])}</span>"
                f"<span class='name'>{_esc(t['name'])}</span>"
                f"<span class='pts'>{t['points']:g} / {t['max_points']:g}</span></div>")
            if t["status"] != "passed" and t["message"]:
                parts.append(f"<p>{_esc(t['message'])}</p>")
            if t["status"] in ("failed", "error") and check.id in reproducers:
                parts.append("<details class='repro' open><summary>Try it yourself</summary>"
                             f"<pre class='repro'>{_esc(reproducers[check.id])}</pre></details>")
            parts.append("</div>")
        if folded:
            parts.append("</details>")

    parts.append("<h2 id='notebook'>Your notebook, as graded</h2>")
    markdown = _markdown()
    shown = 0
    cells = detail.get("cells", [])
    for number, cell in enumerate(cells):
        shown += sum(len(cell.get(k) or "") for k in ("source", "output", "error"))
        if shown > MAX_SHOWN:
            parts.append(f"<p class='note'>{len(cells) - number} more cells not shown (the "
                         f"page shows at most {MAX_SHOWN} characters of the notebook)</p>")
            break
        label = _ROLES.get(cell["role"], "")
        if cell.get("note"):
            label = f"{label}; {cell['note']}" if label else cell["note"]
        if cell["cell_type"] != "code":
            source = clean_text(cell["source"], MAX_SHOWN, keep_lines=True)
            parts.append(f"<div class='cell md'>{markdown.render(source)}</div>")
            continue
        parts.append("<div class='cell'>")
        if label:
            parts.append(f"<div class='role'>{_esc(label)}</div>")
        parts.append(f"<pre>{_esc(cell['source'])}</pre>")
        if cell.get("output"):
            parts.append(_output(cell["output"], "out", "output"))
        if cell.get("error"):
            parts.append(_output(cell["error"], "err", "error"))
        parts.append("</div>")
    parts.append("</body></html>\n")
    return "\n".join(parts)
