# task: broadcast_transpose
def broadcast_transpose(cts, x, *, shape, axes):
    # ps4.broadcast_transpose
    (ct,) = cts
    in_shape = tuple(x.aval.shape)
    # an axis of x stretched from 1 to a bigger size
    stretched = [i for i in range(len(in_shape)) if in_shape[i] == 1 and shape[i] != 1]
    kept = [i for i in range(len(shape)) if i not in axes]
    summed = reduce_sum(ct, tuple(axes) + tuple(kept[i] for i in stretched))
    return [broadcast(summed, in_shape, stretched)]

transpose_rules[broadcast_p] = broadcast_transpose
