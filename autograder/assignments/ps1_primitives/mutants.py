"""Realistic wrong solutions of ps1_primitives, and correct ones written differently.

``MUTANTS[name] = (description, {solution grade_id: replacement cell source})``: a mutant is the
reference solution with those cells replaced. Each is a mistake a student plausibly makes; the
tests grade them all and assert that each loses points on the task at fault (``TASK[name]``) and
on no other. ``CORRECT`` has the same shape: other valid choices (lowering ops, batch axes,
ways to broadcast back), each of which must earn every point and pass every visible test.
"""

from __future__ import annotations


def _impl(body: str) -> str:
    return f"def weighted_sum_impl(x, w, *, axis):\n{body}\n\n\nweighted_sum_p.def_impl(weighted_sum_impl)\n"


def _abstract_eval(body: str) -> str:
    return (f"def weighted_sum_abstract_eval(x, w, *, axis):\n{body}\n\n\n"
            "weighted_sum_p.def_abstract_eval(weighted_sum_abstract_eval)\n")


def _lowering(body: str, platforms=("cpu", "cuda"), head: str = "") -> str:
    register = "".join(
        f'mlir.register_lowering(weighted_sum_p, weighted_sum_lowering, platform="{p}")\n'
        for p in platforms)
    return f"{head}def weighted_sum_lowering(ctx, x, w, *, axis):\n{body}\n\n\n{register}"


def _jvp(body: str) -> str:
    return (f"def weighted_sum_value_and_jvp(primals, tangents, *, axis):\n{body}\n\n\n"
            "ad.primitive_jvps[weighted_sum_p] = weighted_sum_value_and_jvp\n")


def _transpose(body: str) -> str:
    return (f"def weighted_sum_transpose(ct, x, w, *, axis):\n{body}\n\n\n"
            "ad.primitive_transposes[weighted_sum_p] = weighted_sum_transpose\n")


def _batch(body: str) -> str:
    return (f"def weighted_sum_batch(args, batch_axes, *, axis):\n{body}\n\n\n"
            "batching.primitive_batchers[weighted_sum_p] = weighted_sum_batch\n")


# Pieces of the reference that several mutants keep.
CHECKS = '''    if not -x.ndim <= axis < x.ndim:
        raise TypeError(f"axis {axis} is out of range for rank {x.ndim}")
    if w.ndim != 1 or w.shape[0] != x.shape[axis]:
        raise TypeError(f"w must have shape ({x.shape[axis]},), got {w.shape}")
    if x.dtype != w.dtype:
        raise TypeError(f"dtypes differ: {x.dtype} and {w.dtype}")'''
DOT = '''    (x_aval, _), (out_aval,) = ctx.avals_in, ctx.avals_out
    dims = hlo.DotDimensionNumbers.get(
        lhs_batching_dimensions=[], rhs_batching_dimensions=[],
        lhs_contracting_dimensions=[axis % x_aval.ndim], rhs_contracting_dimensions=[0])
    return [hlo.dot_general(mlir.aval_to_ir_type(ctx.module_context, out_aval), x, w, dims)]'''
JVP_HEAD = '''    x, w = primals
    xt, wt = tangents
    out = weighted_sum(x, w, axis=axis)'''
TRANSPOSE_ZERO = '''    x_linear, w_linear = ad.is_undefined_primal(x), ad.is_undefined_primal(w)
    if type(ct) is ad.Zero:
        return (ad.Zero(x.aval) if x_linear else None, ad.Zero(w.aval) if w_linear else None)'''
TRANSPOSE_X = '''    if x_linear:
        ndim = len(x.aval.shape)
        axis = axis % ndim
        shape = [1] * ndim
        shape[axis] = w.shape[0]
        return jnp.expand_dims(ct, axis) * jnp.reshape(w, shape), None'''
TRANSPOSE_W = '''    axis = axis % x.ndim
    others = [d for d in range(x.ndim) if d != axis]
    return None, jnp.tensordot(x, ct, axes=(others, list(range(ct.ndim))))'''
