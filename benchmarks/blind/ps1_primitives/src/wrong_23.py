# task: ps1.batch
# what: x-only case computed with jnp.tensordot: right numbers, but the batched program no longer applies weighted_sum (the text demands it)
# %% batch
def weighted_sum_batch(args, batch_axes, *, axis):
    # ps1.batch: (result, its batch axis); None marks an unbatched operand.
    x, w = args
    bx, bw = batch_axes
    if bw is None:
        x = jnp.moveaxis(x, bx, 0)
        return jnp.tensordot(x, w, axes=([axis % (x.ndim - 1) + 1], [0])), 0
    w = jnp.moveaxis(w, bw, 0)
    if bx is None:
        return jnp.tensordot(w, x, axes=([1], [axis % x.ndim])), 0
    x = jnp.moveaxis(x, bx, 0)
    ax = axis % (x.ndim - 1) + 1
    return jax.lax.dot_general(x, w, (([ax], [1]), ([0], [0]))), 0


batching.primitive_batchers[weighted_sum_p] = weighted_sum_batch
# %% witness
jx = jax.make_jaxpr(jax.vmap(lambda a, b: weighted_sum(a, b, axis=1), in_axes=(0, None)))(jnp.ones((4, 2, 3)), jnp.ones(3))
names = [e.primitive.name for e in jx.jaxpr.eqns]
result = None if "weighted_sum" in names else f"x-only vmap program {names}"
