"""``cond``: a primitive whose two branches are jaxprs, with every rule a primitive needs."""

from __future__ import annotations

import numpy as np
from jax.extend.mlir.dialects import stablehlo as hlo

from jaxcourse.autodidax.batching import move_batch_axis, not_mapped, vmap_rules
from jaxcourse.autodidax.core import (
    Primitive,
    ShapedArray,
    bind,
    bind1,
    broadcast,
    get_aval,
    impl_rules,
)
from jaxcourse.autodidax.jvp import jvp_rules
from jaxcourse.autodidax.pytree import flatten_fun, tree_flatten, tree_unflatten
from jaxcourse.core.jaxprs import (
    ClosedJaxpr,
    Jaxpr,
    abstract_eval_rules,
    eval_jaxpr,
    make_jaxpr_flat,
    raise_to_shaped,
    type_str,
)
from jaxcourse.core.jit import (
    hoist_consts,
    ir,
    ir_type,
    jvp_jaxpr,
    lower_jaxpr,
    lowering_rules,
    vmap_jaxpr,
)
from jaxcourse.core.partial_eval import partial_eval_jaxpr, partial_eval_rules
from jaxcourse.core.transpose import backward_pass, is_undefined, transpose_rules

# --- select: the elementwise choice a batched predicate turns cond into -----------------------
select_p = Primitive("select")


def select(pred, on_true, on_false):
    """``on_true`` where ``pred`` holds, ``on_false`` elsewhere (all three of one shape)."""
    return bind1(select_p, pred, on_true, on_false)


impl_rules[select_p] = lambda pred, t, f: [np.where(pred, t, f)]
abstract_eval_rules[select_p] = lambda pred, t, f: [ShapedArray(t.shape, t.dtype)]
lowering_rules[select_p] = lambda ai, ao, pred, t, f: [hlo.SelectOp(pred, t, f).result]
jvp_rules[select_p] = lambda primals, tangents: (
    [select(*primals)], [select(primals[0], tangents[1], tangents[2])])


def select_batch(axis_size, vals, dims):
    out_dim = next(d for d in dims if d is not not_mapped)
    return [select(*[move_batch_axis(axis_size, d, out_dim, v)
                     for v, d in zip(vals, dims)])], [out_dim]


def select_transpose(cts, pred, t, f):
    (ct,) = cts
    zeros = np.zeros(np.shape(ct), np.result_type(ct))
    return [None, select(pred, ct, zeros) if is_undefined(t) else None,
            select(pred, zeros, ct) if is_undefined(f) else None]


vmap_rules[select_p] = select_batch
transpose_rules[select_p] = select_transpose


# --- cond ------------------------------------------------------------------------------------
cond_p = Primitive("cond")


def join_branches(closed_branches) -> tuple[tuple[Jaxpr, ...], list]:
    """Branch jaxprs that all take (every branch's consts..., operands...), and those consts."""
    hoisted = [hoist_consts(c) if isinstance(c, ClosedJaxpr) else c for c in closed_branches]
    all_consts = [c for _, consts in hoisted for c in consts]
    const_avals = [raise_to_shaped(get_aval(c)) for c in all_consts]
    jaxprs, start = [], 0
    for jaxpr, consts in hoisted:
        n_ops = len(jaxpr.in_binders) - len(consts)
        op_avals = [v.aval for v in jaxpr.in_binders[len(consts):]]
        mine = slice(start, start + len(consts))

        def branch(*args, jaxpr=jaxpr, mine=mine, n_ops=n_ops):
            return eval_jaxpr(jaxpr, [], list(args[mine]) + list(args[len(args) - n_ops:]))

        joined, extra = hoist_consts(make_jaxpr_flat(branch, const_avals + op_avals))
        assert not extra
        jaxprs.append(joined)
        start += len(consts)
    return tuple(jaxprs), all_consts


