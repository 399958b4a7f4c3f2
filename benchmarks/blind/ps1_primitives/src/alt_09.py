# task: ps1.batch
# what: x-only case moves the batch axis with np.moveaxis, which calls the tracer's own .transpose, so it stays traceable (first meant as a NumPy mistake; the self-check found it correct)
# %% batch
def weighted_sum_batch(args, batch_axes, *, axis):
    # ps1.batch: (result, its batch axis); None marks an unbatched operand.
    x, w = args
    bx, bw = batch_axes
    if bw is None:
        x = np.moveaxis(x, bx, 0)
        return weighted_sum(x, w, axis=axis % (x.ndim - 1) + 1), 0
    w = jnp.moveaxis(w, bw, 0)
    if bx is None:
        return jnp.tensordot(w, x, axes=([1], [axis % x.ndim])), 0
    x = jnp.moveaxis(x, bx, 0)
    ax = axis % (x.ndim - 1) + 1
    return jax.lax.dot_general(x, w, (([ax], [1]), ([0], [0]))), 0


batching.primitive_batchers[weighted_sum_p] = weighted_sum_batch
# %% witness
xs = jnp.ones((4, 2, 3)); w = jnp.ones(3)
got = jax.jit(jax.vmap(lambda a, b: weighted_sum(a, b, axis=1), in_axes=(0, None)))(xs, w)
result = None if np.allclose(got, 3.0) else f"{got}"
