# task: ps1.jvp
# what: primal and tangents computed by calling the NumPy impl rule directly: works eagerly, fails under jit
# %% jvp
def weighted_sum_value_and_jvp(primals, tangents, *, axis):
    # ps1.jvp: (weighted_sum(x, w), its tangent); a tangent may be the symbolic ad.Zero.
    x, w = primals
    xt, wt = tangents
    out = weighted_sum_impl(x, w, axis=axis)
    tangent = weighted_sum(ad.instantiate_zeros(xt), w, axis=axis) + weighted_sum(x, ad.instantiate_zeros(wt), axis=axis)
    return out, tangent


ad.primitive_jvps[weighted_sum_p] = weighted_sum_value_and_jvp
# %% witness
x = jnp.ones((2, 3)); w = jnp.ones(3)
out, t = jax.jit(lambda a, b: jax.jvp(lambda p, q: weighted_sum(p, q, axis=1), (a, b), (a, b)))(x, w)
result = None if np.allclose(t, 6.0) else f"{t}"
