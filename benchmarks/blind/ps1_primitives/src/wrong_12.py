# task: ps1.lowering
# what: registers the rule for cpu only (forgets the cuda line)
# %% lowering
def weighted_sum_lowering(ctx, x, w, *, axis):
    # ps1.lowering: a list with one StableHLO value contracting x's axis with w.
    x_aval = ctx.avals_in[0]
    dims = hlo.DotDimensionNumbers.get(
        lhs_batching_dimensions=[], rhs_batching_dimensions=[],
        lhs_contracting_dimensions=[axis % x_aval.ndim], rhs_contracting_dimensions=[0])
    out_type = mlir.aval_to_ir_type(ctx.module_context, ctx.avals_out[0])
    return [hlo.dot_general(out_type, x, w, dims)]


mlir.register_lowering(weighted_sum_p, weighted_sum_lowering, platform="cpu")
# %% witness
x = jnp.ones((2, 3), jnp.float32); w = jnp.ones((3,), jnp.float32)
jax.jit(lambda a, b: weighted_sum(a, b, axis=1)).trace(x, w).lower(lowering_platforms=("cuda",))
result = None
