"""``jit``: a call primitive carrying a jaxpr, lowered to StableHLO, compiled and cached."""

from __future__ import annotations

from functools import lru_cache

import jax
import jax.extend.backend as jex_backend
import numpy as np
from jax.extend.mlir import ir
from jax.extend.mlir.dialects import func
from jax.extend.mlir.dialects import stablehlo as hlo
from jax.interpreters import mlir as jax_mlir

from jaxcourse.autodidax.batching import not_mapped, vmap_rules
from jaxcourse.autodidax.core import (
    Primitive,
    ShapedArray,
    add_p,
    bind,
    broadcast_p,
    cos_p,
    get_aval,
    greater_p,
    impl_rules,
    less_p,
    mul_p,
    neg_p,
    reduce_sum_p,
    sin_p,
    transpose_p,
)
from jaxcourse.autodidax.jvp import jvp_flat, jvp_rules
from jaxcourse.autodidax.pytree import flatten_fun, tree_flatten, tree_unflatten
from jaxcourse.autodidax.vmap import vmap_flat
from jaxcourse.core.jaxprs import (
    Jaxpr,
    Lit,
    abstract_eval_rules,
    eval_jaxpr,
    make_jaxpr_flat,
    raise_to_shaped,
)

# --- The call primitive ----------------------------------------------------------------------
xla_call_p = Primitive("xla_call")


def hoist_consts(closed) -> tuple[Jaxpr, list]:
    """The jaxpr with its constvars turned into leading inputs, and the values to pass there."""
    jaxpr = closed.jaxpr
    return Jaxpr([], jaxpr.constvars + jaxpr.in_binders, jaxpr.eqns, jaxpr.outs), closed.consts


def jit(f, static_argnums=()):
    """Stage ``f`` out once per signature and run it as one compiled program."""
    static_argnums = tuple(static_argnums)
    traced: dict = {}  # signature -> (jaxpr, consts, output structure)

    def f_jitted(*args):
        static = tuple(args[i] for i in static_argnums)  # must be hashable: part of the key
        dynamic = [a for i, a in enumerate(args) if i not in static_argnums]
        args_flat, in_tree = tree_flatten(dynamic)
        avals = tuple(raise_to_shaped(get_aval(x)) for x in args_flat)
        key = (static, in_tree, avals)
        if key not in traced:
            def with_statics(*dynamic_args):
                it = iter(dynamic_args)
                return f(*[args[i] if i in static_argnums else next(it)
                           for i in range(len(args))])

            f_flat, out_tree = flatten_fun(with_statics, in_tree)
            jaxpr, consts = hoist_consts(make_jaxpr_flat(f_flat, avals))
            traced[key] = jaxpr, consts, out_tree()
        jaxpr, consts, out_tree = traced[key]
        outs = bind(xla_call_p, *consts, *args_flat, name=getattr(f, "__name__", "f"),
                    jaxpr=jaxpr)
        return tree_unflatten(out_tree, outs)

    return f_jitted


def xla_call_abstract_eval(*in_avals, name, jaxpr):
    expected = [raise_to_shaped(v.aval) for v in jaxpr.in_binders]
    if [raise_to_shaped(a) for a in in_avals] != expected:
        raise TypeError(f"{name} called with {in_avals}, its jaxpr takes {expected}")
    return [raise_to_shaped(out.aval) for out in jaxpr.outs]


abstract_eval_rules[xla_call_p] = xla_call_abstract_eval


# --- Lowering to StableHLO -------------------------------------------------------------------
def ir_type(aval) -> ir.RankedTensorType:
    dtype = np.dtype(aval.dtype)
    if dtype == np.bool_:
        element = ir.IntegerType.get_signless(1)
    elif dtype.kind == "f":
        element = {16: ir.F16Type, 32: ir.F32Type, 64: ir.F64Type}[dtype.itemsize * 8].get()
    else:
        element = ir.IntegerType.get_signless(dtype.itemsize * 8)
    return ir.RankedTensorType.get(aval.shape, element)


