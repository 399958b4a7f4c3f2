"""Part V's custom kernel, rms_norm, called from JAX through the XLA FFI.

The C++ source (rms_norm.cc) is compiled by `make kernels` into _build/kernels/librms_norm.so
(_build/kernels-legacy/ on the Python 3.11 toolchain: a handler compiled against JAX 0.12's FFI
headers declares an FFI API that JAX 0.10.2's XLA refuses to register); this module loads it,
registers its handler with XLA and wraps it in functions the chapters use.
The CUDA handler (rms_norm.cu) is compiled by the same target to prove it builds; it is registered
only where jaxlib has a CUDA backend and the library exists.
"""

from __future__ import annotations

import ctypes
import os
from functools import cache, partial
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from jaxcourse.versions import LEGACY_JAX

ROOT = Path(__file__).resolve().parents[2]
# Each toolchain's kernels against its own jaxlib's headers (the Makefile's KERNEL_OUT); another
# JAX's, those JAXCOURSE_KERNELS names (scripts/check_newest_jax.py's, built against its headers).
BUILD = Path(os.environ.get("JAXCOURSE_KERNELS")
             or ROOT / "_build" / ("kernels-legacy" if jax.__version__ == LEGACY_JAX else "kernels"))
CPU_LIBRARY = BUILD / "librms_norm.so"
CUDA_LIBRARY = BUILD / "librms_norm_cuda.so"
TARGET = "jaxcourse_rms_norm"
CUDA_TARGET = "jaxcourse_rms_norm_cuda"

_registered: set[str] = set()


def register_cpu() -> None:
    """Loads the shared library and registers its RmsNorm handler for the CPU, once."""
    if "cpu" in _registered:
        return
    if not CPU_LIBRARY.exists():
        raise FileNotFoundError(f"{CPU_LIBRARY} is missing: run `make kernels` first")
    library = ctypes.cdll.LoadLibrary(str(CPU_LIBRARY))
    jax.ffi.register_ffi_target(TARGET, jax.ffi.pycapsule(library.RmsNorm), platform="cpu")
    _registered.add("cpu")


def register_cuda() -> bool:
    """Registers the CUDA handler where jaxlib has a CUDA backend; says whether it did."""
    if "cuda" in _registered:
        return True
    try:
        jax.devices("cuda")
    except RuntimeError:
        return False  # no GPU here: the handler can still be lowered to, not run
    library = ctypes.cdll.LoadLibrary(str(CUDA_LIBRARY))
    jax.ffi.register_ffi_target(CUDA_TARGET, jax.ffi.pycapsule(library.RmsNormCuda),
                                platform="CUDA")
    _registered.add("cuda")
    return True


def rms_norm_reference(x, scale, eps=1e-6):
    """The same operation in jax.numpy: what the kernel must agree with."""
    mean_sq = jnp.mean(jnp.square(x), axis=-1, keepdims=True)
    return x * jax.lax.rsqrt(mean_sq + eps) * scale


def rms_norm_ffi(x, scale, *, eps=1e-6, vmap_method="sequential"):
    """One FFI call of the kernel: the result has x's shape and dtype; eps is an attribute."""
    register_cpu()
    call = jax.ffi.ffi_call(TARGET, jax.ShapeDtypeStruct(x.shape, x.dtype),
                            vmap_method=vmap_method)
    return call(x, scale, eps=np.float32(eps))


def rms_norm_cuda_ffi(x, scale, *, eps=1e-6, vmap_method="sequential"):
    """One FFI call of the CUDA handler (float32 only); registered only where a GPU exists."""
    register_cuda()
    call = jax.ffi.ffi_call(CUDA_TARGET, jax.ShapeDtypeStruct(x.shape, x.dtype),
                            vmap_method=vmap_method)
    return call(x, scale, eps=np.float32(eps))


def rms_norm_any_platform(x, scale, *, eps=1e-6):
    """The C++ kernel on a CPU, the CUDA kernel on a GPU, chosen when the program is lowered."""
    return jax.lax.platform_dependent(
        x, scale,
        cpu=partial(rms_norm_ffi, eps=eps),
        cuda=partial(rms_norm_cuda_ffi, eps=eps),
        default=partial(rms_norm_reference, eps=eps))


@cache
def batchable(eps: float):
    """The kernel for one eps, with a batching rule of its own for any mix of batched arguments.

    custom_vmap traces every argument, so the attribute eps is fixed by the closure instead.
    """

    @jax.custom_batching.custom_vmap
    def rms_norm_batchable(x, scale):
        return rms_norm_ffi(x, scale, eps=eps)

    @rms_norm_batchable.def_vmap
    def rule(axis_size, in_batched, x, scale):
        x_batched, scale_batched = in_batched
        if not x_batched:  # the kernel treats every leading axis as rows: give x the batch axis
            x = jnp.broadcast_to(x, (axis_size, *x.shape))
        if not scale_batched:  # one kernel call normalizes every row of the whole batch
            return rms_norm_batchable(x, scale), True
        # A scale per batch element is not something the kernel takes: normalize with a unit
        # scale, then multiply by each element's scale in jax.numpy (XLA fuses the multiply).
        unit = rms_norm_batchable(x, jnp.ones(x.shape[-1], x.dtype))
        return unit * scale.reshape(axis_size, *([1] * (x.ndim - 2)), x.shape[-1]), True

    return rms_norm_batchable


@partial(jax.custom_vjp, nondiff_argnums=(2,))
def rms_norm(x, scale, eps=1e-6):
    """The kernel as a differentiable function: forward in C++, backward in jax.numpy."""
    return batchable(eps)(x, scale)


def _rms_norm_fwd(x, scale, eps):
    return batchable(eps)(x, scale), (x, scale)


def _rms_norm_bwd(eps, residuals, dy):
    x, scale = residuals
    inv_rms = jax.lax.rsqrt(jnp.mean(jnp.square(x), axis=-1, keepdims=True) + eps)
    normed = x * inv_rms
    dscale = jnp.sum(dy * normed, axis=tuple(range(x.ndim - 1)))
    dnormed = dy * scale
    dx = inv_rms * (dnormed - normed * jnp.mean(dnormed * normed, axis=-1, keepdims=True))
    return dx, dscale


rms_norm.defvjp(_rms_norm_fwd, _rms_norm_bwd)
