"""Part V's CUDA kernel on a GPU: correctness, then bandwidth against XLA and the roofline.

    python benchmarks/kernel_bandwidth_gpu.py [--out book/kernels/gpu_figures.json]

Needs a CUDA GPU, nvcc and a JAX with CUDA, and the kernel libraries built first (`make kernels`,
or its nvcc and g++ lines with that machine's JAX headers). It checks the CUDA handler against a
float64 NumPy reference on every shape class the chapters name (odd sizes, one row, empty arrays,
ranks 1 to 3), checks that `rms_norm_any_platform` lowers to the CUDA target on the GPU, then
times, in the same run on the same device:

- the CUDA FFI kernel (`rms_norm_cuda_ffi`, jitted);
- XLA's own code for the `jax.numpy` version (`rms_norm_reference`, jitted);
- XLA's fused `x * y + z` (Part I's multiply_add): XLA on a purely elementwise program;
- a fused device-to-device copy (the practical roofline), and the memory's peak bandwidth from
  NVML (memory clock x bus width x 2, the theoretical roofline).

The JSON it writes is what Part V's measuring chapter shows when the book is built without a GPU.
The code lives in `jaxcourse/kernels/gpu_measure.py`, which the chapter also runs on a GPU.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from jaxcourse.kernels.gpu_measure import RECORDED, record


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=RECORDED)
    args = parser.parse_args()
    figures = record()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(figures, indent=1) + "\n")
    target = figures["gpu_lowering_target"]
    print(f"device: {figures['device']}, JAX {figures['jax']}, {figures['date']}")
    print(f"correct on {len(figures['correctness'])} cases: {figures['all_correct']}; "
          f"platform_dependent on the GPU calls @{target}")
    if figures["peak"]:
        print(f"peak memory bandwidth (NVML): {figures['peak']['peak_gbs']:.0f} GB/s")
    for name, values in figures["gbs"].items():
        print(f"{name:34s}", " ".join(f"{v:8.1f}" for v in values), "GB/s")
    print("elements:", " ".join(f"{e:8d}" for e in figures["elements"]))
    return 0 if figures["all_correct"] and target.endswith("_cuda") else 1


if __name__ == "__main__":
    raise SystemExit(main())
