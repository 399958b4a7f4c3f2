"""Jaxprs: the data structure, a printer, a type checker, evaluation, and staging by tracing."""

from __future__ import annotations

import itertools
from typing import Any, NamedTuple

import numpy as np

from jaxcourse.autodidax.core import (
    ShapedArray,
    Trace,
    Tracer,
    add_p,
    bind,
    broadcast_p,
    cos_p,
    full_raise,
    get_aval,
    greater_p,
    less_p,
    mul_p,
    neg_p,
    new_main,
    reduce_sum_p,
    sin_p,
    transpose_p,
)
from jaxcourse.autodidax.pytree import flatten_fun, tree_flatten


# --- The data structure ----------------------------------------------------------------------
class Var:
    """A variable of a jaxpr: an abstract value and an identity, nothing else (no name)."""

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval


class Lit:
    """A literal: a scalar constant written into the program text."""

    def __init__(self, val) -> None:
        self.val = val  # kept a Python scalar, so that a jaxpr staged again keeps it literal
        self.aval = ShapedArray((), np.result_type(val))


class JaxprEqn(NamedTuple):
    """``out_binders = primitive[params] inputs``: one primitive application."""

    primitive: Any
    inputs: list  # Vars and Lits
    params: dict
    out_binders: list  # fresh Vars


class Jaxpr:
    """A program: constant binders, input binders, equations in order, and output atoms."""

    def __init__(self, constvars, in_binders, eqns, outs) -> None:
        self.constvars, self.in_binders = list(constvars), list(in_binders)
        self.eqns, self.outs = list(eqns), list(outs)

    def __str__(self):
        return pp_jaxpr(self, Names())

    def __repr__(self):
        return str(self)


class ClosedJaxpr(NamedTuple):
    """A jaxpr and the values of its constvars, what ``make_jaxpr`` returns."""

    jaxpr: Jaxpr
    consts: list

    def __str__(self):
        return str(self.jaxpr)


def raise_to_shaped(aval) -> ShapedArray:
    """Forget the value, keep the shape and dtype."""
    return ShapedArray(aval.shape, aval.dtype)


# --- The printer -----------------------------------------------------------------------------
WIDTH = 80  # jax.make_jaxpr puts a jaxpr on one line when it fits in 80 columns


class Names:
    """Names handed out in order of first appearance: a, b, ..., z, ba, bb, ..."""

    def __init__(self) -> None:
        self.names: dict[Var, str] = {}
        self.counter = itertools.count()

    def __call__(self, var: Var) -> str:
        if var not in self.names:
            self.names[var] = alphabetic(next(self.counter))
        return self.names[var]


def alphabetic(n: int) -> str:
    # Base 26 with a = 0, so 26 is "ba", as in JAX.
    digits = ""
    while True:
        n, digit = divmod(n, 26)
        digits = chr(ord("a") + digit) + digits
        if n == 0:
            return digits


def dtype_short(dtype) -> str:
    dtype = np.dtype(dtype)
    return "bool" if dtype == np.bool_ else f"{dtype.kind}{dtype.itemsize * 8}"


def type_str(aval) -> str:
    return f"{dtype_short(aval.dtype)}[{','.join(map(str, aval.shape))}]"


def pp_atom(atom, names: Names) -> str:
    if isinstance(atom, Lit):
        return f"{atom.val!r}:{type_str(atom.aval)}"
    return names(atom)


def pp_binder(var: Var, names: Names, used=None) -> str:
    # An equation's result that nothing reads is printed as `_`, as JAX does.
    name = "_" if used is not None and var not in used else names(var)
    return f"{name}:{type_str(var.aval)}"


def pp_tuple(items) -> str:
    items = list(items)
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"


def pp_jaxpr(jaxpr: Jaxpr, names: Names, indent: int = 0) -> str:
    consts = " ".join(pp_binder(v, names) for v in jaxpr.constvars)
    ins = " ".join(pp_binder(v, names) for v in jaxpr.in_binders)
    head = f"{{ lambda {consts}; {ins}. let"
    used = {x for eqn in jaxpr.eqns for x in eqn.inputs} | set(jaxpr.outs)
    eqns = [pp_eqn(eqn, names, indent + 4, used) for eqn in jaxpr.eqns]
    tail = f"in {pp_tuple(pp_atom(out, names) for out in jaxpr.outs)} }}"
    one_line = f"{head} {'; '.join(eqns)} {tail}"
    if "\n" not in one_line and indent + len(one_line) <= WIDTH:
        return one_line
    body = "".join(f"\n{' ' * (indent + 4)}{eqn}" for eqn in eqns)
    return f"{head}{body}\n{' ' * (indent + 2)}{tail}"


