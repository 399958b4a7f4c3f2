"""Realistic wrong solutions of ps1_primitives, for the tests and the demo class.

``MUTANTS[name] = (description, {solution grade_id: replacement cell source})``: a mutant is the
reference solution with those cells replaced. Each is a mistake a student plausibly makes; the
tests assert that it loses points on the task at fault (``TASK[name]``) and that the feedback
names that rule.
"""

from __future__ import annotations

IMPL_DROPS_Z = '''
def multiply_add_impl(x, y, z):
    return np.multiply(x, y)


multiply_add_p.def_impl(multiply_add_impl)
'''

ABSTRACT_EVAL_ALWAYS_FLOAT32 = '''
def multiply_add_abstract_eval(x, y, z):
    if not x.shape == y.shape == z.shape:
        raise TypeError("multiply_add needs operands of one shape")
    if not x.dtype == y.dtype == z.dtype:
        raise TypeError("multiply_add needs operands of one dtype")
    return ShapedArray(x.shape, jnp.float32)


multiply_add_p.def_abstract_eval(multiply_add_abstract_eval)
'''

ABSTRACT_EVAL_NO_SHAPE_CHECK = '''
def multiply_add_abstract_eval(x, y, z):
    if not x.dtype == y.dtype == z.dtype:
        raise TypeError("multiply_add needs operands of one dtype")
    return ShapedArray(x.shape, x.dtype)


multiply_add_p.def_abstract_eval(multiply_add_abstract_eval)
'''

ABSTRACT_EVAL_ASSERTS = '''
def multiply_add_abstract_eval(x, y, z):
    assert x.shape == y.shape == z.shape
    assert x.dtype == y.dtype == z.dtype
    return ShapedArray(x.shape, x.dtype)


multiply_add_p.def_abstract_eval(multiply_add_abstract_eval)
'''

LOWERING_CPU_ONLY = '''
def multiply_add_lowering(ctx, x, y, z):
    return [hlo.add(hlo.multiply(x, y), z)]


mlir.register_lowering(multiply_add_p, multiply_add_lowering, platform="cpu")
'''

LOWERING_HOST_CALLBACK = '''
def _multiply_add_on_host(x, y, z):
    return np.add(np.multiply(x, y), z)


def _multiply_add_callback(x, y, z):
    result = jax.ShapeDtypeStruct(x.shape, x.dtype)
    return jax.pure_callback(_multiply_add_on_host, result, x, y, z)


multiply_add_lowering = mlir.lower_fun(_multiply_add_callback, multiple_results=False)

mlir.register_lowering(multiply_add_p, multiply_add_lowering, platform="cpu")
mlir.register_lowering(multiply_add_p, multiply_add_lowering, platform="cuda")
'''

LOWERING_SUBTRACTS = '''
def multiply_add_lowering(ctx, x, y, z):
    return [hlo.subtract(hlo.multiply(x, y), z)]


mlir.register_lowering(multiply_add_p, multiply_add_lowering, platform="cpu")
mlir.register_lowering(multiply_add_p, multiply_add_lowering, platform="cuda")
'''

JVP_DROPS_ZT = '''
def multiply_add_value_and_jvp(primals, tangents):
    x, y, z = primals
    xt, yt, zt = (ad.instantiate_zeros(t) for t in tangents)
    primal_out = multiply_add_prim(x, y, z)
    tangent_out = multiply_add_prim(xt, y, multiply_add_prim(x, yt, jnp.zeros_like(x)))
    return primal_out, tangent_out


ad.primitive_jvps[multiply_add_p] = multiply_add_value_and_jvp
'''

JVP_NUMPY_ON_TRACERS = '''
def multiply_add_value_and_jvp(primals, tangents):
    x, y, z = primals
    xt, yt, zt = (ad.instantiate_zeros(t) for t in tangents)
    primal_out = multiply_add_prim(x, y, z)
    tangent_out = np.add(np.add(np.multiply(xt, y), np.multiply(x, yt)), zt)
    return primal_out, tangent_out


ad.primitive_jvps[multiply_add_p] = multiply_add_value_and_jvp
'''

JVP_IGNORES_SYMBOLIC_ZEROS = '''
def multiply_add_value_and_jvp(primals, tangents):
    x, y, z = primals
    xt, yt, zt = tangents
    primal_out = multiply_add_prim(x, y, z)
    tangent_out = multiply_add_prim(xt, y, multiply_add_prim(x, yt, zt))
    return primal_out, tangent_out


ad.primitive_jvps[multiply_add_p] = multiply_add_value_and_jvp
'''

TRANSPOSE_SWAPS_COTANGENTS = '''
def multiply_add_transpose(ct, x, y, z):
    ct = ad.instantiate_zeros(ct)
    zeros = jnp.zeros_like(ct)
    if ad.is_undefined_primal(x):
        return None, multiply_add_prim(ct, y, zeros), ct
    return multiply_add_prim(x, ct, zeros), None, ct


ad.primitive_transposes[multiply_add_p] = multiply_add_transpose
'''

