# task: ps1.transpose
# what: broadcasts through jnp.ones(shape) (default float32): the cotangent is promoted for bfloat16
# %% transpose
def weighted_sum_transpose(ct, x, w, *, axis):
    # ps1.transpose: the cotangent of the linear operand (None for the constant one).
    if ad.is_undefined_primal(x):
        if type(ct) is ad.Zero:
            return ad.Zero(x.aval), None
        ax = axis % x.aval.ndim
        shape = [1] * x.aval.ndim
        shape[ax] = x.aval.shape[ax]
        return jnp.ones(x.aval.shape) * jnp.expand_dims(ct, ax) * jnp.reshape(w, shape), None
    if type(ct) is ad.Zero:
        return None, ad.Zero(w.aval)
    ax = axis % x.ndim
    others = [i for i in range(x.ndim) if i != ax]
    return None, jnp.tensordot(x, ct, axes=(others, list(range(ct.ndim))))


ad.primitive_transposes[weighted_sum_p] = weighted_sum_transpose
# %% witness
x = jnp.ones((2, 3), jnp.bfloat16); w = jnp.ones(3, jnp.bfloat16); ct = jnp.ones(2, jnp.bfloat16)
(got,) = jax.linear_transpose(lambda a: weighted_sum(a, w, axis=1), x)(ct)
result = None if got.dtype == jnp.bfloat16 else f"bfloat16 transpose in x: dtype {got.dtype}"
