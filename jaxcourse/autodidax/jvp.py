"""Forward-mode differentiation: tracers carrying a primal and a tangent."""

from __future__ import annotations

from jaxcourse.autodidax.core import (
    Trace,
    Tracer,
    add_p,
    broadcast,
    broadcast_p,
    cos,
    cos_p,
    full_raise,
    get_aval,
    greater,
    greater_p,
    less,
    less_p,
    mul_p,
    neg,
    neg_p,
    new_main,
    reduce_sum,
    reduce_sum_p,
    sin,
    sin_p,
    transpose,
    transpose_p,
    unzip2,
    zeros_like,
)
from jaxcourse.autodidax.pytree import flatten_fun, tree_flatten, tree_unflatten


class JVPTracer(Tracer):
    def __init__(self, trace, primal, tangent):
        self._trace, self.primal, self.tangent = trace, primal, tangent

    @property
    def aval(self):
        return get_aval(self.primal)


class JVPTrace(Trace):
    def pure(self, val):
        # A value this interpreter did not see coming in does not depend on its input.
        return JVPTracer(self, val, zeros_like(val))

    lift = pure

    def process_primitive(self, primitive, tracers, params):
        primals, tangents = unzip2((t.primal, t.tangent) for t in tracers)
        primal_outs, tangent_outs = jvp_rules[primitive](primals, tangents, **params)
        return [JVPTracer(self, p, t) for p, t in zip(primal_outs, tangent_outs)]


# Each rule maps (primals, tangents) to (primal outputs, tangent outputs). Rules are written with
# the primitives' wrappers, so the interpreter one level down runs them: that is what makes
# derivatives of derivatives work.
def add_jvp(primals, tangents):
    (x, y), (dx, dy) = primals, tangents
    return [x + y], [dx + dy]


def mul_jvp(primals, tangents):
    (x, y), (dx, dy) = primals, tangents
    return [x * y], [dx * y + x * dy]


def neg_jvp(primals, tangents):
    ((x,), (dx,)) = primals, tangents
    return [neg(x)], [neg(dx)]


def sin_jvp(primals, tangents):
    ((x,), (dx,)) = primals, tangents
    return [sin(x)], [cos(x) * dx]


def cos_jvp(primals, tangents):
    ((x,), (dx,)) = primals, tangents
    return [cos(x)], [neg(sin(x)) * dx]


def reduce_sum_jvp(primals, tangents, *, axis):
    ((x,), (dx,)) = primals, tangents
    return [reduce_sum(x, axis)], [reduce_sum(dx, axis)]


def transpose_jvp(primals, tangents, *, perm):
    # Linear: the tangent moves exactly like the value. (Batching rules bind it under jvp.)
    return [transpose(primals[0], perm)], [transpose(tangents[0], perm)]


def broadcast_jvp(primals, tangents, *, shape, axes):
    return [broadcast(primals[0], shape, axes)], [broadcast(tangents[0], shape, axes)]


def comparison_jvp(op, primals, tangents):
    # A boolean output is piecewise constant in the inputs: its tangent is zero.
    out = op(*primals)
    return [out], [zeros_like(out)]


jvp_rules = {
    add_p: add_jvp,
    mul_p: mul_jvp,
    neg_p: neg_jvp,
    sin_p: sin_jvp,
    cos_p: cos_jvp,
    reduce_sum_p: reduce_sum_jvp,
    greater_p: lambda primals, tangents: comparison_jvp(greater, primals, tangents),
    less_p: lambda primals, tangents: comparison_jvp(less, primals, tangents),
    transpose_p: transpose_jvp,
    broadcast_p: broadcast_jvp,
}


def jvp_v1(f, primals, tangents):
    """JVP of a function from arrays to one array."""
    with new_main(JVPTrace) as main:
        trace = JVPTrace(main)
        out = f(*[JVPTracer(trace, p, t) for p, t in zip(primals, tangents)])
        out = full_raise(trace, out)
        return out.primal, out.tangent


def jvp_flat(f, primals, tangents):
    """JVP of a function from arrays to a list of arrays."""
    with new_main(JVPTrace) as main:
        trace = JVPTrace(main)
        outs = f(*[JVPTracer(trace, p, t) for p, t in zip(primals, tangents)])
        # full_raise, not a plain isinstance test: an output may be a tracer of an *outer* jvp
        # (the function closed over it), and its tangent is not ours to read.
        outs = [full_raise(trace, out) for out in outs]
        return unzip2((out.primal, out.tangent) for out in outs)


def jvp(f, primals, tangents):
    """JVP of a function whose inputs and output are pytrees of arrays."""
    primals_flat, in_tree = tree_flatten(primals)
    tangents_flat, tangent_tree = tree_flatten(tangents)
    if in_tree != tangent_tree:
        raise TypeError(f"primals and tangents differ in structure: {in_tree} vs {tangent_tree}")
    f_flat, out_tree = flatten_fun(f, in_tree)
    primals_out, tangents_out = jvp_flat(f_flat, primals_flat, tangents_flat)
    return tree_unflatten(out_tree(), primals_out), tree_unflatten(out_tree(), tangents_out)


def deriv(f):
    """The derivative of a scalar function of one scalar, as a function."""
    return lambda x: jvp_v1(f, (x,), (1.0,))[1]
