# task: broadcast_transpose
def broadcast_transpose(cts, x, *, shape, axes):
    # ps4.broadcast_transpose
    (ct,) = cts
    in_shape = tuple(x.aval.shape)
    # Like NumPy broadcasting: the new axes are the leading ones.
    n_new = len(shape) - len(in_shape)
    lead = tuple(range(n_new))
    stretched = [j for j in range(len(in_shape)) if in_shape[j] == 1 and shape[n_new + j] != 1]
    summed = reduce_sum(ct, lead + tuple(n_new + j for j in stretched))
    return [broadcast(summed, in_shape, stretched)]

transpose_rules[broadcast_p] = broadcast_transpose
