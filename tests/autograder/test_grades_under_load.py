"""A class graded while every core is kept busy gets the grades it gets on a quieter machine.

Three students of ps4_core's demo class (tests/conftest.py's ``demo_out`` graded the whole class
once for the session): the full notebook, the partial one and a wrong one, three different scores
with passed and failed checks in every task, are graded again by the real command while a load
generator keeps one spinning process per core at the grader's own priority
(tests/same_outputs.py). Their rows of ``grades.csv`` and their results JSON must be
byte-identical to the quiet run's, their feedback pages identical but for printed timings. ps4's
class is the cheapest (seconds a notebook), and three of its seven students keep what the
comparison is about (one grading under load against one on a quieter machine) at less than half
the CI time; `benchmarks/grades_under_load.py ASSIGNMENT` runs the same comparison for a whole
class of any assignment, with the times.
"""

from __future__ import annotations

import os
import shutil

import pytest
from same_outputs import busy_cores, grade_class, same_tree

NAME = "ps4_core"
CORES = os.cpu_count() or 2
pytestmark = pytest.mark.timeout(1200)


STUDENTS = {"full", "partial", "wrong_dce_one_level"}


@pytest.fixture(scope="module")
def under_load(demo_out, tmp_path_factory):
    base = tmp_path_factory.mktemp("under_load")
    for student in STUDENTS:
        shutil.copytree(demo_out / NAME / "submitted" / student, base / "submitted" / student)
    with busy_cores(CORES) as load:
        proc = grade_class(NAME, base / "submitted", base / "out")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return {"out": base / "out", "load": load, "quiet": demo_out / NAME / "graded"}


def test_the_three_students_differ(under_load):
    """Three scores, so a grading that swapped or copied results would show."""
    rows = (under_load["out"] / "grades.csv").read_text().splitlines()[1:]
    assert len(rows) == len(STUDENTS) and len({row.split(",")[2] for row in rows}) == 3, rows


def test_the_load_generator_ran_all_along(under_load):
    load = under_load["load"]
    # Every spinner ran until the class was graded, and they had the CPU a fair share of the
    # time. How much depends on what else runs (the grader's own processes and threads, other
    # jobs on a shared machine: 0.2 of 2 cores at a load average of 10, about 1 on a quiet
    # machine), so the bound is low: they ran, not how much.
    assert load.ran_throughout == load.processes, load.ran_throughout
    assert load.cores_kept_busy >= 0.05, (load.cpu_s, load.wall_s)


def test_grades_and_results_are_those_of_the_quiet_run(under_load):
    assert same_tree(under_load["quiet"], under_load["out"], STUDENTS) == []
