# task: ps1.abstract_eval
# what: drops the weak type: the result is never weakly typed, though JAX's tensordot of two weak operands is
# %% abstract_eval
def weighted_sum_abstract_eval(x, w, *, axis):
    # ps1.abstract_eval: a ShapedArray for the result; TypeError for operands that do not fit.
    if not -x.ndim <= axis < x.ndim:
        raise TypeError(f"axis {axis} out of range for rank {x.ndim}")
    axis = axis % x.ndim
    if w.ndim != 1 or w.shape[0] != x.shape[axis]:
        raise TypeError(f"w must have shape ({x.shape[axis]},), got {w.shape}")
    if x.dtype != w.dtype:
        raise TypeError(f"dtypes differ: {x.dtype} and {w.dtype}")
    return ShapedArray(x.shape[:axis] + x.shape[axis + 1:], x.dtype)


weighted_sum_p.def_abstract_eval(weighted_sum_abstract_eval)
# %% witness
S = jax.ShapeDtypeStruct
out = jax.eval_shape(lambda a, b: weighted_sum(a, b, axis=0), S((3,), jnp.float32, weak_type=True), S((3,), jnp.float32, weak_type=True))
result = None if out.weak_type else "x, w weak float32 (3,): result not weak, jnp.tensordot's is"
