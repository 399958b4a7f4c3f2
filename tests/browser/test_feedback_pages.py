"""Every demo-class student's feedback page, and each class's summary, as Chromium shows them.

Results come before the notebook, markdown is rendered, nothing is cut off at 1280 or 420 px,
every failed check has its reproducer, and the page loads nothing from outside. Screenshots go
to _build/screenshots/feedback/. The demo classes are graded once per session by the real command
(tests/conftest.py's ``demo_out``, under its limit DEMO_LIMIT_S, which conftest adds to the limit
of every test that waits for it, and past which it fails saying so).
"""

from __future__ import annotations

import json

import pytest
from browser_site import SCREENSHOTS

from autograder.grade.grading import load_assignment
from autograder.instructor.demo import assignment_names

WIDTHS = (1280, 420)
SHOTS = SCREENSHOTS / "feedback"

_PAGE_JS = """
const body = document.body;
const right = body.getBoundingClientRect().right;
const wide = [];
for (const el of document.querySelectorAll('h1,h2,h3,p,pre,table,div.check,details,svg')) {
  if (el.getClientRects().length === 0) continue;
  const box = el.getBoundingClientRect();
  if ((el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1) || box.right > right + 1) {
    wide.push(el.tagName + ': ' + (el.textContent || '').trim().slice(0, 80));
  }
}
const order = ['score', 'results', 'checks', 'notebook'].map(id => {
  const el = document.getElementById(id);
  return el ? el.getBoundingClientRect().top + window.scrollY : null;
});
const md = Array.from(document.querySelectorAll('div.cell.md'));
return {
  page_overflow: document.documentElement.scrollWidth > window.innerWidth + 1,
  wide: wide,
  order: order,
  md_cells: md.length,
  md_rendered: md.filter(c => c.querySelector('p,h1,h2,h3,h4,ul,ol,pre,table')).length,
  md_raw_headings: md.filter(c => /^\\s*#{1,6}\\s/.test(c.textContent)).length,
  repro_checks: Array.from(document.querySelectorAll('div.check'))
    .filter(c => c.querySelector('pre.repro')).map(c => c.id.slice('check-'.length)),
  resources: performance.getEntriesByType('resource').map(r => r.name),
};
"""


def _pages(demo_out):
    for name in assignment_names("autograder.assignments"):
        graded = demo_out / name / "graded"
        for result in sorted((graded / "results").glob("*.json")):
            yield name, result.stem, graded


def _full_page_shot(driver, width: int, dest) -> None:
    """The whole page at ``width``: the window made as tall as the page, then put back."""
    height = driver.execute_script("return document.body.scrollHeight")
    driver.set_window_size(width, min(max(height, 900), 16000))
    driver.save_screenshot(str(dest))
    driver.set_window_size(width, 900)


@pytest.fixture(scope="module")
def seen(demo_out, driver):
    """(assignment, student, width) -> what the page showed."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    found = {}
    try:
        for width in WIDTHS:
            driver.set_window_size(width, 900)
            for name, student, graded in _pages(demo_out):
                driver.get((graded / "feedback" / f"{student}.html").as_uri())
                found[name, student, width] = driver.execute_script(_PAGE_JS)
                if width == 420 or student in ("full", "partial") or student.startswith("wrong"):
                    _full_page_shot(driver, width, SHOTS / f"{name}__{student}@{width}.png")
            for name in assignment_names("autograder.assignments"):
                driver.get((demo_out / name / "graded" / "summary.html").as_uri())
                found[name, "summary.html", width] = driver.execute_script(_PAGE_JS)
                _full_page_shot(driver, width, SHOTS / f"{name}__summary@{width}.png")
    finally:
        driver.set_window_size(1280, 900)
    return found


def test_results_come_first_and_nothing_is_cut_off(seen):
    for (name, student, width), page in seen.items():
        where = f"{name}/{student} at {width}px"
        assert not page["page_overflow"], where
        assert page["wide"] == [], (where, page["wide"][:5])
        assert all(url.startswith("file:") for url in page["resources"]), (where, page["resources"])
        if student == "summary.html":
            continue
        score, results, checks, notebook = page["order"]
        assert None not in (score, results, checks, notebook), where
        assert score < results < checks < notebook, where


def test_markdown_is_rendered(seen):
    for (name, student, width), page in seen.items():
        if student in ("summary.html", "broken"):
            continue
        assert page["md_cells"] > 0, f"{name}/{student}: no markdown cell shown"
        assert page["md_rendered"] == page["md_cells"], f"{name}/{student}"
        assert page["md_raw_headings"] == 0, f"{name}/{student}: markdown shown as source"


def test_every_failed_check_has_a_reproducer(seen, demo_out):
    for name, student, graded in _pages(demo_out):
        result = json.loads((graded / "results" / f"{student}.json").read_text())
        spec = load_assignment(name, "autograder.assignments")
        by_name = {f"{c.id}: {c.description}": c for c in spec.checks}
        failed = {by_name[t["name"]].id for t in result["tests"]
                  if t["status"] in ("failed", "error") and not by_name[t["name"]].needs_gpu}
        shown = set(seen[name, student, 1280]["repro_checks"])
        if student == "broken":  # not a notebook: nothing to reproduce
            assert shown == set(), name
            continue
        assert failed <= shown, (name, student, sorted(failed - shown))


def test_the_class_summary_names_failures_and_errors(demo_out):
    for name in assignment_names("autograder.assignments"):
        page = (demo_out / name / "graded" / "summary.html").read_text()
        assert "Points per task" in page and "<svg" in page, name
        assert "Checks that failed most often" in page, name
        assert "broken" in page and "not valid JSON" in page, name