BATCH_W = '''    w = jnp.moveaxis(w, w_axis, 0)
    size = w.shape[0]
    x = jnp.broadcast_to(x, (size, *x.shape)) if x_axis is None else jnp.moveaxis(x, x_axis, 0)
    shape = [size] + [1] * ndim
    shape[axis + 1] = w.shape[1]
    return jnp.sum(x * jnp.reshape(w, shape), axis=axis + 1), 0'''
BATCH_HEAD = '''    x, w = args
    x_axis, w_axis = batch_axes
    ndim = x.ndim - (x_axis is not None)'''


MUTANTS: dict[str, tuple[str, dict[str, str]]] = {
    # ps1.impl -----------------------------------------------------------------------------------
    "impl_last_axis": ("the impl rule always contracts the last axis", {"impl": _impl(
        "    return np.tensordot(np.asarray(x), np.asarray(w), axes=([-1], [0]))")}),
    "impl_swapaxes": ("the impl rule swaps the axis with the last one instead of moving it", {
        "impl": _impl("    return np.swapaxes(np.asarray(x), axis, -1) @ np.asarray(w)")}),
    "impl_forgets_weights": ("the impl rule sums along the axis without the weights", {
        "impl": _impl("    return np.sum(np.asarray(x), axis=axis)")}),
    "impl_keepdims": ("the impl rule keeps the contracted axis as size 1", {"impl": _impl(
        "    x, w = np.asarray(x), np.asarray(w)\n"
        "    shape = [1] * x.ndim\n"
        "    shape[axis] = w.shape[0]\n"
        "    return np.sum(x * w.reshape(shape), axis=axis, keepdims=True)")}),
    "impl_float32": ("the impl rule computes in float32, then casts back", {"impl": _impl(
        "    x32, w32 = np.asarray(x, np.float32), np.asarray(w, np.float32)\n"
        "    return np.tensordot(x32, w32, axes=([axis], [0])).astype(np.asarray(x).dtype)")}),
    "impl_upcasts": ("the impl rule accumulates in float32 and returns float32", {"impl": _impl(
        "    x = np.moveaxis(np.asarray(x), axis, -1).astype(np.float32)\n"
        "    return x @ np.asarray(w).astype(np.float32)")}),
    # ps1.abstract_eval --------------------------------------------------------------------------
    "abstract_eval_keeps_axis": ("the abstract eval rule returns x's shape unchanged", {
        "abstract_eval": _abstract_eval(CHECKS + "\n    return ShapedArray(x.shape, x.dtype)")}),
    "abstract_eval_negative_axis": (
        "the abstract eval rule slices the shape with a negative axis as it is", {
            "abstract_eval": _abstract_eval(
                CHECKS + "\n    return ShapedArray(x.shape[:axis] + x.shape[axis + 1:], "
                "x.dtype)")}),
    "abstract_eval_always_float32": ("the abstract eval rule always answers float32", {
        "abstract_eval": _abstract_eval(
            CHECKS + "\n    axis = axis % x.ndim\n"
            "    return ShapedArray(x.shape[:axis] + x.shape[axis + 1:], jnp.float32)")}),
    "abstract_eval_rejects_negative_axis": (
        "the abstract eval rule raises TypeError for every negative axis", {
            "abstract_eval": _abstract_eval(
                "    if not 0 <= axis < x.ndim:\n"
                "        raise TypeError(f'axis {axis} out of range')\n"
                "    if w.ndim != 1 or w.shape[0] != x.shape[axis] or x.dtype != w.dtype:\n"
                "        raise TypeError('w does not fit x')\n"
                "    return ShapedArray(x.shape[:axis] + x.shape[axis + 1:], x.dtype)")}),
    "abstract_eval_no_length_check": ("the abstract eval rule accepts a w of any length", {
        "abstract_eval": _abstract_eval(
            "    if not -x.ndim <= axis < x.ndim or w.ndim != 1 or x.dtype != w.dtype:\n"
            "        raise TypeError('bad operands')\n"
            "    axis = axis % x.ndim\n"
            "    return ShapedArray(x.shape[:axis] + x.shape[axis + 1:], x.dtype)")}),
    "abstract_eval_no_axis_check": (
        "the abstract eval rule indexes x.shape with an out-of-range axis (IndexError)", {
            "abstract_eval": _abstract_eval(
                "    if w.ndim != 1 or w.shape[0] != x.shape[axis] or x.dtype != w.dtype:\n"
                "        raise TypeError('w does not fit x')\n"
                "    axis = axis % x.ndim\n"
                "    return ShapedArray(x.shape[:axis] + x.shape[axis + 1:], x.dtype)")}),
    "abstract_eval_asserts": ("the abstract eval rule asserts instead of raising TypeError", {
        "abstract_eval": _abstract_eval(
            "    assert -x.ndim <= axis < x.ndim\n"
            "    assert w.ndim == 1 and w.shape[0] == x.shape[axis]\n"
            "    assert x.dtype == w.dtype\n"
            "    axis = axis % x.ndim\n"
            "    return ShapedArray(x.shape[:axis] + x.shape[axis + 1:], x.dtype)")}),
    "abstract_eval_no_dtype_check": ("the abstract eval rule accepts operands of two dtypes", {
        "abstract_eval": _abstract_eval(
            "    if not -x.ndim <= axis < x.ndim or w.ndim != 1 or w.shape[0] != x.shape[axis]:\n"
            "        raise TypeError('w does not fit x')\n"
            "    axis = axis % x.ndim\n"
            "    return ShapedArray(x.shape[:axis] + x.shape[axis + 1:], x.dtype)")}),
    # ps1.lowering -------------------------------------------------------------------------------
    "lowering_cpu_only": ("the lowering rule is registered for cpu only", {
        "lowering": _lowering(DOT, platforms=("cpu",))}),
    "lowering_host_callback": ("the lowering calls back into NumPy on the host", {
        "lowering": '''def _on_host(x, w, axis):
    return np.tensordot(x, w, axes=([axis], [0])).astype(x.dtype)


def _by_callback(x, w, *, axis):
    out = jax.eval_shape(lambda a, b: jnp.tensordot(a, b, axes=([axis], [0])), x, w)
    return jax.pure_callback(lambda a, b: _on_host(a, b, axis), out, x, w)


weighted_sum_lowering = mlir.lower_fun(_by_callback, multiple_results=False)
mlir.register_lowering(weighted_sum_p, weighted_sum_lowering, platform="cpu")
mlir.register_lowering(weighted_sum_p, weighted_sum_lowering, platform="cuda")
'''}),
    "lowering_negative_axis": ("the lowering passes a negative axis to dot_general as it is", {
        "lowering": _lowering(DOT.replace("[axis % x_aval.ndim]", "[axis]"))}),
    "lowering_float32": ("the lowering converts to float32, contracts, and converts back", {
        "lowering": _lowering('''    (x_aval, w_aval), (out_aval,) = ctx.avals_in, ctx.avals_out

    def ir_type(aval, dtype):
        return mlir.aval_to_ir_type(ctx.module_context, aval.update(dtype=np.dtype(dtype)))

    x32 = hlo.convert(ir_type(x_aval, np.float32), x)
    w32 = hlo.convert(ir_type(w_aval, np.float32), w)
    dims = hlo.DotDimensionNumbers.get(
        lhs_batching_dimensions=[], rhs_batching_dimensions=[],
        lhs_contracting_dimensions=[axis % x_aval.ndim], rhs_contracting_dimensions=[0])
    out = hlo.dot_general(ir_type(out_aval, np.float32), x32, w32, dims)
    return [hlo.convert(ir_type(out_aval, out_aval.dtype), out)]''')}),
    "lowering_contracts_first_axis": ("the lowering always contracts axis 0", {
        "lowering": _lowering(DOT.replace("[axis % x_aval.ndim]", "[0]"))}),
    "lowering_result_type_of_x": ("the lowering gives the result x's type", {
        "lowering": _lowering(DOT.replace(
            "mlir.aval_to_ir_type(ctx.module_context, out_aval)",
            "mlir.aval_to_ir_type(ctx.module_context, x_aval)"))}),
    # ps1.jvp ------------------------------------------------------------------------------------
    "jvp_drops_w_term": ("the JVP rule forgets the w tangent's term", {"jvp": _jvp(
        JVP_HEAD + "\n    return out, weighted_sum(ad.instantiate_zeros(xt), w, axis=axis)")}),
    "jvp_drops_x_term": ("the JVP rule forgets the x tangent's term", {"jvp": _jvp(
        JVP_HEAD + "\n    return out, weighted_sum(x, ad.instantiate_zeros(wt), axis=axis)")}),
    "jvp_ignores_symbolic_zeros": ("the JVP rule passes ad.Zero tangents to the primitive", {
        "jvp": _jvp(JVP_HEAD + "\n    return out, weighted_sum(xt, w, axis=axis) + "
                    "weighted_sum(x, wt, axis=axis)")}),
    "jvp_numpy": ("the JVP rule computes the tangent with NumPy (not traceable)", {"jvp": _jvp(
        JVP_HEAD + '''
    xt, wt = ad.instantiate_zeros(xt), ad.instantiate_zeros(wt)
    tangent = (np.tensordot(xt, w, axes=([axis], [0]))
               + np.tensordot(x, wt, axes=([axis], [0])))
    return out, tangent''')}),
    "jvp_jax_numpy": ("the JVP rule computes the tangent with jnp.tensordot, not the primitive", {
        "jvp": _jvp(JVP_HEAD + '''
    xt, wt = ad.instantiate_zeros(xt), ad.instantiate_zeros(wt)
    tangent = (jnp.tensordot(xt, w, axes=([axis], [0]))
               + jnp.tensordot(x, wt, axes=([axis], [0])))
    return out, tangent''')}),
    "jvp_zero_times_primitive": (
        "the JVP rule computes the tangent with jnp.tensordot, plus 0 * weighted_sum",
        {"jvp": _jvp(JVP_HEAD + '''
    xt, wt = ad.instantiate_zeros(xt), ad.instantiate_zeros(wt)
    tangent = (jnp.tensordot(xt, w, axes=([axis], [0]))
               + jnp.tensordot(x, wt, axes=([axis], [0])))
    return out, tangent + 0.0 * (weighted_sum(xt, w, axis=axis) + weighted_sum(x, wt, axis=axis))''')}),
    "jvp_float32": ("the JVP rule computes the tangent in float32", {"jvp": _jvp(
        JVP_HEAD + '''
    xt, wt = ad.instantiate_zeros(xt), ad.instantiate_zeros(wt)
    x32, w32 = x.astype(jnp.float32), w.astype(jnp.float32)
    tangent = (weighted_sum(xt.astype(jnp.float32), w32, axis=axis)
               + weighted_sum(x32, wt.astype(jnp.float32), axis=axis))
    return out, tangent.astype(out.dtype)''')}),
    "jvp_hardcoded_axis": ("the JVP rule contracts the tangents along the last axis", {
        "jvp": _jvp(JVP_HEAD + '''
    xt, wt = ad.instantiate_zeros(xt), ad.instantiate_zeros(wt)
    return out, weighted_sum(xt, w, axis=-1) + weighted_sum(x, wt, axis=-1)''')}),
    "jvp_zero_if_any_zero": ("the JVP rule answers a zero tangent when either tangent is ad.Zero", {
        "jvp": _jvp(JVP_HEAD + '''
    if type(xt) is ad.Zero or type(wt) is ad.Zero:
        return out, jnp.zeros_like(out)
    return out, weighted_sum(xt, w, axis=axis) + weighted_sum(x, wt, axis=axis)''')}),
    # ps1.transpose ------------------------------------------------------------------------------
    "transpose_no_reshape": (
        "the transpose rule multiplies by w without placing it along the axis", {
            "transpose": _transpose(TRANSPOSE_ZERO + '''
    if x_linear:
        axis = axis % len(x.aval.shape)
        return jnp.expand_dims(ct, axis) * w, None
''' + TRANSPOSE_W)}),
    "transpose_swaps_cotangents": (
        "the transpose rule returns each cotangent in the other operand's slot", {
            "transpose": _transpose(TRANSPOSE_ZERO + '''
    if x_linear:
        ndim = len(x.aval.shape)
        axis = axis % ndim
        shape = [1] * ndim
        shape[axis] = w.shape[0]
        return None, jnp.expand_dims(ct, axis) * jnp.reshape(w, shape)
    axis = axis % x.ndim
    others = [d for d in range(x.ndim) if d != axis]
    return jnp.tensordot(x, ct, axes=(others, list(range(ct.ndim)))), None''')}),
    "transpose_ignores_symbolic_zero": (
        "the transpose rule computes with a symbolic-zero cotangent (ad.Zero) as if an array", {
            "transpose": _transpose("    x_linear = ad.is_undefined_primal(x)\n" + TRANSPOSE_X
                                    + "\n" + TRANSPOSE_W)}),
    "transpose_x_only": ("the transpose rule assumes x is always the linear operand", {
        "transpose": _transpose(TRANSPOSE_ZERO + '''
    ndim = len(x.aval.shape)
    axis = axis % ndim
    shape = [1] * ndim
    shape[axis] = w.shape[0]
    return jnp.expand_dims(ct, axis) * jnp.reshape(w, shape), None''')}),
    "transpose_forgets_weights": (
        "the transpose rule broadcasts the cotangent back without weighting it by w", {
            "transpose": _transpose(TRANSPOSE_ZERO + '''
    if x_linear:
        axis = axis % len(x.aval.shape)
        return jnp.broadcast_to(jnp.expand_dims(ct, axis), x.aval.shape), None
''' + TRANSPOSE_W)}),
    "transpose_negative_axis": (
        "the transpose rule lists x's other axes without normalising a negative axis", {
            "transpose": _transpose(TRANSPOSE_ZERO + "\n" + TRANSPOSE_X + '''
    others = [d for d in range(x.ndim) if d != axis]
    return None, jnp.tensordot(x, ct, axes=(others, list(range(ct.ndim))))''')}),
    "transpose_float32": ("the transpose rule accumulates w's cotangent in float32", {
        "transpose": _transpose(TRANSPOSE_ZERO + "\n" + TRANSPOSE_X + '''
    axis = axis % x.ndim
    others = [d for d in range(x.ndim) if d != axis]
    return None, jnp.tensordot(x, ct, axes=(others, list(range(ct.ndim))),
                               preferred_element_type=jnp.float32)''')}),
    "transpose_numpy": ("the transpose rule uses NumPy (not traceable)", {
        "transpose": _transpose(TRANSPOSE_ZERO + '''
    if x_linear:
        ndim = len(x.aval.shape)
        shape = [1] * ndim
        shape[axis] = w.shape[0]
        return np.expand_dims(ct, axis % ndim) * np.reshape(w, shape), None
    axis = axis % x.ndim
    others = [d for d in range(x.ndim) if d != axis]
    return None, np.tensordot(x, ct, axes=(others, list(range(np.ndim(ct)))))''')}),
    # ps1.batch ----------------------------------------------------------------------------------
    "batch_assumes_both_batched": ("the batching rule moves both batch axes, None included", {
        "batch": _batch(BATCH_HEAD + '''
    axis = axis % ndim
    x, w = jnp.moveaxis(x, x_axis, 0), jnp.moveaxis(w, w_axis, 0)
    shape = [w.shape[0]] + [1] * ndim
    shape[axis + 1] = w.shape[1]
    return jnp.sum(x * jnp.reshape(w, shape), axis=axis + 1), 0''')}),
    "batch_axis_not_shifted": (
        "the batching rule moves x's batch axis to the front but contracts the old axis", {
            "batch": _batch(BATCH_HEAD + '''
    axis = axis % ndim
    if w_axis is None:
        return weighted_sum(jnp.moveaxis(x, x_axis, 0), w, axis=axis), 0
''' + BATCH_W)}),
    "batch_never_applies_primitive": (
        "the batching rule contracts with jnp.tensordot in every case, never weighted_sum", {
            "batch": _batch(BATCH_HEAD + '''
    axis = axis % ndim
    if w_axis is None:
        return jnp.tensordot(jnp.moveaxis(x, x_axis, 0), w, axes=([axis + 1], [0])), 0
''' + BATCH_W)}),
    "batch_wrong_out_axis": (
        "the batching rule moves the batch axis to the front but returns x's batch axis", {
            "batch": _batch(BATCH_HEAD + '''
    axis = axis % ndim
    if w_axis is None:
        return weighted_sum(jnp.moveaxis(x, x_axis, 0), w, axis=axis + 1), x_axis
''' + BATCH_W)}),
    "batch_negative_axis": ("the batching rule shifts a negative axis by one", {
        "batch": _batch(BATCH_HEAD + '''
    if w_axis is None:
        return weighted_sum(jnp.moveaxis(x, x_axis, 0), w, axis=axis + 1), 0
    axis = axis % ndim
''' + BATCH_W)}),
    "batch_ignores_w_batch": ("the batching rule treats a batched w as unbatched", {
        "batch": _batch(BATCH_HEAD + '''
    axis = axis % ndim
    if x_axis is None:
        return weighted_sum(x, w, axis=axis), w_axis
    return weighted_sum(jnp.moveaxis(x, x_axis, 0), w, axis=axis + 1), 0''')}),
    "batch_numpy": ("the batching rule uses NumPy (not traceable)", {
        "batch": _batch(BATCH_HEAD + '''
    axis = axis % ndim
    if w_axis is None:
        return weighted_sum(np.moveaxis(x, x_axis, 0), w, axis=axis + 1), 0
''' + BATCH_W.replace("jnp.", "np."))}),
    "batch_assumes_axis0": ("the batching rule assumes every batch axis is 0", {
        "batch": _batch(BATCH_HEAD + '''
    axis = axis % ndim
    if w_axis is None:
        return weighted_sum(x, w, axis=axis + 1), 0
    size = w.shape[0]
    x = jnp.broadcast_to(x, (size, *x.shape)) if x_axis is None else x
    shape = [size] + [1] * ndim
    shape[axis + 1] = w.shape[1]
    return jnp.sum(x * jnp.reshape(w, shape), axis=axis + 1), 0''')}),
    "batch_float32": ("the batching rule contracts a batched w in float32", {
        "batch": _batch(BATCH_HEAD + '''
    axis = axis % ndim
    if w_axis is None:
        return weighted_sum(jnp.moveaxis(x, x_axis, 0), w, axis=axis + 1), 0
''' + BATCH_W.replace("jnp.sum(x * jnp.reshape(w, shape)",
                      "jnp.sum(x.astype(jnp.float32) * jnp.reshape(w, shape).astype(jnp.float32)"))}),
}

