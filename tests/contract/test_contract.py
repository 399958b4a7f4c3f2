"""The assignment contract's tests, written once and run on every registered assignment
(autograder.assignments.REGISTRY; autograder/README.md says what each field promises).

Per assignment: its tasks, cells and points agree with the notebook; the reference earns every
point and passes every visible test; the untouched notebook earns nothing (every check saying
``untouched_says``); each wrong solution loses points on its declared task and on no other
(every failed check's blame naming the rule: ``named_in_blame``; an empty field is skipped with
the reason the contract's ``empty_by_design`` gives, and fails without one); each correct
alternative earns every point and passes every visible test; every check that runs without a GPU
has a reproducer the engine finds and the cell policy accepts; every check's inputs (under a few
seeds) and every probe's value (of every notebook graded here) cross the sandbox's channel
unchanged (autograder.student.channel: plain data, autograder.student.plain). Each notebook is
also checked by the cell policy as the grader checks it, and none of these may have a cell
refused, so grading them in process (grade_variants.py, two subprocesses per assignment, seed 0:
the session fixture ``graded`` of tests/conftest.py, which the reproducer tests share) gives the
grader's verdicts.
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

import jax
import nbformat
import numpy as np
import pytest

from autograder import inprocess
from autograder.assignments import REGISTRY, contract
from autograder.grade import reproduce
from autograder.instructor import classroom
from autograder.worker import policy

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
HARNESS = Path(__file__).resolve().parent / "grade_variants.py"
# Several assignments' classes are graded in a fixture the first test of each waits for.
pytestmark = pytest.mark.timeout(3600)

NAMES = sorted(REGISTRY)
CONTRACTS = {name: contract(name) for name in NAMES}
WRONG = [(name, wrong) for name in NAMES for wrong in sorted(CONTRACTS[name].wrong_solutions)]
ALTERNATIVES = [(name, alt) for name in NAMES for alt in sorted(CONTRACTS[name].alternatives)]
HAS_GPU = any(d.platform == "gpu" for d in jax.devices())
# The seeds each check's inputs are drawn under for the channel test: 0 is the one the in-process
# grading here uses; the others draw what a grading's other secrets and students would.
INPUT_SEEDS = range(5)


def _failed(report: dict) -> list[tuple[str, str]]:
    return [(c["id"], c["message"]) for c in report["checks"] if not c["passed"]]


def _total_here(name: str) -> float:
    return sum(c.points for c in CONTRACTS[name].checks if HAS_GPU or not c.needs_gpu)


def _release_cells(name: str) -> dict[str, dict]:
    nb = nbformat.read(CONTRACTS[name].release, as_version=4)
    return {c.metadata["nbgrader"]["grade_id"]: {**c.metadata["nbgrader"], "source": c.source}
            for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id")}


@pytest.mark.parametrize("name", NAMES)
def test_tasks_cells_checks_and_points_agree(name):
    a = CONTRACTS[name]
    cells = _release_cells(name)
    solutions = {gid for gid, meta in cells.items() if meta.get("solution")}
    assert sorted(t.cell for t in a.tasks) == sorted(solutions)
    probes = a.probes_module()
    for task in a.tasks:
        # The engine names a task's cell by this rule (autograder.worker.policy.apply, refusal_of_task).
        assert task.cell == task.id.split(".", 1)[-1], task
        assert task.id in cells[task.cell]["source"], task.id  # the stub names its task
        checks = [c for c in a.checks if c.task == task.id]
        assert checks and task.points == sum(c.points for c in checks) > 0, task.id
        assert task.banned == a.spec.task(task.id).banned
    assert {c.task for c in a.checks} == {t.id for t in a.tasks}
    assert len({c.id for c in a.checks}) == len(a.checks)
    per_cell: dict[str, float] = defaultdict(float)
    for check in a.checks:
        assert cells[check.grade_cell]["grade"] and not cells[check.grade_cell]["solution"]
        assert callable(getattr(probes, check.probe)), check.probe
        per_cell[check.grade_cell] += check.points
    assert dict(per_cell) == {gid: m["points"] for gid, m in cells.items() if m.get("grade")}
    assert a.reference.is_file() and a.release.is_file()


@pytest.mark.parametrize("name", NAMES)
def test_wrong_solutions_and_alternatives_are_well_formed(name):
    a = CONTRACTS[name]
    reference = classroom.solution_sources(name, root=a.reference.parents[2])
    assert {w.task for w in a.wrong_solutions.values()} == {t.id for t in a.tasks}
    for key, solution in [*a.wrong_solutions.items(), *a.alternatives.items()]:
        assert solution.description and solution.cells, key
        assert set(solution.cells) <= {t.cell for t in a.tasks}, key
        for grade_id, source in solution.cells.items():
            assert source.strip() != reference[grade_id].strip(), (key, grade_id)
    for key, wrong in a.wrong_solutions.items():
        assert a.task(wrong.task).cell in wrong.cells, key


@pytest.mark.parametrize("name", NAMES)
def test_reference_earns_every_point(graded, name):
    report = graded(name)["reference"]
    assert report["refused"] == [] and report["cell_errors"] == []
    assert report["visible_failures"] == []
    assert _failed(report) == []
    assert sum(c["points"] for c in report["checks"]) == _total_here(name) > 0


@pytest.mark.parametrize("name", NAMES)
def test_untouched_notebook_earns_nothing(graded, name):
    a = CONTRACTS[name]
    report = graded(name)["untouched"]
    assert report["refused"] == []
    if a.untouched_cells_run:  # the stubs define every name; they raise only when called
        assert report["cell_errors"] == []
    assert len(report["checks"]) == sum(1 for c in a.checks if HAS_GPU or not c.needs_gpu)
    for check in report["checks"]:
        assert not check["passed"] and check["points"] == 0 and check["message"], check
    # Every visible test fails: through a stub's error, or an assertion on the buggy code kept.
    failed = dict(f.split(": ", 1) for f in report["visible_failures"])
    assert set(failed) == {c.grade_cell for c in a.checks}
    if a.untouched_visible_errors:
        assert set(failed.values()) <= set(a.untouched_visible_errors)


@pytest.mark.parametrize(("name", "wrong"), WRONG, ids=[f"{n}-{w}" for n, w in WRONG])
def test_wrong_solution_loses_points_on_its_task_only(graded, name, wrong):
    a = CONTRACTS[name]
    task = a.wrong_solutions[wrong].task
    report = graded(name)[f"wrong:{wrong}"]
    assert report["refused"] == []  # else the grader would not run the cell at all
    if a.wrong_cells_run:
        assert report["cell_errors"] == []
    lost = {c["task"] for c in report["checks"] if not c["passed"]}
    assert lost == {task}, (_failed(report), report["cell_errors"])
    for check in report["checks"]:
        if not check["passed"]:  # the feedback says what went wrong
            assert check["message"] and check["blame"], check


def _empty_by_design(a: contract.Assignment, field: str) -> str:
    """Why ``field`` of the contract is empty: its ``empty_by_design`` says, or the test fails."""
    why = a.empty_by_design.get(field, "")
    assert why, (f"{a.name}: {field} is empty; fill it in, or say why it is empty by design in "
                 f"the contract's empty_by_design")
    return why


@pytest.mark.parametrize("name", NAMES)
def test_untouched_notebook_says_what_its_stubs_raise(graded, name):
    a = CONTRACTS[name]
    messages = [c["message"] for c in graded(name)["untouched"]["checks"]]
    assert messages
    if not a.untouched_says:
        why = _empty_by_design(a, "untouched_says")
        # The reason holds: not every check says what the stubs raise.
        assert not all("NotImplementedError" in m for m in messages), (
            f"every check says NotImplementedError: set untouched_says ({why})")
        pytest.skip(f"{name}: untouched_says is empty by design: {why}")
    for message in messages:
        assert a.untouched_says in message, message


@pytest.mark.parametrize(("name", "wrong"), WRONG, ids=[f"{n}-{w}" for n, w in WRONG])
def test_every_failed_check_of_a_wrong_solution_names_its_rule(graded, name, wrong):
    a = CONTRACTS[name]
    task = a.wrong_solutions[wrong].task
    named = a.task(task).named_in_blame
    if not named:
        why = _empty_by_design(a, "named_in_blame")
        assert task in why, f"{task}: named_in_blame is empty, and empty_by_design says not why"
        pytest.skip(f"{task}: named_in_blame is empty by design: {why}")
    failed = [c for c in graded(name)[f"wrong:{wrong}"]["checks"] if not c["passed"]]
    assert failed
    for check in failed:  # the feedback names the rule at fault
        assert named in check["blame"], check


@pytest.mark.parametrize("name", NAMES)
def test_no_failure_message_shows_a_hidden_value(graded, name):
    """Every check's inputs are the same for the whole course (runner.input_seed: the secret and
    the check), so no message may print one of their values or the expectation's: the failed
    checks of every wrong solution, the untouched notebook and the demo's partial student, their
    messages searched for the hidden numbers rendered at several precisions
    (grade_variants.shown_values)."""
    shown = {(variant, check["id"]): (check["shown_values"], check["message"])
             for variant, report in graded(name).items() for check in report["checks"]
             if not check["passed"] and check["shown_values"]}
    failed = sum(not c["passed"] for r in graded(name).values() for c in r["checks"])
    assert failed > 0 and not shown, shown


@pytest.mark.parametrize(("name", "alt"), ALTERNATIVES,
                         ids=[f"{n}-{alt}" for n, alt in ALTERNATIVES])
def test_correct_alternative_earns_every_point(graded, name, alt):
    a = CONTRACTS[name]
    report = graded(name)[f"alt:{alt}"]
    assert report["refused"] == [] and report["cell_errors"] == []
    assert report["visible_failures"] == []
    assert report["checks"] and _failed(report) == []
    if a.graded_as == "notebook":
        assert sum(c["points"] for c in report["checks"]) == _total_here(name)
    else:  # its own tasks' checks, all of them
        tasks = {t.id for t in a.tasks if t.cell in a.alternatives[alt].cells}
        assert {c["id"] for c in report["checks"]} == {
            c.id for c in a.checks if c.task in tasks and (HAS_GPU or not c.needs_gpu)}


@pytest.mark.parametrize("name", NAMES)
def test_every_check_without_a_gpu_has_a_reproducer(name):
    a = CONTRACTS[name]
    assert reproduce.module(a.name, a.package).reproducer is a.reproducer  # what the engine finds
    for check in a.checks:
        code = reproduce.reproducer(a.name, check.id, a.package)
        if check.needs_gpu and code is None:
            continue  # GPU checks may have none: a student without a GPU could not run it
        assert isinstance(code, str) and code.startswith(f"# {check.id}: "), check.id
        _, refusals = policy.check_source(code, a.allowed_imports)
        assert refusals == [], (check.id, refusals)


def _same(a, b) -> bool:
    """Whether two plain values are the same: the same types all the way down, the same array
    dtypes, shapes and bytes."""
    if type(a) is not type(b):
        return False
    if type(a) in (list, tuple):
        return len(a) == len(b) and all(map(_same, a, b))
    if type(a) is dict:
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if type(a) is np.ndarray:
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    return a == b or (type(a) is float and math.isnan(a) and math.isnan(b))


@pytest.mark.parametrize("name", NAMES)
def test_every_checks_inputs_cross_the_channel(name):
    """What the sandboxed grader sends to the student's process (a check's inputs, and its retry's)
    is plain data and arrives unchanged: the in-process grading above would not notice (it runs
    the probes in this process), the sandbox's channel refuses anything else."""
    problems = []
    for check in contract(name).checks:
        for seed in INPUT_SEEDS:
            inputs = check.make_inputs(inprocess.check_rng(check, seed))
            try:
                for sent in [inputs] + ([check.retry(inputs)] if check.retry else []):
                    if not _same(inprocess.carried_inputs(check, sent), sent):
                        problems.append(f"{check.id} (seed {seed}): its inputs change on the way")
            except inprocess.InputsNotPlain as err:
                problems.append(f"{err} (seed {seed})")
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("name", NAMES)
def test_every_probe_result_crosses_the_channel(graded, name):
    """Every probe's value, on every notebook graded here (the reference, the untouched notebook,
    each wrong solution and alternative), is plain data the channel carries: grade_variants.py
    sends it through the channel's encoding and records why not (``not_plain``)."""
    problems = [f"{variant}: {check['id']}: {why}" for variant, report in graded(name).items()
                for check in report["checks"] for why in check["not_plain"]]
    assert problems == [], "\n".join(problems)
