"""Reproducers of ps5_kernels: the "Try it yourself" cells of the feedback page (grader side).

A snippet runs after the student's cells and uses only what their notebook defines: the setup
cell's names (``ffi_call``, ``compile_library``, ``lse_numpy`` ...), ``TARGET`` and
``CUDA_TARGET``, and the student's functions. Unlike the probes, which grade each piece of glue
with the grader's own ``lse_ffi`` and compute kernel calls in NumPy, a snippet runs the student's
whole notebook as it is: where an earlier task is wrong, its snippet fails too, and the check that
failed is the one to fix first. Inputs are literals drawn with ``public_rng``; what a correct
solution gives is computed here with real JAX, as the checks compute their expectations.
"""

from __future__ import annotations

from string import Template

import jax
import jax.numpy as jnp
import numpy as np

from autograder.assignments.ps5_kernels import checks
from autograder.grade.reproduce import literal, public_rng

DESCRIPTION = {check.id: check.description for check in checks.CHECKS}
# What the kernel checks draw, one case each: (x's shape, dtype, scale, offset, t, w's shape).
KERNEL_CASES = {
    "ps5.kernel.f32": [((5,), "float32", 3.0, 0.0, 0.7, None),
                       ((2, 3, 4), "float32", 3.0, 0.0, 2.5, None)],
    "ps5.kernel.f64": [((4,), "float64", 3.0, 0.0, 0.7, None),
                       ((2, 1, 3, 6), "float64", 3.0, 0.0, 1.5, None)],
    "ps5.kernel.odd": [((3, 1), "float64", 3.0, 0.0, 1.0, None),
                       ((5, 7), "float32", 3.0, 0.0, 0.5, None)],
    "ps5.kernel.empty": [((3, 0), "float64", 3.0, 0.0, 1.0, None),
                         ((2, 2, 0), "float32", 3.0, 0.0, 1.0, None)],
    "ps5.kernel.large": [((3, 4), "float64", 250.0, 0.0, 0.1, None),
                         ((5,), "float32", 150.0, 0.0, 0.1, None),
                         # rows wholly far below zero: x / t from about -6000 to -2000
                         ((2, 3), "float64", 300.0, -2000.0, 0.5, None)],
    "ps5.kernel.w_shape": [((3, 5), "float64", 3.0, 0.0, 1.0, (1, 5)),
                           ((2, 3), "float32", 3.0, 0.0, 0.5, (1, 1, 3))],
    "ps5.kernel.precise": [((4, 3), "float64", 3.0, 5000.0, 0.7, None)],
}
TOLERANCE = {"float32": "rtol=2e-5, atol=2e-5 * max(1.0, np.max(np.abs(want), initial=0))",
             "float64": "rtol=1e-11, atol=1e-11 * max(1.0, np.max(np.abs(want), initial=0))"}

HEAD = Template("""\
# $check_id: $description
import numpy as np

""")

KERNEL = Template("""\
cases = [  # x, w, t, and y from a correct kernel
$cases]
for x, w, t, want in cases:
    y = np.asarray(ffi_call(TARGET, jax.ShapeDtypeStruct(x.shape[:-1], x.dtype))(
        x, w, t=np.float32(t)))
    print(f"x {x.dtype} of shape {x.shape}, w of shape {w.shape}, t={t}")
    print("  your code:         ", y)
    print("  a correct solution:", want)
    assert y.dtype == want.dtype and y.shape == want.shape
    wide = np.abs(np.where(np.isfinite(want), want, 0))
    np.testing.assert_allclose(y, want, rtol=$rtol, atol=$atol * max(1.0, wide.max(initial=0)))
""")

