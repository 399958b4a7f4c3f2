"""Probes of ps4_core: run in the student's process, call the student's code, return plain data.
Never compare anything (the grader does).

The three tasks are independent: the transpose rule is probed through the course's ``grad`` and
``jit``, the two passes on jaxprs the course's ``make_jaxpr`` stages from the programs the grader
drew. Functions that must be the student's own are taken with ``autograder.student.probe_helpers.own``.
Results keep their dtypes (the grader compares them with JAX's), and the argument a pass must
leave unchanged is compared deeply before and after the call (:func:`snapshot`).
"""

from __future__ import annotations

import numpy as np

from autograder.assignments.ps4_core import programs
from autograder.student.probe_helpers import each_case, own
from jaxcourse.autodidax import core
from jaxcourse.core.jaxprs import (
    ClosedJaxpr,
    Jaxpr,
    JaxprEqn,
    Lit,
    Var,
    eval_jaxpr,
    make_jaxpr,
    typecheck_jaxpr,
)
from jaxcourse.core.jit import jit
from jaxcourse.core.transpose import UndefinedPrimal, grad, transpose_rules


def _plain(values) -> list:
    """Each value as an array of its own dtype: the grader compares dtypes too."""
    return [np.asarray(v) for v in values]


def _typed(value) -> dict:
    """A cotangent as the grader compares it with JAX's: values, shape and dtype, and whether it
    is a Python scalar (what JAX calls weakly typed; a JAX gradient of an array never is)."""
    python_scalar = isinstance(value, (bool, int, float, complex)) and not isinstance(
        value, np.generic)  # np.float64 is a float too, but it has a dtype
    return {"value": np.asarray(value), "weak": python_scalar}


class _Ids:
    """Numbers for objects, in order of first sight, holding each one so that no id is reused
    between the snapshots before and after a call."""

    def __init__(self) -> None:
        self.seen: dict[int, tuple[int, object]] = {}

    def __call__(self, obj) -> int:
        return self.seen.setdefault(id(obj), (len(self.seen), obj))[0]


def snapshot(obj, ids: _Ids):
    """``obj`` (a jaxpr, its equations, params, nested jaxprs of jit and cond, constants) as
    plain nested tuples: every variable by identity (``ids``), every array by its bytes. Two
    snapshots taken with the same ``ids`` are equal only when nothing was changed in place."""
    if isinstance(obj, Jaxpr):
        return ("jaxpr", ids(obj), snapshot(obj.constvars, ids), snapshot(obj.in_binders, ids),
                snapshot(obj.eqns, ids), snapshot(obj.outs, ids))
    if isinstance(obj, ClosedJaxpr):
        return ("closed", snapshot(obj.jaxpr, ids), snapshot(obj.consts, ids))
    if isinstance(obj, JaxprEqn):
        return ("eqn", ids(obj.primitive), getattr(obj.primitive, "name", None),
                snapshot(obj.inputs, ids), snapshot(obj.params, ids),
                snapshot(obj.out_binders, ids))
    if isinstance(obj, Var):
        return ("var", ids(obj), tuple(obj.aval.shape), str(obj.aval.dtype))
    if isinstance(obj, Lit):
        return ("lit", ids(obj), repr(obj.val), str(obj.aval.dtype))
    if isinstance(obj, dict):
        return ("dict", ids(obj), tuple((repr(k), snapshot(v, ids)) for k, v in obj.items()))
    if isinstance(obj, list):  # mutable: the same list, holding the same
        return ("list", ids(obj), tuple(snapshot(v, ids) for v in obj))
    if isinstance(obj, tuple):
        return ("tuple", tuple(snapshot(v, ids) for v in obj))
    if isinstance(obj, (np.ndarray, np.generic)):
        arr = np.asarray(obj)
        return ("array", arr.shape, str(arr.dtype), arr.tobytes())
    return ("other", type(obj).__name__, repr(obj))


# --- ps4.broadcast_transpose -----------------------------------------------------------------
def _broadcast_loss(inputs):
    w = np.asarray(inputs["w"])
    shape, axes = tuple(inputs["shape"]), tuple(inputs["axes"])

    def loss(x):
        y = core.broadcast(x, shape, axes)
        return core.reduce_sum(core.sin(y) * w, tuple(range(len(shape))))

    return loss


def _with_rule(ns):
    transpose_rules[core.broadcast_p] = own(ns, "broadcast_transpose")