TRANSPOSE_CONSTANT_X_ONLY = '''
def multiply_add_transpose(ct, x, y, z):
    ct = ad.instantiate_zeros(ct)
    # x is the constant multiplicand, y is linear
    return None, multiply_add_prim(x, ct, jnp.zeros_like(ct)), ct


ad.primitive_transposes[multiply_add_p] = multiply_add_transpose
'''

BATCH_EQUAL_AXES = '''
def multiply_add_batch(args, batch_axes):
    assert batch_axes[0] == batch_axes[1]
    assert batch_axes[0] == batch_axes[2]
    return multiply_add_prim(*args), batch_axes[0]


batching.primitive_batchers[multiply_add_p] = multiply_add_batch
'''

BATCH_WRONG_OUT_AXIS = '''
def multiply_add_batch(args, batch_axes):
    size = next(a.shape[d] for a, d in zip(args, batch_axes) if d is not None)
    aligned = [
        jnp.broadcast_to(a, (size, *a.shape)) if d is None else jnp.moveaxis(a, d, 0)
        for a, d in zip(args, batch_axes)
    ]
    out_axis = next(d for d in batch_axes if d is not None)
    return multiply_add_prim(*aligned), out_axis


batching.primitive_batchers[multiply_add_p] = multiply_add_batch
'''

BATCH_UNMAPPED_NOT_BROADCAST = '''
def multiply_add_batch(args, batch_axes):
    aligned = [a if d is None else jnp.moveaxis(a, d, 0) for a, d in zip(args, batch_axes)]
    return multiply_add_prim(*aligned), 0


batching.primitive_batchers[multiply_add_p] = multiply_add_batch
'''

MUTANTS: dict[str, tuple[str, dict[str, str]]] = {
    "impl_drops_z": ("the impl rule returns x * y and forgets z", {"impl": IMPL_DROPS_Z}),
    "abstract_eval_always_float32": (
        "the abstract eval rule always answers float32", {
            "abstract_eval": ABSTRACT_EVAL_ALWAYS_FLOAT32}),
    "abstract_eval_no_shape_check": (
        "the abstract eval rule accepts operands of different shapes", {
            "abstract_eval": ABSTRACT_EVAL_NO_SHAPE_CHECK}),
    "abstract_eval_asserts": (
        "the abstract eval rule asserts (AssertionError) instead of raising TypeError", {
            "abstract_eval": ABSTRACT_EVAL_ASSERTS}),
    "lowering_cpu_only": ("the lowering rule is registered for cpu only", {
        "lowering": LOWERING_CPU_ONLY}),
    "lowering_host_callback": ("the lowering calls back into Python on the host", {
        "lowering": LOWERING_HOST_CALLBACK}),
    "lowering_subtracts": ("the lowering computes x * y - z", {"lowering": LOWERING_SUBTRACTS}),
    "jvp_drops_zt": ("the JVP rule forgets the zt term", {"jvp": JVP_DROPS_ZT}),
    "jvp_numpy_on_tracers": ("the JVP rule computes the tangent with NumPy (not traceable)", {
        "jvp": JVP_NUMPY_ON_TRACERS}),
    "jvp_ignores_symbolic_zeros": ("the JVP rule passes ad.Zero tangents to the primitive", {
        "jvp": JVP_IGNORES_SYMBOLIC_ZEROS}),
    "transpose_swaps_cotangents": (
        "the transpose rule puts each cotangent in the other operand's slot", {
            "transpose": TRANSPOSE_SWAPS_COTANGENTS}),
    "transpose_constant_x_only": ("the transpose rule assumes x is always the constant", {
        "transpose": TRANSPOSE_CONSTANT_X_ONLY}),
    "batch_equal_axes": ("the seed's batching rule: asserts all batch axes are equal", {
        "batch": BATCH_EQUAL_AXES}),
    "batch_wrong_out_axis": (
        "the batching rule moves batch axes to the front but returns the operands' axis", {
            "batch": BATCH_WRONG_OUT_AXIS}),
    "batch_unmapped_not_broadcast": (
        "the batching rule leaves unbatched operands without a batch dimension", {
            "batch": BATCH_UNMAPPED_NOT_BROADCAST}),
}

# The task each mutant is wrong in: it must lose points there.
TASK = {name: "ps1." + next(iter(cells)) for name, (_, cells) in MUTANTS.items()}

# The few wrong students of the demo class, and the cells a partial student has done.
DEMO = ("jvp_drops_zt", "batch_equal_axes", "lowering_cpu_only")
PARTIAL = ("impl", "abstract_eval", "lowering")