REFUSES = Template("""\
x = $x
cases = [  # each call a correct kernel answers with an ffi::Error
    ("w with one weight too many", x, np.ones(x.shape[-1] + 1), 1.0),
    ("w with one weight too few", x, np.ones(x.shape[-1] - 1), 1.0),
    ("int32 arrays", x.astype(np.int32), np.ones(x.shape[-1], np.int32), 1.0),
    ("x float32 with w float64", x.astype(np.float32), np.ones(x.shape[-1]), 1.0),
    ("t < 0", x, np.ones(x.shape[-1]), -0.5),
    ("t = 0", x, np.ones(x.shape[-1]), 0.0),
]
call = ffi_call(TARGET, jax.ShapeDtypeStruct(x.shape[:-1], x.dtype))
np.asarray(call(x, np.ones(x.shape[-1]), t=np.float32(1.0)))  # a good call must work
for what, xs, ws, t in cases:
    bad = ffi_call(TARGET, jax.ShapeDtypeStruct(xs.shape[:-1], xs.dtype))
    try:
        np.asarray(bad(xs, ws, t=np.float32(t)))
    except Exception as err:
        print(f"{what}: your code refuses it with {err}; a correct solution with "
              "INVALID_ARGUMENT")
        # XLA starts the message with the ffi::Error's status
        assert str(err).startswith("INVALID_ARGUMENT:"), (
            f"{what} must be refused with ffi::Error::InvalidArgument")
    else:
        raise AssertionError(f"the kernel returned a result for {what}")
""")

COUNT = """\
def kernel_calls(closed):
    found, loops, stack = 0, 0, [closed.jaxpr]
    while stack:
        for eqn in stack.pop().eqns:
            found += eqn.primitive.name == "ffi_call"
            loops += eqn.primitive.name in ("while", "scan")
            for value in eqn.params.values():
                for item in value if isinstance(value, (tuple, list)) else [value]:
                    inner = getattr(item, "jaxpr", item)
                    if hasattr(inner, "eqns"):
                        stack.append(inner)
    return found, loops


"""

FFI = Template("""\
cases = [  # x, w, t, and y from a correct solution (its dtype: promote_types of x's and w's)
$cases]
for x, w, t, want in cases:
    closed = jax.make_jaxpr(lambda x, w: lse_ffi(x, w, t))(x, w)
    assert kernel_calls(closed) == (1, 0), "lse_ffi must make exactly one ffi_call of the kernel"
    y = jax.jit(lambda x, w: lse_ffi(x, w, t))(x, w)
    print(f"x {x.dtype}, w {w.dtype}: your code gives {y.dtype}, a correct solution {want.dtype}")
    print("  your code:         ", np.asarray(y, np.float64))
    print("  a correct solution:", np.asarray(want, np.float64))
    assert y.dtype == want.dtype and y.shape == want.shape
    want64 = np.asarray(want, np.float64)
    tol = {"float16": 1e-3, "bfloat16": 8e-3, "float32": 2e-4}.get(str(want.dtype), 1e-10)
    np.testing.assert_allclose(np.asarray(y, np.float64), want64, rtol=tol,
                               atol=tol * max(1.0, np.max(np.abs(want64), initial=0)))
""")

FFI_METHOD = Template("""\
x = $x
w = $w
for method in ("expand_dims", "broadcast_all", "sequential"):
    staged = jax.make_jaxpr(lambda x, w: lse_ffi(x, w, 1.0, vmap_method=method))(x, w)
    got = [e.params["vmap_method"] for e in staged.eqns if e.primitive.name == "ffi_call"]
    print(f"vmap_method={method!r}: your code passes {got}, a correct solution {[method]}")
    assert got == [method], f"vmap_method={method!r} reaches ffi_call as {got}"
""")

