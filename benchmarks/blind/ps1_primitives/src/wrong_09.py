# task: ps1.abstract_eval
# what: wrong exception type: ValueError for a dtype mismatch
# %% abstract_eval
def weighted_sum_abstract_eval(x, w, *, axis):
    # ps1.abstract_eval: a ShapedArray for the result; TypeError for operands that do not fit.
    if not -x.ndim <= axis < x.ndim:
        raise TypeError(f"axis {axis} out of range for rank {x.ndim}")
    axis = axis % x.ndim
    if w.ndim != 1 or w.shape[0] != x.shape[axis]:
        raise TypeError(f"w must have shape ({x.shape[axis]},), got {w.shape}")
    if x.dtype != w.dtype:
        raise ValueError(f"dtypes differ: {x.dtype} and {w.dtype}")
    shape = x.shape[:axis] + x.shape[axis + 1:]
    return ShapedArray(shape, x.dtype, weak_type=x.weak_type and w.weak_type)


weighted_sum_p.def_abstract_eval(weighted_sum_abstract_eval)
# %% witness
try:
    jax.eval_shape(lambda a, b: weighted_sum(a, b, axis=1), jax.ShapeDtypeStruct((2, 3), jnp.float32), jax.ShapeDtypeStruct((3,), jnp.bfloat16))
    result = "no error"
except TypeError:
    result = None
except Exception as e:
    result = f"x float32, w bfloat16: {type(e).__name__}, want TypeError"
