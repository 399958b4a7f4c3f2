"""Probes of ps2_autodidax: run in the student's process, call the student's code, return plain
data. Never compare anything (the grader does).

Each task is probed on its own. The student's functions read the other tasks' names as globals of
the notebook; while a probe runs, those names are swapped for the reference implementations of
``jaxcourse.autodidax`` (and swapped back), so a mistake in one task costs points on that task
only. Functions that must be the student's own are refused when they come from ``jaxcourse``.
"""

from __future__ import annotations

import functools
from contextlib import contextmanager

import numpy as np

from autograder.assignments.ps2_autodidax import programs
from jaxcourse.autodidax import batching as ref_batching
from jaxcourse.autodidax import core
from jaxcourse.autodidax import jvp as ref_jvp
from jaxcourse.autodidax import pytree as ref_pytree
from jaxcourse.autodidax import vmap as ref_vmap
from jaxcourse.autodidax.batching import BatchTracer, move_batch_axis, not_mapped
from jaxcourse.autodidax.jvp import JVPTracer

RULE_PRIMITIVES = {
    "jvp_rules": (core.add_p, core.mul_p, core.neg_p, core.sin_p, core.cos_p, core.reduce_sum_p,
                  core.greater_p, core.less_p),
    "vmap_rules": (core.add_p, core.mul_p, core.neg_p, core.sin_p, core.cos_p, core.reduce_sum_p),
}


def _origin(obj) -> str:
    obj = obj.func if isinstance(obj, functools.partial) else obj
    return getattr(obj, "__module__", None) or ""


def own(ns: dict, name: str):
    """``ns[name]``, written in the notebook rather than imported from the course package."""
    if name not in ns:
        raise NameError(f"{name} is not defined")
    obj = ns[name]
    if _origin(obj).startswith("jaxcourse"):
        raise ImportError(f"{name} comes from {_origin(obj)}, not from your notebook")
    if name in RULE_PRIMITIVES:
        for prim in RULE_PRIMITIVES[name]:
            if prim in obj and _origin(obj[prim]).startswith("jaxcourse"):
                raise ImportError(f"the {prim.name} rule in {name} is not your own")
    return obj


class _RefBatchTrace(ref_batching.BatchTrace):
    rules = ref_batching.vmap_rules  # filled by importing jaxcourse.autodidax.vmap


REFERENCE = {
    "jvp_rules": ref_jvp.jvp_rules,
    "JVPTrace": ref_jvp.JVPTrace,
    "tree_flatten": ref_pytree.tree_flatten,
    "tree_unflatten": ref_pytree.tree_unflatten,
    "flatten_fun": ref_pytree.flatten_fun,
    "jvp_flat": ref_jvp.jvp_flat,
    "jvp": ref_jvp.jvp,
    "BatchTrace": _RefBatchTrace,
    "vmap_flat": ref_vmap.vmap_flat,
    "vmap": ref_vmap.vmap,
}


@contextmanager
def reference(ns: dict, *names: str):
    """While inside, the notebook's globals ``names`` are the reference implementations."""
    saved = {name: ns[name] for name in names if name in ns}
    ns.update({name: REFERENCE[name] for name in names})
    try:
        yield
    finally:
        for name in names:
            ns.pop(name, None)
        ns.update(saved)
        del core.trace_stack[1:]  # a crash inside a transformation must not leave it pushed


def _f64(x):
    return np.asarray(x, dtype=np.float64)


# --- Drivers built from one task's code and the reference of everything else -----------------
def _jvp_driver(trace_type):
    """JVP of a function of arrays to one array, with ``trace_type`` as the interpreter."""

    def jvp1(f, primals, tangents):
        with core.new_main(trace_type) as main:
            trace = trace_type(main)
            out = f(*[JVPTracer(trace, p, t) for p, t in zip(primals, tangents)])
            out = core.full_raise(trace, out)
            return out.primal, out.tangent

    return jvp1


