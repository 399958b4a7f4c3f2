def broadcast_transpose(cts, x, *, shape, axes):
    # ps4.broadcast_transpose
    (ct,) = cts
    in_shape = tuple(x.aval.shape)
    shape = tuple(shape)
    new_axes = sorted(a % len(shape) for a in axes) if shape else []
    # The axes of x become, in order, the result axes that are not new.
    kept = [i for i in range(len(shape)) if i not in new_axes]
    # Axes of x of size one that broadcasting stretched to another size (0 included).
    stretched = [j for j, i in enumerate(kept) if in_shape[j] == 1 and shape[i] != 1]
    summed = reduce_sum(ct, tuple(new_axes) + tuple(kept[j] for j in stretched))
    # Put the stretched axes back with size one: the result has x's shape, and is an array.
    return [broadcast(summed, in_shape, stretched)]


transpose_rules[broadcast_p] = broadcast_transpose
