"""Part V's claims about the rms_norm kernel, checked directly against jax.numpy.

The kernel is built by `make kernels` (which `make book` and so `make test` run first); the
fixture below runs that target, so these tests also work on their own.
"""

from __future__ import annotations

import subprocess

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcourse import kernels
from jaxcourse.kernels import (
    CPU_LIBRARY,
    batchable,
    rms_norm,
    rms_norm_any_platform,
    rms_norm_ffi,
    rms_norm_reference,
)


@pytest.fixture(scope="module", autouse=True)
def built():
    subprocess.run(["make", "--no-print-directory", "kernels"], cwd=kernels.ROOT, check=True,
                   capture_output=True)
    assert CPU_LIBRARY.exists()


@pytest.fixture(autouse=True)
def on_the_cpu():
    """The kernel has a CPU handler (the CUDA one has tests of its own below): on a machine with
    a GPU its arrays go to the CPU, as the chapters put them."""
    with jax.default_device(jax.devices("cpu")[0]):
        yield


SHAPES = [(5,), (1,), (3, 7), (0, 7), (4, 0), (2, 3, 33), (1, 1, 1), (17, 1024)]


def _inputs(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(dtype)
    scale = rng.standard_normal(shape[-1:]).astype(dtype)
    return jnp.asarray(x), jnp.asarray(scale)


def _close(got, want, tol=1e-5):
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=tol, atol=tol)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("eps", [1e-6, 0.5])
def test_kernel_matches_jax_numpy_eagerly_and_under_jit(shape, eps):
    x, scale = _inputs(shape, np.float32)
    want = rms_norm_reference(x, scale, eps)
    _close(rms_norm_ffi(x, scale, eps=eps), want)
    _close(jax.jit(lambda a, s: rms_norm_ffi(a, s, eps=eps))(x, scale), want)


def test_float64_is_supported_with_x64():
    script = (
        "import jax, jax.numpy as jnp, numpy as np\n"
        "jax.config.update('jax_enable_x64', True)\n"
        "jax.config.update('jax_default_device', jax.devices('cpu')[0])\n"
        "from jaxcourse.kernels import rms_norm_ffi, rms_norm_reference\n"
        "x = jnp.asarray(np.random.default_rng(0).standard_normal((3, 9)))\n"
        "s = jnp.linspace(0.5, 2.0, 9)\n"
        "y = rms_norm_ffi(x, s)\n"
        "assert y.dtype == jnp.float64, y.dtype\n"
        "np.testing.assert_allclose(y, rms_norm_reference(x, s), rtol=1e-12, atol=1e-12)\n"
    )
    subprocess.run(["python", "-W", "error", "-c", script], cwd=kernels.ROOT, check=True)


# (in_axes, shape of x, shape of scale): the batch of 4 sits where in_axes says.
LAYOUTS = [
    ((0, 0), (4, 3, 6), (4, 6)),
    ((0, None), (4, 3, 6), (6,)),
    ((None, 0), (3, 6), (4, 6)),
    ((1, None), (3, 4, 6), (6,)),
    ((2, 1), (3, 6, 4, 7), (7, 4)),  # batch along x's axis 2 and scale's last axis
    ((0, 0), (4, 1), (4, 1)),  # rows of length one
]


@pytest.mark.parametrize("in_axes, x_shape, scale_shape", LAYOUTS)
def test_custom_vmap_rule_matches_jax_numpy_for_every_batch_layout(in_axes, x_shape, scale_shape):
    x, _ = _inputs(x_shape, np.float32, seed=1)
    scales, _ = _inputs(scale_shape, np.float32, seed=2)
    want = jax.vmap(rms_norm_reference, in_axes=in_axes)(x, scales)
    for f in (batchable(1e-6), rms_norm, rms_norm_ffi):
        _close(jax.vmap(f, in_axes=in_axes)(x, scales), want)
        _close(jax.jit(jax.vmap(f, in_axes=in_axes))(x, scales), want)


def test_custom_vmap_rule_makes_one_call_instead_of_a_scan():
    x, scale = _inputs((4, 3, 5), np.float32)
    names = [e.primitive.name for e in
             jax.make_jaxpr(jax.vmap(batchable(1e-6), in_axes=(0, None)))(x, scale).jaxpr.eqns]
    assert "scan" not in str(names)
    sequential = jax.make_jaxpr(jax.vmap(rms_norm_ffi, in_axes=(0, None)))(x, scale)
    assert [e.primitive.name for e in sequential.jaxpr.eqns] == ["scan"]


def test_nested_vmap_with_per_element_scales():
    x, _ = _inputs((2, 3, 4, 5), np.float32)
    scales = jax.random.normal(jax.random.key(3), (2, 3, 5))
    got = jax.vmap(jax.vmap(rms_norm))(x, scales)
    _close(got, rms_norm_reference(x, scales[:, :, None, :]), tol=1e-5)


@pytest.mark.parametrize("method", ["expand_dims", "broadcast_all"])
def test_vectorized_vmap_methods_break_the_kernel_contract(method):
    x, scale = _inputs((4, 3, 5), np.float32)
    with pytest.raises(jax.errors.JaxRuntimeError, match="scale must have shape"):
        jax.vmap(lambda a, s: rms_norm_ffi(a, s, vmap_method=method), in_axes=(0, None))(x, scale)


