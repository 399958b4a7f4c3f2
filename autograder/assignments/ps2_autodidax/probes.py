"""Probes of ps2_autodidax: run in the student's process, call the student's code, return plain
data. Never compare anything (the grader does).

Each task is probed with the course's own machinery (Part II's interpreters) and the student's
rules *of that task only*: every probe builds its interpreters from the rule tables the course
provides (snapshotted when this module is imported, before any student code runs) plus the rules
it grades, each counted, so that a check fails when the rule it scores was never called. No rule
of any graded task exists in this process except the student's.
"""

from __future__ import annotations

import functools
import math

import numpy as np

import jaxcourse.autodidax.vmap  # noqa: F401 - fills the provided batching rules
from autograder.assignments.ps2_autodidax import programs
from autograder.student.probe_helpers import each_case, module_of, own
from jaxcourse.autodidax import batching, core, extra
from jaxcourse.autodidax import jvp as provided_jvp
from jaxcourse.autodidax.batching import BatchTracer, move_batch_axis, not_mapped
from jaxcourse.autodidax.jvp import JVPTracer

GRADED = (extra.exp_p, extra.log_p, extra.div_p, extra.max_p, extra.matmul_p)


def _provided(table: dict, graded) -> dict:
    # Only the course's own rules: the engine imports this module before the student's code runs,
    # but an in-process run (nbgrader validate) may come after the notebook registered its rules.
    return {prim: rule for prim, rule in table.items()
            if prim not in graded and module_of(rule).startswith("jaxcourse.")}


BASE_JVP = _provided(provided_jvp.jvp_rules, GRADED)
BASE_VMAP = _provided(batching.vmap_rules, GRADED + (core.transpose_p, core.broadcast_p))


class Calls:
    """The student's rules of one task, each wrapped to count its calls."""

    def __init__(self, ns: dict, names: dict):
        self.count = {name: 0 for name in names}
        self.rules = {prim: self._counted(name, own(ns, name)) for name, prim in names.items()}

    def _counted(self, name, rule):
        def counted(*args, **params):
            self.count[name] += 1
            return rule(*args, **params)

        return counted

    def jvp_table(self):
        return {**BASE_JVP, **self.rules}

    def vmap_table(self):
        return {**BASE_VMAP, **self.rules}


def _f64(x):
    return np.asarray(x, dtype=np.float64)


# --- The course's interpreters, with a rule table of the probe's choosing ----------------------
def jvp_trace(table: dict) -> type:
    class TableJVPTrace(provided_jvp.JVPTrace):
        def process_primitive(self, primitive, tracers, params):
            if primitive not in table:
                raise NotImplementedError(f"no JVP rule for {primitive.name}")
            primals, tangents = core.unzip2((t.primal, t.tangent) for t in tracers)
            p_out, t_out = table[primitive](primals, tangents, **params)
            return [JVPTracer(self, p, t) for p, t in zip(p_out, t_out)]

    return TableJVPTrace


def batch_trace(table: dict) -> type:
    class TableBatchTrace(batching.BatchTrace):
        rules = table

        def process_primitive(self, primitive, tracers, params):
            if primitive not in table:
                raise NotImplementedError(f"no batching rule for {primitive.name}")
            return super().process_primitive(primitive, tracers, params)

    return TableBatchTrace


def jvp1(trace_type, f, primals, tangents):
    """(primal, tangent) of ``f``, a function of arrays to one array."""
    with core.new_main(trace_type) as main:
        trace = trace_type(main)
        out = f(*[JVPTracer(trace, p, t) for p, t in zip(primals, tangents)])
        out = core.full_raise(trace, out)
        return out.primal, out.tangent


def vmap1(trace_type, f, in_axes, *args):
    """``f`` (arrays to one array) mapped over ``in_axes``; the batch axis of the result first."""
    bdims = [not_mapped if ax is None else ax % np.ndim(x) for x, ax in zip(args, in_axes)]
    sizes = {np.shape(x)[bd] for x, bd in zip(args, bdims) if bd is not not_mapped}
    (size,) = sizes
    with core.new_main(trace_type, size) as main:
        trace = trace_type(main)
        out = f(*[x if bd is not_mapped else BatchTracer(trace, x, bd)
                  for x, bd in zip(args, bdims)])
        out = core.full_raise(trace, out)
        val, bdim = out.val, out.batch_dim
    return move_batch_axis(size, bdim, 0, val)


