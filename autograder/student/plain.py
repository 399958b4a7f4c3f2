"""Conversion of a probe's return value to plain data (see autograder.spec).

Runs in the student's process (inside the engine's sandbox) and in the in-process runner. Only
exact built-in types and real NumPy/JAX arrays pass; subclasses and other objects are refused, so a
value whose ``__eq__`` or ``__array__`` lies cannot reach the grader as anything but an error.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_SCALARS = (type(None), bool, int, float, str)
MAX_DEPTH = 8


def to_plain(value: Any, _depth: int = 0) -> Any:
    if _depth > MAX_DEPTH:
        raise TypeError("probe result nested too deeply")
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind in (list, tuple):
        return kind(to_plain(v, _depth + 1) for v in value)
    if kind is dict:
        if not all(type(k) is str for k in value):
            raise TypeError("probe result dict keys must be str")
        return {k: to_plain(v, _depth + 1) for k, v in value.items()}
    if kind is np.ndarray or isinstance(value, np.generic):
        return np.array(value, copy=True)
    if _is_jax_array(value):
        return np.array(np.asarray(value), copy=True)
    raise TypeError(f"probe result of type {kind.__name__} is not plain data")


def _is_jax_array(value: Any) -> bool:
    try:
        from jax._src.array import ArrayImpl
    except ImportError:  # pragma: no cover - jax always present in this project
        return False
    return type(value) is ArrayImpl
