"""ps3_pitfalls: the reference earns every point, the released (untouched) notebook none, every
released cell parses, and each realistic wrong fix in mutants.py loses points on its own task
while each correct alternative earns every point and passes the visible tests.

The reference notebook is built from the one authored source (solutions/ps3_pitfalls/
ps3_pitfalls.md) with its hidden tests removed; the untouched one is the released notebook in
assignments/. Both are graded with autograder.inprocess in a subprocess that starts JAX with two
CPU devices (as the sandbox does for these checks), so no student namespace or pytree
registration leaks from one notebook into the next. Run as a script, this module is that
subprocess: ``python test_ps3_pitfalls.py MODE NOTEBOOK.ipynb RESULT.json``.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from autograder.assignments.ps3_pitfalls.checks import ASSIGNMENT
from autograder.assignments.ps3_pitfalls.mutants import ALTERNATIVES, DEMO, MUTANTS
from autograder.release import release_path

ROOT = Path(__file__).resolve().parents[2]
NAME = "ps3_pitfalls"
SOURCE = ROOT / "solutions" / NAME / f"{NAME}.md"


def build_notebook(fills: dict[str, str] | None = None, *, untouched: bool = False):
    """The notebook a student would hand in: the released copy (untouched), or the reference
    solution with ``fills`` (solution grade_id -> cell source) written into it."""
    import jupytext
    import nbformat
    from nbgrader.preprocessors import ClearHiddenTests

    if untouched:
        return nbformat.read(release_path(NAME, root=ROOT), as_version=4)
    nb = jupytext.read(SOURCE)
    nb, _ = ClearHiddenTests().preprocess(nb, {})
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if fills and grade_id in fills:
            cell.source = fills[grade_id]
    return nb


def _start(args: list[str], result: Path) -> tuple[subprocess.Popen, Path]:
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    proc = subprocess.Popen([sys.executable, __file__, *args, str(result)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return proc, result


def _finish(started: tuple[subprocess.Popen, Path]) -> dict:
    proc, result = started
    # Generous: on a shared, loaded machine one process may get a small share of a core.
    _, stderr = proc.communicate(timeout=1800)
    assert proc.returncode == 0, stderr[-3000:]
    return json.loads(result.read_text())


def _subprocess(args: list[str], result: Path) -> dict:
    return _finish(_start(args, result))


def grade_notebook(nb, tmp_path: Path) -> dict:
    """check id -> {"passed", "task", "points", "message"}, plus "_warnings" (str list) and
    "_cell_errors" (grade_id -> exception name) from running ``nb`` in a fresh process."""
    import nbformat

    path = tmp_path / f"{NAME}.ipynb"
    nbformat.write(nb, path)
    return _subprocess(["full", str(path)], tmp_path / "result.json")


def grade_mutants(tmp_path: Path, processes: int = 2) -> dict:
    """mutant (or alternative) name -> the report of grade_notebook, restricted to the checks of
    the tasks whose solution cells the mutant replaces; "_reference" -> the reference's report.
    Each of ``processes`` processes runs the reference notebook once, then re-runs, for each of
    its share of the mutants, only the replaced cells (and their test cells) on a copy of that
    namespace: what running the whole mutated notebook would give, since tasks share no names."""
    import nbformat

    path = tmp_path / f"{NAME}.ipynb"
    nbformat.write(build_notebook(), path)
    started = [_start([f"mutants:{i}/{processes}", str(path)], tmp_path / f"mutants{i}.json")
               for i in range(processes)]
    report: dict = {}
    warnings_seen: list[str] = []
    for part in map(_finish, started):
        warnings_seen += part.pop("_warnings")
        report.update(part)
    report["_warnings"] = warnings_seen
    return report


def _exec_cells(cells, ns: dict, errors: dict) -> None:
    for i, cell in enumerate(cells):
        if cell.cell_type != "code":
            continue
        try:
            exec(compile(cell.source, f"<cell {i}>", "exec"), ns)
        except Exception as err:  # a student's cell may raise anything; grading goes on
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", str(i))
            errors[grade_id] = type(err).__name__


def _check_all(assignment, probes, ns: dict, tasks=None) -> dict:
    from autograder.inprocess import run_check

    report = {}
    for check in assignment.checks:
        if tasks is None or check.task in tasks:
            verdict, _ = run_check(check, probes, ns, seed=0)
            report[check.id] = {"passed": verdict.passed, "task": check.task,
                                "points": check.points, "message": verdict.message}
    return report


def _run(mode: str, notebook_path: str, result_path: str) -> None:
    import jax
    import nbformat

    # Placement asks for a second device; like the sandbox, set the count before JAX starts.
    jax.config.update("jax_num_cpu_devices", 2)

    from autograder.inprocess import load

    nb = nbformat.read(notebook_path, as_version=4)
    assignment, probes = load(NAME)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ns: dict = {"__name__": "__main__"}
        errors: dict = {}
        _exec_cells(nb.cells, ns, errors)
        if mode == "full":
            report = {**_check_all(assignment, probes, ns), "_cell_errors": errors}
        else:
            # The reference itself is graded here too: it is the namespace every mutant starts from.
            report = {"_reference": {**_check_all(assignment, probes, ns), "_cell_errors": errors}}
            index, count = (int(n) for n in mode.split(":")[1].split("/"))
            for name, (_, fills) in sorted({**MUTANTS, **ALTERNATIVES}.items())[index::count]:
                cells, tasks = [], set()
                for i, cell in enumerate(nb.cells):
                    grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
                    if grade_id in fills:
                        cells.append(nbformat.v4.new_code_cell(fills[grade_id], metadata={
                            "nbgrader": {"grade_id": grade_id}}))
                        cells.append(nb.cells[i + 1])  # its test cell (hidden part removed)
                        tasks.add(f"ps3.{grade_id}")
                mutant_ns, mutant_errors = dict(ns), {}
                _exec_cells(cells, mutant_ns, mutant_errors)
                report[name] = {**_check_all(assignment, probes, mutant_ns, tasks),
                                "_cell_errors": mutant_errors}
    report["_warnings"] = [f"{w.category.__name__}: {w.message}" for w in caught]
    Path(result_path).write_text(json.dumps(report))


# The tests. -------------------------------------------------------------------------------------


def _nbgrader_cells() -> dict[str, dict]:
    import jupytext

    return {c.metadata["nbgrader"]["grade_id"]: {**c.metadata["nbgrader"], "source": c.source}
            for c in jupytext.read(SOURCE).cells if "nbgrader" in c.metadata}


def test_cell_points_equal_their_checks_and_every_task_is_graded():
    cells = _nbgrader_cells()
    graded = {gid: meta for gid, meta in cells.items() if meta["grade"]}
    for gid, meta in graded.items():
        checks = [c for c in ASSIGNMENT.checks if c.grade_cell == gid]
        assert checks and sum(c.points for c in checks) == meta["points"], gid
        assert "check_cell(\"ps3_pitfalls\", \"%s\", globals())" % gid in meta["source"]
    assert {c.grade_cell for c in ASSIGNMENT.checks} == set(graded)
    solutions = {gid for gid, meta in cells.items() if meta["solution"]}
    assert {f"ps3.{gid}" for gid in solutions} == {t.id for t in ASSIGNMENT.tasks}
    for gid in solutions:  # the task id is in the stub's comment, so it survives the release
        assert f"# ps3.{gid}:" in cells[gid]["source"].split("### BEGIN SOLUTION")[0]
    assert {c.task for c in ASSIGNMENT.checks} == {t.id for t in ASSIGNMENT.tasks}


# The input classes every grading runs, per check (checks._cases): the same for every seed, so a
# grade depends on the code and not on the student id that seeds the draws.
_CLASSES = {
    "ps3.pure": ["rank 0", "rank 1", "rank 2", "rank 3", "rank 2, repeated slopes"],
    "ps3.loop": ["rank 0", "rank 1", "rank 2", "rank 3"],
    "ps3.placement": ["a dict, second device", "a list, second device", "one leaf, second device",
                      "a dict, first device", "a list, first device"],
    "ps3.divide": ["rank 2", "rank 3", "rank 4"],
    "ps3.safe_log": ["rank 0", "rank 1", "rank 2", "rank 3", "rank 4"],
    "ps3.log_or_y": ["x of rank 1, fallback of rank 0", "x of rank 2, fallback of rank 0",
                     "x of rank 3, fallback of rank 0", "x of rank 4, fallback of rank 0",
                     "x of rank 2, fallback of rank 1", "x of rank 3, fallback of rank 2",
                     "x of rank 2, fallback of rank 2", "x of rank 1, fallback of rank 2"],
    "ps3.smooth_step": ["rank 1", "rank 2", "rank 3", "rank 4"],
}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_grading_runs_every_input_class(seed):
    import numpy as np

    for check in ASSIGNMENT.checks:
        if check.task not in _CLASSES:
            continue
        inputs = check.make_inputs(np.random.default_rng([seed, len(check.id)]))
        names = [case["case"] for case in inputs["cases"]]
        want = _CLASSES[check.task]
        if check.id == "ps3.smooth_step.vmap":  # vmap over axis -2 needs rank 2 or more
            want = want[1:]
        assert names == want, check.id
        if check.task == "ps3.safe_log":  # every case expects some p log p != 0, and some 0
            for case in inputs["cases"]:
                p = np.asarray(case["p"], case["dtype"])
                assert (p > 0).any() and ((p > 0) & (p != 1)).any(), (check.id, case["case"])
                assert case["case"] == "rank 0" or (p <= 0).any(), (check.id, case["case"])


def _released_code_cells():
    import nbformat

    nb = nbformat.read(release_path(NAME, root=ROOT), as_version=4)
    return [c for c in nb.cells if c.cell_type == "code"]


def test_release_hides_solutions_and_hidden_tests():
    released = "\n".join(c.source for c in _released_code_cells())
    for secret in ("BEGIN SOLUTION", "BEGIN HIDDEN TESTS", "check_cell", "fori_loop(0, steps, body, (x, v))",
                   "donate_argnums=(0, 1)", "jax.device_put(batch, device)", "jax.nn.softmax"):
        assert secret not in released, secret


def test_every_released_cell_parses_and_every_stub_names_its_task():
    cells = _released_code_cells()
    for cell in cells:
        ast.parse(cell.source)  # a SyntaxError here is what the student would hit
    stubs = {c.metadata["nbgrader"]["grade_id"]: c.source for c in cells
             if c.metadata.get("nbgrader", {}).get("solution")}
    assert {f"ps3.{gid}" for gid in stubs} == {t.id for t in ASSIGNMENT.tasks}
    for gid, source in stubs.items():
        # A stub raises NotImplementedError naming its task, or keeps the buggy code to fix.
        named = f'raise NotImplementedError("ps3.{gid}:' in source
        buggy = gid in ("method", "donate") and source.split("# YOUR CODE HERE")[0].count("\n") > 1
        assert named or buggy, gid


@pytest.fixture(scope="module")
def mutants(tmp_path_factory):
    return grade_mutants(tmp_path_factory.mktemp("mutants"))


@pytest.fixture(scope="module")
def reference(mutants):
    return {**mutants["_reference"], "_warnings": mutants["_warnings"]}


def _checks(report: dict) -> dict:
    return {k: v for k, v in report.items() if not k.startswith("_")}


def test_reference_earns_every_point(reference):
    assert reference["_cell_errors"] == {}
    failed = {k: v["message"] for k, v in _checks(reference).items() if not v["passed"]}
    assert failed == {}
    assert sum(v["points"] for v in _checks(reference).values()) == sum(
        c.points for c in ASSIGNMENT.checks)


def test_no_deprecation_warnings(reference, mutants):
    for report in (reference, mutants):
        assert not [w for w in report["_warnings"] if "DeprecationWarning" in w]


def test_untouched_notebook_earns_nothing(tmp_path):
    report = grade_notebook(build_notebook(untouched=True), tmp_path)
    assert [k for k, v in _checks(report).items() if v["passed"]] == []
    # Every visible test fails: through the stub's NotImplementedError, or an assertion on the
    # buggy code the stub keeps.
    failed_tests = {gid for gid in report["_cell_errors"] if gid.startswith("test_")}
    assert failed_tests == {c.grade_cell for c in ASSIGNMENT.checks}
    assert set(report["_cell_errors"].values()) <= {"NotImplementedError", "AssertionError"}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_each_mutant_loses_points_on_its_task(mutants, name):
    _, fills = MUTANTS[name]
    tasks = {f"ps3.{gid}" for gid in fills}
    report = _checks(mutants[name])
    assert report and {v["task"] for v in report.values()} == tasks
    lost = {k: v for k, v in report.items() if not v["passed"]}
    assert lost, f"{name} earned every point of {tasks}"
    for check in lost.values():
        assert check["message"], check


@pytest.mark.parametrize("name", sorted(ALTERNATIVES))
def test_each_alternative_correct_fix_earns_every_point(mutants, name):
    report = _checks(mutants[name])
    assert report and all(v["passed"] for v in report.values()), report
    assert mutants[name]["_cell_errors"] == {}  # its visible test passes too


def test_a_demo_mutant_graded_whole_matches_the_shortcut(mutants, tmp_path):
    name = DEMO[-1]
    report = _checks(grade_notebook(build_notebook(MUTANTS[name][1]), tmp_path))
    lost = {k for k, v in report.items() if not v["passed"]}
    assert lost == {k for k, v in _checks(mutants[name]).items() if not v["passed"]}


if __name__ == "__main__":
    _run(*sys.argv[1:])
