# task: broadcast_transpose
def broadcast_transpose(cts, x, *, shape, axes):
    # ps4.broadcast_transpose
    (ct,) = cts
    in_shape = tuple(x.aval.shape)
    # 1. sum away the new axes: the result has the rank of x
    if axes:
        ct = reduce_sum(ct, tuple(axes))
    # 2. sum the axes of x that were stretched, and put them back with size one
    mid_shape = [d for i, d in enumerate(shape) if i not in axes]
    stretched = tuple(j for j, (d_in, d_out) in enumerate(zip(in_shape, mid_shape)) if d_in != d_out)
    if stretched:
        ct = broadcast(reduce_sum(ct, stretched), in_shape, stretched)
    else:
        ct = broadcast(ct, in_shape, ())  # a fresh array even when nothing was summed
    return [ct]


transpose_rules[broadcast_p] = broadcast_transpose
