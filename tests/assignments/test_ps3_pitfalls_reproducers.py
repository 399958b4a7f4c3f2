"""ps3_pitfalls' reproducers ("Try it yourself" snippets) do what they say, run as a student runs
them: in a fresh kernel after the notebook's own cells (tests/reproducer_kernel.py), one kernel per
notebook.

- every check has a snippet that passes the cell policy, the same text every time, and holds no
  line of the reference solution;
- after the reference solution every snippet runs to the end;
- after a wrong solution (the demo class's wrong students, the partial and the untouched notebook,
  and every other mutant, dealt into as few notebooks as hold at most one per task), the
  snippet of each check the solution fails when graded raises.

Which checks a solution fails comes from grading it in process (the functions of
tests/assignments/grade_inprocess.py, seed 0) in two subprocesses that start JAX with two CPU
devices, as the sandbox does for these checks: the checks of the tasks whose cells differ from the
reference (tests/assignments/test_ps3_pitfalls.py proves the reference earns every point, and
each mutant loses points on its own task only). The grading starts first and runs while the
kernels do: each wrong notebook's kernel runs the snippets of every check of the tasks it
changes, and the test then looks up those of the checks it failed. A notebook may hold wrong
fixes of several tasks at once, since tasks share no names.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from grade_inprocess import ROOT, write
from reproducer_kernel import raised_after, run_after

from autograder.instructor import classroom

from autograder.worker import policy
from autograder.assignments.ps3_pitfalls import checks, mutants, reproduce

pytestmark = pytest.mark.timeout(1800)

NAME = "ps3_pitfalls"
CHECKS = [check for check in checks.ASSIGNMENT.checks if not check.needs_gpu]
REFERENCE = classroom.solution_sources(NAME, root=ROOT)


def mutant_groups() -> list[list[str]]:
    """Every mutant outside the demo class, dealt into as few lists as hold one per task each."""
    by_task: dict[tuple[str, ...], list[str]] = {}
    for name, (_, cells) in mutants.MUTANTS.items():
        if name not in mutants.DEMO:
            by_task.setdefault(tuple(sorted(cells)), []).append(name)
    count = max(len(names) for names in by_task.values())
    return [[names[i] for names in by_task.values() if i < len(names)] for i in range(count)]


def wrong_notebooks() -> dict:
    demo = classroom.demo_submissions(NAME, root=ROOT)
    wrong = {student: demo[student]
             for student in ("untouched", "partial", *(f"wrong_{m}" for m in mutants.DEMO))}
    for i, group in enumerate(mutant_groups()):
        fills = dict(REFERENCE)
        for name in group:
            fills.update(mutants.MUTANTS[name][1])
        wrong[f"mutants_{i}"] = classroom.make_submission(NAME, fills, root=ROOT)
    return wrong


WRONG = wrong_notebooks()


def changed_tasks(nb) -> set[str]:
    """The tasks whose solution cell is not the reference's."""
    cells = {c.metadata["nbgrader"]["grade_id"]: c.source for c in nb.cells
             if c.metadata.get("nbgrader", {}).get("solution")}
    return {f"ps3.{grade_id}" for grade_id, source in cells.items()
            if source != REFERENCE[grade_id]}


# Grades notebooks in one process, as grade_inprocess.grade does (the student's cells, then
# autograder.inprocess.run_check, seed 0) but only the checks of the tasks each notebook changes:
# elsewhere its cells are the reference's, which earns every point. Two CPU devices, set before
# JAX starts; results to a file (the notebook's cells print on stdout).
GRADER = """
import json, sys
from pathlib import Path
import jax
jax.config.update("jax_num_cpu_devices", 2)
import nbformat
from grade_inprocess import run_cells
from autograder.inprocess import load, run_check
spec, probes = load("ps3_pitfalls")
failed = {}
for path, tasks in json.loads(Path(sys.argv[1]).read_text()).items():
    ns, _ = run_cells(nbformat.read(path, as_version=4))
    failed[path] = [c.id for c in spec.checks
                    if c.task in tasks and not run_check(c, probes, ns, seed=0)[0].passed]
Path(sys.argv[2]).write_text(json.dumps(failed))
"""


