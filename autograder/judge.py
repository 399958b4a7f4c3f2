"""Judges: compare a probe's outcome with the grader's expectation. Grader side only.

The probe's value is converted to a plain NumPy array of the expected dtype and shape before any
comparison, so nothing the student's process returned can decide the comparison itself.
"""

from __future__ import annotations

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
