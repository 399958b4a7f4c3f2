"""The feedback page as HTML: results first, markdown rendered without anything active, long
outputs folded, a snippet under each failed check (the browser test looks at real pages)."""

from __future__ import annotations

from autograder.grade import feedback
from autograder.spec import Assignment, Check, Task, Verdict

TASK = Task("t.rule", "the rule")
CHECKS = tuple(
    Check(id=f"t.rule.{n}", task="t.rule", description=f"check {n}", points=1, grade_cell="g",
          probe="probe", make_inputs=dict, expect=lambda i: None,
          judge=lambda e, o: Verdict(True))
    for n in ("a", "b"))
SPEC = Assignment("toyish", "toyish.ipynb", (TASK,), CHECKS)
HOSTILE_MD = ("# Notes\n<script>alert(1)</script>\n[click](javascript:alert(1)) "
              "![remote](http://198.51.100.7/x.png)\n\n- item\n")


def _page(**extra) -> str:
    tests = {"t.rule.a": {"name": "t.rule.a: check a", "points": 1.0, "max_points": 1.0,
                          "status": "passed", "message": ""},
             "t.rule.b": {"name": "t.rule.b: check b", "points": 0.0, "max_points": 1.0,
                          "status": "failed", "message": "[t.rule] wrong value"}}
    detail = {"tests_by_check": tests, "notes": [], "message": "",
              "cells": [{"cell_type": "markdown", "source": HOSTILE_MD, "role": "text"},
                        {"cell_type": "code", "source": "print(1)", "role": "solution",
                         "output": "\n".join(map(str, range(100)))}],
              **extra}
    result = {"student_id": "s1", "score": 1.0, "max_score": 2.0}
    return feedback.render(result, SPEC, detail)


def test_sections_come_in_order_and_the_task_line_names_the_first_failure():
    page = _page()
    assert page.index("id='score'") < page.index("id='results'") < page.index("id='checks'") \
        < page.index("id='notebook'")
    results = page[page.index("id='results'"):page.index("id='checks'")]
    assert "1 / 2" in results and "failed" in results and "wrong value" in results


def test_markdown_is_rendered_and_nothing_in_it_runs_or_loads():
    page = _page()
    notebook = page[page.index("id='notebook'"):]
    assert "<h1>Notes</h1>" in notebook and "<li>item</li>" in notebook
    assert "<script" not in page and 'href="javascript' not in page  # shown as text
    assert "<img" not in page and "&lt;script&gt;" in notebook


def test_math_is_shown_as_its_tex_with_every_backslash():
    source = ("With $n = 0$ the row gives $-\\infty$, and\n\n"
              "$$ y_r = t \\log \\sum_{j} w_j \\, e^{x_{rj} / t} $$\n\nat $5 or $6 a <b>.")
    page = _page(cells=[{"cell_type": "markdown", "source": source, "role": "text"}])
    assert '<span class="math inline">-\\infty</span>' in page
    assert "y_r = t \\log \\sum_{j} w_j \\, e^{x_{rj} / t}" in page
    assert '<div class="math block">' in page
    assert "at $5 or $6 a &lt;b&gt;." in page  # prices are not math, and raw HTML stays text


def test_long_outputs_are_folded():
    assert "<details><summary>output (100 lines): show</summary>" in _page()


def test_a_failed_check_shows_its_snippet_and_a_passed_one_none():
    page = _page(reproducers={"t.rule.b": "print('try me')", "t.rule.a": "never shown"})
    assert "Try it yourself" in page and "print(&#x27;try me&#x27;)" in page
    assert "never shown" not in page


def test_a_task_that_passed_folds_its_checks():
    tests = {c.id: {"name": f"{c.id}: {c.description}", "points": 1.0, "max_points": 1.0,
                    "status": "passed", "message": ""} for c in CHECKS}
    detail = {"tests_by_check": tests, "notes": [], "message": "", "cells": []}
    page = feedback.render({"student_id": "s2", "score": 2.0, "max_score": 2.0}, SPEC, detail)
    assert "<details><summary>all 2 checks passed: show them</summary>" in page
