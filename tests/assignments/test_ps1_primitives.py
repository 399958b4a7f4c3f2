"""ps1_primitives: the reference earns every point, the untouched notebook none, every realistic
wrong solution loses points on its own task and on no other (with feedback that names the rule),
and every correct solution written differently earns every point and passes every visible test.

The class a grade must be trusted on (reference, untouched, partial, correct alternatives and
cheats, and three wrong solutions that hold the shortcut below to it) is graded once by the real
command, ``python -m autograder grade ... --seed 0``, in a module fixture (``PS1_GRADED=OUT`` reuses the results of such a run on the same class instead).
The wrong solutions are graded by the same checks in process, two subprocesses at a time
(tests/assignments/variants.py), as ps4 and ps5's are: a third of the time the sandbox takes
for them. ``scripts/mutant_scores.py ps1_primitives`` grades them by the real command.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import nbformat
import pytest

from autograder import release
from autograder.assignments.ps1_primitives import probes
from autograder.assignments.ps1_primitives.checks import ASSIGNMENT
from autograder.assignments.ps1_primitives.mutants import CORRECT, MUTANTS, PARTIAL, TASK
from autograder.classroom import make_submission, solution_sources

ROOT = Path(__file__).resolve().parents[2]
NAME = "ps1_primitives"
TASK_OF_CHECK = {check.id: check.task for check in ASSIGNMENT.checks}
GPU_CHECKS = {check.id for check in ASSIGNMENT.checks if check.needs_gpu}
# How each rule is called in the checks' messages and blame.
RULE = {
    "ps1.impl": "impl rule",
    "ps1.abstract_eval": "abstract evaluation rule",
    "ps1.lowering": "lowering rule",
    "ps1.jvp": "JVP rule",
    "ps1.transpose": "transpose rule",
    "ps1.batch": "batching rule",
}

# Submissions that write no working rule of a task but try to earn its points:
# {name: ({grade_id: source} on top of the untouched notebook, tasks that must earn nothing)}.
JNP_JVP = '''
def weighted_sum_value_and_jvp(primals, tangents, *, axis):
    x, w = primals
    xt, wt = (ad.instantiate_zeros(t) for t in tangents)
    out = weighted_sum(x, w, axis=axis)
    return out, (jnp.tensordot(xt, w, axes=([axis], [0]))
                 + jnp.tensordot(x, wt, axes=([axis], [0])))


ad.primitive_jvps[weighted_sum_p] = weighted_sum_value_and_jvp
'''
CHEATS = {
    # weighted_sum rewritten with jax.numpy: every transformation "works" without any rule.
    "cheat_jnp_function": ({"batch": '''
def weighted_sum(x, w, *, axis):
    return jnp.tensordot(x, w, axes=([axis], [0]))
'''}, set(RULE)),
    # bind patched on the primitive object.
    "cheat_patched_bind": ({"batch": '''
weighted_sum_p.bind = lambda x, w, *, axis: jnp.tensordot(x, w, axes=([axis], [0]))
'''}, set(RULE)),
    # "rejects ill-formed operands" by rejecting everything.
    "cheat_always_type_error": ({"abstract_eval": '''
def weighted_sum_abstract_eval(x, w, *, axis):
    raise TypeError("no")


weighted_sum_p.def_abstract_eval(weighted_sum_abstract_eval)
'''}, set(RULE)),
    # The case: a JVP written with jax.numpy, transpose and batching rules left undone.
    # JAX then transposes and batches jnp itself; none of that may count for those two rules.
    "cheat_jnp_jvp_only": (None, {"ps1.transpose", "ps1.batch"}),
}


def _cheat_cells(name: str) -> dict[str, str]:
    cells, _ = CHEATS[name]
    if cells is not None:
        return cells
    solutions = solution_sources(NAME, root=ROOT)
    return {**{k: solutions[k] for k in ("impl", "abstract_eval", "lowering")}, "jvp": JNP_JVP}


# Wrong solutions graded by the real command too, to hold the in-process shortcut to it. The
# wrong lowering makes every jitted run of the JVP, transpose and batching checks wrong: they
# pass only through the check's retry, the eager run (autograder.runner's second request).
WHOLE = ("jvp_drops_w_term", "batch_assumes_axis0", "lowering_contracts_first_axis")


def submissions() -> dict[str, nbformat.NotebookNode]:
    solutions = solution_sources(NAME, root=ROOT)
    class_ = {
        "reference": make_submission(NAME, solutions, root=ROOT),
        "untouched": make_submission(NAME, {}, root=ROOT),
        "partial": make_submission(NAME, {k: solutions[k] for k in PARTIAL}, root=ROOT),
    }
    for name, (_, cells) in {**CORRECT, **{m: MUTANTS[m] for m in WHOLE}}.items():
        class_[name] = make_submission(NAME, {**solutions, **cells}, root=ROOT)
    for name in CHEATS:
        class_[name] = make_submission(NAME, _cheat_cells(name), root=ROOT)
    return class_


def lost_by_task(result: dict) -> dict[str, float]:
    lost: dict[str, float] = defaultdict(float)
    for test in result["tests"]:
        if test["status"] in ("failed", "error"):
            lost[TASK_OF_CHECK[test["name"].split(":")[0]]] += test["max_points"]
    return dict(lost)


def _reuse(path: str) -> dict[str, dict] | None:
    """Results of an earlier run of the same command on exactly ``submissions()`` (the folder
    ``--out`` named), so a class graded once can be asserted on again without regrading it."""
    results = {p.stem: json.loads(p.read_text()) for p in Path(path).glob("results/*.json")}
    wanted = set(submissions())
    return {k: v for k, v in results.items() if k in wanted} if wanted <= set(results) else None


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict[str, dict]:
    if os.environ.get("PS1_GRADED") and (reused := _reuse(os.environ["PS1_GRADED"])):
        return reused
    work = tmp_path_factory.mktemp("ps1")
    submitted = work / "submitted"
    for student, nb in submissions().items():
        path = submitted / student / NAME / f"{NAME}.ipynb"
        path.parent.mkdir(parents=True)
        nbformat.write(nb, path)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    run = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", NAME, str(submitted), "--out",
         str(work / "out"), "--seed", "0", "--workers", "2", "--no-progress",
         "--db", f"sqlite:///{work / 'gradebook.db'}"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=3000, check=False)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    results = {p.stem: json.loads(p.read_text()) for p in (work / "out" / "results").glob("*.json")}
    # The record the course notes quote: score and points lost per task, per submission.
    summary = {name: {"score": r["score"], "max_score": r["max_score"], "lost": lost_by_task(r)}
               for name, r in sorted(results.items())}
    (work / "summary.json").write_text(json.dumps(summary, indent=1))
    print(f"\nps1 class graded: {work / 'summary.json'}\n{run.stdout}")
    return results


def _status(result: dict) -> dict[str, str]:
    return {t["name"].split(":")[0]: t["status"] for t in result["tests"]}


def _assert_full_marks(result: dict) -> None:
    for test in result["tests"]:
        check_id = test["name"].split(":")[0]
        expected = {"passed", "not-run"} if check_id in GPU_CHECKS else {"passed"}
        assert test["status"] in expected, (check_id, test["message"])
    assert result["score"] == result["max_score"] > 0


def test_reference_earns_every_point(graded):
    _assert_full_marks(graded["reference"])


@pytest.mark.parametrize("name", sorted(CORRECT))
def test_correct_alternative_earns_every_point(graded, name):
    _assert_full_marks(graded[name])


def test_untouched_earns_nothing(graded):
    result = graded["untouched"]
    assert result["score"] == 0
    for test in result["tests"]:
        if test["status"] != "not-run":
            assert test["status"] == "failed" and "NotImplementedError" in test["message"], test


def test_partial_earns_its_tasks_only(graded):
    done = {f"ps1.{grade_id}" for grade_id in PARTIAL}
    for check_id, status in _status(graded["partial"]).items():
        if TASK_OF_CHECK[check_id] in done:
            assert status in ("passed", "not-run"), check_id
        else:
            assert status == "failed", check_id


@pytest.mark.parametrize("cheat", sorted(CHEATS))
def test_cheats_earn_nothing_for_the_rules_they_skip(graded, cheat):
    _, tasks = CHEATS[cheat]
    for test in graded[cheat]["tests"]:
        if TASK_OF_CHECK[test["name"].split(":")[0]] in tasks:
            assert test["points"] == 0, (cheat, test["name"])


@pytest.fixture(scope="module")
def mutants_graded() -> dict[str, dict]:
    """Each mutant's per-check verdicts, graded in process (tests/assignments/variants.py)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH",
                                                                                  "")]))
    names = sorted(MUTANTS)
    running = [subprocess.Popen(
        [sys.executable, "-W", "error::DeprecationWarning",
         str(ROOT / "tests" / "assignments" / "variants.py"), "--assignment", NAME,
         *names[i::2]], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        cwd=ROOT) for i in range(2)]
    found = {}
    for proc in running:
        out, err = proc.communicate(timeout=1500)
        assert proc.returncode == 0, err[-3000:]
        found.update(json.loads(out))
    return found


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_mutant_loses_points_on_its_own_task_only(mutants_graded, mutant):
    result = mutants_graded[mutant]
    task = TASK[mutant]
    lost = {c["task"] for c in result["checks"] if not c["passed"]}
    # The lowering checks pin the result's abstract value (and empty JAX's abstract-value
    # cache around the pin), so a wrong abstract evaluation rule costs abstract_eval points only.
    assert lost == {task}, [(c["id"], c["message"]) for c in result["checks"] if not c["passed"]]
    for check in result["checks"]:
        if not check["passed"]:  # the feedback says what went wrong, and in which rule
            assert check["message"] and RULE[task] in check["blame"], check


