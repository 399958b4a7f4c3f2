# task: ps1.transpose
# what: w cotangent via moveaxis + reshape(-1, k) + matmul: the reshape is ambiguous (ZeroDivisionError) when the contracted axis has size 0 (first meant as an alternative; the self-check caught it)
# %% transpose
def weighted_sum_transpose(ct, x, w, *, axis):
    # ps1.transpose: the cotangent of the linear operand (None for the constant one).
    if ad.is_undefined_primal(x):
        if type(ct) is ad.Zero:
            return ad.Zero(x.aval), None
        ax = axis % x.aval.ndim
        return jnp.moveaxis(ct[..., None] * w, -1, ax), None
    if type(ct) is ad.Zero:
        return None, ad.Zero(w.aval)
    ax = axis % x.ndim
    xm = jnp.moveaxis(x, ax, -1).reshape(-1, x.shape[ax])
    return None, jnp.reshape(ct, (-1,)) @ xm


ad.primitive_transposes[weighted_sum_p] = weighted_sum_transpose
# %% witness
x = jnp.ones((2, 0)); ct = jnp.ones((2,))
(got,) = jax.linear_transpose(lambda b: weighted_sum(x, b, axis=1), jnp.ones(0))(ct)
result = None if got.shape == (0,) else f"{got.shape}"
