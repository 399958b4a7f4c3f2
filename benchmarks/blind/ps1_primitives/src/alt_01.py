# task: ps1.impl
# what: impl by moveaxis + matmul, accumulating in float64
# %% impl
def weighted_sum_impl(x, w, *, axis):
    # ps1.impl: contract axis `axis` of the concrete array x with the 1-D array w.
    x = np.asarray(x)
    w = np.asarray(w)
    out = np.moveaxis(x.astype(np.float64), axis, -1) @ w.astype(np.float64)
    return np.asarray(out).astype(x.dtype)


weighted_sum_p.def_impl(weighted_sum_impl)
