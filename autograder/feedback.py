"""Feedback stage: one self-contained HTML page per student.

It shows the score, the student's own cells and what they printed, then every check grouped by
task with its points and message. Everything from the notebook is stripped of control
characters and HTML-escaped, and the page is bounded (``MAX_SHOWN`` characters of cells); nothing
hidden (check code, inputs, expected values) is available here to leak.
"""

from __future__ import annotations

from html import escape

from autograder.record import clean_text
from autograder.spec import Assignment

MAX_SHOWN = 2_000_000  # characters of the notebook's cells shown on one page

_CSS = """
body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
pre{background:#f6f8fa;padding:.6rem;overflow-x:auto;white-space:pre-wrap;border-radius:4px}
pre.out{background:#fff;border-left:3px solid #ccc}
pre.err{background:#fff5f5;border-left:3px solid #c33}
.cell{margin:1rem 0}.role{font-size:.8rem;color:#666}
table{border-collapse:collapse;width:100%;margin:.5rem 0 1.5rem}
td,th{border-bottom:1px solid #ddd;padding:.35rem;text-align:left;vertical-align:top}
.passed{color:#176f2c}.failed,.error{color:#b42318}.not-run{color:#777}
.score{font-size:1.3rem}.note{background:#fffbe6;padding:.5rem;border-radius:4px}
"""


def render(result: dict, assignment: Assignment, detail: dict) -> str:
    """``result``: the results JSON; ``detail``: the worker's report (cells, notes, per-check)."""
    def esc(text: object) -> str:
        return escape(clean_text(str(text), MAX_SHOWN, keep_lines=True))

    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{esc(assignment.name)}: feedback for {esc(result['student_id'])}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{esc(assignment.name)}</h1><p>Student: {esc(result['student_id'])}</p>",
        f"<p class='score'>Score: {result['score']:g} / {result['max_score']:g}</p>",
    ]
    if detail.get("message"):
        parts.append(f"<p class='note'>{esc(detail['message'])}</p>")
    for note in detail.get("notes", []):
        parts.append(f"<p class='note'>{esc(note)}</p>")
    parts.append("<h2>Your notebook, as graded</h2>")
    shown = 0
    cells = detail.get("cells", [])
    for number, cell in enumerate(cells):
        shown += sum(len(cell.get(k) or "") for k in ("source", "output", "error"))
        if shown > MAX_SHOWN:
            parts.append(f"<p class='note'>{len(cells) - number} more cells not shown (the "
                         f"page shows at most {MAX_SHOWN} characters of the notebook)</p>")
            break
        parts.append("<div class='cell'>")
        label = {"solution": "your solution", "student": "a cell you added",
                 "provided": "provided (read-only)", "test": "test cell"}.get(cell["role"], "")
        if cell.get("note"):
            label = f"{label}; {cell['note']}" if label else cell["note"]
        if label:
            parts.append(f"<div class='role'>{esc(label)}</div>")
        if cell["cell_type"] == "code":
            parts.append(f"<pre>{esc(cell['source'])}</pre>")
            if cell.get("output"):
                parts.append(f"<pre class='out'>{esc(cell['output'])}</pre>")
            if cell.get("error"):
                parts.append(f"<pre class='err'>{esc(cell['error'])}</pre>")
        else:
            parts.append(f"<pre class='out'>{esc(cell['source'])}</pre>")
        parts.append("</div>")
    parts.append("<h2>Checks</h2>")
    by_check = detail["tests_by_check"]
    for task in assignment.tasks:
        checks = [c for c in assignment.checks if c.task == task.id]
        if not checks:
            continue
        got = sum(by_check[c.id]["points"] for c in checks)
        top = sum(by_check[c.id]["max_points"] for c in checks
                  if by_check[c.id]["status"] != "not-run")
        parts.append(f"<h3>{esc(task.id)}: {esc(task.title)} ({got:g} / {top:g})</h3>")
        parts.append("<table><tr><th>Check</th><th>Points</th><th>Status</th><th>Message</th>"
                     "</tr>")
        for check in checks:
            t = by_check[check.id]
            parts.append(
                f"<tr><td>{esc(t['name'])}</td><td>{t['points']:g} / {t['max_points']:g}</td>"
                f"<td class='{esc(t['status'])}'>{esc(t['status'])}</td>"
                f"<td>{esc(t['message'])}</td></tr>")
        parts.append("</table>")
    parts.append("</body></html>\n")
    return "\n".join(parts)