def nested_vmap(trace_type, f, levels):
    """``f`` under one vmap per entry of ``levels`` (in_axes, innermost first)."""
    for in_axes in levels:
        f = functools.partial(vmap1, trace_type, f, list(in_axes))
    return f


def jacfwd(jvp_type, batch_type, f, x):
    """The Jacobian of ``f`` at ``x``, shaped f(x).shape + x.shape: one JVP per basis vector, all
    at once under vmap (then, for a matrix ``x``, a reshape: only at the top, outside any trace)."""
    shape = tuple(np.shape(x))
    size = math.prod(shape)
    basis = np.eye(size).reshape((size,) + shape)
    columns = vmap1(batch_type, lambda v: jvp1(jvp_type, f, [x], [v])[1], [0], basis)
    if len(shape) != 1:
        columns = np.reshape(columns, shape + np.shape(columns)[1:])
    n_in = len(shape)
    return core.transpose(columns, [*range(n_in, np.ndim(columns)), *range(n_in)])


def derivatives(jvp_type, f, x, order):
    """[f'(x), f''(x), ...] of a scalar function, nesting ``jvp1``."""
    out, g = [], f
    for _ in range(order):
        g = functools.partial(lambda h, v: jvp1(jvp_type, h, [v], [1.0])[1], g)
        out.append(_f64(g(x)))
    return out


def result(calls: Calls, value):
    return {"calls": dict(calls.count), "value": value}


# --- ps2.jvp_rules -----------------------------------------------------------------------------
JVP_RULES = {"exp_jvp": extra.exp_p, "log_jvp": extra.log_p, "div_jvp": extra.div_p,
             "max_jvp": extra.max_p}


def probe_jvp_composite(ns, inputs):
    calls = Calls(ns, JVP_RULES)
    trace_type = jvp_trace(calls.jvp_table())
    f = programs.build(inputs["program"], programs.ours())
    primal, tangent = jvp1(trace_type, f, inputs["primals"], inputs["tangents"])
    out = [_f64(primal), _f64(tangent)]
    for case in inputs.get("cases", []):  # single primitives at chosen points (ties, tiny divisors)
        op = programs.ours()[case["op"]]
        p, t = jvp1(trace_type, op, case["primals"], case["tangents"])
        out += [_f64(p), _f64(t)]
    return result(calls, out)


@each_case
def probe_jvp_cases(ns, inputs):
    """probe_jvp_composite on every case of a case matrix (ps2.jvp_rules.exp_log)."""
    return probe_jvp_composite(ns, inputs)


@each_case
def probe_jvp_nested(ns, inputs):
    calls = Calls(ns, JVP_RULES)
    f = programs.build(inputs["program"], programs.ours())
    values = derivatives(jvp_trace(calls.jvp_table()), f, inputs["x"], inputs["order"])
    return result(calls, values)


@each_case
def probe_jvp_closure(ns, inputs):
    calls = Calls(ns, JVP_RULES)
    trace_type = jvp_trace(calls.jvp_table())

    def deriv(f):
        return lambda v: jvp1(trace_type, f, [v], [1.0])[1]

    values = [_f64(deriv(g)(inputs["x"]))
              for g in programs.closures(programs.ours(), deriv, inputs["y0"], inputs["c"])]
    return result(calls, values)


# --- ps2.matmul --------------------------------------------------------------------------------
def _matmul_calls(ns):
    calls = Calls(ns, {"matmul_jvp": extra.matmul_p})
    batch = Calls(ns, {"matmul_batch": extra.matmul_p})
    return calls, batch


@each_case
def probe_matmul_jvp(ns, inputs):
    calls = Calls(ns, {"matmul_jvp": extra.matmul_p})
    f = programs.matmul_chain(inputs["program"], programs.ours())
    primal, tangent = jvp1(jvp_trace(calls.jvp_table()), f, inputs["primals"], inputs["tangents"])
    return result(calls, [_f64(primal), _f64(tangent)])


@each_case
def probe_matmul_nested(ns, inputs):
    calls = Calls(ns, {"matmul_jvp": extra.matmul_p})
    g = programs.matmul_line(inputs, programs.ours())
    return result(calls, derivatives(jvp_trace(calls.jvp_table()), g, inputs["t"], 2))


