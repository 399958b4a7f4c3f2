# task: broadcast_transpose
def broadcast_transpose(cts, x, *, shape, axes):
    # ps4.broadcast_transpose
    (ct,) = cts
    in_shape = tuple(x.aval.shape)
    kept = [i for i in range(len(shape)) if i not in axes]
    stretched = [j for j, i in enumerate(kept) if in_shape[j] == 1 and shape[i] != 1]
    summed = reduce_sum(ct, tuple(axes) + tuple(kept[j] for j in stretched))
    if not stretched:
        return [summed]  # already the shape of x
    return [broadcast(summed, in_shape, stretched)]

transpose_rules[broadcast_p] = broadcast_transpose