def pp_eqn(eqn: JaxprEqn, names: Names, indent: int, used) -> str:
    outs = " ".join(pp_binder(v, names, used) for v in eqn.out_binders)
    ins = " ".join(pp_atom(x, names) for x in eqn.inputs)
    name = eqn.primitive.name
    has_jaxpr = any(isinstance(v, (Jaxpr, tuple)) and _holds_jaxpr(v) for v in eqn.params.values())
    if not has_jaxpr:
        params = " ".join(f"{k}={v}" for k, v in eqn.params.items())
        line = f"{outs} = {name}{f'[{params}]' if params else ''} {ins}"
        if indent + len(line) <= WIDTH or not params:
            return line
    # One parameter a line, nested jaxprs indented under their parameter.
    pad = " " * (indent + 2)
    lines = [f"{outs} = {name}["]
    for key, value in eqn.params.items():
        if isinstance(value, tuple) and _holds_jaxpr(value):
            # A tuple of jaxprs (cond's branches) continues the outer naming, as JAX does.
            lines.append(f"{pad}{key}=(")
            lines += [f"{pad}  {pp_jaxpr(j, names, indent + 4)}" for j in value]
            lines.append(f"{pad})")
        elif isinstance(value, Jaxpr):
            # A called jaxpr (jit's) gets names of its own, as JAX does.
            lines.append(f"{pad}{key}={pp_jaxpr(value, Names(), indent + 2)}")
        else:
            lines.append(f"{pad}{key}={value}")
    lines.append(f"{' ' * indent}] {ins}")
    return "\n".join(lines)


def _holds_jaxpr(value) -> bool:
    return isinstance(value, Jaxpr) or (
        isinstance(value, tuple) and any(isinstance(v, Jaxpr) for v in value))


# --- Abstract evaluation: the type of each primitive's outputs -------------------------------
def binop_abstract_eval(x, y):
    # Our add and mul broadcast like NumPy (lax.add does not: jnp inserts broadcast_in_dim).
    return [ShapedArray(np.broadcast_shapes(x.shape, y.shape), np.result_type(x.dtype, y.dtype))]


def compare_abstract_eval(x, y):
    return [ShapedArray(np.broadcast_shapes(x.shape, y.shape), np.bool_)]


def unop_abstract_eval(x):
    return [ShapedArray(x.shape, x.dtype)]


def reduce_sum_abstract_eval(x, *, axis):
    return [ShapedArray([d for i, d in enumerate(x.shape) if i not in axis], x.dtype)]


def transpose_abstract_eval(x, *, perm):
    return [ShapedArray([x.shape[i] for i in perm], x.dtype)]


def broadcast_abstract_eval(x, *, shape, axes):
    return [ShapedArray(shape, x.dtype)]


abstract_eval_rules = {
    add_p: binop_abstract_eval,
    mul_p: binop_abstract_eval,
    greater_p: compare_abstract_eval,
    less_p: compare_abstract_eval,
    neg_p: unop_abstract_eval,
    sin_p: unop_abstract_eval,
    cos_p: unop_abstract_eval,
    reduce_sum_p: reduce_sum_abstract_eval,
    transpose_p: transpose_abstract_eval,
    broadcast_p: broadcast_abstract_eval,
}


# --- The type checker ------------------------------------------------------------------------
class JaxprTypeError(TypeError):
    """A jaxpr that is not well formed or not well typed."""


class JaxprType(NamedTuple):
    in_types: list
    out_types: list

    def __str__(self):
        ins = ", ".join(type_str(t) for t in self.in_types)
        return f"({ins}) -> {pp_tuple(type_str(t) for t in self.out_types)}"


def typecheck_jaxpr(jaxpr: Jaxpr) -> JaxprType:
    """Check that every variable is bound once before use and every equation is well typed."""
    env: set[Var] = set()

    def bind_var(var):
        if var in env:
            raise JaxprTypeError(f"variable {var} bound twice")
        env.add(var)

    def type_of(atom):
        if isinstance(atom, Lit):
            return raise_to_shaped(atom.aval)
        if atom not in env:
            raise JaxprTypeError("a variable is used before it is bound")
        return atom.aval

    for var in jaxpr.constvars + jaxpr.in_binders:
        bind_var(var)
    for eqn in jaxpr.eqns:
        in_types = [type_of(x) for x in eqn.inputs]
        out_types = abstract_eval_rules[eqn.primitive](*in_types, **eqn.params)
        if len(out_types) != len(eqn.out_binders):
            raise JaxprTypeError(f"{eqn.primitive.name} has {len(out_types)} outputs, "
                                 f"the equation binds {len(eqn.out_binders)}")
        for var, out_type in zip(eqn.out_binders, out_types):
            if raise_to_shaped(var.aval) != raise_to_shaped(out_type):
                raise JaxprTypeError(f"{eqn.primitive.name} gives {type_str(out_type)}, "
                                     f"the binder says {type_str(var.aval)}")
            bind_var(var)
    out_types = [type_of(x) for x in jaxpr.outs]
    return JaxprType([v.aval for v in jaxpr.constvars + jaxpr.in_binders], out_types)