def test_the_real_command_and_the_shortcut_agree_on_wrong_solutions(graded, mutants_graded):
    """Two wrong solutions are also in the real command's class: the sandboxed run and the
    in-process shortcut take their points on the same task, and the real feedback names it."""
    for mutant in WHOLE:
        task = TASK[mutant]
        in_process = {c["task"] for c in mutants_graded[mutant]["checks"] if not c["passed"]}
        assert set(lost_by_task(graded[mutant])) == in_process == {task}, mutant
        for test in graded[mutant]["tests"]:
            if test["status"] == "failed":
                assert test["message"].startswith(f"[{task}]"), test
                assert RULE[task] in test["message"], test


def test_at_least_thirty_mutants_over_every_task_and_eight_alternatives():
    assert len(MUTANTS) >= 30 and len(CORRECT) >= 8
    assert set(TASK.values()) == {t.id for t in ASSIGNMENT.tasks}
    solutions = solution_sources(NAME, root=ROOT)
    for name, (description, cells) in {**MUTANTS, **CORRECT}.items():
        assert description and set(cells) <= set(solutions), name
        for grade_id, source in cells.items():
            assert source.strip() != solutions[grade_id].strip(), name


def _visible_failures(nb: nbformat.NotebookNode) -> list[str]:
    """Run every cell, visible tests included, as a student does; the cells that raised."""
    ns: dict = {"__name__": "__main__"}
    failures = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        try:
            exec(compile(cell.source, f"<cell {index}>", "exec"), ns)  # noqa: S102 - our notebooks
        except Exception as err:  # noqa: BLE001 - any failure is the answer
            failures.append(f"cell {index}: {type(err).__name__}: {err}")
    return failures


