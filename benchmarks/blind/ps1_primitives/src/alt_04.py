# task: ps1.jvp
# what: jvp instantiating both zeros, one expression
# %% jvp
def weighted_sum_value_and_jvp(primals, tangents, *, axis):
    # ps1.jvp: (weighted_sum(x, w), its tangent); a tangent may be the symbolic ad.Zero.
    x, w = primals
    xt, wt = map(ad.instantiate_zeros, tangents)
    return (weighted_sum(x, w, axis=axis),
            weighted_sum(xt, w, axis=axis) + weighted_sum(x, wt, axis=axis))


ad.primitive_jvps[weighted_sum_p] = weighted_sum_value_and_jvp
