# task: broadcast_transpose
def broadcast_transpose(cts, x, *, shape, axes):
    # ps4.broadcast_transpose
    (ct,) = cts
    x_shape = x.aval.shape
    positions = iter(i for i in range(len(shape)) if i not in set(axes))
    where = dict(enumerate(positions))          # axis of x -> axis of the result
    size_one = [j for j in where if x_shape[j] != shape[where[j]]]
    to_sum = sorted(set(axes) | {where[j] for j in size_one})
    return [broadcast(reduce_sum(ct, to_sum), x_shape, size_one)]


transpose_rules[broadcast_p] = broadcast_transpose
