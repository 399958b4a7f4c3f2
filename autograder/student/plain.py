"""Plain data: the one definition of what crosses between the grader and the student's process.

Plain data is ``None``, ``bool``, ``int``, ``float``, ``str``, NumPy arrays of a numeric dtype
(``ARRAY_KINDS``, or one of ml_dtypes' ``EXTENDED_DTYPES``: bfloat16 ...), and lists, tuples and
``str``-keyed dicts of those, each of the exact type (no subclass). :func:`refusal` says why a
value is not; the channel (autograder.student.channel) encodes exactly what it accepts, in both
directions: a check's inputs to the student's process, a probe's value back. A NumPy scalar
(``np.float32(1.0)``) is not plain data: it would reach the student's process as something else.

:func:`to_plain` makes a probe's return value plain, in the student's process (the sandbox) and
in the in-process runner alike: a real JAX array or a NumPy scalar the student's code returned
becomes an array; anything else that :func:`refusal` refuses (subclasses, other objects, arrays
of strings or objects) is a ``TypeError``, so a value whose ``__eq__`` or ``__array__`` lies
cannot reach the grader as anything but an error.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

SCALARS = (type(None), bool, int, float, str)
ARRAY_KINDS = frozenset("biufc")  # bool, signed and unsigned ints, floats, complex
# Dtypes NumPy cannot describe in a .npy header: the channel sends them as same-width unsigned
# ints plus this name.
EXTENDED_DTYPES = {name: np.dtype(getattr(ml_dtypes, name)) for name in (
    "bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3b11fnuz", "float8_e4m3fnuz",
    "float8_e5m2fnuz", "int4", "uint4")}
MAX_DEPTH = 16  # of a value's containers (ps3's pytrees of inputs: 9); a frame adds its own


def array_refusal(dtype: np.dtype) -> str | None:
    """Why an array of ``dtype`` is not plain data; None when it is."""
    if dtype.name in EXTENDED_DTYPES or dtype.kind in ARRAY_KINDS:
        return None
    return f"arrays of dtype {dtype.name} are not plain data"


def refusal(value: Any, depth: int = 0) -> str | None:
    """Why ``value`` is not plain data (the first part found that is not); None when it is."""
    if depth > MAX_DEPTH:
        return "nested too deeply"
    kind = type(value)
    if kind in SCALARS:
        return None
    if kind in (list, tuple):
        return next(filter(None, (refusal(v, depth + 1) for v in value)), None)
    if kind is dict:
        if not all(type(k) is str for k in value):
            return "dict keys must be str"
        return next(filter(None, (refusal(v, depth + 1) for v in value.values())), None)
    if kind is np.ndarray:
        return array_refusal(value.dtype)
    return f"{kind.__name__} is not plain data"


def to_plain(value: Any, _depth: int = 0) -> Any:
    """A probe's return value as plain data (a fresh copy of every array); TypeError when it
    cannot be."""
    if _depth > MAX_DEPTH:
        raise TypeError("probe result nested too deeply")
    kind = type(value)
    if kind in SCALARS:
        return value
    if kind in (list, tuple):
        return kind(to_plain(v, _depth + 1) for v in value)
    if kind is dict:
        if not all(type(k) is str for k in value):
            raise TypeError("probe result dict keys must be str")
        return {k: to_plain(v, _depth + 1) for k, v in value.items()}
    if kind is np.ndarray or isinstance(value, np.generic) or _is_jax_array(value):
        array = np.array(np.asarray(value), copy=True)
        why = array_refusal(array.dtype)
        if why is not None:
            raise TypeError(f"probe result: {why}")
        return array
    raise TypeError(f"probe result of type {kind.__name__} is not plain data")


def _is_jax_array(value: Any) -> bool:
    try:
        from jax._src.array import ArrayImpl
    except ImportError:  # pragma: no cover - jax always present in this project
        return False
    return type(value) is ArrayImpl
