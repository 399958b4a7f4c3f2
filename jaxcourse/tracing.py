"""Print which functions JAX calls, with what kind of value, while it transforms a program.

Decorate a function with :func:`traced` and run code inside :func:`show_calls`: every call of a
traced function prints one indented ``call name(args)`` line and one ``|<- name = result`` line.
Outside ``show_calls`` a traced function runs silently, so the same rules serve the book (which
prints) and the tests (which do not).

Values are described by kind, because the kind is the lesson: a concrete array prints its
numbers, a tracer prints its class and abstract value (``JVPTracer<float32[3]>``), an abstract
value prints as itself, and the lowering context prints only the platforms and the avals. Each
description is as short as it can be while saying that, so a trace fits the book's column.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import jax
import numpy as np
from jax.interpreters import ad, mlir

F = TypeVar("F", bound=Callable[..., Any])

_enabled = False
_depth = 0


@contextlib.contextmanager
def show_calls() -> Iterator[None]:
    """Print the calls of traced functions made inside this block."""
    global _enabled, _depth
    outer_enabled, outer_depth = _enabled, _depth
    _enabled = True
    try:
        yield
    finally:
        # A rule that raised leaves no dangling indentation for the next cell.
        _enabled, _depth = outer_enabled, outer_depth


def note(message: str) -> None:
    """Print a remark at the current indentation (only inside ``show_calls``)."""
    if _enabled:
        print("  " * _depth + message)


def describe(value: Any) -> str:
    """A short description of one argument or result, saying what kind of value it is."""
    if isinstance(value, jax.core.Tracer):
        # The tracer's class names the transformation; its aval is all it knows of the data.
        return f"{type(value).__name__}<{value.aval}>"
    if isinstance(value, ad.Zero):
        return f"Zero<{value.aval}>"
    if isinstance(value, ad.UndefinedPrimal):
        return f"UndefinedPrimal<{value.aval}>"
    if isinstance(value, jax.core.ShapedArray):
        return f"ShapedArray<{value}>"
    if isinstance(value, mlir.LoweringRuleContext):
        platforms = ",".join(value.module_context.platforms)
        avals_in = ", ".join(str(aval) for aval in value.avals_in)
        return f"LoweringRuleContext({platforms}: {avals_in})"
    if isinstance(value, mlir.ir.Value):
        return f"ir.Value<{value.type}>"
    if isinstance(value, (tuple, list)):
        inner = ", ".join(describe(v) for v in value)
        return f"({inner})" if isinstance(value, tuple) else f"[{inner}]"
    if isinstance(value, (jax.Array, np.ndarray, np.generic)):
        # One line per call, however many dimensions the array has.
        return " ".join(np.array2string(np.asarray(value), separator=", ").split())
    if type(value) not in (bool, int, float, complex) and isinstance(value, (int, float, complex)):
        # JAX's typed Python scalars (TypedFloat, TypedInt): the class says it is typed; the
        # dtype is the one the abstract values around it print.
        return f"{type(value).__name__}({value!s})"
    return repr(value)


def traced(name: str | None = None) -> Callable[[F], F]:
    """Decorator: inside ``show_calls``, print each call of the function and its result."""

    def decorate(fun: F) -> F:
        label = name or fun.__name__

        @functools.wraps(fun)
        def wrapper(*args: Any) -> Any:
            global _depth
            # Not a frame of the program: IPython and jaxcourse.error_display leave it out of
            # a traceback.
            __tracebackhide__ = True
            if not _enabled:
                return fun(*args)
            print("  " * _depth + f"call {label}({', '.join(describe(a) for a in args)})")
            _depth += 1
            try:
                result = fun(*args)
            finally:
                _depth -= 1
            print("  " * _depth + f"|<- {label} = {describe(result)}")
            return result

        return wrapper  # type: ignore[return-value]

    return decorate
