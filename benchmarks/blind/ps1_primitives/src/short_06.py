# task: ps1.abstract_eval
# what: delegates shape inference to jax.eval_shape of jnp.tensordot (dtype check added by hand)
# %% abstract_eval
def weighted_sum_abstract_eval(x, w, *, axis):
    # ps1.abstract_eval: a ShapedArray for the result; TypeError for operands that do not fit.
    if x.dtype != w.dtype or w.ndim != 1 or not -x.ndim <= axis < x.ndim:
        raise TypeError("weighted_sum: operands do not fit")
    out = jax.eval_shape(lambda a, b: jnp.tensordot(a, b, axes=([axis], [0])), x, w)
    return ShapedArray(out.shape, out.dtype, weak_type=out.weak_type)


weighted_sum_p.def_abstract_eval(weighted_sum_abstract_eval)
