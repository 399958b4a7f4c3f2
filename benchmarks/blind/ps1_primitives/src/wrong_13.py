# task: ps1.jvp
# what: tangent computed with jnp.tensordot instead of weighted_sum (right numbers, but the text demands the primitive; reverse mode then never calls the transpose rule)
# %% jvp
def weighted_sum_value_and_jvp(primals, tangents, *, axis):
    # ps1.jvp: (weighted_sum(x, w), its tangent); a tangent may be the symbolic ad.Zero.
    x, w = primals
    xt, wt = tangents
    out = weighted_sum(x, w, axis=axis)
    xt = ad.instantiate_zeros(xt)
    wt = ad.instantiate_zeros(wt)
    tangent = jnp.tensordot(xt, w, axes=([axis], [0])) + jnp.tensordot(x, wt, axes=([axis], [0]))
    return out, tangent


ad.primitive_jvps[weighted_sum_p] = weighted_sum_value_and_jvp
# %% witness
x = jnp.ones((2, 3)); w = jnp.ones(3)
jx = jax.make_jaxpr(lambda a, b, c, d: jax.jvp(lambda p, q: weighted_sum(p, q, axis=1), (a, b), (c, d)))(x, w, x, w)
names = [e.primitive.name for e in jx.jaxpr.eqns]
result = None if names.count("weighted_sum") >= 3 else f"jvp program {names}: tangent not made of weighted_sum"