def cond(pred, true_fun, false_fun, *operands):
    """Like ``jax.lax.cond``: ``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``.

    Both branches are staged into jaxprs, so their output types must agree.
    """
    ops_flat, in_tree = tree_flatten(operands)
    avals = [raise_to_shaped(get_aval(x)) for x in ops_flat]
    closed, out_trees = [], []
    for fun in (false_fun, true_fun):  # branch 0 is taken when pred is false, as in JAX
        fun_flat, out_tree = flatten_fun(fun, in_tree)
        closed.append(make_jaxpr_flat(fun_flat, avals))
        out_trees.append(out_tree())
    if out_trees[0] != out_trees[1]:
        raise TypeError(f"cond branches return different structures: {out_trees}")
    branches, consts = join_branches(closed)
    outs = bind(cond_p, pred, *consts, *ops_flat, branches=branches)
    return tree_unflatten(out_trees[0], outs)


def cond_impl(pred, *operands, branches):
    return eval_jaxpr(branches[int(bool(pred))], [], operands)


def cond_abstract_eval(pred, *operands, branches):
    if pred.shape != () or np.dtype(pred.dtype) != np.bool_:
        raise TypeError(f"cond needs a bool[] predicate, got {type_str(pred)}")
    out_types = [[raise_to_shaped(out.aval) for out in b.outs] for b in branches]
    if out_types[0] != out_types[1]:
        raise TypeError("cond branches have different output types")
    return out_types[0]


def cond_lowering(avals_in, avals_out, pred, *operands, branches):
    index = hlo.ConvertOp(ir.RankedTensorType.get([], ir.IntegerType.get_signless(32)), pred)
    case = hlo.CaseOp([ir_type(a) for a in avals_out], index.result, len(branches))
    for region, branch in zip(case.regions, branches):
        block = region.blocks.append()
        with ir.InsertionPoint(block):
            # The regions may use values defined outside them: no arguments needed.
            hlo.ReturnOp(lower_jaxpr(branch, list(operands)))
    return list(case.results)


def cond_jvp(primals, tangents, *, branches):
    pred, *ops = primals
    _, *op_tangents = tangents  # the predicate's tangent is of no use: the choice is discrete
    new_branches, consts = join_branches([jvp_jaxpr(b) for b in branches])
    outs = bind(cond_p, pred, *consts, *ops, *op_tangents, branches=new_branches)
    n = len(outs) // 2
    return outs[:n], outs[n:]


def cond_batch(axis_size, vals, dims, *, branches):
    pred, *ops = vals
    pred_dim, *op_dims = dims
    if pred_dim is not_mapped:
        # One choice for the whole batch: still a cond, over batched branches.
        new_branches, consts = join_branches(
            [vmap_jaxpr(b, axis_size, tuple(op_dims)) for b in branches])
        outs = bind(cond_p, pred, *consts, *ops, branches=new_branches)
        return outs, [0] * len(outs)
    # A choice per batch member: compute both branches for everyone, then pick elementwise.
    pred = move_batch_axis(axis_size, pred_dim, 0, pred)
    results = []
    for b in branches:
        if all(d is not_mapped for d in op_dims):
            outs = eval_jaxpr(b, [], ops)
            results.append([move_batch_axis(axis_size, not_mapped, 0, x) for x in outs])
        else:
            jaxpr, consts = vmap_jaxpr(b, axis_size, tuple(op_dims))
            results.append(eval_jaxpr(jaxpr, consts, ops))
    outs = []
    for out_false, out_true in zip(*results):
        shape = np.shape(out_true)
        mask = broadcast(pred, shape, range(1, len(shape))) if len(shape) > 1 else pred
        outs.append(select(mask, out_true, out_false))
    return outs, [0] * len(outs)


