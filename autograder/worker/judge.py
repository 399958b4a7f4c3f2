"""Judges: compare a probe's outcome with the grader's expectation. Grader side only.

The probe's value is converted to a plain NumPy array of the expected dtype and shape before any
comparison, so nothing the student's process returned can decide the comparison itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from autograder.spec import Outcome, Verdict


def raised(outcome: Outcome) -> Verdict | None:
    """A failing verdict when the probe raised; None when it returned a value."""
    if outcome.raised is not None:
        return Verdict(False, f"raised {outcome.raised}: {outcome.message}")
    return None


def as_array(value: Any, like: np.ndarray) -> np.ndarray:
    """``value`` as an array with ``like``'s dtype; raises ValueError if it is not one."""
    if isinstance(value, np.ndarray):
        arr = value
    elif isinstance(value, (bool, int, float)):
        arr = np.asarray(value)
    else:
        # ValueError, like a wrong shape: every way the value is unusable is one failed comparison.
        raise ValueError(f"expected an array, got {type(value).__name__}")  # noqa: TRY004
    if arr.shape != like.shape:
        raise ValueError(f"shape {arr.shape}, expected shape {like.shape}")
    if arr.dtype != like.dtype:
        raise ValueError(f"dtype {arr.dtype}, expected dtype {like.dtype}")
    return arr


def close(expected: Any, outcome: Outcome, *, rtol: float = 1e-5, atol: float = 1e-6) -> Verdict:
    """Array (or nested list/tuple/dict of arrays) equal up to tolerance, same shapes and dtypes."""
    failed = raised(outcome)
    if failed:
        return failed
    try:
        _close_tree(expected, outcome.value, rtol, atol, path="result")
    except ValueError as err:
        return Verdict(False, str(err))
    return Verdict(True)


def magnitude(expected: Any) -> float:
    """The scale of an absolute tolerance: the largest finite magnitude in ``expected`` (an array
    or a nested list/tuple/dict of arrays), and at least 1."""
    if isinstance(expected, dict):
        return max([1.0, *(magnitude(v) for v in expected.values())])
    if isinstance(expected, (list, tuple)):
        return max([1.0, *(magnitude(v) for v in expected)])
    values = np.abs(np.asarray(expected, dtype=np.float64))
    values = values[np.isfinite(values)]
    return max(1.0, float(values.max())) if values.size else 1.0


def close_scaled(expected: Any, outcome: Outcome, *, rtol: float, atol: float) -> Verdict:
    """:func:`close`, with ``atol`` times the :func:`magnitude` of ``expected``: correct code
    written in another order rounds differently, most where large terms cancel."""
    return close(expected, outcome, rtol=rtol, atol=atol * magnitude(expected))


def _close_tree(expected: Any, got: Any, rtol: float, atol: float, path: str) -> None:
    if isinstance(expected, dict):
        if not isinstance(got, dict) or sorted(got) != sorted(expected):
            raise ValueError(f"{path}: wrong structure")
        for key in expected:
            _close_tree(expected[key], got[key], rtol, atol, f"{path}[{key!r}]")
        return
    if isinstance(expected, (list, tuple)):
        if not isinstance(got, (list, tuple)) or len(got) != len(expected):
            raise ValueError(f"{path}: expected a sequence of {len(expected)} values")
        for i, (e, g) in enumerate(zip(expected, got)):
            _close_tree(e, g, rtol, atol, f"{path}[{i}]")
        return
    exp = np.asarray(expected)
    try:
        arr = as_array(got, exp)
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from None
    e64 = exp.astype(np.float64) if exp.dtype.kind in "fc" or exp.dtype.name == "bfloat16" else exp
    a64 = arr.astype(e64.dtype)
    if not np.allclose(a64, e64, rtol=rtol, atol=atol, equal_nan=True):
        bad = np.argwhere(~np.isclose(a64, e64, rtol=rtol, atol=atol, equal_nan=True))
        where = tuple(int(i) for i in bad[0]) if bad.size else ()
        raise ValueError(f"{path}: wrong values ({len(bad)} of {exp.size} entries, first at {where})")


def raises(exc_name: str, outcome: Outcome) -> Verdict:
    """The probe must have raised ``exc_name`` (by type name)."""
    if outcome.raised == exc_name:
        return Verdict(True)
    if outcome.raised is None:
        return Verdict(False, f"expected a {exc_name}, but nothing was raised")
    return Verdict(False, f"expected a {exc_name}, got {outcome.raised}: {outcome.message}")


def equal(expected: Any, outcome: Outcome) -> Verdict:
    """Exact equality of plain (non-array) data: str, int, bool, and lists/dicts of them."""
    failed = raised(outcome)
    if failed:
        return failed
    if type(outcome.value) is not type(expected) or outcome.value != expected:
        return Verdict(False, "wrong result")
    return Verdict(True)


# A check's case matrix: its inputs hold ``{"cases": [...]}``, one case per input class (drawn
# at random within its class), every class on every grading. The probe runs on each case
# (autograder.student.probe_helpers.each_case); these two give the expectation of each and judge each.
def expect_each(expect_one: Callable[[dict], Any],
                class_of: Callable[[dict], str] = lambda case: case["case"]) -> Callable:
    """The expectation of every case, with the name of its input class (``class_of``, by
    default the case's ``"case"``); inputs without ``"cases"`` (one case, as a reproducer asks)
    get ``expect_one``'s expectation as it is."""
    def expect(inputs: dict) -> Any:
        if "cases" not in inputs:
            return expect_one(inputs)
        return {"names": [class_of(case) for case in inputs["cases"]],
                "cases": [expect_one(case) for case in inputs["cases"]]}

    return expect


def judge_each(judge_one: Callable[[Any, Outcome], Verdict], *,
               failure: str = "{name}: {message}") -> Callable[[Any, Outcome], Verdict]:
    """A judge of every case of an :func:`expect_each` expectation: the first case that fails
    fails the check, its message put in ``failure`` (fields ``name``, the input class,
    ``number`` and ``count``, the case's place, and ``message``, the case's verdict). A single
    expectation is judged by ``judge_one`` as it is."""
    def judged(expected: Any, outcome: Outcome) -> Verdict:
        if not (isinstance(expected, dict) and "cases" in expected):
            return judge_one(expected, outcome)
        failed = raised(outcome)
        if failed:
            return failed
        got = outcome.value.get("cases") if isinstance(outcome.value, dict) else None
        count = len(expected["cases"])
        if not isinstance(got, list) or len(got) != count:
            return Verdict(False, "the probe did not return a result for every input class")
        for number, (name, want, value) in enumerate(zip(expected["names"], expected["cases"],
                                                         got), start=1):
            verdict = judge_one(want, Outcome(value=value))
            if not verdict.passed:
                return Verdict(False, failure.format(name=name, number=number, count=count,
                                                     message=verdict.message))
        return Verdict(True)

    return judged