FFI_INTS = Template("""\
x = $x
cases = [  # a correct lse_ffi raises a TypeError for each
    ("int32 x and w", x.astype(np.int32), np.ones(x.shape[-1], np.int32)),
    ("an int8 w", x.astype(np.float32), np.ones(x.shape[-1], np.int8)),
    ("an int64 x", x.astype(np.int64), np.ones(x.shape[-1])),
    ("a bool w", x.astype(np.float32), np.ones(x.shape[-1], bool)),
]
for what, xs, ws in cases:
    try:
        jax.make_jaxpr(lambda x, w: lse_ffi(x, w, 1.0))(xs, ws)
    except TypeError as err:
        print(f"{what}: your code raises a TypeError, as a correct solution does: {err}")
    else:
        print(f"{what}: your code raises nothing; a correct solution raises a TypeError")
        raise AssertionError(f"lse_ffi with {what} raised no TypeError")
""")

VMAP = Template("""\
t = $t
cases = [  # in_axes from the outer vmap in, x, w, and a correct result
$cases]
for in_axes, x, w, want in cases:
    f = lambda x, w: lse_vmappable(x, w, t)
    for axes in reversed(in_axes):
        f = jax.vmap(f, in_axes=axes)
    closed = jax.make_jaxpr(f)(x, w)
    calls, loops = kernel_calls(closed)
    y = np.asarray(jax.jit(f)(x, w))
    print(f"in_axes {in_axes}: {calls} kernel call(s), {loops} loop(s)")
    print("  your code:         ", y)
    print("  a correct solution:", want)
    if all(w_axis is None for _, w_axis in in_axes):
        assert (calls, loops) == (1, 0), "only x is batched: one kernel call, no loop"
    assert y.dtype == want.dtype, f"the result is {y.dtype}; the unbatched call's is {want.dtype}"
    np.testing.assert_allclose(y, want, $tolerance)
""")

GRAD = Template("""\
x = $x
w = $w
t = $t
ct = $ct
closed = jax.make_jaxpr(lambda x, w: jax.jvp(lambda x, w: lse(x, w, t), (x, w), (x, w)))(x, w)
assert kernel_calls(closed)[0] >= 1, "the forward pass does not call the kernel"
gx, gw = $grad(lambda x, w: jnp.sum(lse(x, w, t) * ct), argnums=(0, 1))$call(x, w)
print("your code, d/dx:             ", np.asarray(gx))
print("a correct solution, d/dx:   ", $want_x)
print("your code, d/dw:             ", np.asarray(gw))
print("a correct solution, d/dw:   ", $want_w)
np.testing.assert_allclose(gx, $want_x, rtol=1e-9, atol=1e-10)
np.testing.assert_allclose(gw, $want_w, rtol=1e-9, atol=1e-10)
""")

JVP = Template("""\
x = $x
w = $w
dx = $dx
dw = $dw
t = $t
closed = jax.make_jaxpr(lambda x, w: jax.jvp(lambda x, w: lse(x, w, t), (x, w), (dx, dw)))(x, w)
assert kernel_calls(closed)[0] >= 1, "the forward pass does not call the kernel"
y, dy = jax.jvp(lambda x, w: lse(x, w, t), (x, w), (dx, dw))
print("your code:         ", np.asarray(y), np.asarray(dy))
print("a correct solution:", $want_y, $want_dy)
np.testing.assert_allclose(y, $want_y, rtol=1e-9, atol=1e-10)
np.testing.assert_allclose(dy, $want_dy, rtol=1e-9, atol=1e-10)
""")

CUDA_COMPILES = """\
library = compile_library(LSE_CU, compiler="nvcc", name="lse_check")  # raises with nvcc's errors
print("your code compiles:", library, "; a correct solution compiles too")
assert "global__ void" in LSE_CU, "LSE_CU defines no kernel marked global"
assert "<<<" in LSE_CU, "LseCudaImpl launches no kernel"
assert "XLA_FFI_DEFINE_HANDLER_SYMBOL(LseCuda," in LSE_CU, "the handler symbol must be LseCuda"
device_code = ptx(LSE_CU)  # the kernel as nvcc compiles it for the GPU
print("your kernel stores to global memory:", "st.global" in device_code,
      "; a correct solution's does (it writes y)")
assert "st.global" in device_code, "LseRowsKernel stores nothing to global memory: y is not written"
"""

