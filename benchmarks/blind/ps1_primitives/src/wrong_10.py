# task: ps1.lowering
# what: passes the raw (possibly negative) axis as the contracting dimension
# %% lowering
def weighted_sum_lowering(ctx, x, w, *, axis):
    # ps1.lowering: a list with one StableHLO value contracting x's axis with w.
    dims = hlo.DotDimensionNumbers.get(
        lhs_batching_dimensions=[], rhs_batching_dimensions=[],
        lhs_contracting_dimensions=[axis], rhs_contracting_dimensions=[0])
    out_type = mlir.aval_to_ir_type(ctx.module_context, ctx.avals_out[0])
    return [hlo.dot_general(out_type, x, w, dims)]


mlir.register_lowering(weighted_sum_p, weighted_sum_lowering, platform="cpu")
mlir.register_lowering(weighted_sum_p, weighted_sum_lowering, platform="cuda")
# %% witness
x = jnp.ones((2, 3), jnp.float32); w = jnp.ones((3,), jnp.float32)
got = jax.jit(lambda a, b: weighted_sum(a, b, axis=-1))(x, w)
result = None if np.allclose(got, 3.0) else f"jit axis=-1: {got}"
