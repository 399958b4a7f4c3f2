# task: ps1.transpose
# what: 'other axes' computed with the raw axis: for a negative axis the contracted axis is included too
# %% transpose
def weighted_sum_transpose(ct, x, w, *, axis):
    # ps1.transpose: the cotangent of the linear operand (None for the constant one).
    if ad.is_undefined_primal(x):
        if type(ct) is ad.Zero:
            return ad.Zero(x.aval), None
        ax = axis % x.aval.ndim
        shape = [1] * x.aval.ndim
        shape[ax] = x.aval.shape[ax]
        return jnp.expand_dims(ct, ax) * jnp.reshape(w, shape), None
    if type(ct) is ad.Zero:
        return None, ad.Zero(w.aval)
    others = [i for i in range(x.ndim) if i != axis]
    return None, jnp.tensordot(x, ct, axes=(others, list(range(ct.ndim))))


ad.primitive_transposes[weighted_sum_p] = weighted_sum_transpose
# %% witness
x = jnp.arange(6.0).reshape(3, 2); w = jnp.ones(3); ct = jnp.array([1.0, -1.0])
(got,) = jax.linear_transpose(lambda b: weighted_sum(x, b, axis=-2), w)(ct)
result = None if np.allclose(got, x @ ct) else f"{got}"
