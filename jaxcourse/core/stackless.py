"""A small model of JAX today: one current trace instead of a stack of interpreters.

Written from the pinned JAX's ``jax/_src/core.py`` (``trace_ctx``, ``take_current_trace``,
``set_current_trace``, ``TraceTag``) and ``jax/_src/interpreters/ad.py`` (``JVPTrace``). It reuses
Part II's primitives and impl rules; only ``bind``, the traces and the JVP rules are new.
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from jaxcourse.autodidax.core import add_p, cos_p, impl_rules, mul_p, neg_p, sin_p


# --- The one current trace -------------------------------------------------------------------
class EvalTrace:
    """Apply impl rules. It is the current trace whenever no transformation is running."""

    def process_primitive(self, primitive, args, params):
        return impl_rules[primitive](*args, **params)


eval_trace = EvalTrace()
current_trace = eval_trace  # JAX keeps it in a thread-local context (trace_ctx)


@contextmanager
def set_current_trace(trace):
    global current_trace
    previous, current_trace = current_trace, trace
    try:
        yield
    finally:
        current_trace = previous


@contextmanager
def take_current_trace():
    """Hand out the current trace and make evaluation current meanwhile, as ``bind`` does."""
    trace = current_trace
    with set_current_trace(eval_trace):
        yield trace


def bind(primitive, *args, **params):
    """No search through the arguments: the current trace handles every primitive."""
    with take_current_trace() as trace:
        return trace.process_primitive(primitive, args, params)


def bind1(primitive, *args, **params):
    (out,) = bind(primitive, *args, **params)
    return out


# --- Operations, and a tracer base class that forwards Python operators to them --------------
def _operation(primitive, name: str):
    """The user-facing function of ``primitive``: bind it and unwrap its single result."""
    def apply(*operands):
        return bind1(primitive, *operands)

    apply.__name__ = apply.__qualname__ = name
    return apply


sin, cos, neg = (_operation(p, n) for p, n in ((sin_p, "sin"), (cos_p, "cos"), (neg_p, "neg")))
add, mul = _operation(add_p, "add"), _operation(mul_p, "mul")


class Tracer:
    __array_priority__ = 1000

    def __add__(self, other):
        return add(self, other)

    def __radd__(self, other):
        return add(other, self)

    def __mul__(self, other):
        return mul(self, other)

    def __rmul__(self, other):
        return mul(other, self)

    def __neg__(self):
        return neg(self)


# --- Forward mode ----------------------------------------------------------------------------
class TraceTag:
    """An identity: the mark a trace's own tracers carry, compared with ``is``."""


class JVPTracer(Tracer):
    def __init__(self, trace, primal, tangent):
        self.trace, self.primal, self.tangent = trace, primal, tangent


class JVPTrace:
    def __init__(self, parent_trace, tag: TraceTag):
        self.parent_trace, self.tag = parent_trace, tag

    def to_primal_tangent_pair(self, val):
        # Only tracers with this trace's tag are unpacked; anything else, a tracer of another
        # trace included, is a constant here: its tangent is zero.
        if isinstance(val, JVPTracer) and val.trace.tag is self.tag:
            return val.primal, val.tangent
        return val, zeros_like(val)

    def process_primitive(self, primitive, args, params):
        primals, tangents = zip(*map(self.to_primal_tangent_pair, args))
        # The rule runs in the parent trace: its own primitives go "one level down".
        with set_current_trace(self.parent_trace):
            primals_out, tangents_out = jvp_rules[primitive](primals, tangents, **params)
        return [JVPTracer(self, p, t) for p, t in zip(primals_out, tangents_out)]


def zeros_like(val):
    if isinstance(val, JVPTracer):
        return zeros_like(val.primal)
    return np.zeros(np.shape(val), np.result_type(val))


jvp_rules = {
    sin_p: lambda primals, tangents: ([sin(primals[0])], [cos(primals[0]) * tangents[0]]),
    cos_p: lambda primals, tangents: ([cos(primals[0])], [neg(sin(primals[0])) * tangents[0]]),
    neg_p: lambda primals, tangents: ([neg(primals[0])], [neg(tangents[0])]),
    add_p: lambda primals, tangents: ([add(*primals)], [add(*tangents)]),
    mul_p: lambda primals, tangents: (
        [mul(*primals)], [tangents[0] * primals[1] + primals[0] * tangents[1]]),
}


def jvp(f, primals, tangents, trace_type=JVPTrace):
    """Like ``jax.jvp``: a new trace whose parent is whatever trace was current."""
    with take_current_trace() as parent:
        trace = trace_type(parent, TraceTag())
        tracers = [JVPTracer(trace, p, t) for p, t in zip(primals, tangents)]
        with set_current_trace(trace):
            out = f(*tracers)
        return trace.to_primal_tangent_pair(out)


def deriv(f):
    return lambda x: jvp(f, (x,), (1.0,))[1]