CUDA_LOWERING = Template("""\
x = $x
w = $w
t = $t
# The same name from the same source, handler symbol and prefix: CUDA_TARGET was built from LSE_CU
prefix = CUDA_TARGET.rsplit("_cuda_", 1)[0]
expected_name = cuda_kernel(LSE_CU, symbol="LseCuda", prefix=prefix)
print("your CUDA_TARGET:", CUDA_TARGET, "; a correct solution's, for your LSE_CU:", expected_name)
assert expected_name == CUDA_TARGET, (
    "CUDA_TARGET must be the name cuda_kernel returns for LSE_CU and the handler LseCuda")
for platform, target in (("cuda", CUDA_TARGET), ("cpu", TARGET)):
    text = jax.jit(lambda x, w: lse_any(x, w, t)).trace(x, w).lower(
        lowering_platforms=(platform,)).as_text()
    calls = [line.strip() for line in text.splitlines() if "custom_call @" in line]
    print(f"{platform}: your code calls", calls, "; a correct solution calls", [f"@{target}"])
    assert len(calls) == 1 and f"@{target}(" in calls[0], f"for {platform}, call {target} alone"
    parts = [p.strip() for p in calls[0].replace("{", ",").replace("}", ",").split(",")]
    assert platform == "cpu" or any(p.startswith("t = ") and p.endswith(": f32") for p in parts), (
        "the CUDA call must pass t as a float32 attribute")
    assert platform == "cpu" or "(tensor<3x5xf32>, tensor<5xf32>) ->" in calls[0], (
        "the CUDA call takes x (3 x 5), then w (5), and nothing else")
want = $want  # lse_any's values from a correct solution
with jax.default_device(jax.devices("cpu")[0]):  # and run on a CPU
    y = np.asarray(jax.jit(lambda x, w: lse_any(x, w, t))(x, w))
print("on a CPU your code gives", y, "; a correct solution", want)
np.testing.assert_allclose(y, want, rtol=2e-5, atol=2e-5)
""")


def reproducer(check_id: str) -> str | None:
    make = {"ps5.kernel.refuses": _refuses, "ps5.ffi_call.float32": _ffi,
            "ps5.ffi_call.float64": _ffi, "ps5.ffi_call.narrow": _ffi, "ps5.ffi_call.w_wider": _ffi,
            "ps5.ffi_call.x_wider": _ffi,
            "ps5.ffi_call.ints": _ffi_ints, "ps5.ffi_call.vmap_method": _ffi_method,
            "ps5.vmap.x": _vmap, "ps5.vmap.w": _vmap,
            "ps5.vmap.nested": _vmap, "ps5.grad.grad": _grad, "ps5.grad.jit": _grad,
            "ps5.grad.jvp": _jvp, "ps5.cuda.compiles": _cuda_compiles,
            "ps5.cuda.lowering": _cuda_lowering}.get(check_id)
    if check_id in KERNEL_CASES:
        make = _kernel
    if make is None:
        return None
    with jax.enable_x64(True):  # the checks' float64, in this block only
        return HEAD.substitute(check_id=check_id, description=DESCRIPTION[check_id]) + make(
            check_id)


def _draw(rng, shape, dtype="float64", scale=3.0, offset=0.0) -> np.ndarray:
    return np.round(offset + scale * rng.standard_normal(shape), 3).astype(dtype)


def _weights(rng, n: int, dtype="float64", shape=None) -> np.ndarray:
    w = np.round(rng.uniform(0.1, 2.0, size=n), 3).astype(dtype)
    return w.reshape(shape) if shape is not None else w


def _want(x, w, t) -> np.ndarray:
    return np.asarray(checks.lse_jax(x, w, t)).astype(x.dtype)


