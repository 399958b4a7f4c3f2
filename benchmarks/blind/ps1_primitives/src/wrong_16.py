# task: ps1.jvp
# what: replaces a symbolic zero by jnp.zeros(shape) (default float32): the dtype is lost for bfloat16/float64
# %% jvp
def weighted_sum_value_and_jvp(primals, tangents, *, axis):
    # ps1.jvp: (weighted_sum(x, w), its tangent); a tangent may be the symbolic ad.Zero.
    x, w = primals
    xt, wt = tangents
    if type(xt) is ad.Zero:
        xt = jnp.zeros(jnp.shape(x))
    if type(wt) is ad.Zero:
        wt = jnp.zeros(jnp.shape(w))
    out = weighted_sum(x, w, axis=axis)
    return out, weighted_sum(xt, w, axis=axis) + weighted_sum(x, wt, axis=axis)


ad.primitive_jvps[weighted_sum_p] = weighted_sum_value_and_jvp
# %% witness
x = jnp.ones((2, 3), jnp.bfloat16); w = jnp.ones(3, jnp.bfloat16)
_, t = jax.jit(lambda b: jax.jvp(lambda q: weighted_sum(x, q, axis=1), (b,), (b,)))(w)
result = None if t.dtype == jnp.bfloat16 else f"bfloat16 jvp in w only: tangent dtype {t.dtype}"
