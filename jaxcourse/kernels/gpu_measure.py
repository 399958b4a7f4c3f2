"""Part V's CUDA kernel measured on a GPU: correctness, bandwidth against XLA, the roofline.

Used by `benchmarks/kernel_bandwidth_gpu.py` (which records the figures in
`book/kernels/gpu_figures.json`) and by the measuring chapter when the book is built on a GPU.
Bandwidth counts the bytes an operation must move (rms_norm: read x, write y; x * y + z: three
reads and a write), divided by the best-of-repeats time per call.
"""

from __future__ import annotations

import datetime
import json
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from jaxcourse.kernels import (
    ROOT,
    register_cuda,
    rms_norm_any_platform,
    rms_norm_cuda_ffi,
    rms_norm_reference,
)

RECORDED = ROOT / "book" / "kernels" / "gpu_figures.json"
CORRECTNESS_SHAPES = [(5,), (1,), (1, 1), (3, 7), (0, 7), (4, 0), (2, 3, 33), (7, 1023),
                      (129, 4097), (1000, 1)]
COLUMNS = 1024
ROWS = [16, 128, 1024, 8192, 65536, 262144]


def seconds_per_call(fn, *args, repeats: int = 7, min_seconds: float = 0.05) -> float:
    """Best of ``repeats`` averages; each average spans at least ``min_seconds`` of calls."""
    jax.block_until_ready(fn(*args))
    start = time.perf_counter()
    jax.block_until_ready(fn(*args))
    once = max(time.perf_counter() - start, 1e-7)
    number = max(3, int(min_seconds / once))
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            out = fn(*args)
        jax.block_until_ready(out)
        best = min(best, (time.perf_counter() - start) / number)
    return best


def peak_bandwidth() -> dict:
    """The memory's theoretical bandwidth from NVML; empty where NVML is missing."""
    try:
        import pynvml
    except ImportError:
        return {}
    pynvml.nvmlInit()
    try:
        handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        mem_mhz = pynvml.nvmlDeviceGetMaxClockInfo(handle, pynvml.NVML_CLOCK_MEM)
        bus_bits = pynvml.nvmlDeviceGetMemoryBusWidth(handle)
        name = pynvml.nvmlDeviceGetName(handle)
    finally:
        pynvml.nvmlShutdown()
    return {"name": name if isinstance(name, str) else name.decode(),
            "memory_clock_mhz": mem_mhz, "bus_width_bits": bus_bits,
            "peak_gbs": 2 * mem_mhz * 1e6 * bus_bits / 8 / 1e9}


def check_correctness(gpu) -> list[dict]:
    rows = []
    rng = np.random.default_rng(0)
    kernel = jax.jit(rms_norm_cuda_ffi, static_argnames=("eps",))
    for shape in CORRECTNESS_SHAPES:
        for eps in (1e-6, 0.5):
            x = rng.standard_normal(shape).astype(np.float32)
            scale = rng.standard_normal(shape[-1:]).astype(np.float32)
            xd, sd = jax.device_put(x, gpu), jax.device_put(scale, gpu)
            got = np.asarray(kernel(xd, sd, eps=eps))
            x64 = x.astype(np.float64)
            want = (x64 / np.sqrt(np.mean(x64 * x64, axis=-1, keepdims=True) + eps)
                    * scale) if x.size else x64
            err = float(np.max(np.abs(got - want), initial=0.0))
            ok = got.shape == x.shape and got.dtype == np.float32 and err < 1e-4
            rows.append({"shape": list(shape), "eps": eps, "max_abs_error": err, "ok": ok})
    return rows


def lowered_target(gpu) -> str:
    x = jax.device_put(jnp.ones((3, 5), jnp.float32), gpu)
    scale = jax.device_put(jnp.ones(5, jnp.float32), gpu)
    text = jax.jit(rms_norm_any_platform).trace(x, scale).lower().as_text()
    calls = [line for line in text.splitlines() if "custom_call" in line]
    return calls[0].split("@")[1].split("(")[0] if calls else ""


def measure(gpu) -> dict:
    kernel = jax.jit(rms_norm_cuda_ffi)
    xla = jax.jit(rms_norm_reference)
    fma = jax.jit(lambda x, y, z: x * y + z)
    copy = jax.jit(lambda x: jnp.copy(x) + 0)  # one read, one write, fused into one kernel
    series: dict[str, list[float]] = {"CUDA FFI kernel": [], "XLA rms_norm (jax.numpy, jitted)": [],
                                      "XLA fused x * y + z": [], "device copy": []}
    for rows in ROWS:
        key = jax.random.key(rows)
        x = jax.device_put(jax.random.normal(key, (rows, COLUMNS), jnp.float32), gpu)
        scale = jax.device_put(jnp.ones(COLUMNS, jnp.float32), gpu)
        y, z = x * 0.5, x + 1.0
        diff = float(jnp.max(jnp.abs(kernel(x, scale) - xla(x, scale))))
        assert diff < 1e-4, diff
        nbytes = x.size * 4
        series["CUDA FFI kernel"].append(2 * nbytes / seconds_per_call(kernel, x, scale) / 1e9)
        series["XLA rms_norm (jax.numpy, jitted)"].append(
            2 * nbytes / seconds_per_call(xla, x, scale) / 1e9)
        series["XLA fused x * y + z"].append(4 * nbytes / seconds_per_call(fma, x, y, z) / 1e9)
        series["device copy"].append(2 * nbytes / seconds_per_call(copy, x) / 1e9)
    return {"columns": COLUMNS, "rows": ROWS, "elements": [r * COLUMNS for r in ROWS],
            "gbs": series}


def record() -> dict:
    """Everything the chapter shows, measured now on the first GPU JAX sees."""
    gpu = jax.devices("gpu")[0]
    if not register_cuda():
        raise RuntimeError("no CUDA backend: the CUDA kernel cannot run here")
    correctness = check_correctness(gpu)
    return {
        "date": datetime.date.today().isoformat(),
        "device": gpu.device_kind,
        "jax": jax.__version__,
        "peak": peak_bandwidth(),
        "correctness": correctness,
        "all_correct": all(row["ok"] for row in correctness),
        "gpu_lowering_target": lowered_target(gpu),
        **measure(gpu),
    }


def recorded(path: Path = RECORDED) -> dict:
    """The last figures recorded in the repository."""
    return json.loads(path.read_text())