def _rules_trace(rules):
    class RulesJVPTrace(ref_jvp.JVPTrace):
        def process_primitive(self, primitive, tracers, params):
            primals = [t.primal for t in tracers]
            tangents = [t.tangent for t in tracers]
            p_out, t_out = rules[primitive](primals, tangents, **params)
            return [JVPTracer(self, p, t) for p, t in zip(p_out, t_out)]

    return RulesJVPTrace


def _vmap_driver(rules):
    """vmap of a function of arrays to one array, batching with ``rules``."""

    class RulesBatchTrace(ref_batching.BatchTrace):
        pass

    RulesBatchTrace.rules = rules

    def vmap1(f, in_axes, *args):
        bdims = [not_mapped if ax is None else ax for ax in in_axes]
        (size,) = {np.shape(x)[bd] for x, bd in zip(args, bdims) if bd is not not_mapped}
        with core.new_main(RulesBatchTrace, size) as main:
            trace = RulesBatchTrace(main)
            out = f(*[x if bd is not_mapped else BatchTracer(trace, x, bd)
                      for x, bd in zip(args, bdims)])
            out = core.full_raise(trace, out)
            val, bdim = out.val, out.batch_dim
        return move_batch_axis(size, bdim, 0, val)

    return vmap1


def _deriv(jvp1, h):
    return lambda v: jvp1(h, (v,), (1.0,))[1]


def _derivs(jvp1, f, x, order):
    """[f'(x), f''(x), ...] up to ``order``, nesting ``jvp1``."""
    out, g = [], f
    for _ in range(order):
        g = _deriv(jvp1, g)
        out.append(_f64(g(x)))
    return out


# --- ps2.jvp_rules ---------------------------------------------------------------------------
def _rules_jvp1(ns):
    return _jvp_driver(_rules_trace(own(ns, "jvp_rules")))


def probe_jvp_rules_composite(ns, inputs):
    f = programs.build(inputs["program"], programs.OURS)
    primal, tangent = _rules_jvp1(ns)(f, inputs["primals"], inputs["tangents"])
    return [_f64(primal), _f64(tangent)]


def probe_jvp_rules_nested(ns, inputs):
    f = programs.build(inputs["program"], programs.OURS)
    return _derivs(_rules_jvp1(ns), f, inputs["x"], inputs["order"])


def probe_jvp_rules_comparisons(ns, inputs):
    jvp1 = _rules_jvp1(ns)
    x, y = inputs["x"], inputs["y"]
    out = []
    for compare in (core.greater, core.less):
        primal, tangent = jvp1(compare, (x, y), (np.ones_like(x), np.ones_like(y)))
        out += [_f64(primal), _f64(tangent)]

    def branchy(v):  # Python control flow on a JVP tracer
        return core.sin(v) * v if v > inputs["c"] else core.cos(v)

    for v in inputs["points"]:
        out += [_f64(t) for t in jvp1(branchy, (v,), (1.0,))]
    return out


# --- ps2.jvp_trace ---------------------------------------------------------------------------
def _trace_jvp1(ns):
    return _jvp_driver(own(ns, "JVPTrace"))


def probe_jvp_trace_composite(ns, inputs):
    f = programs.build(inputs["program"], programs.OURS)
    with reference(ns, "jvp_rules"):
        primal, tangent = _trace_jvp1(ns)(f, inputs["primals"], inputs["tangents"])
    return [_f64(primal), _f64(tangent)]


def probe_jvp_trace_nested(ns, inputs):
    f = programs.build(inputs["program"], programs.OURS)
    with reference(ns, "jvp_rules"):
        return _derivs(_trace_jvp1(ns), f, inputs["x"], inputs["order"])


# --- ps2.pytree ------------------------------------------------------------------------------
def probe_pytree_leaves(ns, inputs):
    leaves, _ = own(ns, "tree_flatten")(programs.decode(inputs["tree"]))
    return _f64(list(leaves))