def _kernel(check_id: str) -> str:
    rng = public_rng(check_id)
    rows, dtypes = [], set()
    for shape, dtype, scale, offset, t, w_shape in KERNEL_CASES[check_id]:
        x = _draw(rng, shape, dtype, scale, offset)
        w = _weights(rng, shape[-1], dtype, w_shape)
        t = checks._t(t)
        dtypes.add(dtype)
        rows.append(f"    ({literal(x)},\n     {literal(w)}, {t!r},\n     "
                    f"{literal(_want(x, w, t))}),\n")
    tol = "2e-5" if "float32" in dtypes else "1e-11"
    return KERNEL.substitute(cases="".join(rows), rtol=tol, atol=tol)


def _refuses(check_id: str) -> str:
    return REFUSES.substitute(x=literal(_draw(public_rng(check_id), (3, 4))))


# (x's shape, x's dtype, w's dtype, t): every class the check runs (checks.FFI_MATRICES).
FFI_CASES = {
    "ps5.ffi_call.float32": [((3,), "float32", "float32", 2.0), ((2, 5), "float32", "float32", 0.8),
                             ((2, 1, 3), "float32", "float32", 1.3)],
    "ps5.ffi_call.float64": [((4,), "float64", "float64", 1.1), ((3, 2), "float64", "float64", 0.6),
                             ((2, 3, 5), "float64", "float64", 0.8)],
    "ps5.ffi_call.narrow": [((2, 5), "bfloat16", "bfloat16", 1.5),
                            ((3, 3), "float16", "float16", 0.7)],
    "ps5.ffi_call.w_wider": [((2, 5), "float32", "float64", 0.8), ((3, 3), "bfloat16", "float32", 1.2),
                             ((2, 4), "float16", "float64", 0.5), ((3,), "float16", "float32", 0.9),
                             ((2, 2), "bfloat16", "float64", 1.7)],
    "ps5.ffi_call.x_wider": [((2, 5), "float64", "float32", 0.8), ((3, 3), "float32", "bfloat16", 1.2),
                             ((2, 4), "float64", "float16", 0.5), ((3,), "float32", "float16", 0.9),
                             ((2, 2), "float64", "bfloat16", 1.7)],
}


def _ffi(check_id: str) -> str:
    rng = public_rng(check_id)
    rows = []
    for shape, x_dtype, w_dtype, t in FFI_CASES[check_id]:
        x = _draw(rng, shape).astype(jnp.dtype(x_dtype))
        w = _weights(rng, shape[-1]).astype(jnp.dtype(w_dtype))
        want = checks.expect_ffi({"x": x, "w": w, "t": checks._t(t)})["value"]
        rows.append(f"    ({literal(x)},\n     {literal(w)}, {checks._t(t)!r},\n     "
                    f"{literal(want)}),\n")
    return COUNT + FFI.substitute(cases="".join(rows))


def _ffi_method(check_id: str) -> str:
    rng = public_rng(check_id)
    return FFI_METHOD.substitute(x=literal(_draw(rng, (2, 3))), w=literal(_weights(rng, 3)))


def _ffi_ints(check_id: str) -> str:
    return FFI_INTS.substitute(x=literal(_draw(public_rng(check_id), (2, 3))))


VMAP_CASES = {  # (x's unbatched shape, [(x_axis, w_axis, size), ...] from the outer vmap in)
    "ps5.vmap.x": [((3, 4), [(0, None, 2)]), ((5,), [(-1, None, 3)]),
                   ((2, 3), [(1, None, 4)])],
    "ps5.vmap.w": [((3, 4), [(None, 0, 2)]), ((5,), [(0, 0, 3)]), ((2, 3), [(-1, -1, 2)])],
    # Each of the nine (outer, inner) mixes of x, w or both batched, as the check runs them.
    "ps5.vmap.nested": [((3,), [(-1, None, 2), (0, None, 2)]), ((3,), [(1, None, 2), (None, 0, 2)]),
                        ((3,), [(0, None, 2), (1, 0, 2)]), ((3,), [(None, 0, 2), (0, None, 2)]),
                        ((3,), [(None, 1, 2), (None, 0, 2)]), ((3,), [(None, 0, 2), (0, -1, 2)]),
                        ((3,), [(2, 0, 2), (0, None, 2)]), ((3,), [(0, -1, 2), (None, 0, 2)]),
                        ((3,), [(1, 0, 2), (-1, 1, 2)])],
}