def lower_jaxpr_to_module(jaxpr: Jaxpr, name: str = "main") -> str:
    """A StableHLO module whose public function ``main`` computes ``jaxpr``."""
    with jax_mlir.make_ir_context(), ir.Location.unknown():
        in_types = [ir_type(v.aval) for v in jaxpr.in_binders]
        out_types = [ir_type(out.aval) for out in jaxpr.outs]
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            function = func.FuncOp(name, ir.FunctionType.get(in_types, out_types))
            function.attributes["sym_visibility"] = ir.StringAttr.get("public")
            block = function.add_entry_block()
            with ir.InsertionPoint(block):
                func.ReturnOp(lower_jaxpr(jaxpr, list(block.arguments)))
        return str(module)


def lower_jaxpr(jaxpr: Jaxpr, args: list) -> list:
    """Emit the ops of ``jaxpr`` at the current insertion point; return its output values."""
    env = dict(zip(jaxpr.in_binders, args))

    def read(atom):
        if isinstance(atom, Lit):
            return hlo.ConstantOp(ir.DenseElementsAttr.get(
                np.asarray(atom.val), type=ir_type(atom.aval).element_type, shape=[])).result
        return env[atom]

    for eqn in jaxpr.eqns:
        avals_in = [x.aval for x in eqn.inputs]
        avals_out = [v.aval for v in eqn.out_binders]
        rule = lowering_rules[eqn.primitive]
        outs = rule(avals_in, avals_out, *map(read, eqn.inputs), **eqn.params)
        env.update(zip(eqn.out_binders, outs))
    return [read(out) for out in jaxpr.outs]


def broadcast_to(value, aval_in, aval_out):
    """NumPy broadcasting made explicit: StableHLO's elementwise ops want equal shapes."""
    if tuple(aval_in.shape) == tuple(aval_out.shape):
        return value
    offset = len(aval_out.shape) - len(aval_in.shape)
    out_type = ir.RankedTensorType.get(aval_out.shape, ir_type(aval_in).element_type)
    return hlo.BroadcastInDimOp(out_type, value, list(range(offset, len(aval_out.shape)))).result


def elementwise_lowering(op, avals_in, avals_out, *args):
    (aval_out,) = avals_out
    shape_only = ShapedArray(aval_out.shape, avals_in[0].dtype)
    return [op(*[broadcast_to(x, a, shape_only) for x, a in zip(args, avals_in)]).result]


def compare_lowering(direction, avals_in, avals_out, x, y):
    (aval_out,) = avals_out
    x, y = (broadcast_to(v, a, ShapedArray(aval_out.shape, a.dtype))
            for v, a in zip((x, y), avals_in))
    kind = "FLOAT" if np.dtype(avals_in[0].dtype).kind == "f" else "SIGNED"
    return [hlo.CompareOp(x, y, hlo.ComparisonDirectionAttr.get(direction),
                          compare_type=hlo.ComparisonTypeAttr.get(kind)).result]


def reduce_sum_lowering(avals_in, avals_out, x, *, axis):
    (aval_out,) = avals_out
    scalar = ir.RankedTensorType.get([], ir_type(aval_out).element_type)
    zero = hlo.ConstantOp(ir.DenseElementsAttr.get(np.zeros((), aval_out.dtype),
                                                   type=scalar.element_type, shape=[])).result
    op = hlo.ReduceOp([ir_type(aval_out)], [x], [zero], list(axis))
    body = op.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(body):
        hlo.ReturnOp([hlo.AddOp(*body.arguments).result])
    return [op.result]


def transpose_lowering(avals_in, avals_out, x, *, perm):
    return [hlo.TransposeOp(x, list(perm)).result]


def broadcast_lowering(avals_in, avals_out, x, *, shape, axes):
    # The operand's axes become the result axes that are not new, in order.
    kept = [i for i in range(len(shape)) if i not in axes]
    return [hlo.BroadcastInDimOp(ir_type(avals_out[0]), x, kept).result]


def xla_call_lowering(avals_in, avals_out, *args, name, jaxpr):
    # Inlined into the caller; JAX emits a separate function and a call to it.
    return lower_jaxpr(jaxpr, list(args))


