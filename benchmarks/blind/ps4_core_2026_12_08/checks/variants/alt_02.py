# task: broadcast_transpose
def broadcast_transpose(cts, x, *, shape, axes):
    # ps4.broadcast_transpose
    (ct,) = cts
    in_shape = list(x.aval.shape)
    new = set(axes)
    # Walk the result's axes from the last to the first, so that removing one axis does not move
    # the ones still to visit; j is the matching axis of x.
    j = len(in_shape)
    for i in reversed(range(len(shape))):
        if i in new:
            ct = reduce_sum(ct, i)
            continue
        j -= 1
        if in_shape[j] == 1 and shape[i] != 1:
            cur = list(ct.shape)
            summed = reduce_sum(ct, i)
            ct = broadcast(summed, cur[:i] + [1] + cur[i + 1:], (i,))
    return [broadcast(ct, in_shape, ())]


transpose_rules[broadcast_p] = broadcast_transpose
