"""The helpers every assignment's probes and judges share (autograder.student.probe_helpers, the case
matrix of autograder.worker.judge), and the guard's watch over the probe side.

``own()`` is asked about objects made the way a notebook makes them: cells run as ``__main__``.
"""

from __future__ import annotations

import importlib
import math
import sys

import jax.numpy as jnp
import numpy as np
import pytest

from autograder.spec import Outcome
from autograder.student import probe_helpers
from autograder.student.guard import Guard
from autograder.student.probe_helpers import each_case, own
from autograder.worker import judge
from jaxcourse.autodidax import jvp as course_jvp

NOTEBOOK = '''
import functools
import jax
import jax.numpy as jnp


def rule(x):
    return x


class Rule:
    def __call__(self, x):
        return x

    def method(self, x):
        return x


@functools.wraps(jnp.sum)
def dressed(x):
    return x


plain, lam, instance, bound = rule, lambda x: x, Rule(), Rule().method
jitted, vmapped, custom = jax.jit(rule), jax.vmap(rule), jax.custom_vjp(rule)
partial, jitted_partial = functools.partial(rule, 1), jax.jit(functools.partial(rule))
cached = functools.lru_cache(rule)
jnp_sum, jnp_partial, jnp_jitted = jnp.sum, functools.partial(jnp.sum, axis=0), jax.jit(jnp.sum)
np_exp, math_exp, builtin, number, array = np.exp, math.exp, sorted, 3, np.float64(1.0)
'''


@pytest.fixture(scope="module")
def ns():
    namespace = {"__name__": "__main__", "np": np, "math": math}
    exec(compile(NOTEBOOK, "<cell>", "exec"), namespace)  # noqa: S102 - plays the notebook
    namespace["course_rule"] = course_jvp.jvp_rules[next(iter(course_jvp.jvp_rules))]
    return namespace


@pytest.mark.parametrize("name", ["plain", "lam", "instance", "bound", "jitted", "vmapped",
                                  "custom", "partial", "jitted_partial", "cached"])
def test_own_takes_what_the_notebook_wrote(ns, name):
    assert own(ns, name) is ns[name]


@pytest.mark.parametrize(("name", "module"), [
    ("jnp_sum", "jax."), ("jnp_partial", "jax."), ("jnp_jitted", "jax."), ("dressed", "jax."),
    ("course_rule", "jaxcourse."), ("np_exp", "numpy"), ("math_exp", "math"),
    ("builtin", "builtins")])
def test_own_refuses_what_the_notebook_imported(ns, name, module):
    with pytest.raises(ImportError, match=f"^{name} comes from {module}.*not from your notebook"):
        own(ns, name)


def test_own_names_what_is_missing_or_not_a_function(ns):
    with pytest.raises(NameError, match="^nothing is not defined$"):
        own(ns, "nothing")
    for name in ("number", "array"):
        with pytest.raises(TypeError, match=f"^{name} is not a function$"):
            own(ns, name)


def test_own_refuses_the_grader_and_a_wrapper_without_end(ns):
    with pytest.raises(ImportError, match="comes from autograder.student.probe_helpers"):
        own({**ns, "f": probe_helpers.own}, "f")

    class Endless:
        """Wraps itself, every time anew."""
        __module__ = "__main__"

        @property
        def __wrapped__(self):
            return Endless()

        def __call__(self):
            return None

    with pytest.raises(ImportError, match="wrapped too many times"):
        own({"f": Endless()}, "f")


def test_module_of_looks_through_partials(ns):
    assert probe_helpers.module_of(ns["partial"]) == "__main__"
    assert probe_helpers.module_of(ns["jnp_partial"]).startswith("jax.")
    assert probe_helpers.module_of(3) == ""


def _probe_double(ns, inputs):
    """Doubles x."""
    return inputs["x"] * 2


def test_each_case_runs_the_probe_on_every_case():
    probe = each_case(_probe_double)
    assert (probe.__name__, probe.__module__, probe.__doc__) == (
        "_probe_double", __name__, "Doubles x.")
    assert probe({}, {"x": 1, "cases": [{"x": 2}, {"x": 3}]}) == {"cases": [4, 6]}
    assert probe({}, {"x": 5}) == 10  # one case, as a reproducer asks


def _expect_double(inputs):
    return np.asarray(inputs["x"] * 2.0)


CASES = {"cases": [{"case": "small", "x": 1.0}, {"case": "large", "x": 1e6}]}