# --- Evaluating a jaxpr ----------------------------------------------------------------------
def eval_jaxpr(jaxpr: Jaxpr, consts, args) -> list:
    """Run the program with ``bind``, so whatever interpreters are active see every primitive."""
    env: dict[Var, Any] = {}

    def read(atom):
        return atom.val if isinstance(atom, Lit) else env[atom]

    for var, val in zip(jaxpr.constvars + jaxpr.in_binders, list(consts) + list(args)):
        env[var] = val
    for eqn in jaxpr.eqns:
        outs = bind(eqn.primitive, *map(read, eqn.inputs), **eqn.params)
        env.update(zip(eqn.out_binders, outs))
    return [read(out) for out in jaxpr.outs]


# --- Staging: a trace that records instead of computing --------------------------------------
class JaxprTracer(Tracer):
    """A value known only by its type, standing for a variable of the jaxpr being built."""

    def __init__(self, trace, aval) -> None:
        self._trace, self._aval = trace, aval

    @property
    def aval(self):
        return self._aval


class JaxprTrace(Trace):
    """Applying a primitive appends an equation; abstract evaluation gives its output types."""

    @property
    def builder(self) -> JaxprBuilder:
        return self.main.global_data

    def pure(self, val):
        return self.builder.const(self, val)

    lift = pure

    def new_tracer(self, aval) -> JaxprTracer:
        return JaxprTracer(self, aval)

    def process_primitive(self, primitive, tracers, params):
        avals_out = abstract_eval_rules[primitive](*[t.aval for t in tracers], **params)
        outs = [JaxprTracer(self, aval) for aval in avals_out]
        self.builder.eqns.append(JaxprEqn(primitive, list(tracers), params, outs))
        return outs


class JaxprBuilder:
    """What one staging trace has seen: its inputs, constants and equations, over tracers."""

    def __init__(self) -> None:
        self.eqns: list[JaxprEqn] = []
        self.consts: dict[int, tuple[JaxprTracer, Any]] = {}  # id(value) -> (tracer, value)

    def const(self, trace, val) -> JaxprTracer:
        if id(val) not in self.consts:
            aval = raise_to_shaped(get_aval(val))
            self.consts[id(val)] = (trace.new_tracer(aval), val)
        return self.consts[id(val)][0]

    def build(self, tracers_in, tracers_out) -> ClosedJaxpr:
        atoms: dict[JaxprTracer, Any] = {}
        constvars, const_vals = [], []
        for tracer, val in self.consts.values():
            if type(val) in (bool, int, float):
                atoms[tracer] = Lit(val)  # a Python scalar goes into the program text
            else:
                atoms[tracer] = Var(tracer.aval)  # an array, or a tracer of an outer trace
                constvars.append(atoms[tracer])
                const_vals.append(val)
        for tracer in tracers_in:
            atoms[tracer] = Var(tracer.aval)
        eqns = []
        for eqn in self.eqns:
            out_binders = [Var(t.aval) for t in eqn.out_binders]
            atoms.update(zip(eqn.out_binders, out_binders))
            eqns.append(JaxprEqn(eqn.primitive, [atoms[t] for t in eqn.inputs], eqn.params,
                                 out_binders))
        jaxpr = Jaxpr(constvars, [atoms[t] for t in tracers_in], eqns,
                      [atoms[t] for t in tracers_out])
        typecheck_jaxpr(jaxpr)
        return ClosedJaxpr(jaxpr, const_vals)


def make_jaxpr_flat(f, avals_in) -> ClosedJaxpr:
    """Stage ``f`` (a list of arrays -> a list of arrays) out for inputs of the given types."""
    with new_main(JaxprTrace, JaxprBuilder()) as main:
        trace = JaxprTrace(main)
        tracers_in = [JaxprTracer(trace, raise_to_shaped(aval)) for aval in avals_in]
        tracers_out = [full_raise(trace, out) for out in f(*tracers_in)]
        return main.global_data.build(tracers_in, tracers_out)


def make_jaxpr(f):
    """Like ``jax.make_jaxpr``: ``make_jaxpr(f)(*example_args)`` is the jaxpr of ``f``."""

    def staged(*args):
        args_flat, in_tree = tree_flatten(args)
        f_flat, _ = flatten_fun(f, in_tree)
        return make_jaxpr_flat(f_flat, [get_aval(x) for x in args_flat])

    return staged

