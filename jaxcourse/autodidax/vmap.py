"""Batching rules, ``vmap`` and ``jacfwd``."""

from __future__ import annotations

from functools import partial

import numpy as np

from jaxcourse.autodidax.batching import (
    BatchTrace,
    BatchTracer,
    move_batch_axis,
    not_mapped,
    vmap_rules,
)
from jaxcourse.autodidax.core import (
    add,
    add_p,
    broadcast,
    cos,
    cos_p,
    full_raise,
    mul,
    mul_p,
    neg,
    neg_p,
    new_main,
    reduce_sum,
    reduce_sum_p,
    sin,
    sin_p,
    transpose,
    unzip2,
)
from jaxcourse.autodidax.jvp import jvp
from jaxcourse.autodidax.pytree import flatten_fun, tree_flatten, tree_unflatten


def _example_ndim(x, bdim):
    return np.ndim(x) - (bdim is not not_mapped)


def binop_batching_rule(op, axis_size, vals_in, dims_in):
    x, y = vals_in
    x_bdim, y_bdim = dims_in
    if x_bdim is not_mapped and y_bdim is not_mapped:
        return [op(x, y)], [not_mapped]
    rank = max(_example_ndim(x, x_bdim), _example_ndim(y, y_bdim))
    if _example_ndim(x, x_bdim) == _example_ndim(y, y_bdim):
        # Line both operands up on one batch axis, the first mapped operand's.
        out_bdim = y_bdim if x_bdim is not_mapped else x_bdim
        x = move_batch_axis(axis_size, x_bdim, out_bdim, x)
        y = move_batch_axis(axis_size, y_bdim, out_bdim, y)
        return [op(x, y)], [out_bdim]
    # Different ranks (say a vector times a scalar): NumPy aligns trailing axes, so the batch
    # axes go in front and the lower-rank operand gets size-one axes right after its batch axis.
    x = _batch_axis_in_front(axis_size, x_bdim, x, rank)
    y = _batch_axis_in_front(axis_size, y_bdim, y, rank)
    return [op(x, y)], [0]


def _batch_axis_in_front(axis_size, bdim, x, rank):
    x = move_batch_axis(axis_size, bdim, 0, x)
    missing = rank - (np.ndim(x) - 1)
    if missing == 0:
        return x
    shape = (axis_size,) + (1,) * missing + tuple(np.shape(x)[1:])
    return broadcast(x, shape, range(1, 1 + missing))


def vectorized_unop_batching_rule(op, axis_size, vals_in, dims_in):
    # Elementwise: the batch axis is just one more axis.
    ((x,), (x_bdim,)) = vals_in, dims_in
    return [op(x)], [x_bdim]


def reduce_sum_batching_rule(axis_size, vals_in, dims_in, *, axis):
    ((x,), (x_bdim,)) = vals_in, dims_in
    if x_bdim is not_mapped:
        return [reduce_sum(x, axis)], [not_mapped]
    # `axis` counts the axes of one batch member; the batched value has x_bdim in between.
    batched_axis = tuple(a + 1 if a >= x_bdim else a for a in axis)
    out_bdim = x_bdim - sum(1 for a in axis if a < x_bdim)
    return [reduce_sum(x, batched_axis)], [out_bdim]


vmap_rules[add_p] = partial(binop_batching_rule, add)
vmap_rules[mul_p] = partial(binop_batching_rule, mul)
vmap_rules[neg_p] = partial(vectorized_unop_batching_rule, neg)
vmap_rules[sin_p] = partial(vectorized_unop_batching_rule, sin)
vmap_rules[cos_p] = partial(vectorized_unop_batching_rule, cos)
vmap_rules[reduce_sum_p] = reduce_sum_batching_rule


def vmap_flat(f, in_axes, *args):
    """Map ``f`` (arrays -> list of arrays) over the axes ``in_axes`` (None: not mapped)."""
    bdims = [not_mapped if ax is None else ax % np.ndim(x) for x, ax in zip(args, in_axes)]
    sizes = {np.shape(x)[bd] for x, bd in zip(args, bdims) if bd is not not_mapped}
    if len(sizes) != 1:
        raise ValueError(f"vmap needs one mapped axis size, got {sorted(sizes)}")
    (axis_size,) = sizes
    with new_main(BatchTrace, axis_size) as main:
        trace = BatchTrace(main)
        tracers = [x if bd is not_mapped else BatchTracer(trace, x, bd)
                   for x, bd in zip(args, bdims)]
        outs = [full_raise(trace, out) for out in f(*tracers)]
        vals_out, bdims_out = unzip2((out.val, out.batch_dim) for out in outs)
    # Outside the vmap interpreter again, so these moves are applied by the one below it.
    return [move_batch_axis(axis_size, bd, 0, val) for val, bd in zip(vals_out, bdims_out)]


def vmap(f, in_axes):
    """``f`` mapped over the leading axes given by ``in_axes`` (one entry per argument)."""

    def batched_f(*args):
        args_flat, in_tree = tree_flatten(args)
        axes_flat, axes_tree = tree_flatten(in_axes)
        if in_tree != axes_tree:
            raise TypeError(f"in_axes {axes_tree} does not match the arguments {in_tree}")
        f_flat, out_tree = flatten_fun(f, in_tree)
        outs_flat = vmap_flat(f_flat, axes_flat, *args_flat)  # runs f, which sets out_tree
        return tree_unflatten(out_tree(), outs_flat)

    return batched_f


def jacfwd(f, x):
    """The Jacobian of ``f`` at ``x``, shaped ``f(x).shape + x.shape`` like ``jax.jacfwd``.

    One JVP per input basis vector, all at once under vmap.
    """

    def pushforward(v):
        return jvp(f, (x,), (v,))[1]

    basis = np.eye(np.size(x)).reshape(np.shape(x) * 2)
    # vmap stacks the columns along axis 0 (input axes first); the Jacobian wants them last.
    columns = vmap(pushforward, (0,))(basis)
    in_ndim = np.ndim(x)
    out_axes = list(range(in_ndim, np.ndim(columns)))
    return transpose(columns, out_axes + list(range(in_ndim)))
