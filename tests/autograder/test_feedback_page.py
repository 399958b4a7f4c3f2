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


def _stub_page(spec: Assignment = SPEC, **statuses) -> str:
    """t.rule's checks a and b with the given (status, message)."""
    tests = {f"t.rule.{n}": {"name": f"t.rule.{n}: check {n}", "points": 0.0,
                             "max_points": 1.0, "status": status, "message": message}
             for n, (status, message) in statuses.items()}
    detail = {"tests_by_check": tests, "notes": [], "message": "", "cells": [],
              "reproducers": {c: f"print('{c}')" for c, t in tests.items()
                              if t["status"] == "failed"}}
    result = {"student_id": "s3", "score": 0.0,
              "max_score": sum(t["max_points"] for t in tests.values()
                               if t["status"] != "not-run")}
    return feedback.render(result, spec, detail)


STUB = "[t.rule] NotImplementedError: t.rule: write the rule."


def test_a_task_never_attempted_is_one_folded_line_its_snippets_closed():
    """Issue 30: 22 of ps1's 26 expanded snippets were for stubs never attempted."""
    page = _stub_page(a=("failed", STUB), b=("failed", STUB))
    assert ("<details><summary>all 2 checks fail with a stub's NotImplementedError (a task "
            "not attempted yet): show them</summary>") in page
    assert page.count("<details class='repro'>") == 2 and "class='repro' open" not in page
    assert "print(&#x27;t.rule.a&#x27;)" in page  # still there, one click away


def test_an_attempted_rule_that_fails_keeps_its_checks_and_snippets_open():
    page = _stub_page(a=("failed", STUB), b=("failed", "[t.rule] wrong value"))
    assert "not attempted" not in page
    # Another task's stub (ps1's transpose checks need abstract_eval) closes the snippet too.
    two_tasks = Assignment("toyish", "toyish.ipynb", (TASK, Task("t.other", "other")), CHECKS)
    page = _stub_page(two_tasks, a=("failed", "[t.rule] NotImplementedError: t.other: write it."),
                      b=("failed", "[t.rule] wrong value"))
    assert page.count("<details class='repro'>") == 1 == page.count("class='repro' open>")
    assert "<details class='repro' open>" in page  # b: an attempt that fails, as before
    assert page.count("<details class='repro'>") == 1  # a: the stub's error, closed
    # A refused cell is not "not attempted", whatever the check then saw.
    refused = ("[t.rule] Your cell for this task was not run: line 1: import of 'os' is not "
               "allowed. What the check then saw: NotImplementedError: t.rule: write the rule.")
    page = _stub_page(a=("failed", refused), b=("failed", refused))
    assert "not attempted" not in page and page.count("<details class='repro' open>") == 2


def test_the_first_screen_says_gpu_points_were_left_out_of_the_maximum():
    gpu = ("not-run", ("not run: this check needs a GPU and the grading machine has none; it "
                       "is left out of the maximum score"))
    page = _stub_page(a=("failed", "[t.rule] wrong value"), b=gpu)
    note = page[page.index("id='gpu'"):]
    assert page.index("id='score'") < page.index("id='gpu'") < page.index("id='results'")
    assert note.startswith("id='gpu'>1 points of checks that need a GPU were not run")
    assert "the score is out of 1</p>" in note[:400]
    assert "id='gpu'" not in _stub_page(a=("failed", "[t.rule] wrong value"),
                                        b=("passed", ""))
