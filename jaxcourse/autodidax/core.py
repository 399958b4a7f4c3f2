"""Primitives, ``bind``, the interpreter stack, tracers, abstract values and evaluation."""

from __future__ import annotations

import operator
from contextlib import contextmanager
from typing import Any, NamedTuple

import numpy as np


# --- Primitives ------------------------------------------------------------------------------
class Primitive(NamedTuple):
    """An operation the interpreters treat as atomic; each interpreter keys its rules by it."""

    name: str


# Elementwise, one operand.
neg_p = Primitive("neg")
sin_p = Primitive("sin")
cos_p = Primitive("cos")
# Elementwise, two operands.
add_p = Primitive("add")
mul_p = Primitive("mul")
# Comparisons, with boolean outputs.
greater_p = Primitive("greater")
less_p = Primitive("less")
# Reductions and shape changes, whose metadata is passed by keyword.
reduce_sum_p = Primitive("reduce_sum")
transpose_p = Primitive("transpose")
broadcast_p = Primitive("broadcast")


def neg(x):
    """-x"""
    return bind1(neg_p, x)


def sin(x):
    """The sine, elementwise."""
    return bind1(sin_p, x)


def cos(x):
    """The cosine, elementwise."""
    return bind1(cos_p, x)


def add(x, y):
    """x + y, elementwise."""
    return bind1(add_p, x, y)


def mul(x, y):
    """x * y, elementwise."""
    return bind1(mul_p, x, y)


def greater(x, y):
    """x > y, elementwise."""
    return bind1(greater_p, x, y)


def less(x, y):
    """x < y, elementwise."""
    return bind1(less_p, x, y)


def transpose(x, perm):
    """``x`` with its axes permuted: axis ``i`` of the result is axis ``perm[i]`` of ``x``."""
    return bind1(transpose_p, x, perm=tuple(perm))


def broadcast(x, shape, axes):
    """Broadcast ``x`` to ``shape``; ``axes`` are the new axes of size one inserted first."""
    return bind1(broadcast_p, x, shape=tuple(shape), axes=tuple(axes))


def reduce_sum(x, axis=None):
    # Normalised here, so that every rule can rely on a tuple of non-negative ints.
    if axis is None:
        axis = tuple(range(np.ndim(x)))
    elif isinstance(axis, int):
        axis = (axis,)
    return bind1(reduce_sum_p, x, axis=tuple(a % np.ndim(x) for a in axis))


def bind1(primitive, *args, **params):
    """``bind`` for the primitives above, which all have exactly one output."""
    (out,) = bind(primitive, *args, **params)
    return out


# --- The interpreter stack -------------------------------------------------------------------
class MainTrace(NamedTuple):
    """One interpreter on the stack: its height, its Trace class, and data global to it."""

    level: int
    trace_type: type
    global_data: Any


trace_stack: list[MainTrace] = []


@contextmanager
def new_main(trace_type: type, global_data: Any = None):
    """Push an interpreter for the duration of one transformation, and pop it afterwards."""
    main = MainTrace(len(trace_stack), trace_type, global_data)
    trace_stack.append(main)
    try:
        yield main
    finally:
        trace_stack.pop()


class Trace:
    """How one interpreter boxes values and applies primitives.

    A Trace holds nothing but its MainTrace: Trace objects are made and dropped freely while a
    transformation runs, and two Traces with the same MainTrace are the same interpreter.
    """

    def __init__(self, main: MainTrace) -> None:
        self.main = main

    def pure(self, val):
        """Box a constant (a value that is not a tracer at all)."""
        raise NotImplementedError

    def lift(self, val):
        """Box a tracer of a lower interpreter."""
        raise NotImplementedError

    def process_primitive(self, primitive, tracers, params):
        """Apply ``primitive`` to this interpreter's tracers; return a list of outputs."""
        raise NotImplementedError


def swap(f):
    return lambda x, y: f(y, x)


def _forward(name):
    def method(self, *args):
        return getattr(self.aval, name)(self, *args)

    method.__name__ = name
    return method


class Tracer:
    """A boxed value flowing through a function under transformation.

    Python operators are forwarded to the abstract value, which maps them onto primitives.
    """

    _trace: Trace
    # NumPy must leave `ndarray * tracer` to the tracer instead of looping over the array.
    __array_priority__ = 1000

    @property
    def aval(self):
        raise NotImplementedError

    def full_lower(self):
        return self

    # Each operator asks the abstract value which primitive implements it.
    __neg__ = _forward("_neg")
    __add__ = _forward("_add")
    __radd__ = _forward("_radd")
    __mul__ = _forward("_mul")
    __rmul__ = _forward("_rmul")
    __gt__ = _forward("_gt")
    __lt__ = _forward("_lt")
    __bool__ = _forward("_bool")

    def __getattr__(self, name):
        # shape, dtype, ndim, ... come from the abstract value.
        try:
            return getattr(self.aval, name)
        except AttributeError:
            raise AttributeError(f"{type(self).__name__} has no attribute {name}") from None


