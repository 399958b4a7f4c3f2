# task: ps1.transpose
# what: w's cotangent as tensordot(ct, x, axes=ct.ndim): contracts x's leading axes, right only when axis is last
# %% transpose
def weighted_sum_transpose(ct, x, w, *, axis):
    # ps1.transpose: the cotangent of the linear operand (None for the constant one).
    if ad.is_undefined_primal(x):
        if type(ct) is ad.Zero:
            return ad.Zero(x.aval), None
        ax = axis % x.aval.ndim
        return jnp.expand_dims(ct, ax) * jnp.expand_dims(w, [i for i in range(x.aval.ndim) if i != ax]), None
    if type(ct) is ad.Zero:
        return None, ad.Zero(w.aval)
    return None, jnp.tensordot(ct, x, axes=ct.ndim)


ad.primitive_transposes[weighted_sum_p] = weighted_sum_transpose
# %% witness
x = jnp.arange(6.0).reshape(3, 2); w = jnp.array([1.0, 2.0, 3.0]); ct = jnp.array([1.0, -1.0])
(got,) = jax.linear_transpose(lambda b: weighted_sum(x, b, axis=0), w)(ct)
result = None if np.allclose(got, x @ ct) else f"x (3,2) axis=0: {got}"
