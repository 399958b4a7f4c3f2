# task: broadcast_transpose
def broadcast_transpose(cts, x, *, shape, axes):
    # ps4.broadcast_transpose
    # Sum over the new axes: every element of x was copied along them.
    (ct,) = cts
    return [reduce_sum(ct, tuple(axes))]

transpose_rules[broadcast_p] = broadcast_transpose
