# %% impl
def weighted_sum_impl(x, w, *, axis):
    # ps1.impl: contract axis `axis` of the concrete array x with the 1-D array w.
    x = np.asarray(x)
    w = np.asarray(w)
    dtype = x.dtype
    # NumPy has no fast bfloat16 dot: contract half precision in float32, then cast back.
    work = np.float32 if dtype in (jnp.bfloat16, np.float16) else dtype
    out = np.tensordot(x.astype(work), w.astype(work), axes=([axis], [0]))
    return np.asarray(out, dtype=dtype)


weighted_sum_p.def_impl(weighted_sum_impl)
# %% abstract_eval
def weighted_sum_abstract_eval(x, w, *, axis):
    # ps1.abstract_eval: a ShapedArray for the result; TypeError for operands that do not fit.
    if not -x.ndim <= axis < x.ndim:
        raise TypeError(f"weighted_sum: axis {axis} is out of range for an operand of rank {x.ndim}")
    axis = axis % x.ndim
    if w.ndim != 1 or w.shape[0] != x.shape[axis]:
        raise TypeError(
            f"weighted_sum: w must be 1-D with {x.shape[axis]} entries, got shape {w.shape}")
    if x.dtype != w.dtype:
        raise TypeError(f"weighted_sum: x and w must have one dtype, got {x.dtype} and {w.dtype}")
    shape = x.shape[:axis] + x.shape[axis + 1:]
    return ShapedArray(shape, x.dtype, weak_type=x.weak_type and w.weak_type)


weighted_sum_p.def_abstract_eval(weighted_sum_abstract_eval)
# %% lowering
def weighted_sum_lowering(ctx, x, w, *, axis):
    # ps1.lowering: a list with one StableHLO value contracting x's axis with w.
    x_aval, _ = ctx.avals_in
    (out_aval,) = ctx.avals_out
    dims = hlo.DotDimensionNumbers.get(
        lhs_batching_dimensions=[],
        rhs_batching_dimensions=[],
        lhs_contracting_dimensions=[axis % x_aval.ndim],
        rhs_contracting_dimensions=[0],
    )
    result_type = mlir.aval_to_ir_type(ctx.module_context, out_aval)
    return [hlo.dot_general(result_type, x, w, dims)]


mlir.register_lowering(weighted_sum_p, weighted_sum_lowering, platform="cpu")
mlir.register_lowering(weighted_sum_p, weighted_sum_lowering, platform="cuda")
# %% jvp
def weighted_sum_value_and_jvp(primals, tangents, *, axis):
    # ps1.jvp: (weighted_sum(x, w), its tangent); a tangent may be the symbolic ad.Zero.
    x, w = primals
    xt, wt = tangents
    primal_out = weighted_sum(x, w, axis=axis)
    tangent_out = None
    if type(xt) is not ad.Zero:
        tangent_out = weighted_sum(xt, w, axis=axis)
    if type(wt) is not ad.Zero:
        term = weighted_sum(x, wt, axis=axis)
        tangent_out = term if tangent_out is None else tangent_out + term
    if tangent_out is None:
        tangent_out = ad.Zero(jax.typeof(primal_out).to_tangent_aval())
    return primal_out, tangent_out


ad.primitive_jvps[weighted_sum_p] = weighted_sum_value_and_jvp
# %% transpose
def weighted_sum_transpose(ct, x, w, *, axis):
    # ps1.transpose: the cotangent of the linear operand (None for the constant one).
    if ad.is_undefined_primal(x) and ad.is_undefined_primal(w):
        raise NotImplementedError("weighted_sum is not linear in x and w together")
    if ad.is_undefined_primal(x):
        aval = x.aval
        if type(ct) is ad.Zero:
            return ad.Zero(aval.to_ct_aval()), None
        ax = axis % aval.ndim
        w_shape = [1] * aval.ndim
        w_shape[ax] = aval.shape[ax]
        ct_x = jnp.expand_dims(ct, ax) * jnp.reshape(w, w_shape)
        return ct_x.astype(aval.dtype), None
    aval = w.aval
    if type(ct) is ad.Zero:
        return None, ad.Zero(aval.to_ct_aval())
    ax = axis % jnp.ndim(x)
    others = [i for i in range(jnp.ndim(x)) if i != ax]
    ct_w = jnp.tensordot(x, ct, axes=(others, list(range(jnp.ndim(ct)))))
    return None, ct_w.astype(aval.dtype)


ad.primitive_transposes[weighted_sum_p] = weighted_sum_transpose
# %% batch
def weighted_sum_batch(args, batch_axes, *, axis):
    # ps1.batch: (result, its batch axis); None marks an unbatched operand.
    x, w = args
    bx, bw = batch_axes
    if bw is None:
        # Only x is batched: put its batch axis first and contract the shifted axis.
        x = jnp.moveaxis(x, bx, 0)
        ax = axis % (x.ndim - 1)
        return weighted_sum(x, w, axis=ax + 1), 0
    w = jnp.moveaxis(w, bw, 0)  # (batch, k)
    if bx is None:
        ax = axis % x.ndim
        # out[b, ...] = sum_k w[b, k] x[..., k, ...]
        return jnp.tensordot(w, x, axes=([1], [ax])), 0
    x = jnp.moveaxis(x, bx, 0)
    ax = axis % (x.ndim - 1) + 1
    out = jax.lax.dot_general(x, w, dimension_numbers=(([ax], [1]), ([0], [0])))
    return out, 0


batching.primitive_batchers[weighted_sum_p] = weighted_sum_batch
