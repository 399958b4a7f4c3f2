# task: ps1.impl
# what: swaps the contracted axis with the last one (swapaxes) instead of moving it, so the other axes come out permuted for rank>=3
# %% impl
def weighted_sum_impl(x, w, *, axis):
    # ps1.impl: contract axis `axis` of the concrete array x with the 1-D array w.
    x = np.asarray(x)
    w = np.asarray(w)
    return np.asarray(np.swapaxes(x, axis, -1) @ w, dtype=x.dtype)


weighted_sum_p.def_impl(weighted_sum_impl)
# %% witness
x = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4); w = np.ones(2, np.float32)
got = weighted_sum(x, w, axis=0); want = np.tensordot(x, w, axes=([0], [0]))
result = None if got.shape == want.shape and np.allclose(got, want) else f"x (2,3,4) axis=0: shape {got.shape}, want {want.shape}"
