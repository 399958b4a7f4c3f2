# task: ps1.batch
# what: both batched: hard-codes w[:, None, :] (right only when the unbatched x is 2-D, as in the visible tests)
# %% batch
def weighted_sum_batch(args, batch_axes, *, axis):
    # ps1.batch: (result, its batch axis); None marks an unbatched operand.
    x, w = args
    bx, bw = batch_axes
    if bw is None:
        x = jnp.moveaxis(x, bx, 0)
        return weighted_sum(x, w, axis=axis % (x.ndim - 1) + 1), 0
    w = jnp.moveaxis(w, bw, 0)
    if bx is None:
        return jnp.tensordot(w, x, axes=([1], [axis % x.ndim])), 0
    x = jnp.moveaxis(x, bx, 0)
    ax = axis % (x.ndim - 1) + 1
    return jnp.sum(jnp.moveaxis(x, ax, -1) * w[:, None, :], axis=-1), 0


batching.primitive_batchers[weighted_sum_p] = weighted_sum_batch
# %% witness
xs = jnp.arange(12.0).reshape(4, 3); ws = jnp.arange(12.0).reshape(4, 3)
got = jax.vmap(lambda a, b: weighted_sum(a, b, axis=0))(xs, ws); want = jnp.sum(xs * ws, axis=1)
result = None if got.shape == want.shape and np.allclose(got, want) else f"rank-1 x, both batched: shape {got.shape}, want {want.shape}"
