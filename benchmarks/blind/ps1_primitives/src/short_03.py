# task: ps1.jvp
# what: lets JAX build the rule: ad.defjvp with the two linear terms (JAX's helper handles ad.Zero and the sum); the registered name is read back
# %% jvp
def weighted_sum_value_and_jvp(primals, tangents, *, axis):
    # ps1.jvp: (weighted_sum(x, w), its tangent); a tangent may be the symbolic ad.Zero.
    raise NotImplementedError


ad.defjvp(weighted_sum_p,
          lambda xt, x, w, *, axis: weighted_sum(xt, w, axis=axis),
          lambda wt, x, w, *, axis: weighted_sum(x, wt, axis=axis))
weighted_sum_value_and_jvp = ad.primitive_jvps[weighted_sum_p]
ad.primitive_jvps[weighted_sum_p] = weighted_sum_value_and_jvp