def cond_partial_eval(trace, tracers, *, branches):
    pred, *ops = tracers
    if not pred.is_known:
        return trace.stage(cond_p, tracers, {"branches": branches})
    in_unknowns = [not t.is_known for t in ops]
    # An output unknown in one branch must be unknown in both.
    out_unknowns = [False] * len(branches[0].outs)
    for b in branches:
        uks = partial_eval_jaxpr(b, in_unknowns, out_unknowns)[3]
        out_unknowns = [a or c for a, c in zip(out_unknowns, uks)]
    splits = [partial_eval_jaxpr(b, in_unknowns, out_unknowns) for b in branches]
    # Each branch computes residuals of its own; the known cond returns all of them, padding
    # the other branch's with zeros, and the unknown cond reads its own slice.
    res_avals = [[v.aval for v in s[2].in_binders[:s[4]]] for s in splits]
    known_branches, unknown_branches = [], []
    for i, (jaxpr_known, consts, jaxpr_unknown, _, num_res) in enumerate(splits):
        known_branches.append(pad_residuals(jaxpr_known, consts, num_res, res_avals, i))
        unknown_branches.append(select_residuals(jaxpr_unknown, res_avals, i))
    known_branches, known_consts = join_branches(known_branches)
    unknown_branches, unknown_consts = join_branches(unknown_branches)
    known_ops = [t.known for t in ops if t.is_known]
    known_outs = bind(cond_p, pred.known, *known_consts, *known_ops, branches=known_branches)
    n_res = sum(len(r) for r in res_avals)
    residuals = known_outs[len(known_outs) - n_res:]
    known_outs = known_outs[:len(known_outs) - n_res]
    unknown_ins = [trace.builder.const(trace, x)
                   for x in [pred.known, *unknown_consts, *residuals]]
    unknown_ins += [t for t in ops if not t.is_known]
    unknown_outs = trace.stage(cond_p, unknown_ins, {"branches": unknown_branches})
    known_iter, unknown_iter = iter(known_outs), iter(unknown_outs)
    return [next(unknown_iter) if uk else trace.pure(next(known_iter)) for uk in out_unknowns]


def pad_residuals(jaxpr_known, consts, num_res, res_avals, i):
    n_out = len(jaxpr_known.outs) - num_res

    def padded(*args):
        outs = eval_jaxpr(jaxpr_known, [], list(consts) + list(args))
        res = []
        for j, avals in enumerate(res_avals):
            res += outs[n_out:] if j == i else [np.zeros(a.shape, a.dtype) for a in avals]
        return outs[:n_out] + res

    return make_jaxpr_flat(padded, [v.aval for v in jaxpr_known.in_binders[len(consts):]])


def select_residuals(jaxpr_unknown, res_avals, i):
    flat = [a for avals in res_avals for a in avals]
    start = sum(len(avals) for avals in res_avals[:i])
    mine = slice(start, start + len(res_avals[i]))
    op_avals = [v.aval for v in jaxpr_unknown.in_binders[len(res_avals[i]):]]

    def reading_mine(*args):
        return eval_jaxpr(jaxpr_unknown, [], list(args[:len(flat)][mine]) + list(args[len(flat):]))

    return make_jaxpr_flat(reading_mine, flat + op_avals)


def cond_transpose(cts, pred, *ops, branches):
    """Transpose each branch; the cond picks which transposed branch runs."""
    undefined = [is_undefined(x) for x in ops]
    known = [x for x in ops if not is_undefined(x)]
    ct_avals = [raise_to_shaped(get_aval(ct)) for ct in cts]

    def transposed(branch):
        def run(*known_and_cts):
            it = iter(known_and_cts[:len(known)])
            args = [x if u else next(it) for x, u in zip(ops, undefined)]
            cts_in = backward_pass(branch, [], args, known_and_cts[len(known):])
            return [ct for ct, u in zip(cts_in, undefined) if u]

        return make_jaxpr_flat(run, [raise_to_shaped(get_aval(k)) for k in known] + ct_avals)

    new_branches, consts = join_branches([transposed(b) for b in branches])
    outs = iter(bind(cond_p, pred, *consts, *known, *cts, branches=new_branches))
    return [None] + [next(outs) if u else None for u in undefined]


impl_rules[cond_p] = cond_impl
abstract_eval_rules[cond_p] = cond_abstract_eval
lowering_rules[cond_p] = cond_lowering
jvp_rules[cond_p] = cond_jvp
vmap_rules[cond_p] = cond_batch
partial_eval_rules[cond_p] = cond_partial_eval
transpose_rules[cond_p] = cond_transpose
