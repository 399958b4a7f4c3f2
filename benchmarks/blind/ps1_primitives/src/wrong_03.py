# task: ps1.impl
# what: np.apply_along_axis, which raises when another dimension has size 0
# %% impl
def weighted_sum_impl(x, w, *, axis):
    # ps1.impl: contract axis `axis` of the concrete array x with the 1-D array w.
    x = np.asarray(x)
    w = np.asarray(w)
    out = np.apply_along_axis(lambda v: np.dot(v, w), axis, x)
    return np.asarray(out, dtype=x.dtype)


weighted_sum_p.def_impl(weighted_sum_impl)
# %% witness
x = np.zeros((0, 3), np.float32); w = np.ones(3, np.float32)
got = weighted_sum(x, w, axis=1)
result = None if got.shape == (0,) else f"x (0,3) axis=1: shape {got.shape}"