@pytest.mark.parametrize("name", ["reference", *sorted(CORRECT)])
def test_correct_solutions_pass_every_visible_test(name):
    solutions = solution_sources(NAME, root=ROOT)
    cells = {} if name == "reference" else CORRECT[name][1]
    assert _visible_failures(make_submission(NAME, {**solutions, **cells}, root=ROOT)) == []


def test_points_add_up_to_the_test_cells():
    nb = nbformat.read(release.release_path(NAME, root=ROOT), as_version=4)
    cells = {c.metadata["nbgrader"]["grade_id"]: c.metadata["nbgrader"]
             for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")}
    points: dict[str, float] = defaultdict(float)
    for check in ASSIGNMENT.checks:
        points[check.grade_cell] += check.points
    assert {k: v["points"] for k, v in cells.items()} == dict(points)
    assert len({check.id for check in ASSIGNMENT.checks}) == len(ASSIGNMENT.checks)
    assert {check.task for check in ASSIGNMENT.checks} == {t.id for t in ASSIGNMENT.tasks}
    for check in ASSIGNMENT.checks:
        assert callable(getattr(probes, check.probe)), check.probe
    assert ASSIGNMENT.extra["own_primitives"] == ("weighted_sum",)


def test_every_released_cell_parses_and_each_stub_names_its_task():
    nb = nbformat.read(release.release_path(NAME, root=ROOT), as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            ast.parse(cell.source)
    stubs = {c.metadata["nbgrader"]["grade_id"]: c.source
             for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")}
    assert {f"ps1.{grade_id}" for grade_id in stubs} == {t.id for t in ASSIGNMENT.tasks}
    for grade_id, source in stubs.items():
        assert f"# ps1.{grade_id}: " in source
        assert f'raise NotImplementedError("ps1.{grade_id}: ' in source


def test_release_is_not_stale():
    assert release.stale(NAME, root=ROOT) == []


def test_stale_catches_leaks_and_edits(tmp_path):
    # A copy of the course whose student notebook was edited by hand and leaks a solution line.
    (tmp_path / "solutions").symlink_to(ROOT / "solutions")
    (tmp_path / "nbgrader_config.py").symlink_to(ROOT / "nbgrader_config.py")
    target = release.release_path(NAME, root=tmp_path)
    target.parent.mkdir(parents=True)
    nb = nbformat.read(release.release_path(NAME, root=ROOT), as_version=4)
    impl = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "impl")
    impl.source = impl.source.replace("# YOUR CODE HERE", "x, w = np.asarray(x), np.asarray(w)")
    nbformat.write(nb, target)
    problems = release.stale(NAME, root=tmp_path)
    assert any("out of date" in p for p in problems)
    assert any("solution or hidden-test code" in p for p in problems)
