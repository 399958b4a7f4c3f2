# task: ps1.batch
# what: x unbatched, w batched: w @ moveaxis(x, axis, 0), right only for 2-D x
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
        return w @ jnp.moveaxis(x, axis, 0), 0
    x = jnp.moveaxis(x, bx, 0)
    ax = axis % (x.ndim - 1) + 1
    return jax.lax.dot_general(x, w, (([ax], [1]), ([0], [0]))), 0


batching.primitive_batchers[weighted_sum_p] = weighted_sum_batch
# %% witness
x = jnp.arange(24.0).reshape(2, 3, 4); ws = jnp.arange(6.0).reshape(2, 3)
got = jax.vmap(lambda a, b: weighted_sum(a, b, axis=1), in_axes=(None, 0))(x, ws); want = jnp.einsum("ikj,bk->bij", x, ws)
result = None if got.shape == want.shape and np.allclose(got, want) else f"x (2,3,4) unbatched, w batched: shape {got.shape}"