@each_case
def probe_matmul_vmap(ns, inputs):
    batch = Calls(ns, {"matmul_batch": extra.matmul_p})
    f = programs.matmul_pair(programs.ours())
    out = vmap1(batch_trace(batch.vmap_table()), f, inputs["in_axes"], *inputs["args"])
    return result(batch, _f64(out))


def probe_matmul_jacfwd(ns, inputs):
    jvp_calls, batch = _matmul_calls(ns)
    f = programs.matmul_sizes(inputs, programs.ours())
    jac = jacfwd(jvp_trace(jvp_calls.jvp_table()), batch_trace(batch.vmap_table()), f,
                 inputs["x"])
    return {"calls": {**jvp_calls.count, **batch.count}, "value": _f64(jac)}


@each_case
def probe_matmul_jvp_of_vmap(ns, inputs):
    jvp_calls, batch = _matmul_calls(ns)
    f = programs.matmul_pair(programs.ours())
    batch_type = batch_trace(batch.vmap_table())

    def batched(*args):
        return vmap1(batch_type, f, inputs["in_axes"], *args)

    primal, tangent = jvp1(jvp_trace(jvp_calls.jvp_table()), batched, inputs["args"],
                           inputs["tangents"])
    return {"calls": {**jvp_calls.count, **batch.count}, "value": [_f64(primal), _f64(tangent)]}


# --- ps2.shape_rules ---------------------------------------------------------------------------
SHAPE_RULES = {"transpose_batch": core.transpose_p, "broadcast_batch": core.broadcast_p}


def probe_shape_cases(ns, inputs):
    calls = Calls(ns, SHAPE_RULES)
    trace_type = batch_trace(calls.vmap_table())
    lib = programs.ours()
    out = []
    for case in inputs["cases"]:
        f = programs.shape_case(case, lib)
        out.append(_f64(vmap1(trace_type, f, case["in_axes"], *case["args"])))
    return result(calls, out)


@each_case
def probe_shape_nested(ns, inputs):
    calls = Calls(ns, SHAPE_RULES)
    f = programs.build(inputs["program"], programs.ours())
    batched = nested_vmap(batch_trace(calls.vmap_table()), f, inputs["levels"])
    return result(calls, _f64(batched(*inputs["args"])))


def probe_shape_hessian(ns, inputs):
    calls = Calls(ns, SHAPE_RULES)
    jvp_type, batch_type = jvp_trace(dict(BASE_JVP)), batch_trace(calls.vmap_table())
    f = programs.mixing(inputs["program"], programs.ours())
    hessian = jacfwd(jvp_type, batch_type, lambda v: jacfwd(jvp_type, batch_type, f, v),
                     inputs["x"])
    return result(calls, _f64(hessian))


# --- ps2.out_axes ------------------------------------------------------------------------------
@each_case
def probe_out_axes(ns, inputs):
    vmap_axes = own(ns, "vmap_axes")
    f = programs.tree_function(inputs["program"], programs.ours(), inputs["const"])
    args = programs.tree_args(*inputs["args"])
    in_axes = programs.in_axes_tree(inputs["in_axes"], inputs["in_style"])
    out_axes = programs.out_axes_tree(inputs["out_axes"], inputs["out_style"])
    out = vmap_axes(f, in_axes=in_axes, out_axes=out_axes)(*args)
    return {"structure": programs.describe(out), "values": programs.encode(out)}


@each_case
def probe_out_axes_ints(ns, inputs):
    vmap_axes = own(ns, "vmap_axes")
    f = programs.build(inputs["program"], programs.ours())
    out = vmap_axes(f, in_axes=inputs["in_axes"], out_axes=inputs["out_axes"])(*inputs["args"])
    default = vmap_axes(f)(*inputs["default_args"])
    return [programs.encode(out), programs.encode(default)]


def probe_out_axes_errors(ns, inputs):
    vmap_axes = own(ns, "vmap_axes")
    out = []
    for case in programs.error_cases(inputs, programs.ours()):
        try:
            case(vmap_axes)
        except Exception as err:  # noqa: BLE001 - the kind of error is the answer
            out.append(type(err).__name__)
        else:
            out.append("nothing")
    return out
