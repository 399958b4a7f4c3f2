"""Partial evaluation: compute what is known now, stage out what is not; ``linearize``."""

from __future__ import annotations

from typing import Any

from jaxcourse.autodidax.core import (
    ShapedArray,
    Trace,
    Tracer,
    bind,
    full_lower,
    full_raise,
    get_aval,
    new_main,
)
from jaxcourse.autodidax.jvp import jvp_flat
from jaxcourse.autodidax.pytree import flatten_fun, tree_flatten, tree_unflatten
from jaxcourse.core.jaxprs import (
    Jaxpr,
    JaxprBuilder,
    JaxprEqn,
    abstract_eval_rules,
    eval_jaxpr,
    make_jaxpr_flat,
    raise_to_shaped,
)
from jaxcourse.core.jit import hoist_consts, xla_call_p


class PartialEvalTracer(Tracer):
    """Either a known value (``known`` is set) or an unknown one, a variable being staged."""

    def __init__(self, trace, known: Any, aval: ShapedArray) -> None:
        self._trace, self.known, self._aval = trace, known, aval

    @property
    def aval(self):
        return self._aval

    @property
    def is_known(self) -> bool:
        return self.known is not None

    def full_lower(self):
        # A known value needs no box: it goes straight back to the interpreter below.
        return full_lower(self.known) if self.is_known else self


class PartialEvalTrace(Trace):
    """Known inputs: apply the primitive now. Any unknown input: record an equation."""

    @property
    def builder(self) -> JaxprBuilder:
        return self.main.global_data

    def pure(self, val):
        return PartialEvalTracer(self, val, raise_to_shaped(get_aval(val)))

    lift = pure

    def new_unknown(self, aval) -> PartialEvalTracer:
        return PartialEvalTracer(self, None, raise_to_shaped(aval))

    new_tracer = new_unknown  # what the builder calls for a constant of the staged jaxpr

    def instantiate(self, tracer: PartialEvalTracer) -> PartialEvalTracer:
        """An unknown standing for ``tracer``: a known value becomes a constant of the jaxpr."""
        return tracer if not tracer.is_known else self.builder.const(self, tracer.known)

    def process_primitive(self, primitive, tracers, params):
        if all(t.is_known for t in tracers):
            return bind(primitive, *[t.known for t in tracers], **params)
        rule = partial_eval_rules.get(primitive)
        if rule is not None:
            return rule(self, tracers, **params)
        return self.stage(primitive, tracers, params)

    def stage(self, primitive, tracers, params):
        """Record ``primitive`` as an equation; its known inputs become residuals."""
        tracers = [self.instantiate(t) for t in tracers]
        avals_out = abstract_eval_rules[primitive](*[t.aval for t in tracers], **params)
        outs = [self.new_unknown(aval) for aval in avals_out]
        self.builder.eqns.append(JaxprEqn(primitive, tracers, params, outs))
        return outs


partial_eval_rules: dict = {}


def partial_eval_flat(f, pvals_in, instantiate=True):
    """Run ``f`` with some inputs known (values) and others unknown (None, with an aval).

    Returns the known outputs (None where unknown) and a closed jaxpr from the unknown inputs to
    the unknown outputs; its consts are the residuals, values computed now for later.
    """
    with new_main(PartialEvalTrace, JaxprBuilder()) as main:
        trace = PartialEvalTrace(main)
        tracers_in = [trace.new_unknown(aval) if known is None else known
                      for known, aval in pvals_in]
        outs = [full_raise(trace, out) for out in f(*tracers_in)]
        if isinstance(instantiate, bool):
            instantiate = [instantiate] * len(outs)
        elif callable(instantiate):
            instantiate = instantiate(len(outs))
        outs = [trace.instantiate(out) if inst else out for out, inst in zip(outs, instantiate)]
        known_outs = [out.known if out.is_known else None for out in outs]
        unknown_in = [t for t, (known, _) in zip(tracers_in, pvals_in) if known is None]
        unknown_out = [out for out in outs if not out.is_known]
        return known_outs, main.global_data.build(unknown_in, unknown_out)