@pytest.fixture(scope="module")
def grading(tmp_path_factory):
    """Starts grading the wrong notebooks in two subprocesses; returns failed(student), the ids
    of the checks that student's notebook fails (waiting for the grading on its first call)."""
    folder = tmp_path_factory.mktemp("ps3_wrong")
    paths = {student: str(write(nb, folder / f"{student}.ipynb")) for student, nb in WRONG.items()}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT / "tests" / "assignments"), str(ROOT), os.environ.get("PYTHONPATH", "")])}
    started = []
    for i in range(2):
        jobs, out, log = (folder / f"{name}{i}" for name in ("jobs", "failed", "log"))
        jobs.write_text(json.dumps({paths[student]: sorted(changed_tasks(WRONG[student]))
                                    for student in sorted(WRONG)[i::2]}))
        with log.open("w") as stderr:
            proc = subprocess.Popen([sys.executable, "-c", GRADER, str(jobs), str(out)], cwd=ROOT,
                                    env=env, stdout=subprocess.DEVNULL, stderr=stderr)
        started.append((proc, out, log))
    graded: dict = {}

    def failed(student: str) -> set[str]:
        if not graded:
            for proc, out, log in started:
                assert proc.wait(timeout=1200) == 0, log.read_text()[-3000:]
                graded.update(json.loads(out.read_text()))
        return set(graded[paths[student]])

    yield failed
    for proc, _, _ in started:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def codes() -> dict[str, str]:
    return {check.id: reproduce.reproducer(check.id) for check in CHECKS}


@pytest.mark.usefixtures("grading")  # starts grading the wrong notebooks, which takes longest
def test_every_check_has_a_snippet_that_passes_the_cell_policy(codes):
    allowed = policy.allowed_imports(checks.ASSIGNMENT)
    for check in checks.ASSIGNMENT.checks:
        if check.needs_gpu:
            assert reproduce.reproducer(check.id) is None, check.id
            continue
        code = codes[check.id]
        assert isinstance(code, str), check.id
        assert policy.check_source(code, allowed)[1] == [], check.id
        assert code.startswith(f"# {check.id}: ") and "import numpy as np" in code, check.id
        assert "your code" in code and "a correct solution" in code, check.id
        assert "autograder" not in code and "config" not in code, check.id
        assert code.rstrip().splitlines()[-1].lstrip().startswith(("np.testing.", "assert ")), \
            check.id
    assert reproduce.reproducer("ps3.no_such_check") is None


def test_snippets_are_deterministic_and_hold_no_reference_code(codes):
    again = {check.id: reproduce.reproducer(check.id) for check in CHECKS}
    assert again == codes
    fixes = {line.strip() for source in REFERENCE.values() for line in source.splitlines()
             if len(line.strip()) >= 12 and not line.strip().startswith("#")}
    for check_id, code in codes.items():
        lines = {line.strip() for line in code.splitlines()}
        assert not fixes & lines, (check_id, fixes & lines)


def test_every_snippet_runs_after_the_reference(codes):
    reference = classroom.make_submission(NAME, REFERENCE, root=ROOT)
    assert raised_after(reference, codes) == {}


def test_the_wrong_notebooks_cover_the_demo_class_and_further_mutants():
    further = [name for group in mutant_groups() for name in group]
    assert len(further) >= 10 and set(further) == set(mutants.MUTANTS) - set(mutants.DEMO)
    assert {f"ps3.{gid}" for name in further for gid in mutants.MUTANTS[name][1]} == {
        task.id for task in checks.ASSIGNMENT.tasks}
    for group in mutant_groups():  # at most one wrong fix per task in a notebook
        tasks = [gid for name in group for gid in mutants.MUTANTS[name][1]]
        assert len(tasks) == len(set(tasks)), group


@pytest.mark.parametrize("student", sorted(WRONG))
def test_every_failed_check_has_a_snippet_that_raises(codes, grading, student):
    nb = WRONG[student]
    changed = changed_tasks(nb)
    task_of = {check.id: check.task for check in CHECKS}
    # The snippets of every check of the changed tasks, while the grading goes on.
    results = run_after(nb, {check_id: code for check_id, code in codes.items()
                             if task_of[check_id] in changed})
    failed = grading(student)
    # Each wrong fix loses points on its task (the others' cells are the reference's).
    assert {task_of[check_id] for check_id in failed} == changed, student
    quiet = sorted(check_id for check_id in failed if results[check_id] is None)
    assert quiet == [], f"{student}: these snippets ran quietly after a failed check: {quiet}"
