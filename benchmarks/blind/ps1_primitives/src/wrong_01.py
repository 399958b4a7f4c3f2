# task: ps1.impl
# what: impl always returns float32 (hard-coded dtype), so float64/bfloat16 inputs come back float32
# %% impl
def weighted_sum_impl(x, w, *, axis):
    # ps1.impl: contract axis `axis` of the concrete array x with the 1-D array w.
    x = np.asarray(x, dtype=np.float32)
    w = np.asarray(w, dtype=np.float32)
    return np.tensordot(x, w, axes=([axis], [0])).astype(np.float32)


weighted_sum_p.def_impl(weighted_sum_impl)
# %% witness
x = jnp.ones((2, 3), jnp.bfloat16); w = jnp.ones((3,), jnp.bfloat16)
got = weighted_sum(x, w, axis=1)
result = None if got.dtype == jnp.bfloat16 else f"x (2,3) bfloat16 axis=1: dtype {got.dtype}, want bfloat16"
