# task: broadcast_transpose
def broadcast_transpose(cts, x, *, shape, axes):
    # ps4.broadcast_transpose
    (ct,) = cts
    in_shape = tuple(x.aval.shape)
    kept = [i for i in range(len(shape)) if i not in axes]
    stretched = tuple(kept[j] for j in range(len(in_shape)) if in_shape[j] == 1 and shape[kept[j]] != 1)
    # NumPy sums and keeps the stretched axes with keepdims; the new axes are summed away.
    summed = np.sum(ct, axis=stretched, keepdims=True)
    return [np.sum(summed, axis=tuple(axes))]

transpose_rules[broadcast_p] = broadcast_transpose
