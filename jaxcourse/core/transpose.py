"""Transposing linear jaxprs; ``vjp`` and ``grad`` as linearize followed by transposition."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from jaxcourse.autodidax.core import (
    add,
    add_p,
    bind,
    broadcast,
    get_aval,
    mul,
    mul_p,
    neg,
    neg_p,
    reduce_sum,
    reduce_sum_p,
    transpose,
    transpose_p,
)
from jaxcourse.autodidax.pytree import flatten_fun, tree_flatten, tree_unflatten
from jaxcourse.core.jaxprs import Jaxpr, Lit, Var, make_jaxpr_flat
from jaxcourse.core.jit import hoist_consts, xla_call_p
from jaxcourse.core.partial_eval import linearize_flat


class UndefinedPrimal(NamedTuple):
    """A linear input: no value, only a type; what transposition solves for."""

    aval: object


def is_undefined(x) -> bool:
    return isinstance(x, UndefinedPrimal)


def zeros(aval):
    return np.zeros(aval.shape, aval.dtype)


def backward_pass(jaxpr: Jaxpr, consts, args, cts_out) -> list:
    """Cotangents of the undefined inputs in ``args``, given cotangents of the outputs.

    Equations that touch no undefined input are evaluated forwards first (they compute from the
    residuals); the others are walked backwards, each through its primitive's transpose rule.
    """
    primals: dict = {}
    linear = set()
    for var, val in zip(jaxpr.constvars + jaxpr.in_binders, list(consts) + list(args)):
        if is_undefined(val):
            linear.add(var)
        else:
            primals[var] = val

    def read(atom):
        if isinstance(atom, Lit):
            return atom.val
        return UndefinedPrimal(atom.aval) if atom in linear else primals[atom]

    linear_eqns = []
    for eqn in jaxpr.eqns:
        if any(isinstance(x, Var) and x in linear for x in eqn.inputs):
            linear.update(eqn.out_binders)
            linear_eqns.append(eqn)
        else:
            primals.update(zip(eqn.out_binders, bind(eqn.primitive, *map(read, eqn.inputs),
                                                     **eqn.params)))

    cotangents: dict = {}

    def accumulate(var, ct):
        # A variable used twice gets the sum of the cotangents from both uses.
        cotangents[var] = ct if var not in cotangents else add(cotangents[var], ct)

    for out, ct in zip(jaxpr.outs, cts_out):
        if not isinstance(out, Lit) and out in linear:
            accumulate(out, ct)
    for eqn in reversed(linear_eqns):
        cts = [cotangents.pop(v) if v in cotangents else zeros(v.aval) for v in eqn.out_binders]
        cts_in = transpose_rules[eqn.primitive](cts, *map(read, eqn.inputs), **eqn.params)
        for x, ct in zip(eqn.inputs, cts_in):
            if ct is not None and not isinstance(x, Lit) and x in linear:
                accumulate(x, ct)
    return [cotangents.get(v, zeros(v.aval)) if is_undefined(a) else None
            for v, a in zip(jaxpr.in_binders, args)]


# --- Transpose rules: cotangents of the outputs -> cotangents of the linear inputs -----------
def scalar_operand_ct(ct, aval):
    """The cotangent of one operand of ``add`` or ``mul``, from the output's cotangent ``ct``.

    An operand of the output's shape gets ``ct`` itself. A scalar operand that NumPy broadcasting
    copied to every element gets the sum of ``ct``. This core transposes no other broadcasting:
    an array operand with size-one or missing axes raises ``NotImplementedError``."""
    if tuple(np.shape(ct)) == tuple(aval.shape):
        return ct
    if tuple(aval.shape) == ():
        return reduce_sum(ct, tuple(range(np.ndim(ct))))
    raise NotImplementedError(
        f"transpose of add or mul with an operand of shape {tuple(aval.shape)} broadcast to "
        f"{tuple(np.shape(ct))}: this core transposes the broadcasting of scalars only")


def add_transpose(cts, x, y):
    (ct,) = cts
    return [scalar_operand_ct(ct, x.aval) if is_undefined(x) else None,
            scalar_operand_ct(ct, y.aval) if is_undefined(y) else None]


def mul_transpose(cts, x, y):
    # Linear in one operand only: the other one is a known value.
    (ct,) = cts
    if is_undefined(x):
        return [scalar_operand_ct(mul(ct, y), x.aval), None]
    return [None, scalar_operand_ct(mul(x, ct), y.aval)]


def neg_transpose(cts, x):
    return [neg(cts[0])]


def reduce_sum_transpose(cts, x, *, axis):
    # Every summed element gets the cotangent of its sum: broadcast it back.
    return [broadcast(cts[0], x.aval.shape, axis)]


def transpose_transpose(cts, x, *, perm):
    return [transpose(cts[0], list(np.argsort(perm)))]


def xla_call_transpose(cts, *args, name, jaxpr):
    """Transpose the called jaxpr into a new jaxpr, and call that."""
    undefined = [is_undefined(a) for a in args]
    known = [a for a in args if not is_undefined(a)]

    def transposed(*known_and_cts):
        it = iter(known_and_cts[:len(known)])
        inputs = [a if u else next(it) for a, u in zip(args, undefined)]
        cts_in = backward_pass(jaxpr, [], inputs, known_and_cts[len(known):])
        return [ct for ct in cts_in if ct is not None]

    avals = [get_aval(k) for k in known] + [get_aval(ct) for ct in cts]
    transposed_jaxpr, consts = hoist_consts(make_jaxpr_flat(transposed, avals))
    outs = iter(bind(xla_call_p, *consts, *known, *cts, name=f"transpose({name})",
                     jaxpr=transposed_jaxpr))
    return [next(outs) if u else None for u in undefined]


transpose_rules = {
    add_p: add_transpose,
    mul_p: mul_transpose,
    neg_p: neg_transpose,
    reduce_sum_p: reduce_sum_transpose,
    transpose_p: transpose_transpose,
    xla_call_p: xla_call_transpose,
}
# broadcast_p has none here on purpose: its transpose rule is a task of the assignment ps4_core.


# --- vjp and grad ----------------------------------------------------------------------------
def vjp_flat(f, primals):
    primals_out, linear = linearize_flat(f, primals)
    undefined = [UndefinedPrimal(get_aval(p)) for p in primals]

    def f_vjp(*cts_out):
        return backward_pass(linear.jaxpr, linear.consts, undefined, cts_out)

    return primals_out, f_vjp


def vjp(f, *primals):
    """Like ``jax.vjp``: the output, and a function from output cotangents to input cotangents."""
    primals_flat, in_tree = tree_flatten(primals)
    f_flat, out_tree = flatten_fun(f, in_tree)
    primals_out, f_vjp_flat = vjp_flat(f_flat, primals_flat)

    def f_vjp(ct_out):
        cts_out, _ = tree_flatten(ct_out)
        return tree_unflatten(in_tree, f_vjp_flat(*cts_out))

    return tree_unflatten(out_tree(), primals_out), f_vjp


def grad(f):
    """Like ``jax.grad`` with respect to the first argument, for a scalar-valued ``f``."""

    def gradient(x, *rest):
        out, f_vjp = vjp(f, x, *rest)
        if np.shape(out) != ():
            raise TypeError(f"grad needs a scalar output, got shape {np.shape(out)}")
        return f_vjp(np.ones((), np.result_type(out)))[0]

    return gradient
