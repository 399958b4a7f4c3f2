# task: ps1.lowering
# what: builds the result type from a hand-made ShapedArray with a hard-coded float32 dtype
# %% lowering
def weighted_sum_lowering(ctx, x, w, *, axis):
    # ps1.lowering: a list with one StableHLO value contracting x's axis with w.
    ndim = ctx.avals_in[0].ndim
    axis = axis % ndim
    out_shape = [d for i, d in enumerate(ctx.avals_in[0].shape) if i != axis]
    out_type = mlir.aval_to_ir_type(ctx.module_context, ShapedArray(tuple(out_shape), np.float32))
    dims = hlo.DotDimensionNumbers.get(
        lhs_batching_dimensions=[], rhs_batching_dimensions=[],
        lhs_contracting_dimensions=[axis], rhs_contracting_dimensions=[0])
    return [hlo.dot_general(out_type, x, w, dims)]


mlir.register_lowering(weighted_sum_p, weighted_sum_lowering, platform="cpu")
mlir.register_lowering(weighted_sum_p, weighted_sum_lowering, platform="cuda")
# %% witness
x = jnp.ones((2, 3), jnp.bfloat16); w = jnp.ones((3,), jnp.bfloat16)
got = jax.jit(lambda a, b: weighted_sum(a, b, axis=1))(x, w)
result = None if got.dtype == jnp.bfloat16 and np.allclose(np.asarray(got, np.float32), 3.0) else f"jit bfloat16: dtype {got.dtype}"
