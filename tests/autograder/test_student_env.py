"""The environment the student's process starts with: XLA's fast-compiling flags without a GPU,
only those this XLA knows (it aborts a process on an unknown one, which would leave every
submission ungraded: jaxlib 0.11 removed one of them), and they reach XLA in the sandbox."""

from __future__ import annotations

import ast
import re
import subprocess
import sys

import hostile
import numpy as np
from engine_helpers import grade_command, read_grades
from jaxlib import version as jaxlib_version
from toy_notebooks import FULL, submission

from autograder.worker.runner import (
    FAST_COMPILE_FLAGS,
    GPU_ENV,
    KNOWN_FAST_COMPILE_FLAGS,
    fast_compile_flags,
    student_env,
    xla_flags_accepted,
)

OPT_LEVEL = "--xla_backend_optimization_level=0"


def test_fast_compile_flags_without_a_gpu_after_the_grader_s_own(monkeypatch):
    monkeypatch.setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=2")
    env = student_env(has_gpu=False)
    assert env.items() >= GPU_ENV.items()
    flags = fast_compile_flags()
    assert set(flags) <= set(FAST_COMPILE_FLAGS)
    # Both pinned jaxlibs accept the optimisation level; 0.10.2 the emitter flag as well.
    assert OPT_LEVEL in flags
    assert ("--xla_cpu_use_fusion_emitters=false" in flags) == (jaxlib_version.__version__
                                                                == "0.10.2")
    # The grader's own XLA flags are kept, the fast ones added after them.
    assert env["XLA_FLAGS"].split() == ["--xla_force_host_platform_device_count=2", *flags]
    assert "XLA_FLAGS" not in student_env(has_gpu=True)


def test_the_table_says_what_this_xla_accepts_one_flag_at_a_time():
    unknown = "--xla_no_such_flag_in_any_xla=1"
    accepted = xla_flags_accepted((*FAST_COMPILE_FLAGS, unknown))
    assert unknown not in accepted  # the probe can refuse: XLA aborted on it
    assert accepted == fast_compile_flags()
    if jaxlib_version.__version__ in KNOWN_FAST_COMPILE_FLAGS:
        assert accepted == KNOWN_FAST_COMPILE_FLAGS[jaxlib_version.__version__]


def test_this_xla_computes_the_same_values_with_the_flags():
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

    fast, default = run(" ".join(fast_compile_flags())), run("")
    np.testing.assert_allclose(fast, default, rtol=1e-6, atol=1e-6)


# A cell of the toy notebook (graded with the cell policy off) that prints what the student's
# process sees: its XLA_FLAGS, and the optimisation level XLA compiles with once it parsed them.
SHOW_FLAGS = """\
import os
from jax._src import compiler
options = compiler.get_compile_options(num_replicas=1, num_partitions=1)
print("SANDBOX-XLA-FLAGS", os.environ.get("XLA_FLAGS", ""), "END")
print("SANDBOX-OPT-LEVEL", options.executable_build_options.debug_options.xla_backend_optimization_level)
"""


def test_the_flags_reach_xla_in_the_sandbox(tmp_path):
    submitted = hostile.write_class(tmp_path / "submitted",
                                    {"shows_flags": (submission(FULL, extra={"start": [SHOW_FLAGS]}),
                                                     5)})
    proc = grade_command(submitted, tmp_path / "out")
    assert proc.returncode == 0, proc.stderr[-3000:]
    # XLA accepted every flag: an unknown one aborts the process and no check earns.
    assert float(read_grades(tmp_path / "out")["shows_flags"]["score"]) == 5
    page = (tmp_path / "out" / "feedback" / "shows_flags.html").read_text()
    seen = re.search(r"SANDBOX-XLA-FLAGS (.*?) END", page)
    assert seen, page[-2000:]
    assert set(fast_compile_flags()) <= set(seen[1].split())
    assert re.search(r"SANDBOX-OPT-LEVEL 0\b", page)  # parsed in the student's process
