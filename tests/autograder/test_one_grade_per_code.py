"""One grade per code: the same notebook, handed in by another student or with its whitespace
changed, gets the same row of grades.csv (issue 50). The construction is proved over every check
of every assignment in process (test_grading_inputs.py: the runner draws the same inputs whatever
the student and the code); here the real command grades a class in which every wrong solution
and every correct alternative of ps4_core's mutants.py (the assignment that grades fastest) is
handed in twice, under 2 of 15 (student id, whitespace) variants, rotating so that every variant
is used. Its blind set (mutants.BLIND, BLIND_ALTERNATIVES) is left out here: the contract tests
grade it in process, and handing it in too would double this test's time.
"""

from __future__ import annotations

import ast
import csv
import io
import json
import subprocess
import sys
import tokenize
from pathlib import Path

import nbformat
import numpy as np
from hidden_values import shown_values

from autograder.assignments import contract
from autograder.assignments.ps4_core import mutants
from autograder.grade.grading import load_assignment
from autograder.instructor import classroom
from autograder.worker.runner import input_seed

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENT = "ps4_core"
SEED = "one grade per code"
STUDENTS = ("alice", "bob", "chen_wei", "dana7", "eve")  # five id stems: each folder its own id


def _line_ends(source: str) -> list[int]:
    """Rows where a line of code ends outside any string (where spaces or a blank line may go)."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return sorted({t.start[0] for t in tokens if t.type in (tokenize.NEWLINE, tokenize.NL)})


def _trailing_spaces(source: str) -> str:
    lines = source.splitlines()
    for row in _line_ends(source):
        if row <= len(lines):
            lines[row - 1] += "   "
    return "\n".join(lines) + "\n"


def _blank_lines(source: str) -> str:
    lines = source.splitlines()
    for row in reversed(_line_ends(source)):
        if row <= len(lines):
            lines.insert(row, "")
    return "\n\n" + "\n".join(lines) + "\n\n\n"


def _comment(source: str) -> str:
    return "# handed in once more, nothing changed\n" + source


WHITESPACE = {"spaces": _trailing_spaces, "blank": _blank_lines, "comment": _comment}
VARIANTS = [(student, ws) for student in STUDENTS for ws in WHITESPACE]  # 15


def _class(submitted: Path) -> dict[str, tuple[str, tuple[str, str]]]:
    """Write the class; student id -> (the notebook it hands in, ``wrong:NAME`` or
    ``alt:NAME``; its (id stem, whitespace) variant)."""
    a = contract(ASSIGNMENT)
    reference = classroom.solution_sources(ASSIGNMENT, root=ROOT)
    blind = {*mutants.BLIND, *mutants.BLIND_ALTERNATIVES}
    notebooks = {**{f"wrong:{k}": w.cells for k, w in sorted(a.wrong_solutions.items())
                    if k not in blind},
                 **{f"alt:{k}": alt.cells for k, alt in sorted(a.alternatives.items())
                    if k not in blind}}
    handed: dict[str, tuple[str, tuple[str, str]]] = {}
    for i, (key, cells) in enumerate(notebooks.items()):
        for variant in (VARIANTS[(2 * i) % 15], VARIANTS[(2 * i + 1) % 15]):
            student, ws = variant
            fills = {gid: WHITESPACE[ws](src) for gid, src in {**reference, **cells}.items()}
            for gid, src in fills.items():  # the whitespace changes no code
                original = {**reference, **cells}[gid]
                assert ast.dump(ast.parse(src)) == ast.dump(ast.parse(original)), (key, gid, ws)
                assert src != original
            nb = classroom.make_submission(ASSIGNMENT, fills, root=ROOT)
            sid = f"{student}{len(handed):02d}"
            folder = submitted / sid / ASSIGNMENT
            folder.mkdir(parents=True)
            nbformat.write(nb, folder / load_assignment(ASSIGNMENT, "autograder.assignments")
                           .notebook)
            handed[sid] = (key, variant)
    return handed


def _grade(submitted: Path, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "autograder", "grade", ASSIGNMENT, str(submitted), "--out",
         str(out), "--db", f"sqlite:///{out.parent / 'gradebook.db'}", "--seed", SEED,
         "--workers", "2", "--no-progress"],
        capture_output=True, text=True, cwd=ROOT, timeout=900, check=False)


def test_the_same_code_gets_the_same_row_whoever_hands_it_in_and_however_spaced(tmp_path):
    handed = _class(tmp_path / "submitted")
    assert {variant for _, variant in handed.values()} == set(VARIANTS)  # all 15 are used
    out = tmp_path / "out"
    proc = _grade(tmp_path / "submitted", out)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(out / "grades.csv", newline="") as f:
        rows = {row.pop("student_id"): row for row in csv.DictReader(f)}
    assert set(rows) == set(handed)
    by_code: dict[str, list[dict]] = {}
    for sid, (key, _) in handed.items():
        by_code.setdefault(key, []).append(rows[sid])
    for key, (first, second) in by_code.items():
        assert first == second, key
        assert first["status"] == "graded", (key, first)
        full = float(first["score"]) == float(first["max_score"])
        assert full == key.startswith("alt:"), (key, first)  # the grading itself worked
    # What the class was told names no value of the hidden inputs (drawn from --seed).
    spec = load_assignment(ASSIGNMENT, "autograder.assignments")
    drawn = {c.id: c.make_inputs(np.random.default_rng(input_seed(SEED.encode(), c.id)))
             for c in spec.checks}
    for sid in handed:
        result = json.loads((out / "results" / f"{sid}.json").read_text())
        for test in result["tests"]:
            check = test["name"].split(":", 1)[0]
            assert not shown_values(test["message"], [drawn[check]]), (sid, test)