def probe_pytree_roundtrip(ns, inputs):
    tree = programs.decode(inputs["tree"])
    leaves, treedef = own(ns, "tree_flatten")(tree)
    rebuilt = own(ns, "tree_unflatten")(treedef, [2.0 * v for v in leaves])
    values = np.asarray(programs.canonical_leaves(rebuilt), dtype=np.float64)
    return {"structure": programs.describe(rebuilt), "values": values}


def probe_pytree_structure(ns, inputs):
    tree_flatten, flatten_fun = own(ns, "tree_flatten"), own(ns, "flatten_fun")
    tree = programs.decode(inputs["tree"])
    reordered = programs.decode(inputs["reordered"])
    other = programs.decode(inputs["other"])
    same = tree_flatten(tree)[1] == tree_flatten(reordered)[1]
    differ = tree_flatten(tree)[1] != tree_flatten(other)[1]
    # flatten_fun: a function of the tree whose output is `other`-shaped, called on flat leaves.
    leaves, in_tree = tree_flatten((tree,))
    f_flat, out_tree = flatten_fun(lambda t: programs.decode(inputs["other"]), in_tree)
    out_leaves = f_flat(*leaves)
    flat_ok = out_tree() == tree_flatten(other)[1]
    return {"flags": [bool(same), bool(differ), bool(flat_ok)], "out": _f64(list(out_leaves))}


# --- ps2.jvp ---------------------------------------------------------------------------------
JVP_DEPS = ("jvp_rules", "JVPTrace", "tree_flatten", "tree_unflatten", "flatten_fun")


def _tree_args(inputs):
    def tree(vals):
        x, y, z, w = vals
        return {"a": x, "b": [y, programs.Pair(z, w)]}

    return tree(inputs["primals"]), tree(inputs["tangents"])


def probe_jvp_pytree(ns, inputs):
    own(ns, "jvp_flat")
    jvp = own(ns, "jvp")
    primals, tangents = _tree_args(inputs)
    with reference(ns, *JVP_DEPS):
        out, dout = jvp(programs.tree_function(inputs["program"], programs.OURS), (primals,), (tangents,))
    return {"structure": programs.describe(out) + programs.describe(dout),
            "values": [programs.encode(out), programs.encode(dout)]}


def probe_jvp_perturbation(ns, inputs):
    own(ns, "jvp_flat")
    jvp = own(ns, "jvp")

    def deriv(f):
        return lambda v: jvp(f, (v,), (1.0,))[1]

    x, y0 = inputs["x"], inputs["y0"]
    with reference(ns, *JVP_DEPS):
        return [
            _f64(deriv(lambda a: a * deriv(lambda b: a + b)(y0))(x)),
            _f64(deriv(lambda a: a * deriv(lambda b: a)(y0))(x)),
            _f64(deriv(lambda a: core.sin(a) * deriv(lambda b: a * b)(y0))(x)),
        ]


def probe_jvp_nested(ns, inputs):
    own(ns, "jvp_flat")
    jvp = own(ns, "jvp")
    f = programs.build(inputs["program"], programs.OURS)
    with reference(ns, *JVP_DEPS):
        return _derivs(lambda g, p, t: jvp(g, p, t), f, inputs["x"], inputs["order"])


def probe_jvp_of_vmap(ns, inputs):
    own(ns, "jvp_flat")
    jvp = own(ns, "jvp")
    f = programs.build(inputs["program"], programs.OURS)
    batched = ref_vmap.vmap(lambda *a: programs.OURS["sum"](f(*a)), tuple(inputs["in_axes"]))
    with reference(ns, *JVP_DEPS):
        primal, tangent = jvp(batched, tuple(inputs["primals"]), tuple(inputs["tangents"]))
    return [_f64(primal), _f64(tangent)]


# --- ps2.vmap_rules --------------------------------------------------------------------------
def _rules_vmap1(ns):
    return _vmap_driver(own(ns, "vmap_rules"))


