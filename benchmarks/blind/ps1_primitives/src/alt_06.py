# task: ps1.batch
# what: keeps the batch axis where it is (no moves) in the x-only case, broadcasts an unbatched x otherwise
# %% batch
def weighted_sum_batch(args, batch_axes, *, axis):
    # ps1.batch: (result, its batch axis); None marks an unbatched operand.
    x, w = args
    bx, bw = batch_axes
    if bw is None:
        nd = x.ndim - 1
        ax = axis % nd
        new = ax + 1 if bx <= ax else ax
        out_bd = bx if bx < new else bx - 1
        return weighted_sum(x, w, axis=new), out_bd
    w = jnp.moveaxis(w, bw, 0)
    size = w.shape[0]
    if bx is None:
        x = jnp.broadcast_to(x, (size, *x.shape))
    else:
        x = jnp.moveaxis(x, bx, 0)
    ax = axis % (x.ndim - 1) + 1
    xm = jnp.moveaxis(x, ax, -1)
    return jnp.einsum("b...k,bk->b...", xm, w), 0


batching.primitive_batchers[weighted_sum_p] = weighted_sum_batch