def _vmap(check_id: str) -> str:
    rng = public_rng(check_id)
    t = checks._t(0.7)
    rows = []
    for index, (base, levels) in enumerate(VMAP_CASES[check_id]):
        x_shape, w_shape = list(base), [base[-1]]
        for x_axis, w_axis, size in reversed(levels):
            x_shape = checks._insert(x_shape, x_axis, size)
            w_shape = checks._insert(w_shape, w_axis, size)
        # The dtypes as the check has them: ps5.vmap.w's calls with x batched too are float32,
        # every other one of ps5.vmap.nested's (the first included), the others float64.
        dtype = "float32" if (check_id == "ps5.vmap.w" and levels[0][0] is not None
                              or check_id == "ps5.vmap.nested" and index % 2 == 0) else "float64"
        x = _draw(rng, x_shape, dtype)
        w = np.round(rng.uniform(0.1, 2.0, size=w_shape), 3).astype(dtype)
        in_axes = [[xa, wa] for xa, wa, _ in levels]
        want = checks.expect_vmap({"x": x, "w": w, "t": t, "in_axes": in_axes})["value"]
        rows.append(f"    ({in_axes!r},\n     {literal(x)},\n     {literal(w)},\n     "
                    f"{literal(want)}),\n")
    tolerance = TOLERANCE["float64" if check_id == "ps5.vmap.x" else "float32"]
    return COUNT + VMAP.substitute(t=repr(t), cases="".join(rows), tolerance=tolerance)


def _grad(check_id: str) -> str:
    rng = public_rng(check_id)
    x, w, t = _draw(rng, (2, 5)), _weights(rng, 5, shape=(1, 5)), checks._t(0.6)
    ct = _draw(rng, (2,), scale=1.0)
    gx, gw = checks.expect_grad({"x": x, "w": w, "t": t, "ct": ct, "mode": "grad"})
    jitted = check_id.endswith(".jit")
    return COUNT + GRAD.substitute(
        x=literal(x), w=literal(w), t=repr(t), ct=literal(ct),
        grad="jax.jit(jax.grad" if jitted else "jax.grad", call=")" if jitted else "",
        want_x=literal(gx), want_w=literal(gw))


def _jvp(check_id: str) -> str:
    rng = public_rng(check_id)
    x, w, t = _draw(rng, (3, 4)), _weights(rng, 4), checks._t(1.3)
    dx, dw = _draw(rng, (3, 4), scale=1.0), _draw(rng, (4,), scale=1.0)
    y, dy = checks.expect_grad({"x": x, "w": w, "t": t, "dx": dx, "dw": dw, "mode": "jvp"})
    return COUNT + JVP.substitute(x=literal(x), w=literal(w), dx=literal(dx), dw=literal(dw),
                                  t=repr(t), want_y=literal(y), want_dy=literal(dy))


def _cuda_compiles(check_id: str) -> str:
    return CUDA_COMPILES


def _cuda_lowering(check_id: str) -> str:
    rng = public_rng(check_id)
    x, w = _draw(rng, (3, 5), "float32"), _weights(rng, 5, "float32")
    t = checks._t(0.9)
    want = np.asarray(checks.lse_jax(x, w, t)).astype(np.float32)
    return CUDA_LOWERING.substitute(x=literal(x), w=literal(w), t=repr(t), want=literal(want))
