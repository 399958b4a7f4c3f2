# task: ps1.transpose
# what: never handles a symbolic ad.Zero cotangent (computes with it as if it were an array)
# %% transpose
def weighted_sum_transpose(ct, x, w, *, axis):
    # ps1.transpose: the cotangent of the linear operand (None for the constant one).
    if ad.is_undefined_primal(x):
        ax = axis % x.aval.ndim
        shape = [1] * x.aval.ndim
        shape[ax] = x.aval.shape[ax]
        return jnp.expand_dims(ct, ax) * jnp.reshape(w, shape), None
    ax = axis % x.ndim
    others = [i for i in range(x.ndim) if i != ax]
    return None, jnp.tensordot(x, ct, axes=(others, list(range(ct.ndim))))


ad.primitive_transposes[weighted_sum_p] = weighted_sum_transpose
# %% witness
x = jnp.ones((2, 3)); w = jnp.ones(3)
out_aval = jax.typeof(jnp.ones(2))
cx, cw = weighted_sum_transpose(ad.Zero(out_aval), ad.UndefinedPrimal(jax.typeof(x)), w, axis=1)
result = None if (type(cx) is ad.Zero or np.allclose(cx, 0)) and np.shape(cx if type(cx) is not ad.Zero else np.zeros(cx.aval.shape)) == (2, 3) else f"{cx}"