def test_vmap_without_a_method_is_not_implemented():
    x, scale = _inputs((2, 3, 5), np.float32)
    with pytest.raises(NotImplementedError, match="vmap_method"):
        jax.vmap(lambda a: rms_norm_ffi(a, scale, vmap_method=None))(x)


def test_gradients_match_jax_numpy_under_jit_and_vmap():
    x, _ = _inputs((4, 3, 5), np.float32, seed=4)
    scales = jax.random.normal(jax.random.key(5), (4, 5))

    def loss(f, a, s):
        return jnp.sum(jnp.sin(jax.vmap(f)(a, s)))

    got = jax.jit(jax.grad(lambda a, s: loss(rms_norm, a, s), argnums=(0, 1)))(x, scales)
    want = jax.grad(lambda a, s: loss(rms_norm_reference, a, s), argnums=(0, 1))(x, scales)
    for g, w in zip(got, want):
        _close(g, w, tol=1e-4)


def test_raw_ffi_call_cannot_be_differentiated():
    x, scale = _inputs((3, 5), np.float32)
    with pytest.raises(ValueError, match="cannot be differentiated"):
        jax.grad(lambda a: rms_norm_ffi(a, scale).sum())(x)


@pytest.mark.parametrize("x, scale, message", [
    (jnp.ones((3, 5)), jnp.ones(4), "scale must have shape"),
    (jnp.ones((3, 5)), jnp.ones((1, 5)), "scale must have shape"),
    (jnp.ones((3, 5), jnp.int32), jnp.ones(5, jnp.int32), "only float32 and float64"),
    (jnp.ones((3, 5), jnp.float16), jnp.ones(5, jnp.float16), "only float32 and float64"),
    (jnp.ones((3, 5)), jnp.ones(5, jnp.float16), "share a dtype"),
    (jnp.float32(1.0), jnp.ones(1), "at least one axis"),
])
def test_the_handler_reports_bad_arguments_through_ffi_errors(x, scale, message):
    with pytest.raises(jax.errors.JaxRuntimeError, match=message):
        rms_norm_ffi(x, scale)


def test_negative_eps_is_rejected_and_eps_must_be_float32():
    x, scale = _inputs((3, 5), np.float32)
    with pytest.raises(jax.errors.JaxRuntimeError, match="eps must be"):
        rms_norm_ffi(x, scale, eps=-1.0)
    call = jax.ffi.ffi_call(kernels.TARGET, jax.ShapeDtypeStruct(x.shape, x.dtype),
                            vmap_method="sequential")
    with pytest.raises(jax.errors.JaxRuntimeError, match="expected F32 but got F64"):
        call(x, scale, eps=1e-6)


def test_cuda_lowering_names_the_cuda_target_and_the_cpu_lowering_the_cpu_one():
    x, scale = _inputs((3, 5), np.float32)

    def text(platform):
        traced = jax.jit(rms_norm_any_platform).trace(x, scale)
        return traced.lower(lowering_platforms=(platform,)).as_text()

    cuda, cpu = text("cuda"), text("cpu")
    assert f"stablehlo.custom_call @{kernels.CUDA_TARGET}(" in cuda
    assert f"@{kernels.TARGET}(" not in cuda
    assert f"stablehlo.custom_call @{kernels.TARGET}(" in cpu and kernels.CUDA_TARGET not in cpu
    _close(rms_norm_any_platform(x, scale), rms_norm_reference(x, scale))


def test_the_cuda_source_compiled_where_nvcc_exists():
    import shutil
    from pathlib import Path

    if not (shutil.which("nvcc") or Path("/usr/local/bin/nvcc").exists()):
        pytest.skip("no nvcc on this machine: the CUDA kernel cannot be compiled here")
    assert kernels.CUDA_LIBRARY.exists()


def test_the_recorded_gpu_figures_back_the_measuring_chapter():
    """book/kernels/gpu_figures.json is what the chapters show without a GPU: a real run of
    benchmarks/kernel_bandwidth_gpu.py, whole and consistent."""
    from jaxcourse.kernels import gpu_measure

    record = gpu_measure.recorded()
    assert set(record) >= {"date", "device", "jax", "peak", "correctness", "all_correct",
                           "gpu_lowering_target", "columns", "rows", "elements", "gbs"}
    assert record["all_correct"] and all(row["ok"] for row in record["correctness"])
    shapes = {tuple(row["shape"]) for row in record["correctness"]}
    assert {(0, 7), (4, 0), (1,), (7, 1023)} <= shapes  # empty, one row, odd sizes
    assert record["gpu_lowering_target"] == kernels.CUDA_TARGET
    assert record["elements"] == [r * record["columns"] for r in record["rows"]]
    assert set(record["gbs"]) == {"CUDA FFI kernel", "XLA rms_norm (jax.numpy, jitted)",
                                  "XLA fused x * y + z", "device copy"}
    peak = record["peak"]
    assert peak["peak_gbs"] == pytest.approx(2 * peak["memory_clock_mhz"] * peak["bus_width_bits"]
                                             / 8 / 1e3)
    for values in record["gbs"].values():
        assert len(values) == len(record["rows"])
        assert all(0 < v <= 1.05 * peak["peak_gbs"] for v in values)  # no figure beats physics