# --- Abstract values -------------------------------------------------------------------------
class ShapedArray:
    """The set of all arrays with one shape and dtype."""

    array_abstraction_level = 1

    def __init__(self, shape, dtype):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)

    # The primitives behind Python's operators, called by Tracer's forwarding methods.
    _add, _mul, _neg = staticmethod(add), staticmethod(mul), staticmethod(neg)
    _radd, _rmul = staticmethod(swap(add)), staticmethod(swap(mul))
    _gt, _lt = staticmethod(greater), staticmethod(less)

    @property
    def ndim(self):
        return len(self.shape)

    @staticmethod
    def _bool(tracer):
        raise TypeError(f"the truth value of an abstract {tracer.aval.str_short()} is unknown")

    def str_short(self):
        return f"{self.dtype.name}[{','.join(map(str, self.shape))}]"

    def _key(self):
        return self.shape, self.dtype

    def __hash__(self):
        return hash(self._key())

    def __eq__(self, other):
        return type(self) is type(other) and self._key() == other._key()

    def __repr__(self):
        return f"ShapedArray({self.str_short()})"


class ConcreteArray(ShapedArray):
    """The set holding exactly one array: enough to answer ``bool(x)``."""

    array_abstraction_level = 2

    def __init__(self, val):
        super().__init__(np.shape(val), np.result_type(val))
        self.val = val

    @staticmethod
    def _bool(tracer):
        return bool(tracer.aval.val)

    def __repr__(self):
        return f"ConcreteArray({self.val!r})"


# Python and NumPy types that this core accepts as arrays.
jax_types = {
    bool, int, float, np.ndarray, np.bool_, np.float32, np.float64, np.int32, np.int64,
}


def get_aval(x):
    if isinstance(x, Tracer):
        return x.aval
    if type(x) in jax_types:
        return ConcreteArray(np.asarray(x))
    raise TypeError(f"{type(x).__name__} is not an array type of this core")


# --- bind and the choice of interpreter ------------------------------------------------------
def bind(primitive, *args, **params):
    """The one place where every primitive application is intercepted."""
    trace = find_top_trace(args)
    tracers = [full_raise(trace, arg) for arg in args]
    outs = trace.process_primitive(primitive, tracers, params)
    return [full_lower(out) for out in outs]


def find_top_trace(xs) -> Trace:
    """The highest interpreter that boxes one of ``xs``; the bottom one if none does."""
    mains = [x._trace.main for x in xs if isinstance(x, Tracer)]
    top = max(mains, default=trace_stack[0], key=operator.attrgetter("level"))
    return top.trace_type(top)


def full_lower(val):
    return val.full_lower() if isinstance(val, Tracer) else val


class LevelError(Exception):
    """A tracer met an interpreter it cannot be boxed by."""


def full_raise(trace: Trace, val) -> Tracer:
    """Box ``val`` as a tracer of ``trace``, refusing to move a tracer downward."""
    if not isinstance(val, Tracer):
        assert type(val) in jax_types, type(val)
        return trace.pure(val)
    own, their = trace.main, val._trace.main
    if their is own:
        return val
    if their.level < own.level:
        return trace.lift(val)
    if their.level > own.level:
        raise LevelError(f"cannot lift a level-{their.level} tracer to level {own.level}")
    raise LevelError(f"two different interpreters share level {own.level}")


# --- The evaluation interpreter --------------------------------------------------------------
class EvalTrace(Trace):
    """The bottom of the stack: apply each primitive to plain NumPy values."""

    def pure(self, val):
        return val

    lift = pure

    def process_primitive(self, primitive, tracers, params):
        return impl_rules[primitive](*tracers, **params)


def broadcast_impl(x, *, shape, axes):
    # A size-one axis at each new position, which NumPy then stretches to the full shape.
    return [np.broadcast_to(np.expand_dims(x, tuple(sorted(axes))), shape)]


impl_rules = {
    add_p: lambda x, y: [np.add(x, y)],
    mul_p: lambda x, y: [np.multiply(x, y)],
    neg_p: lambda x: [np.negative(x)],
    sin_p: lambda x: [np.sin(x)],
    cos_p: lambda x: [np.cos(x)],
    reduce_sum_p: lambda x, *, axis: [np.sum(x, axis)],
    greater_p: lambda x, y: [np.greater(x, y)],
    less_p: lambda x, y: [np.less(x, y)],
    transpose_p: lambda x, *, perm: [np.transpose(x, perm)],
    broadcast_p: broadcast_impl,
}

# The evaluation interpreter is always there, at level 0.
trace_stack.append(MainTrace(0, EvalTrace, None))


# --- Small helpers the interpreters share ----------------------------------------------------
def zeros_like(val):
    aval = get_aval(val)
    return np.zeros(aval.shape, dtype=aval.dtype)


def unzip2(pairs):
    """A list of pairs as a pair of lists."""
    pairs = list(pairs)
    return [first for first, _ in pairs], [second for _, second in pairs]
