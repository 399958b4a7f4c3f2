#!/usr/bin/env bash
# Everything in the course that needs a GPU, run on a machine with one, with that machine's JAX.
#
#   scripts/gpu_check.sh OUTDIR [SECONDS]
#
# The machine needs an NVIDIA GPU, nvcc, and a Python with a CUDA-enabled JAX (the image of
# the device machine: Python 3.12, JAX 0.11.2). What else the course needs comes from wheels in
# .whl/ (README, "On a GPU"), installed without a network. Then, within SECONDS (default 480):
#   setup.log     the machine, the install, the kernels built with nvcc and g++, the imports
#                 with JAX's deprecation warnings as errors, JAX under a 3 GiB RLIMIT_AS;
#   demo.log      the ps1 and ps5 demo classes graded by the real, sandboxed command;
#   mutants.log   ps1's and ps5's wrong solutions graded by the real command ($MUTANTS: which,
#                 $MUTANT_SECONDS: each one's limit, default 200);
#   chapters.log  every chapter of the book executed (scripts/run_chapters.py);
#   pytest.log    the tests that need no pinned toolchain (no browser, no built site);
#                 $PYTEST_FILES replaces the default list;
#   bench.log     the ps1 class's grading throughput on this machine, then Part V's CUDA
#                 kernel against XLA and the roofline (gpu_figures.json);
#   extra.tar.gz  the demo classes' feedback pages.
# It ends by printing each step's exit status and seconds.
set -u
out=$(mkdir -p "${1:?OUTDIR}" && cd "$1" && pwd)
budget=${2:-480}
deadline=$((SECONDS + budget))
steps=$(mktemp)
PY=${PYTHON:-python3}
# nbgrader runs `alembic` as a command: the scripts of the Python the wheels went into come first.
export PATH="$(dirname "$(command -v "$PY")"):$PATH"
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "| step | exit | seconds |" > "$steps"
echo "|---|---|---|" >> "$steps"

step() {  # step NAME LIMIT COMMAND...: runs with a time limit, appends to NAME.log
  local name=$1 limit=$2 t0=$SECONDS rc
  shift 2
  local left=$((deadline - SECONDS))
  ((limit > left)) && limit=$left
  if ((limit < 10)); then echo "| $1 | skipped: no time left | 0 |" >> "$steps"; return 1; fi
  timeout -k 10 "$limit" "$@" >> "$out/$name.log" 2>&1
  rc=$?
  echo "| $name: $* | $rc | $((SECONDS - t0)) |" >> "$steps"
  return $rc
}

setup() {
  date -u +"date: %Y-%m-%d %H:%M UTC"
  nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader
  echo "kernel: $(uname -r)"; echo "python: $(command -v $PY) $($PY -V 2>&1)"
  nvcc --version | tail -1
  $PY -c 'import sys; print("prefix:", sys.prefix, "base:", sys.base_prefix)'
  echo "cgroup mounts: $(grep -c ' - cgroup' /proc/self/mountinfo)"
  if ! ldconfig -p | grep -q libseccomp.so.2; then
    echo "libseccomp.so.2 missing: unpacked from .whl/libseccomp2_*.deb"
    dpkg -x .whl/libseccomp2_*.deb /tmp/libseccomp \
      && cp -a /tmp/libseccomp/usr/lib/x86_64-linux-gnu/libseccomp.so.2* /usr/lib/x86_64-linux-gnu/ \
      && ldconfig
  fi
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir .whl/*.whl || return 1
  # The course into the device image's own Python and JAX (0.11.2, neither toolchain's pin), as it
  # is: no dependencies, whatever Python the image has.
  $PY -m pip install -q --no-index --no-deps --no-build-isolation --ignore-requires-python -e . \
    || return 1
  $PY -m ipykernel install --sys-prefix --name python3 > /dev/null
  $PY -c 'import jax, jaxlib; print("jax", jax.__version__, "jaxlib", jaxlib.__version__, jax.devices())'
  # The Makefile's targets of the primary toolchain (TOOLCHAIN=current: JAX 0.11 and later need
  # Python 3.12 or later) use .venv/bin/python and count .venv/.installed as the set-up done:
  # here both stand for this machine's Python, so `make kernels` (which the kernel tests run)
  # builds with it instead of setting up a virtual environment from the network.
  if [ ! -e .venv ]; then
    mkdir -p .venv/bin
    printf '#!/bin/sh\nexec %s "$@"\n' "$(command -v "$PY")" > .venv/bin/python
    chmod +x .venv/bin/python && touch .venv/.installed
  fi
  make --no-print-directory TOOLCHAIN=current kernels && ls _build/kernels
  echo "== JAX under RLIMIT_AS = 3 GiB (the sandbox's per-process limit without a cgroup):"
  $PY -c 'import resource; resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
import jax; print(jax.devices()); print(jax.numpy.ones(3).sum())' 2>&1 | tail -3
  echo "== XLA on this GPU: log(exp(100.0)) in float32, eager and jitted (book/faq/numerics.md):"
  $PY -c 'import jax, jax.numpy as jnp
f = lambda x: jnp.log(jnp.exp(x)); x = jnp.float32(100.0)
print("eager", f(x), "jitted", jax.jit(f)(x), "on", x.devices())'
  echo "== this JAX's Primitive.bind (book/core/today.md quotes the pinned one):"
  $PY -c 'import inspect; from jax._src import core; print(inspect.getsource(core.Primitive.bind))'
  echo "== the course's modules imported with deprecation warnings as errors:"
  $PY -W error::DeprecationWarning -W error::FutureWarning -c '
import importlib, pkgutil, jaxcourse, autograder
names = [m.name for p in (jaxcourse, autograder)
         for m in pkgutil.walk_packages(p.__path__, p.__name__ + ".")
         if not m.name.endswith("__main__")]
bad = []
for name in names:
    try:
        importlib.import_module(name)
    except Exception as err:
        bad.append(f"{name}: {type(err).__name__}: {err}")
print(len(names), "modules,", len(bad), "failed"); print("\n".join(bad))'
  return 0
}

export -f setup; export PY
step setup 240 bash -c setup || { echo "setup failed: see setup.log"; exit 1; }

step demo 200 $PY -m autograder demo ps1_primitives ps5_kernels --out /tmp/gpu_demo --workers 8 &
step chapters 300 $PY scripts/run_chapters.py --jobs 6 &
wait
(for a in ${MUTANTS-ps1_primitives ps5_kernels}; do
  echo "== $a" >> "$out/mutants.log"
  step mutants "${MUTANT_SECONDS:-200}" $PY scripts/mutant_scores.py $a --workers 8
done) &
step pytest 600 $PY -m pytest -q -p no:cacheprovider -n 6 --timeout 600 -rfEs \
  ${PYTEST_FILES:-tests/assignments/test_ps1_primitives.py tests/assignments/test_ps5_kernels.py \
  tests/book/test_kernels.py tests/book/test_core.py tests/book/test_primitive_matrix.py \
  tests/book/test_autodidax_core.py tests/book/test_tracing_and_batching.py \
  tests/autograder/test_grading_inputs.py} &
wait
step bench 150 $PY benchmarks/grading_throughput.py --assignment ps1_primitives \
  --students 32 --workers 12 --skip-nbgrader
step bench 60 $PY benchmarks/kernel_bandwidth_gpu.py --out "$out/gpu_figures.json"
tar -czf "$out/extra.tar.gz" -C /tmp gpu_demo/ps1_primitives/graded/feedback \
  gpu_demo/ps5_kernels/graded/feedback 2> /dev/null
cat "$steps"
