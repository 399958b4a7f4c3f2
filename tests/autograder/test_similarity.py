"""The class's similarity report (autograder/grade/similarity.py): the same code however renamed,
re-spaced or re-commented is found, the released stubs count for nothing, a hostile file costs
only its own comparison, and `grade` writes the page and links it from the summary without
touching a grade (the demo class, graded by the real command)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest

from autograder.grade import similarity
from autograder.instructor.classroom import make_submission
from autograder.worker.normalise import read_release

ROOT = Path(__file__).resolve().parents[2]
NAME = "ps4_core"
RELEASE = ROOT / "assignments" / NAME / f"{NAME}.ipynb"


def _reference_cells() -> dict[str, str]:
    from autograder.assignments.ps4_core import mutants

    return mutants.reference_cells()


def _renamed(source: str) -> str:
    """The same code with every local name of the rules changed, a comment on each line and the
    blank lines doubled: what a student who copied and disguised it hands in."""
    for old, new in (("jaxpr", "prog"), ("consts", "known_values"), ("eqn", "equation"),
                     ("env", "table"), ("live", "needed")):
        source = re.sub(rf"\b{old}\b", new, source)
    lines = [line + ("  # mine" if line.strip() and not line.rstrip().endswith(":") else "")
             for line in source.splitlines()]
    return "\n\n".join(lines)


def _write(folder: Path, sid: str, nb) -> Path:
    path = folder / sid / NAME / f"{NAME}.ipynb"
    path.parent.mkdir(parents=True)
    nbformat.write(nb, path)
    return path


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> str:
    base = tmp_path_factory.mktemp("similarity")
    reference = _reference_cells()
    disguised = {cell: _renamed(code) for cell, code in reference.items()}
    from autograder.assignments.ps4_core import mutants

    other = {**reference, **next(iter(mutants.ALTERNATIVES.values()))[1]}
    notebooks = {
        "alice": _write(base, "alice", make_submission(NAME, reference, root=ROOT)),
        "bob": _write(base, "bob", make_submission(NAME, reference, root=ROOT)),
        "carol": _write(base, "carol", make_submission(NAME, disguised, root=ROOT)),
        "dave": _write(base, "dave", nbformat.read(RELEASE, as_version=4)),  # untouched
        "erin": _write(base, "erin", make_submission(NAME, other, root=ROOT)),
        "none": None,
    }
    hostile = base / "mallory" / NAME / f"{NAME}.ipynb"
    hostile.parent.mkdir(parents=True)
    hostile.write_text(json.dumps({"cells": [
        {"cell_type": "code", "metadata": {"nbgrader": {"solution": True}}, "source": [1, None]},
        {"cell_type": "code", "metadata": "not a dict", "source": "x = 1"},
        "not a cell"]}))
    notebooks["mallory"] = hostile
    broken = base / "trent.ipynb"
    broken.write_bytes(b"\xff\xfe not json")
    notebooks["trent"] = broken
    return similarity.render(NAME, notebooks, read_release(RELEASE))


def _pairs(page: str) -> dict[frozenset, tuple[int, int]]:
    rows = re.findall(r"<tr><td>([^<]+)</td><td>([^<]+)</td><td>(\d+)% / (\d+)%</td></tr>", page)
    return {frozenset((a, b)): (int(x), int(y)) for a, b, x, y in rows}


def test_copies_are_one_group_however_disguised(page):
    groups = re.findall(r"<li>(\d+) students: ([^<]+)</li>", page)
    assert ("3", "alice, bob, carol") in groups, groups


def test_copies_are_pairs_sharing_everything_and_other_code_shares_less(page):
    pairs = _pairs(page)
    assert pairs[frozenset(("alice", "carol"))] == (100, 100)
    assert pairs[frozenset(("alice", "bob"))] == (100, 100)
    # erin's alternative rules share only the cells she did not rewrite with the others.
    assert pairs.get(frozenset(("alice", "erin")), (0, 0)) < (100, 100)


def test_stubs_are_boilerplate_and_hostile_files_cost_only_themselves(page):
    assert "<li>dave: no solution code beyond the stubs</li>" in page
    assert "dave" not in "".join(re.findall(r"<tr>.*?</tr>", page))
    for sid in ("mallory", "trent", "none"):
        assert f"<td>{sid}</td>" not in page
    assert page.count("<mark>") > 0  # the closest pairs' shared code is marked


def test_chinese_page_is_chinese():
    zh = similarity.render(NAME, {}, read_release(RELEASE), lang="zh")
    assert "<html lang='zh-CN'>" in zh and "相似度" in zh and "从不改变成绩" in similarity.link("zh")


def test_grade_writes_the_page_and_the_summary_links_it(demo_out):
    graded = demo_out / NAME / "graded"
    page = (graded / "similarity.html").read_text(encoding="utf-8")
    assert "<h1>Similarity of solution code: ps4_core</h1>" in page
    assert "href='similarity.html'" in (graded / "summary.html").read_text(encoding="utf-8")
    # A page, not a grade: the results JSON hold the contract's five keys and nothing from it.
    for result in (graded / "results").glob("*.json"):
        assert set(json.loads(result.read_text())) == {
            "student_id", "assignment", "score", "max_score", "tests"}
