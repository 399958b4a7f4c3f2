"""How long the student's process takes to compile small programs with XLA's defaults and with
the grader's fast-compiling flags (autograder.worker.runner.FAST_COMPILE_FLAGS).

    python benchmarks/student_compile_flags.py [--rounds 2] [--sizes 24]

Each measurement is a fresh interpreter (as each submission's process is) that compiles and
runs 3 x SIZES small programs (an elementwise one, jit of grad, jit of vmap of a matmul) on
arrays of a few elements, timed from the first compile to the last result. The two settings
alternate round by round on the same machine; printed: each setting's median seconds, their
ratio, and the largest difference between the two settings' values.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

PROGRAM = """
import json, sys, time
import jax, jax.numpy as jnp, numpy as np
values, start = [], time.perf_counter()
for n in range(1, int(sys.argv[1]) + 1):
    x = np.linspace(-1.0, 1.0, 3 * n, dtype=np.float32).reshape(n, 3)
    f = jax.jit(lambda x, y, z: jnp.sin(x) * y + z * jnp.cos(y) + n)
    g = jax.jit(jax.grad(lambda x: jnp.sum(jnp.tanh(x) * x)))
    h = jax.jit(jax.vmap(lambda a, b: a @ b.T))
    for out in (f(x, x, x), g(x), h(x[None], x[None])):
        values += np.asarray(out, np.float64).ravel().tolist()
print(json.dumps({"seconds": time.perf_counter() - start, "values": values}))
"""


def measure(flags: str, sizes: int) -> dict:
    env = {"PATH": "/usr/bin:/bin", "XLA_FLAGS": flags}
    done = subprocess.run([sys.executable, "-c", PROGRAM, str(sizes)], capture_output=True,
                          text=True, env=env, check=True)
    return json.loads(done.stdout)


def main() -> None:
    from autograder.worker.runner import FAST_COMPILE_FLAGS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--sizes", type=int, default=24)
    args = parser.parse_args()
    settings = {"XLA's defaults": "", "fast-compiling": " ".join(FAST_COMPILE_FLAGS)}
    seconds = {name: [] for name in settings}
    values = {}
    for _ in range(args.rounds):
        for name, flags in settings.items():
            run = measure(flags, args.sizes)
            seconds[name].append(run["seconds"])
            values[name] = run["values"]
    for name, flags in settings.items():
        runs = ", ".join(f"{s:.2f}" for s in seconds[name])
        print(f"{name:15s}: median {statistics.median(seconds[name]):6.2f} s ({runs}) "
              f"XLA_FLAGS={flags!r}")
    ratio = statistics.median(seconds["XLA's defaults"]) / statistics.median(
        seconds["fast-compiling"])
    gap = max(abs(a - b) for a, b in zip(*values.values()))
    print(f"ratio   : {ratio:.2f}x faster with the flags ({3 * args.sizes} programs a process); "
          f"largest difference in the {len(values['fast-compiling'])} values: {gap:.2e}")


if __name__ == "__main__":
    main()
