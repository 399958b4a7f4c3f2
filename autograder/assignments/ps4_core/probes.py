"""Probes of ps4_core: run in the student's process, call the student's code, return plain data.
Never compare anything (the grader does).

The three tasks are independent: the transpose rule is probed through the course's ``grad`` and
``jit``, the two passes on jaxprs the course's ``make_jaxpr`` stages from the programs the grader
drew. Functions that must be the student's own are taken with ``autograder.student.probe_helpers.own``.
"""

from __future__ import annotations

import numpy as np

from autograder.assignments.ps4_core import programs
from autograder.student.probe_helpers import each_case, own
from jaxcourse.autodidax import core
from jaxcourse.core.jaxprs import Jaxpr, eval_jaxpr, make_jaxpr, typecheck_jaxpr
from jaxcourse.core.jit import jit
from jaxcourse.core.transpose import UndefinedPrimal, grad, transpose_rules


def _plain(values) -> list:
    return [np.asarray(v, dtype=np.float64) for v in values]


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
    return np.asarray(grad(_broadcast_loss(inputs))(np.asarray(inputs["x"])), dtype=np.float64)


@each_case
def probe_broadcast_grad_jit(ns, inputs):
    _with_rule(ns)
    return np.asarray(jit(grad(_broadcast_loss(inputs)))(np.asarray(inputs["x"])),
                      dtype=np.float64)


@each_case
def probe_broadcast_direct(ns, inputs):
    rule = own(ns, "broadcast_transpose")
    x = np.asarray(inputs["x"])
    out = rule([np.asarray(inputs["ct"])], UndefinedPrimal(core.ShapedArray(x.shape, x.dtype)),
               shape=tuple(inputs["shape"]), axes=tuple(inputs["axes"]))
    if not isinstance(out, (list, tuple)):
        raise TypeError(f"the rule returned a {type(out).__name__}, not a list")
    return _plain(out)


# --- ps4.dce ---------------------------------------------------------------------------------
def _staged(inputs):
    const = np.asarray(inputs["const"])
    f = programs.build(inputs["program"], programs.OURS)

    def with_const(x, y):
        return f(x, y, const)  # the array is closed over: a constvar

    args = [np.asarray(a) for a in inputs["args"]]
    return make_jaxpr(with_const)(*args), args


@each_case
def probe_dce(ns, inputs):
    dce = own(ns, "dce_jaxpr")
    closed, args = _staged(inputs)
    smaller = dce(closed.jaxpr)
    if not isinstance(smaller, Jaxpr):
        raise TypeError(f"dce_jaxpr returned a {type(smaller).__name__}, not a Jaxpr")
    typecheck_jaxpr(smaller)
    return {"prims": [eqn.primitive.name for eqn in smaller.eqns],
            "eqns_left_in_argument": len(closed.jaxpr.eqns),
            "n_in": len(smaller.in_binders), "n_const": len(smaller.constvars),
            "values": _plain(eval_jaxpr(smaller, closed.consts, args))}


# --- ps4.fold_constants ----------------------------------------------------------------------
@each_case
def probe_fold(ns, inputs):
    fold = own(ns, "fold_constants")
    consts = [np.asarray(c) for c in inputs["consts"]]
    x = np.asarray(inputs["x"])
    f = programs.build(inputs["program"], programs.OURS)
    staged = make_jaxpr(f)(*consts, x).jaxpr
    n = len(consts)
    as_constants = Jaxpr(staged.in_binders[:n], staged.in_binders[n:], staged.eqns, staged.outs)
    result = fold(as_constants, consts)
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
            "consts_typed": typed, "values": _plain(eval_jaxpr(folded, values, [x]))}
