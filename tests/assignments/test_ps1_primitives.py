"""ps1_primitives: the reference earns every point, the untouched notebook none, and every
realistic wrong solution loses points on the rule at fault, with feedback that names it."""

from __future__ import annotations

import json
from collections import defaultdict

import nbformat
import pytest
from grade_inprocess import ROOT, grade_notebooks, write

from autograder import release
from autograder.assignments.ps1_primitives import probes
from autograder.assignments.ps1_primitives.checks import ASSIGNMENT
from autograder.assignments.ps1_primitives.mutants import MUTANTS, PARTIAL, TASK
from autograder.classroom import make_submission, mutant_submission, solution_sources

NAME = "ps1_primitives"
# How each rule is called in the checks' blame and hints.
RULE = {
    "ps1.impl": "impl rule",
    "ps1.abstract_eval": "abstract evaluation rule",
    "ps1.lowering": "lowering rule",
    "ps1.jvp": "JVP rule",
    "ps1.transpose": "transpose rule",
    "ps1.batch": "batching rule",
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict[str, dict]:
    out = tmp_path_factory.mktemp("ps1")
    solutions = solution_sources(NAME, root=ROOT)
    notebooks = [
        write(make_submission(NAME, solutions, root=ROOT), out / "reference.ipynb"),
        write(make_submission(NAME, {}, root=ROOT), out / "untouched.ipynb"),
        write(make_submission(NAME, {k: solutions[k] for k in PARTIAL}, root=ROOT),
              out / "partial.ipynb"),
    ]
    notebooks += [write(mutant_submission(NAME, m, root=ROOT), out / f"{m}.ipynb")
                  for m in MUTANTS]
    notebooks += [write(cheat, out / f"{name}.ipynb") for name, cheat in cheats().items()]
    results = grade_notebooks(NAME, notebooks)
    # The per-mutant record the course notes quote: points lost, per task, and what was said.
    summary = {name: lost_by_task(result) for name, result in results.items()}
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps(summary, indent=1))
    return results


# Submissions that write no working rule but try to look right: {name: {grade_id: source}}.
CHEATS = {
    # multiply_add computed with jax.numpy, so every transformation "works" without the primitive.
    "cheat_jnp_prim": {"batch": """
def multiply_add_prim(x, y, z):
    return jnp.asarray(x) * y + z


def square_add_prim(a, b):
    return multiply_add_prim(a, a, b)
"""},
    # bind itself patched on the primitive object.
    "cheat_patched_bind": {"batch": """
multiply_add_p.bind = lambda x, y, z: jnp.asarray(x) * y + z
"""},
    # "rejects mismatched operands" by rejecting everything.
    "cheat_always_type_error": {"abstract_eval": """
def multiply_add_abstract_eval(x, y, z):
    raise TypeError("no")


multiply_add_p.def_abstract_eval(multiply_add_abstract_eval)
"""},
}


def cheats() -> dict[str, nbformat.NotebookNode]:
    """Each cheat on top of the untouched notebook: every other rule is left a stub."""
    return {name: make_submission(NAME, cells, root=ROOT) for name, cells in CHEATS.items()}


def lost_by_task(result: dict) -> dict[str, float]:
    lost = defaultdict(float)
    for check in result["checks"]:
        if check["status"] == "failed":
            lost[check["task"]] += check["max_points"]
    return dict(lost)


def test_reference_earns_every_point(graded):
    result = graded["reference"]
    assert result["cell_errors"] == []
    for check in result["checks"]:
        expected = "not-run" if check["id"] == "ps1.lowering.gpu" else "passed"
        assert check["status"] in (expected, "passed"), (check["id"], check["message"])


def test_untouched_earns_nothing(graded):
    result = graded["untouched"]
    assert result["cell_errors"] == []
    assert sum(check["points"] for check in result["checks"]) == 0
    for check in result["checks"]:
        if check["status"] != "not-run":
            assert "NotImplementedError" in check["message"], check


@pytest.mark.parametrize("cheat", sorted(CHEATS))
def test_cheats_earn_nothing(graded, cheat):
    assert sum(check["points"] for check in graded[cheat]["checks"]) == 0


def test_partial_earns_its_tasks_only(graded):
    done = {f"ps1.{grade_id}" for grade_id in PARTIAL}
    for check in graded["partial"]["checks"]:
        if check["task"] in done:
            assert check["status"] in ("passed", "not-run"), check
        else:
            assert check["points"] == 0, check


def test_no_deprecation_warnings(graded):
    for name, result in graded.items():
        assert not [w for w in result["warnings"] if "Deprecat" in w], (name, result["warnings"])


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_mutant_loses_points_on_the_rule_at_fault(graded, mutant):
    result = graded[mutant]
    task = TASK[mutant]
    assert result["cell_errors"] == []
    assert lost_by_task(result).get(task, 0) > 0, f"{mutant} loses nothing on {task}"
    for check in result["checks"]:
        if check["status"] != "failed":
            continue
        said = f"{check['message']} {check['blame']}"
        if check["task"] == task:
            assert RULE[task] in said, (check["id"], said)
        else:
            # Points lost elsewhere follow from this rule, and the feedback says so.
            assert task in check["message"], (check["id"], said)


def test_every_mutant_is_a_plausible_edit(graded):
    solutions = solution_sources(NAME, root=ROOT)
    for name, (description, cells) in MUTANTS.items():
        assert description and set(cells) <= set(solutions), name
        for grade_id, source in cells.items():
            assert source.strip() != solutions[grade_id].strip(), name


def test_points_add_up_to_the_test_cells():
    nb = nbformat.read(release.release_path(NAME, root=ROOT), as_version=4)
    cells = {c.metadata["nbgrader"]["grade_id"]: c.metadata["nbgrader"]
             for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")}
    points = defaultdict(float)
    for check in ASSIGNMENT.checks:
        points[check.grade_cell] += check.points
    assert {k: v["points"] for k, v in cells.items()} == dict(points)
    assert len({check.id for check in ASSIGNMENT.checks}) == len(ASSIGNMENT.checks)
    assert {check.task for check in ASSIGNMENT.checks} == {t.id for t in ASSIGNMENT.tasks}
    for check in ASSIGNMENT.checks:
        assert callable(getattr(probes, check.probe)), check.probe
    assert ASSIGNMENT.extra["own_primitives"] == ("multiply_add",)


def test_each_stub_names_its_task():
    nb = nbformat.read(release.release_path(NAME, root=ROOT), as_version=4)
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
    impl.source = impl.source.replace("# YOUR CODE HERE", "return np.add(np.multiply(x, y), z)")
    nbformat.write(nb, target)
    problems = release.stale(NAME, root=tmp_path)
    assert any("out of date" in p for p in problems)
    assert any("solution or hidden-test code" in p for p in problems)
