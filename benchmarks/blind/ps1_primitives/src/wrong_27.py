# task: ps1.batch
# what: w batched: a Python loop over the batch and jnp.stack, which fails for a batch of size 0
# %% batch
def weighted_sum_batch(args, batch_axes, *, axis):
    # ps1.batch: (result, its batch axis); None marks an unbatched operand.
    x, w = args
    bx, bw = batch_axes
    if bw is None:
        x = jnp.moveaxis(x, bx, 0)
        return weighted_sum(x, w, axis=axis % (x.ndim - 1) + 1), 0
    w = jnp.moveaxis(w, bw, 0)
    if bx is not None:
        x = jnp.moveaxis(x, bx, 0)
    outs = [weighted_sum(x if bx is None else x[i], w[i], axis=axis) for i in range(w.shape[0])]
    return jnp.stack(outs), 0


batching.primitive_batchers[weighted_sum_p] = weighted_sum_batch
# %% witness
got = jax.vmap(lambda a, b: weighted_sum(a, b, axis=1), in_axes=(None, 0))(jnp.ones((2, 3)), jnp.ones((0, 3)))
result = None if got.shape == (0, 2) else f"{got.shape}"