# The task each mutant is wrong in: it must lose points there, and only there.
TASK = {name: "ps1." + next(iter(cells)) for name, (_, cells) in MUTANTS.items()}


CORRECT: dict[str, tuple[str, dict[str, str]]] = {
    "lowering_transpose_then_dot": (
        "lowering moves the axis last with stablehlo.transpose, then contracts it", {
            "lowering": _lowering('''    ndim = ctx.avals_in[0].ndim
    axis = axis % ndim
    perm = [d for d in range(ndim) if d != axis] + [axis]
    xt = hlo.transpose(x, mlir.dense_int_array(perm))
    dims = hlo.DotDimensionNumbers.get(
        lhs_batching_dimensions=[], rhs_batching_dimensions=[],
        lhs_contracting_dimensions=[ndim - 1], rhs_contracting_dimensions=[0])
    out_type = mlir.aval_to_ir_type(ctx.module_context, ctx.avals_out[0])
    return [hlo.dot_general(out_type, xt, w, dims)]''')}),
    "jvp_instantiates_zeros": (
        "JVP instantiates both tangents and always adds two terms", {"jvp": _jvp(
            JVP_HEAD + '''
    xt, wt = ad.instantiate_zeros(xt), ad.instantiate_zeros(wt)
    return out, weighted_sum(xt, w, axis=axis) + weighted_sum(x, wt, axis=axis)''')}),
    "transpose_with_primitive": (
        "transpose: broadcast_to then multiply for x; the primitive itself for w", {
            "transpose": _transpose('''    if type(ct) is ad.Zero:
        return tuple(ad.Zero(v.aval) if ad.is_undefined_primal(v) else None for v in (x, w))
    if ad.is_undefined_primal(x):
        shape = x.aval.shape
        axis = axis % len(shape)
        spread = jnp.broadcast_to(jnp.expand_dims(ct, axis), shape)
        weights = jnp.expand_dims(w, [d for d in range(len(shape)) if d != axis])
        return spread * weights, None
    flat = jnp.moveaxis(x, axis, 0).reshape(x.shape[axis], -1)
    return None, weighted_sum(flat, jnp.ravel(ct), axis=1)''')}),
    "batch_axis_last": (
        "batching moves the batch axis last, so the contracted axis keeps its number", {
            "batch": _batch(BATCH_HEAD + '''
    axis = axis % ndim
    if w_axis is None:
        out = weighted_sum(jnp.moveaxis(x, x_axis, -1), w, axis=axis)
        return out, out.ndim - 1
    w = jnp.moveaxis(w, w_axis, -1)
    if x_axis is None:
        return jnp.tensordot(x, w, axes=([axis], [0])), ndim - 1
    x = jnp.moveaxis(x, x_axis, -1)
    shape = [1] * (ndim + 1)
    shape[axis], shape[-1] = w.shape
    return jnp.sum(x * jnp.reshape(w, shape), axis=axis), ndim - 1''')}),
    "batch_loop": (
        "batching loops over the batch, one application of the primitive per element", {
            "batch": _batch('''    x, w = args
    x_axis, w_axis = batch_axes
    size = x.shape[x_axis] if x_axis is not None else w.shape[w_axis]

    def element(a, a_axis, i):
        return a if a_axis is None else jnp.take(a, i, axis=a_axis)

    outs = [weighted_sum(element(x, x_axis, i), element(w, w_axis, i), axis=axis)
            for i in range(size)]
    return jnp.stack(outs), 0''')}),
    "batch_transpose_and_lax": (
        "batching with jnp.transpose permutations and lax.dot_general batch dimensions", {
            "batch": _batch('''    x, w = args
    x_axis, w_axis = batch_axes
    rank = x.ndim if x_axis is None else x.ndim - 1
    axis = axis if axis >= 0 else axis + rank
    if x_axis is not None:
        perm = [x_axis] + [d for d in range(x.ndim) if d != x_axis]
        x = jnp.transpose(x, perm)
    if w_axis is None:
        return weighted_sum(x, w, axis=axis + 1), 0
    if w_axis == 1:
        w = jnp.transpose(w)
    if x_axis is None:
        out = jax.lax.dot_general(w, x, (([1], [axis]), ([], [])))
        return out, 0
    out = jax.lax.dot_general(x, w, (([axis + 1], [1]), ([0], [0])))
    return out, 0''')}),
    "abstract_eval_tuple_shape": (
        "abstract eval builds the shape with a comprehension and checks in another order", {
            "abstract_eval": _abstract_eval('''    if x.dtype != w.dtype:
        raise TypeError("x and w need the same dtype")
    if axis < -x.ndim or axis >= x.ndim:
        raise TypeError("axis out of range")
    axis = axis + x.ndim if axis < 0 else axis
    if w.shape != (x.shape[axis],):
        raise TypeError("w must be a vector as long as x's axis")
    shape = tuple(n for d, n in enumerate(x.shape) if d != axis)
    return ShapedArray(shape, x.dtype)''')}),
    "jvp_lax_add": (
        "JVP adds the tangent terms with jax.lax.add and returns an ad.Zero only when both are", {
            "jvp": _jvp(JVP_HEAD + '''
    if type(xt) is ad.Zero and type(wt) is ad.Zero:
        return out, ad.Zero.from_primal_value(out)
    if type(xt) is ad.Zero:
        return out, weighted_sum(x, wt, axis=axis)
    if type(wt) is ad.Zero:
        return out, weighted_sum(xt, w, axis=axis)
    return out, jax.lax.add(weighted_sum(xt, w, axis=axis), weighted_sum(x, wt, axis=axis))''')}),
}

# The few wrong students of the demo class, and the cells a partial student has done.
DEMO = ("jvp_drops_w_term", "batch_axis_not_shifted", "lowering_cpu_only")
PARTIAL = ("impl", "abstract_eval", "lowering")
