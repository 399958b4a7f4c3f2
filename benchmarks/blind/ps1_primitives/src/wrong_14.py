# task: ps1.jvp
# what: tangent terms use axis=-1 (copied from the test) instead of the axis parameter
# %% jvp
def weighted_sum_value_and_jvp(primals, tangents, *, axis):
    # ps1.jvp: (weighted_sum(x, w), its tangent); a tangent may be the symbolic ad.Zero.
    x, w = primals
    xt, wt = tangents
    out = weighted_sum(x, w, axis=axis)
    tangent = weighted_sum(ad.instantiate_zeros(xt), w, axis=-1) + weighted_sum(x, ad.instantiate_zeros(wt), axis=-1)
    return out, tangent


ad.primitive_jvps[weighted_sum_p] = weighted_sum_value_and_jvp
# %% witness
x = jnp.arange(6.0).reshape(3, 2); w = jnp.ones(3)
_, t = jax.jvp(lambda a: weighted_sum(a, w, axis=0), (x,), (x,))
result = None if np.allclose(t, w @ x) else f"x (3,2) axis=0: tangent {t}"
