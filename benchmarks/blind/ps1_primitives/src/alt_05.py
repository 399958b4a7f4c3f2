# task: ps1.transpose
# what: transpose with lax.broadcast_in_dim for x and jnp.einsum (built subscripts) for w; Zero instantiated
# %% transpose
def weighted_sum_transpose(ct, x, w, *, axis):
    # ps1.transpose: the cotangent of the linear operand (None for the constant one).
    if ad.is_undefined_primal(x):
        aval = x.aval
        ax = axis % aval.ndim
        ct = ad.instantiate_zeros(ct)
        keep = [i for i in range(aval.ndim) if i != ax]
        ctb = jax.lax.broadcast_in_dim(ct, aval.shape, keep)
        wb = jax.lax.broadcast_in_dim(w, aval.shape, (ax,))
        return ctb * wb, None
    ct = ad.instantiate_zeros(ct)
    nd = jnp.ndim(x)
    ax = axis % nd
    letters = "abcdefghij"[:nd]
    ct_sub = letters[:ax] + letters[ax + 1:]
    return None, jnp.einsum(f"{letters},{ct_sub}->{letters[ax]}", x, ct)


ad.primitive_transposes[weighted_sum_p] = weighted_sum_transpose