def test_expect_each_names_every_case():
    expected = judge.expect_each(_expect_double)(CASES)
    assert expected["names"] == ["small", "large"]
    assert [float(e) for e in expected["cases"]] == [2.0, 2e6]
    assert float(judge.expect_each(_expect_double)({"x": 4.0})) == 8.0
    named = judge.expect_each(_expect_double, lambda case: case["case"].upper())(CASES)
    assert named["names"] == ["SMALL", "LARGE"]


def test_judge_each_fails_on_the_first_wrong_case():
    expected = judge.expect_each(_expect_double)(CASES)
    right = Outcome(value={"cases": [np.asarray(2.0), np.asarray(2e6)]})
    wrong = Outcome(value={"cases": [np.asarray(2.0), np.asarray(3.0)]})
    assert judge.judge_each(judge.close)(expected, right).passed
    verdict = judge.judge_each(judge.close)(expected, wrong)
    assert (verdict.passed, verdict.message) == (
        False, "large: result: wrong values (1 of 1 entries, first at ())")
    numbered = judge.judge_each(judge.close, failure="case {number} of {count} ({name}): "
                                                     "{message}")(expected, wrong)
    assert numbered.message.startswith("case 2 of 2 (large): result: wrong values")


def test_judge_each_refuses_a_missing_case_and_passes_on_a_raise():
    expected = judge.expect_each(_expect_double)(CASES)
    short = judge.judge_each(judge.close)(expected, Outcome(value={"cases": [2.0]}))
    assert short.message == "the probe did not return a result for every input class"
    listed = judge.judge_each(judge.close)(expected, Outcome(value=[2.0, 2e6]))
    assert not listed.passed
    raised = judge.judge_each(judge.close)(expected, Outcome(raised="KeyError", message="'x'"))
    assert raised.message == "raised KeyError: 'x'"
    single = judge.judge_each(judge.close)(np.asarray(8.0), Outcome(value=np.asarray(8.0)))
    assert single.passed


# --- the guard watches the helpers like the probes -------------------------------------------
PROBES = '''
from autograder.student.probe_helpers import each_case, own


def _probe_value(ns, inputs):
    return own(ns, "f")


probe_value = each_case(_probe_value)
'''


@pytest.fixture()
def probes(tmp_path, monkeypatch):
    (tmp_path / "helped_probes.py").write_text(PROBES)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("helped_probes")
    yield module
    sys.modules.pop("helped_probes", None)


def test_the_guard_lists_the_helpers_and_sees_them_rebound(probes):
    guard = Guard((), extra_modules=("helped_probes",))
    assert guard.restore() == []
    real = probe_helpers.own
    probe_helpers.own = lambda ns, name: ns[name]
    probes.own = lambda ns, name: ns[name]
    assert guard.restore() == ["autograder.student.probe_helpers.own", "helped_probes.own"]
    assert probe_helpers.own is real and probes.own is real


def test_the_guard_sees_a_helper_or_a_wrapped_probe_rewritten_in_place(probes):
    guard = Guard((), extra_modules=("helped_probes",))
    own_code, probe_code = probe_helpers.own.__code__, probes.probe_value.__code__
    try:
        probe_helpers.own.__code__ = (lambda ns, name: ns[name]).__code__.replace(co_name="own")
        probes.probe_value.__code__ = _closure_code()
        assert guard.restore() == ["autograder.student.probe_helpers.own (rewritten in place)",
                                   "helped_probes.probe_value (rewritten in place)"]
    except BaseException:
        probe_helpers.own.__code__, probes.probe_value.__code__ = own_code, probe_code
        raise
    # The guard put fresh copies of the pristine code back: nothing is left to report.
    assert probe_helpers.own.__code__.co_code == own_code.co_code
    assert guard.restore() == []
    with pytest.raises(ImportError, match="f comes from jax"):
        probes.probe_value({"f": jnp.sum}, {"cases": [{}]})


def _closure_code():
    """Code with one free variable, like each_case's wrapper, that returns its argument."""
    def make(probe):
        def run(ns, inputs):
            return probe, inputs

        return run

    return make(None).__code__


def test_close_scaled_scales_atol_to_the_largest_finite_magnitude():
    tree = {"a": [np.asarray([1e3, -4e3]), np.asarray(np.inf)], "b": (np.zeros(0), 0.5)}
    assert judge.magnitude(tree) == 4e3
    assert judge.magnitude(np.asarray([0.25, np.nan])) == 1.0  # at least 1
    expected = np.asarray([4e3, 1.0])
    near = Outcome(value=np.asarray([4e3 + 3e-6, 1.0 + 3e-6]))
    assert not judge.close(expected, near, rtol=0.0, atol=1e-9).passed
    assert judge.close_scaled(expected, near, rtol=0.0, atol=1e-9).passed
