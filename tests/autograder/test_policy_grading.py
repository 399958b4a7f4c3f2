"""The cell policy through the real command (toy course, policy on): a refused cell is not run,
its task earns what a missing answer earns, the feedback names line and rule, and the hostile
cells that test the walls (tests/fixtures/hostile.py) are stopped before they run."""

from __future__ import annotations

import html

import hostile
import pytest
from engine_helpers import grade_command, read_grades, read_result

DUNDER_IMPL = """\
# toy.impl
def square_impl(x):
    return x.__mul__(x)


square_p.def_impl(square_impl)
"""
# Refused before running: (added cell, the refusal the feedback must show).
REFUSED = {
    "refused_patch_jax": (hostile.PATCH_JAX, "line 1: import of &#x27;sys&#x27; is not allowed"),
    "refused_input_transformer": (hostile.INPUT_TRANSFORMER,
                                  "line 2: name &#x27;get_ipython&#x27; is not allowed"),
    "refused_run_cell": (hostile.RUN_CELL_OVERRIDE, "line 1: name &#x27;get_ipython&#x27;"),
    "refused_os_exit": (hostile.OS_EXIT, "line 1: import of &#x27;os&#x27; is not allowed"),
    "refused_snoop": (hostile.snoop(["/"]), "line 1: import of &#x27;os&#x27; is not allowed"),
    "refused_forgery": (hostile.CHANNEL_FORGERY, "line 1: import of &#x27;os&#x27;"),
    "refused_network": (hostile.NETWORK, "line 1: import of &#x27;socket&#x27; is not allowed"),
}


@pytest.fixture(scope="module")
def policy_on():
    """The shared options turn the policy off for the walls' tests; here it is on."""
    import engine_helpers

    saved = engine_helpers.GRADE_OPTIONS
    engine_helpers.GRADE_OPTIONS = tuple(o for o in saved if o != "--no-cell-policy")
    yield
    engine_helpers.GRADE_OPTIONS = saved


@pytest.fixture(scope="module")
def graded(tmp_path_factory, policy_on):
    base = tmp_path_factory.mktemp("policy")
    cases = {
        "full": (hostile.submission(hostile.FULL), 5),
        "no_impl": (hostile.submission({"abstract": True, "jvp": True}), None),
        "refused_impl": (hostile.submission(dict(hostile.FULL, impl=DUNDER_IMPL)), None),
        "runtime_patch_numpy": (hostile.submission(hostile.FULL,
                                                   extra={"end": [hostile.PATCH_NUMPY]}), 5),
    }
    for student, (cell, _) in REFUSED.items():
        cases[student] = (hostile.submission(hostile.FULL, extra={"start": [cell]}), 5)
    submitted = hostile.write_class(base / "submitted", cases)
    out = base / "out"
    proc = grade_command(submitted, out)
    return {"proc": proc, "out": out, "cases": cases}


def test_run_completes(graded):
    assert graded["proc"].returncode == 0, graded["proc"].stderr[-3000:]
    assert set(read_grades(graded["out"])) == set(graded["cases"])


def test_refused_task_earns_what_a_missing_answer_earns(graded):
    grades = read_grades(graded["out"])
    assert float(grades["full"]["score"]) == 5.0
    assert grades["refused_impl"]["score"] == grades["no_impl"]["score"]
    assert float(grades["refused_impl"]["score"]) < 5.0
    result = read_result(graded["out"], "refused_impl")
    impl = [t for t in result["tests"] if t["name"].startswith("toy.impl")]
    assert impl and all(t["points"] == 0 for t in impl)
    for test in (t for t in impl if t["status"] == "failed"):
        # The cause first (issue 30: it came after the NotImplementedError it causes).
        assert test["message"].startswith(
            "[toy.impl] Your cell for this task was not run: line 3: attribute '__mul__' is not "
            "allowed (names starting with '_'). What the check then saw: "), test


def test_feedback_names_line_and_rule(graded):
    text = (graded["out"] / "feedback" / "refused_impl.html").read_text()
    assert ("not run: refused by the cell policy: line 3: attribute &#x27;__mul__&#x27; is not "
            "allowed (names starting with &#x27;_&#x27;)") in text


@pytest.mark.parametrize("student", sorted(REFUSED))
def test_hostile_cells_are_refused_and_cost_nothing_else(graded, student):
    assert float(read_grades(graded["out"])[student]["score"]) == 5.0
    text = (graded["out"] / "feedback" / f"{student}.html").read_text()
    assert "refused by the cell policy: " + REFUSED[student][1] in text


def test_runtime_guard_error_is_the_cells_error(graded):
    text = html.unescape((graded["out"] / "feedback" / "runtime_patch_numpy.html").read_text())
    assert "PolicyError: changing module 'numpy' is not allowed" in text
    assert "restored before grading" not in text  # nothing was patched


def test_isolation_names_the_seccomp_filter(graded):
    assert "seccomp filter" in graded["proc"].stdout


def test_a_blame_after_a_full_stop_starts_with_a_capital_unless_it_is_code():
    """Issue 30: "... first at ()). the JVP rule ... is at fault"."""
    from autograder.worker.runner import _sentence

    assert _sentence("the JVP rule (weighted_sum_value_and_jvp) is at fault") == \
        "The JVP rule (weighted_sum_value_and_jvp) is at fault"
    for code in ("div_jvp: the tangent of x / y", "exp_jvp or log_jvp returns", "jnp.sum is",
                 "Normaliser: a static self", ""):
        assert _sentence(code) == code