def probe_vmap_rules_mixed_axes(ns, inputs):
    f = programs.build(inputs["program"], programs.OURS)
    def g(*args):  # a scalar per batch member
        return programs.OURS["sum"](f(*args))

    return _f64(_rules_vmap1(ns)(g, inputs["in_axes"], *inputs["args"]))


def probe_vmap_rules_reduce_sum(ns, inputs):
    vmap1 = _rules_vmap1(ns)
    return [_f64(vmap1(lambda v, axis=tuple(axis): core.reduce_sum(v, axis), [in_axis], x))
            for x, in_axis, axis in inputs["cases"]]


def probe_vmap_rules_of_jvp(ns, inputs):
    f = programs.build(inputs["program"], programs.OURS)

    def tangent_of(x, t):
        return ref_jvp.jvp_v1(f, (x,), (t,))[1]

    return _f64(_rules_vmap1(ns)(tangent_of, [0, 0], inputs["xs"], inputs["ts"]))


# --- ps2.vmap --------------------------------------------------------------------------------
VMAP_DEPS = ("BatchTrace", "tree_flatten", "tree_unflatten", "flatten_fun")


def probe_vmap_pytree(ns, inputs):
    own(ns, "vmap_flat")
    vmap = own(ns, "vmap")
    body = programs.build(inputs["program"], programs.OURS)

    def f(tree, scale):
        x, (y, pair) = tree["a"], tree["b"]
        out = body(x, y, pair.first, pair.second)
        return {"sum": programs.OURS["sum"](out), "pair": programs.Pair(out, x * scale)}

    ax = inputs["in_axes"]
    args = ({"a": inputs["args"][0], "b": [inputs["args"][1],
                                          programs.Pair(inputs["args"][2], inputs["args"][3])]},
            inputs["scale"])
    axes = ({"a": ax[0], "b": [ax[1], programs.Pair(ax[2], ax[3])]}, None)
    with reference(ns, *VMAP_DEPS):
        out = vmap(f, axes)(*args)
    return {"structure": programs.describe(out), "values": programs.encode(out)}


def probe_vmap_of_jvp(ns, inputs):
    own(ns, "vmap_flat")
    vmap = own(ns, "vmap")
    f = programs.build(inputs["program"], programs.OURS)

    def jvp_at(x, t):
        return ref_jvp.jvp(f, (x,), (t,))

    with reference(ns, *VMAP_DEPS):
        primal, tangent = vmap(jvp_at, (0, 0))(inputs["xs"], inputs["ts"])
    return [_f64(primal), _f64(tangent)]


def probe_vmap_unmapped_outputs(ns, inputs):
    own(ns, "vmap_flat")
    vmap = own(ns, "vmap")
    const = inputs["const"]

    def f(x, y):
        return [core.sin(x), y, const]

    with reference(ns, *VMAP_DEPS):
        return [_f64(v) for v in vmap(f, (inputs["axis"], None))(inputs["x"], inputs["y"])]


# --- ps2.jacfwd ------------------------------------------------------------------------------
JACFWD_DEPS = JVP_DEPS + ("jvp_flat", "jvp") + VMAP_DEPS[1:] + ("BatchTrace", "vmap_flat", "vmap")


def probe_jacfwd_mixing(ns, inputs):
    jacfwd = own(ns, "jacfwd")
    f = programs.build(inputs["program"], programs.OURS)

    def mixing(v):
        return core.mul(f(v), programs.OURS["sum"](v))

    with reference(ns, *JACFWD_DEPS):
        return _f64(jacfwd(mixing, inputs["x"]))


def probe_jacfwd_matrix(ns, inputs):
    jacfwd = own(ns, "jacfwd")
    f = programs.build(inputs["program"], programs.OURS)
    with reference(ns, *JACFWD_DEPS):
        return _f64(jacfwd(f, inputs["x"]))
