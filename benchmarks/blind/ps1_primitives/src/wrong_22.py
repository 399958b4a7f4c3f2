# task: ps1.batch
# what: both batched: assumes x's batch axis is 0 (never moves it)
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
    ax = axis % (x.ndim - 1) + 1
    return jax.lax.dot_general(x, w, (([ax], [1]), ([0], [0]))), 0


batching.primitive_batchers[weighted_sum_p] = weighted_sum_batch
# %% witness
xs = jnp.arange(24.0).reshape(2, 4, 3); ws = jnp.arange(12.0).reshape(4, 3)
f = lambda a, b: weighted_sum(a, b, axis=-1)
got = jax.vmap(f, in_axes=(1, 0))(xs, ws); want = jnp.einsum("ibk,bk->bi", xs, ws)
result = None if got.shape == want.shape and np.allclose(got, want) else f"vmap in_axes=(1,0): {got.shape}"