@each_case
def probe_broadcast_grad(ns, inputs):
    _with_rule(ns)
    return _typed(grad(_broadcast_loss(inputs))(np.asarray(inputs["x"])))


@each_case
def probe_broadcast_grad_jit(ns, inputs):
    _with_rule(ns)
    return _typed(jit(grad(_broadcast_loss(inputs)))(np.asarray(inputs["x"])))


@each_case
def probe_broadcast_direct(ns, inputs):
    rule = own(ns, "broadcast_transpose")
    x = np.asarray(inputs["x"])
    out = rule([np.asarray(inputs["ct"])], UndefinedPrimal(core.ShapedArray(x.shape, x.dtype)),
               shape=tuple(inputs["shape"]), axes=tuple(inputs["axes"]))
    if not isinstance(out, (list, tuple)):
        raise TypeError(f"the rule returned a {type(out).__name__}, not a list")
    return [_typed(v) for v in out]


# --- ps4.dce ---------------------------------------------------------------------------------
def _staged(inputs):
    const = np.asarray(inputs["const"])
    f = programs.build(inputs["program"], programs.ours())

    def with_const(x, y):
        return f(x, y, const)  # the array is closed over: a constvar

    args = [np.asarray(a) for a in inputs["args"]]
    return make_jaxpr(with_const)(*args), args


@each_case
def probe_dce(ns, inputs):
    dce = own(ns, "dce_jaxpr")
    closed, args = _staged(inputs)
    ids = _Ids()
    before = snapshot(closed, ids)
    smaller = dce(closed.jaxpr)
    unchanged = snapshot(closed, ids) == before
    if not isinstance(smaller, Jaxpr):
        raise TypeError(f"dce_jaxpr returned a {type(smaller).__name__}, not a Jaxpr")
    typecheck_jaxpr(smaller)
    return {"prims": [eqn.primitive.name for eqn in smaller.eqns],
            "argument_unchanged": unchanged,
            "n_in": len(smaller.in_binders), "n_const": len(smaller.constvars),
            "values": _plain(eval_jaxpr(smaller, closed.consts, args))}


# --- ps4.fold_constants ----------------------------------------------------------------------
def _with_literals(jaxpr: Jaxpr, n_consts: int, lits: list) -> Jaxpr:
    """The staged jaxpr with the input binders after x (programs.draw_foldable's literal
    arguments) written into its equations as literals: the core computes an operation on
    literals alone while tracing, so only this way does a jaxpr hold one."""
    binders = jaxpr.in_binders[n_consts + 1:]
    as_lit = {v: Lit(float(val)) for v, val in zip(binders, lits)}

    def atom(a):
        return as_lit.get(a, a) if isinstance(a, Var) else a

    eqns = [JaxprEqn(e.primitive, [atom(a) for a in e.inputs], e.params, e.out_binders)
            for e in jaxpr.eqns]
    return Jaxpr(jaxpr.in_binders[:n_consts], jaxpr.in_binders[n_consts:n_consts + 1], eqns,
                 [atom(a) for a in jaxpr.outs])


@each_case
def probe_fold(ns, inputs):
    fold = own(ns, "fold_constants")
    consts = [np.asarray(c) for c in inputs["consts"]]
    x = np.asarray(inputs["x"])
    lits = [np.float64(v) for v in inputs.get("lits", [])]
    f = programs.build(inputs["program"], programs.ours())
    as_constants = _with_literals(make_jaxpr(f)(*consts, x, *lits).jaxpr, len(consts), lits)
    ids = _Ids()
    before = snapshot((as_constants, consts), ids)
    result = fold(as_constants, consts)
    unchanged = snapshot((as_constants, consts), ids) == before
    if not isinstance(result, tuple) or len(result) != 2 or not isinstance(result[0], Jaxpr):
        raise TypeError("fold_constants must return (jaxpr, consts)")
    folded, values = result
    values = list(values)
    typecheck_jaxpr(folded)
    # Each constvar's declared type against the value it is bound to: typecheck_jaxpr cannot
    # see a scalar constvar bound to a vector (add and mul broadcast).
    typed = all(tuple(v.aval.shape) == np.shape(c) and np.dtype(v.aval.dtype) == np.asarray(c).dtype
                for v, c in zip(folded.constvars, values))
    return {"prims": [eqn.primitive.name for eqn in folded.eqns], "n_const": len(values),
            "n_constvars": len(folded.constvars), "n_in": len(folded.in_binders),
            "consts_typed": typed, "argument_unchanged": unchanged,
            "values": _plain(eval_jaxpr(folded, values, [x]))}