# --- linearize: jvp with known primals and unknown tangents ----------------------------------
def linearize_flat(f, primals):
    """The primal outputs and the linear map from input tangents to output tangents, a jaxpr."""
    n = len(primals)

    def jvp_outputs(*primals_and_tangents):
        primals_out, tangents_out = jvp_flat(f, primals_and_tangents[:n],
                                             primals_and_tangents[n:])
        return list(primals_out) + list(tangents_out)

    pvals = [(p, None) for p in primals] + [(None, get_aval(p)) for p in primals]
    # Only the tangent outputs are forced into the jaxpr; the primal outputs stay known.
    known_outs, linear = partial_eval_flat(
        jvp_outputs, pvals, instantiate=lambda n: [False] * (n // 2) + [True] * (n // 2))
    return known_outs[:len(known_outs) // 2], linear


def linearize(f, *primals):
    """Like ``jax.linearize``: the output at ``primals``, and the JVP at ``primals`` as a function.

    The function runs the linear jaxpr; nothing of ``f`` is evaluated again.
    """
    primals_flat, in_tree = tree_flatten(primals)
    f_flat, out_tree = flatten_fun(f, in_tree)
    primals_out, linear = linearize_flat(f_flat, primals_flat)

    def f_jvp(*tangents):
        tangents_flat, _ = tree_flatten(tangents)
        return tree_unflatten(out_tree(), eval_jaxpr(linear.jaxpr, linear.consts, tangents_flat))

    return tree_unflatten(out_tree(), primals_out), f_jvp


# --- Partial evaluation of a jaxpr, for primitives that carry one ----------------------------
def partial_eval_jaxpr(jaxpr: Jaxpr, in_unknowns, instantiate):
    """Split ``jaxpr`` in two: known inputs -> (known outputs, residuals) and
    (residuals, unknown inputs) -> unknown outputs.

    Returns the known jaxpr (its constants hoisted to leading inputs) with those constants, the
    unknown jaxpr, which outputs are unknown, and the number of residuals.
    """
    split: dict = {}

    def known_part(*known_vals):
        it = iter(known_vals)
        pvals = [(None, v.aval) if unknown else (next(it), None)
                 for v, unknown in zip(jaxpr.in_binders, in_unknowns)]
        known_outs, unknown_part = partial_eval_flat(
            lambda *xs: eval_jaxpr(jaxpr, [], xs), pvals, instantiate)
        split["out_unknowns"] = [k is None for k in known_outs]
        split["unknown"] = unknown_part
        return [k for k in known_outs if k is not None] + list(unknown_part.consts)

    known_avals = [v.aval for v, unknown in zip(jaxpr.in_binders, in_unknowns) if not unknown]
    jaxpr_known, known_consts = hoist_consts(make_jaxpr_flat(known_part, known_avals))
    jaxpr_unknown, _ = hoist_consts(split["unknown"])
    num_res = len(split["unknown"].consts)
    return jaxpr_known, known_consts, jaxpr_unknown, split["out_unknowns"], num_res


def xla_call_partial_eval(trace, tracers, *, name, jaxpr):
    """One call of the known part now, one call of the unknown part staged, as JAX does."""
    in_unknowns = [not t.is_known for t in tracers]
    jaxpr_known, consts, jaxpr_unknown, out_unknowns, num_res = partial_eval_jaxpr(
        jaxpr, in_unknowns, [False] * len(jaxpr.outs))
    known_outs = bind(xla_call_p, *consts, *[t.known for t in tracers if t.is_known],
                      name=f"{name}_known", jaxpr=jaxpr_known)
    residuals = known_outs[len(known_outs) - num_res:]
    known_outs = known_outs[:len(known_outs) - num_res]
    unknown_ins = [trace.builder.const(trace, r) for r in residuals]
    unknown_ins += [t for t in tracers if not t.is_known]
    unknown_outs = trace.stage(xla_call_p, unknown_ins,
                               {"name": f"{name}_unknown", "jaxpr": jaxpr_unknown})
    known_iter, unknown_iter = iter(known_outs), iter(unknown_outs)
    return [next(unknown_iter) if unknown else trace.pure(next(known_iter))
            for unknown in out_unknowns]


partial_eval_rules[xla_call_p] = xla_call_partial_eval
