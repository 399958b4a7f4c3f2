"""The markers tests/conftest.py gives each test (`-m ps1`, `-m "ps1 and jvp"`, `-m "not slow"`):
the tiers registered in pyproject.toml, every assignment and task of the registry
(autograder.assignments.REGISTRY) by tests/conftest.py, and found from a test's path, name and
parameters."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from autograder.assignments import REGISTRY, contract

ROOT = Path(__file__).resolve().parents[1]
TIERS = {"slow", "book", "browser", "stability"}


@pytest.fixture(scope="module")
def conftest(request):
    path = Path(__file__).with_name("conftest.py")
    return next(p for p in request.config.pluginmanager.get_plugins()
                if getattr(p, "__file__", None) and Path(p.__file__) == path)


def test_pyproject_lists_only_the_tiers():
    """No assignment is named there: one missing line stopped every pytest run (INTERNALERROR)."""
    ini = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert "--strict-markers" in ini["addopts"]
    assert {line.split(":", 1)[0].strip() for line in ini["markers"]} == TIERS


def test_every_assignment_and_task_of_the_registry_has_a_registered_marker(request, conftest):
    assert sorted(conftest.assignments().values()) == sorted(REGISTRY)
    for marker, name in conftest.assignments().items():
        # The marker is the prefix of the assignment's task ids.
        assert {t.id.split(".", 1)[0] for t in contract(name).tasks} == {marker}, name
        conftest._register_tasks(request.config, marker)
    registered = {line.split(":", 1)[0].strip() for line in request.config.getini("markers")}
    every = [t for a in conftest.assignments() for t in conftest.tasks(a)]
    assert set(conftest.assignments()) | set(every) | TIERS <= registered
    # A task marker names one task: `-m "ps1 and jvp"` never picks another assignment's task.
    assert len(every) == len(set(every))


A = "tests/assignments/"


CASES = [
    (A + "test_ps1_primitives.py", "test_own_task_only[jvp_drops_w_term]", {"ps1", "jvp"}),
    (A + "test_ps1_primitives.py", "test_abstract_eval_drops_the_axis", {"ps1", "abstract_eval"}),
    # An alternative of the lowering rule, whose name also says `transpose`: its own task only.
    (A + "test_ps1_primitives.py", "test_alternative[lowering_transpose_then_dot]",
     {"ps1", "lowering"}),
    # Wrong solutions named otherwise than their task: the mutants module says which.
    (A + "test_ps2_autodidax.py", "test_own_task[exp_jvp_forgets_dx]", {"ps2", "jvp_rules"}),
    (A + "test_ps4_core_reproducers.py", "test_snippet_raises[wrong_bt_ignores_stretching]",
     {"ps4", "broadcast_transpose"}),
    ("tests/contract/test_contract.py", "test_wrong[ps3_pitfalls-bench_adds_start]",
     {"ps3", "benchmark"}),
    # The toy is in the registry only (tests/conftest.py): marked as the course's assignments are.
    ("tests/contract/test_contract.py",
     "test_wrong_solution_loses_points_on_its_task_only[toy_double-sumsq_as_a_dot_product]",
     {"toy", "sumsq"}),
    ("tests/autograder/test_banned_calls.py", "test_refused[ps1.jvp]", {"ps1", "jvp"}),
    ("tests/autograder/test_grading_inputs.py", "test_x[ps5.grad.values]", {"ps5", "grad"}),
    ("tests/test_demo_classes.py", "test_results_json[ps4_core]", {"ps4"}),
    ("tests/autograder/test_policy.py", "test_grading_of_ps10", set()),
    ("tests/autograder/test_time_limits.py", "test_a_slow_machine[looping_rule]", set()),
]


# Ids without the cases' text, which would give these tests the markers they check.
@pytest.mark.parametrize(("path", "test", "expected"), CASES,
                         ids=[f"case{i}" for i in range(len(CASES))])
def test_markers_come_from_path_name_and_parameters(conftest, path, test, expected):
    assert conftest.markers_of(f"{path}::{test}") == expected


def test_this_session_marks_what_it_collected(request, conftest):
    """Every test of this run that waits for a class grading or reads the built book is `slow`;
    the demo classes' users are given the demo's limit on top of their own."""
    for item in request.session.items:
        names = {m.name for m in item.iter_markers()}
        if set(item.fixturenames) & set(conftest.SLOW_FIXTURES) or {"book", "browser"} & names:
            assert "slow" in names, item.nodeid
        if "demo_out" in item.fixturenames:
            assert item.get_closest_marker("timeout").args[0] >= conftest.DEMO_LIMIT_S
    me = request.node
    assert {"slow", "ps1"}.isdisjoint(m.name for m in me.iter_markers())
