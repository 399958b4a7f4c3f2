# task: ps1.batch
# what: batch axis moved last in the x-only case; w-batched cases as multiply + sum
# %% batch
def weighted_sum_batch(args, batch_axes, *, axis):
    # ps1.batch: (result, its batch axis); None marks an unbatched operand.
    x, w = args
    bx, bw = batch_axes
    if bw is None:
        x = jnp.moveaxis(x, bx, -1)
        ax = axis % (x.ndim - 1)
        return weighted_sum(x, w, axis=ax), x.ndim - 2
    w = jnp.moveaxis(w, bw, 0)
    if bx is None:
        nd = x.ndim
        x = x[None]
    else:
        x = jnp.moveaxis(x, bx, 0)
        nd = x.ndim - 1
    ax = axis % nd + 1
    shape = [1] * (nd + 1)
    shape[0] = w.shape[0]
    shape[ax] = w.shape[1]
    return jnp.sum(x * jnp.reshape(w, shape), axis=ax), 0


batching.primitive_batchers[weighted_sum_p] = weighted_sum_batch
