# task: ps1.transpose
# what: x's cotangent as ct[..., None] * w: right only when axis is the last axis
# %% transpose
def weighted_sum_transpose(ct, x, w, *, axis):
    # ps1.transpose: the cotangent of the linear operand (None for the constant one).
    if ad.is_undefined_primal(x):
        if type(ct) is ad.Zero:
            return ad.Zero(x.aval), None
        return ct[..., None] * w, None
    if type(ct) is ad.Zero:
        return None, ad.Zero(w.aval)
    ax = axis % x.ndim
    others = [i for i in range(x.ndim) if i != ax]
    return None, jnp.tensordot(x, ct, axes=(others, list(range(ct.ndim))))


ad.primitive_transposes[weighted_sum_p] = weighted_sum_transpose
# %% witness
x = jnp.arange(6.0).reshape(3, 2); w = jnp.array([1.0, 2.0, 3.0]); ct = jnp.array([1.0, -1.0])
(got,) = jax.linear_transpose(lambda a: weighted_sum(a, w, axis=0), x)(ct)
result = None if np.allclose(got, np.outer(w, ct)) else f"x (3,2) axis=0: {got}"
