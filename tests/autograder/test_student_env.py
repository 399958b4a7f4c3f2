"""The environment the student's process starts with: XLA's fast-compiling flags on the pinned
JAX without a GPU, and flags this XLA knows (it aborts a process on an unknown one, which would
leave every submission ungraded)."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest

from autograder.runner import FAST_COMPILE_FLAGS, GPU_ENV, student_env
from jaxcourse.versions import on_pinned_jax


def test_fast_compile_flags_only_on_the_pinned_jax_without_a_gpu(monkeypatch):
    monkeypatch.setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=2")
    env = student_env(has_gpu=False)
    assert env.items() >= GPU_ENV.items()
    if on_pinned_jax():
        # The grader's own XLA flags are kept, the fast ones added after them.
        assert env["XLA_FLAGS"].split() == ["--xla_force_host_platform_device_count=2",
                                            *FAST_COMPILE_FLAGS]
    else:
        assert "XLA_FLAGS" not in env
    assert "XLA_FLAGS" not in student_env(has_gpu=True)


@pytest.mark.skipif(not on_pinned_jax(), reason="the flags are used on the pinned JAX only")
def test_this_xla_knows_the_flags_and_computes_the_same_values():
    program = (
        "import jax, jax.numpy as jnp, numpy as np\n"
        "x = jnp.linspace(-3.0, 3.0, 37, dtype=jnp.float32).reshape(1, 37)\n"
        "f = jax.jit(jax.vmap(jax.grad(lambda v: jnp.sum(jnp.tanh(v) * jnp.exp(v / 3) + v ** 3))))\n"
        "print(repr(np.asarray(f(x)).tolist()))\n"
    )

    def run(flags: str) -> list:
        done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                              env={"XLA_FLAGS": flags, "PATH": "/usr/bin:/bin"}, timeout=120,
                              check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        return ast.literal_eval(done.stdout)

    import numpy as np

    fast, default = run(" ".join(FAST_COMPILE_FLAGS)), run("")
    np.testing.assert_allclose(fast, default, rtol=1e-6, atol=1e-6)
