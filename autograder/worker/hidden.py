"""No feedback message shows a hidden value: a number of a check's grading inputs or of its
expectation. Grader side.

A check's inputs depend on the course secret and the check alone (``runner.input_seed``): every
student of the course meets the same ones, so their values must stay off every page. The judges
never print them (they name the input class, shapes, dtypes and positions); the reproducer runs
public inputs of its own. What the student's process sends back is another matter: an exception's
message, or a string a probe returns, is the notebook's own text, and a notebook can put the
values it was handed into it. :func:`hide_values` is the last step before a failed check's message
is kept (autograder.worker.runner, autograder.inprocess): every decimal number in it (``0.25``,
``-1.5e-03``) that is a hidden value as printed, at the precision it is printed with, becomes
``…``. Integers stay: they are sizes, counts, axes and positions. A notebook can still encode a
value some other way (digits as words, an integer scaled up); the grader can only refuse to print
it, which is what it does.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

MASK = "…"
# A decimal number as Python, NumPy and JAX print one: digits after a point, or an exponent.
# No word boundaries: the notebook decides what stands next to a number ("a0.123" is 0.123).
DECIMAL = re.compile(r"[-+]?(?:\d*\.\d+(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+)")


def hidden_numbers(*values: Any) -> np.ndarray:
    """The magnitudes of every finite number in ``values`` (nested dicts, lists and tuples of
    arrays, NumPy or JAX, and Python numbers; complex as two), as one float64 array."""
    found: list[np.ndarray] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, (list, tuple)):
            for item in value:
                walk(item)
        elif isinstance(value, (bool, str, bytes)) or value is None:
            return
        elif isinstance(value, (int, float, complex)) or hasattr(value, "__array__"):
            try:
                arr = np.asarray(value)
                if arr.dtype.kind == "c":
                    arr = np.concatenate([arr.real.ravel(), arr.imag.ravel()])
                found.append(np.abs(arr.astype(np.float64).ravel()))
            except (TypeError, ValueError, OverflowError):
                return  # not numbers (an object array, a string array)

    for value in values:
        walk(value)
    if not found:
        return np.zeros(0)
    numbers = np.concatenate(found)
    return numbers[np.isfinite(numbers)]


def _unit(token: str) -> float:
    """One unit in the last place ``token`` is printed with (``0.125`` -> 0.001)."""
    mantissa, _, exponent = token.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    return 10.0 ** (int(exponent or 0) - decimals)


def hide_values(message: str, *hidden: Any) -> str:
    """``message`` with every decimal number that is one of ``hidden``'s values (within one unit
    in the last place it is printed with, either sign) masked."""
    if not message or not DECIMAL.search(message):
        return message
    numbers = hidden_numbers(*hidden)
    if not numbers.size:
        return message

    def mask(match: re.Match) -> str:
        token = match.group()
        try:
            value, unit = abs(float(token)), _unit(token)
        except (ValueError, OverflowError):
            return token
        return MASK if bool(np.any(np.abs(numbers - value) <= unit * (1 + 1e-9))) else token

    return DECIMAL.sub(mask, message)
