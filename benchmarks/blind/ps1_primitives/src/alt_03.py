# task: ps1.lowering
# what: dot_general with w as the left operand (contracting w's 0 with x's axis)
# %% lowering
def weighted_sum_lowering(ctx, x, w, *, axis):
    # ps1.lowering: a list with one StableHLO value contracting x's axis with w.
    (x_aval, _), (out_aval,) = ctx.avals_in, ctx.avals_out
    if axis < 0:
        axis += x_aval.ndim
    dims = hlo.DotDimensionNumbers.get(
        lhs_batching_dimensions=[], rhs_batching_dimensions=[],
        lhs_contracting_dimensions=[0], rhs_contracting_dimensions=[axis])
    return [hlo.dot_general(mlir.aval_to_ir_type(ctx.module_context, out_aval), w, x, dims)]


mlir.register_lowering(weighted_sum_p, weighted_sum_lowering, platform="cpu")
mlir.register_lowering(weighted_sum_p, weighted_sum_lowering, platform="cuda")