lowering_rules = {
    add_p: lambda ai, ao, x, y: elementwise_lowering(hlo.AddOp, ai, ao, x, y),
    mul_p: lambda ai, ao, x, y: elementwise_lowering(hlo.MulOp, ai, ao, x, y),
    neg_p: lambda ai, ao, x: [hlo.NegOp(x).result],
    sin_p: lambda ai, ao, x: [hlo.SineOp(x).result],
    cos_p: lambda ai, ao, x: [hlo.CosineOp(x).result],
    greater_p: lambda ai, ao, x, y: compare_lowering("GT", ai, ao, x, y),
    less_p: lambda ai, ao, x, y: compare_lowering("LT", ai, ao, x, y),
    reduce_sum_p: reduce_sum_lowering,
    transpose_p: transpose_lowering,
    broadcast_p: broadcast_lowering,
    xla_call_p: xla_call_lowering,
}


# --- Compiling, caching and running ----------------------------------------------------------
compile_log: list[str] = []  # one entry per compilation, so the chapters can count them


@lru_cache  # keyed by the jaxpr object (identity) and the input types
def compile_jaxpr(jaxpr: Jaxpr, in_avals: tuple):
    if not jax.config.jax_enable_x64:
        raise RuntimeError("this core computes in float64: run jax.config.update("
                           "'jax_enable_x64', True) first")
    compile_log.append(jaxpr_name(jaxpr))
    backend = jex_backend.get_backend()
    options = jex_backend.get_compile_options(num_replicas=1, num_partitions=1)
    return backend.compile_and_load(lower_jaxpr_to_module(jaxpr), backend.devices()[:1], options)


def jaxpr_name(jaxpr: Jaxpr) -> str:
    return f"jaxpr with {len(jaxpr.eqns)} equations"


def xla_call_impl(*args, name, jaxpr):
    in_avals = tuple(raise_to_shaped(get_aval(x)) for x in args)
    executable = compile_jaxpr(jaxpr, in_avals)
    buffers = [jax.device_put(np.asarray(x)) for x in args]
    return [np.asarray(out) for out in executable.execute(buffers)]


impl_rules[xla_call_p] = xla_call_impl


# --- Transformations of the call: a new jaxpr, called again ----------------------------------
@lru_cache
def jvp_jaxpr(jaxpr: Jaxpr) -> tuple[Jaxpr, list]:
    """A jaxpr taking (primals, tangents) and giving (primal outputs, tangent outputs)."""
    n = len(jaxpr.in_binders)

    def jvp_traceable(*primals_and_tangents):
        primals_out, tangents_out = jvp_flat(lambda *xs: eval_jaxpr(jaxpr, [], xs),
                                             primals_and_tangents[:n], primals_and_tangents[n:])
        return list(primals_out) + list(tangents_out)

    in_avals = [v.aval for v in jaxpr.in_binders]
    return hoist_consts(make_jaxpr_flat(jvp_traceable, in_avals + in_avals))


def xla_call_jvp(primals, tangents, *, name, jaxpr):
    new_jaxpr, consts = jvp_jaxpr(jaxpr)
    outs = bind(xla_call_p, *consts, *primals, *tangents, name=f"jvp({name})", jaxpr=new_jaxpr)
    n = len(outs) // 2
    return outs[:n], outs[n:]


jvp_rules[xla_call_p] = xla_call_jvp


@lru_cache
def vmap_jaxpr(jaxpr: Jaxpr, axis_size: int, bdims_in: tuple) -> tuple[Jaxpr, list]:
    """A jaxpr over whole batches: mapped inputs carry the batch, every output at axis 0."""
    in_axes = [None if bd is not_mapped else bd for bd in bdims_in]
    in_avals = []
    for v, bd in zip(jaxpr.in_binders, bdims_in):
        shape = list(v.aval.shape)
        if bd is not not_mapped:
            shape.insert(bd, axis_size)
        in_avals.append(ShapedArray(shape, v.aval.dtype))

    def batched(*args):
        return vmap_flat(lambda *xs: eval_jaxpr(jaxpr, [], xs), in_axes, *args)

    return hoist_consts(make_jaxpr_flat(batched, in_avals))


def xla_call_batch(axis_size, vals_in, dims_in, *, name, jaxpr):
    new_jaxpr, consts = vmap_jaxpr(jaxpr, axis_size, tuple(dims_in))
    outs = bind(xla_call_p, *consts, *vals_in, name=f"vmap({name})", jaxpr=new_jaxpr)
    return outs, [0] * len(outs)


vmap_rules[xla_call_p] = xla_call_batch
