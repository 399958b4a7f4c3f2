"""Probes of ps5_kernels: run in the student's process, call the student's code, return plain data.
Never compare anything (the grader does).

The kernel is probed alone, through the grader's own ``ffi_call`` of the target the notebook
built; in the grader's sandbox (``prepare_process``) that call runs in a process of its own, where
the kernel's native code shares memory with nothing of the grader's. The Python glue is probed without running any kernel: the probe stages the student's
function into a jaxpr and evaluates it itself, computing each ``ffi_call`` of the notebook's
target with NumPy after checking what the call declares (result shape and dtype, the attribute's
type, operand shapes). So ``lse_ffi``, the batching rule and the derivative are each graded on
their own, whatever the kernel does, and the probe also reports how the value was computed:
which kernel calls the program makes and whether it loops. ``lse_vmappable`` and ``lse`` are
probed with the grader's ``lse_ffi`` in place of the notebook's.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import re
import shutil
import subprocess
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import Literal

from autograder.student.probe_helpers import each_case, own
from jaxcourse.kernels.build import (
    KernelBuildError,
    KernelCallError,
    compile_library,
    cuda_request,
    isolate_kernels,
    kernels_isolated,
    ptx,
    run_isolated,
    source_digest,
)

CALLS = frozenset({"pjit", "jit", "closed_call", "core_call", "custom_jvp_call",
                   "custom_vjp_call", "custom_vjp_call_jaxpr", "custom_vmap_call", "remat",
                   "checkpoint"})
LOOPS = frozenset({"while", "scan"})
# What the probes trust beyond themselves (autograder.student.sandbox passes them to the guard):
# the kernel build, whose isolation latch, child script and link check decide where and whether
# a student's library is loaded.
GUARDED_MODULES = ("jaxcourse.kernels.build", "jaxcourse.kernels.isolated",
                   "jaxcourse.kernels.linkage")


def _name(ns: dict, key: str) -> str:
    value = ns.get(key)
    if not isinstance(value, str):
        raise TypeError(f"{key} is not the target name the kernel cell returned")
    return value


def _array(value) -> np.ndarray:
    return np.asarray(value)


def prepare_process():
    """Called by the grader in the student's process before the first cell: the kernels the
    notebook builds are compiled but never loaded here; the probes below run them each in a
    process of their own (jaxcourse.kernels.build.run_isolated), which holds nothing of the
    grader's. (Unsandboxed, in-process grading leaves them loaded where the notebook runs.)"""
    isolate_kernels()


# --- the kernel, through the grader's own call -----------------------------------------------
def _kernel(target: str, x, w, t, *, platform: str = "cpu", repeats: int = 0):
    """The kernel's ``y`` for x, w and t through the grader's own ffi_call, and the best time of
    ``repeats`` more calls (None for none)."""
    result = jax.ShapeDtypeStruct(x.shape[:-1], x.dtype)
    if kernels_isolated():
        return run_isolated(target, [x, w], result, {"t": np.float32(t)}, repeats=repeats)
    call = jax.ffi.ffi_call(target, result)
    run = jax.jit(lambda x, w: call(x, w, t=np.float32(t)))
    device = jax.devices(platform)[0]
    x, w = jax.device_put(x, device), jax.device_put(w, device)
    value, best = np.asarray(run(x, w)), None
    for _ in range(repeats):
        start = time.perf_counter()
        run(x, w).block_until_ready()
        best = min(best or float("inf"), time.perf_counter() - start)
    return value, best


@each_case
def probe_kernel(ns, inputs):
    x, w = _array(inputs["x"]), _array(inputs["w"])
    return _kernel(_name(ns, "TARGET"), x, w, inputs["t"])[0]


def _refused_with(kind: str, message: str) -> str:
    """The status an ffi::Error carried (XLA starts the message with it: INVALID_ARGUMENT,
    INTERNAL, ...), else the name of the exception raised."""
    status = re.match(r"([A-Z][A-Z_]+): ", message)
    return status.group(1) if status else kind


def probe_kernel_refuses(ns, inputs):
    """Each bad call in turn: the status of the error it raised (INVALID_ARGUMENT, ...), the
    exception's name when it carries none, or 'returned'. A crash or a hang fails the check (it
    is raised)."""
    target = _name(ns, "TARGET")
    found = []
    for case in inputs["cases"]:
        x, w = _array(case["x"]), _array(case["w"])
        try:
            _kernel(target, x, w, case["t"])
            found.append("returned")
        except KernelCallError as err:  # the kernel's process said what the call raised
            found.append(_refused_with(err.kind, str(err).partition(": ")[2]))
        except Exception as err:  # noqa: BLE001 - in process: any error raised through the FFI
            if kernels_isolated():
                raise
            found.append(_refused_with(type(err).__name__, str(err)))
    return found


# --- a jaxpr evaluator that computes the kernel's calls itself ------------------------------
class _Run:
    """Evaluates a closed jaxpr; ``ffi_call``s of ``target`` are computed with NumPy."""

    def __init__(self, target: str):
        self.target = target
        self.calls: list[dict] = []
        self.loops: list[str] = []

    def closed(self, closed, args):
        return self.jaxpr(closed.jaxpr, closed.consts, args)

    def jaxpr(self, jaxpr, consts, args):
        env = {}

        def read(v):
            return v.val if isinstance(v, Literal) else env[v]

        for v, c in zip(jaxpr.constvars, consts):
            env[v] = c
        for v, a in zip(jaxpr.invars, args):
            env[v] = a
        for eqn in jaxpr.eqns:
            invals = [read(v) for v in eqn.invars]
            name = eqn.primitive.name
            if name in LOOPS:
                self.loops.append(name)
            if name == "ffi_call":
                outs = [self.kernel(eqn.params, *invals)]
            elif _is_host_kernel(eqn):
                self.calls.append({"target": self.target,
                                   "shapes": [list(np.shape(v)) for v in invals]})
                outs = eqn.primitive.bind(*invals, **eqn.params)
            elif name in CALLS and self._inner(eqn.params) is not None:
                inner = self._inner(eqn.params)
                if hasattr(inner, "jaxpr"):
                    outs = self.jaxpr(inner.jaxpr, inner.consts, invals)
                else:
                    outs = self.jaxpr(inner, (), invals)
            else:
                # Loops and other nested programs run as JAX runs them; their kernel calls are
                # counted from their text.
                self.calls += [{"target": str(e.params.get("target_name", self.target)),
                                "shapes": []}
                               for e in _nested_ffi_calls(eqn.params)]
                outs = eqn.primitive.bind(*invals, **eqn.params)
                if not eqn.primitive.multiple_results:
                    outs = [outs]
            for v, out in zip(eqn.outvars, outs):
                env[v] = out
        return [read(v) for v in jaxpr.outvars]

    @staticmethod
    def _inner(params):
        for key in ("jaxpr", "call_jaxpr", "fun_jaxpr", "call"):
            if key in params:
                return params[key]
        return None

    def kernel(self, params, *operands):
        target = params.get("target_name")
        self.calls.append({"target": str(target),
                           "shapes": [list(np.shape(o)) for o in operands]})
        if target != self.target:
            raise ValueError(f"an ffi_call names {target!r}, not the kernel the notebook built")
        if len(operands) != 2:
            raise TypeError(f"the kernel takes 2 operands (x, w), the call passes {len(operands)}")
        attributes = dict(params.get("attributes", ()))
        t = attributes.get("t")
        if set(attributes) != {"t"} or type(t) is not np.float32:
            raise TypeError("the call must pass exactly one attribute, t, as a float32 (the "
                            f"handler binds Attr<float>); it passes {sorted(attributes)} "
                            f"({type(t).__name__})")
        x, w = (np.asarray(o) for o in operands)
        if x.dtype != w.dtype or x.dtype not in (np.float32, np.float64) or x.ndim == 0:
            raise TypeError(f"the kernel refuses x {x.dtype}{list(x.shape)}, w {w.dtype}")
        (aval,) = params["result_avals"]
        if tuple(aval.shape) != x.shape[:-1] or aval.dtype != x.dtype:
            raise TypeError(f"the call declares its result as {aval.dtype}{list(aval.shape)} "
                            f"for x of {x.dtype}{list(x.shape)}")
        return jnp.asarray(_lse_numpy(x, w, float(t)))


def _is_host_kernel(eqn) -> bool:
    return eqn.primitive.name == "pure_callback" and isinstance(
        getattr(eqn.params.get("callback"), "callback_func", None), _HostKernel)


def _lse_numpy(x: np.ndarray, w: np.ndarray, t: float) -> np.ndarray:
    """The operation as a correct kernel computes it, for x of the kernel's dtype: x's rows, n
    weights in w (any shape of that size, or the call is refused as the kernel refuses it)."""
    n = x.shape[-1]
    if w.size != n:
        raise ValueError(f"the kernel refuses w of shape {w.shape} for rows of {n}")
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        x64, w64 = x.astype(np.float64) / t, w.astype(np.float64).reshape(n)
        if n == 0:
            return np.full(x.shape[:-1], -np.inf, x.dtype)
        top = np.max(x64, axis=-1, keepdims=True)
        y = t * (top[..., 0] + np.log(np.sum(w64 * np.exp(x64 - top), axis=-1)))
    return y.astype(x.dtype)


def _nested_ffi_calls(params) -> list:
    found = []
    for value in params.values():
        for item in value if isinstance(value, (tuple, list)) else (value,):
            inner = getattr(item, "jaxpr", item)
            for eqn in getattr(inner, "eqns", ()):
                if eqn.primitive.name == "ffi_call" or _is_host_kernel(eqn):
                    found.append(eqn)
                found += _nested_ffi_calls(eqn.params)
    return found


def _report(run: _Run, values) -> dict:
    return {"values": [np.asarray(v) for v in values],
            "targets": sorted({c["target"] for c in run.calls}),
            "calls": len(run.calls), "loops": sorted(set(run.loops))}


class _HostKernel:
    """What the grader's ``lse_ffi`` calls: the operation on the host, for one t, its result in
    ``dtype``."""

    def __init__(self, t: float, dtype):
        self.t, self.dtype = t, np.dtype(dtype)

    def __call__(self, x, w):
        return _lse_numpy(np.asarray(x), np.asarray(w), self.t).astype(self.dtype)


def _grader_lse_ffi(x, w, t, *, vmap_method=None):
    """Stands in for the notebook's ``lse_ffi`` in the batching and derivative probes: the same
    contract (one call per batch, ``vmap_method`` with ffi_call's meanings), through
    ``jax.pure_callback`` instead of the kernel, so those probes run no student kernel. Its
    result has the dtype ps5.ffi_call asks of ``lse_ffi``, x's and w's promoted together: a
    batching rule that hands the kernel weights of another dtype than x's changes the result's
    dtype here as it would with the notebook's own ``lse_ffi``."""
    x, w = jnp.asarray(x), jnp.asarray(w)
    dtype = jnp.promote_types(x.dtype, w.dtype)
    shape = jax.ShapeDtypeStruct(x.shape[:-1], dtype)
    return jax.pure_callback(_HostKernel(float(np.float32(t)), dtype), shape, x, w,
                             vmap_method=vmap_method)


class _GraderFfi:
    """While active, the notebook's ``lse_ffi`` is the grader's."""

    def __init__(self, ns: dict):
        self.ns, self.target = ns, _name(ns, "TARGET")

    def __enter__(self):
        self.saved = self.ns.get("lse_ffi")
        self.ns["lse_ffi"] = _grader_lse_ffi
        return self

    def __exit__(self, *exc):
        self.ns["lse_ffi"] = self.saved
        return False


# --- ps5.ffi_call ----------------------------------------------------------------------------
@each_case
def probe_ffi_call(ns, inputs):
    f = own(ns, "lse_ffi")
    x, w, t = _array(inputs["x"]), _array(inputs["w"]), inputs["t"]
    run = _Run(_name(ns, "TARGET"))
    closed = jax.make_jaxpr(jax.jit(lambda x, w: f(x, w, t)))(x, w)
    report = _report(run, run.closed(closed, [x, w]))
    if inputs.get("vmap_methods"):
        report["vmap_methods"] = []
        for method in inputs["vmap_methods"]:
            staged = jax.make_jaxpr(lambda x, w, m=method: f(x, w, t, vmap_method=m))(x, w)
            report["vmap_methods"] += [str(e.params.get("vmap_method")) for e in staged.eqns
                                       if e.primitive.name == "ffi_call"]
    return report


def probe_ffi_ints(ns, inputs):
    """For each call with an integer or boolean array: the name of what staging it raised, or
    'returned'. Staging runs no kernel."""
    f = own(ns, "lse_ffi")
    found = []
    for case in inputs["cases"]:
        x, w = _array(case["x"]), _array(case["w"])
        try:
            jax.make_jaxpr(lambda x, w: f(x, w, inputs["t"]))(x, w)
            found.append("returned")
        except Exception as err:  # noqa: BLE001 - the name of any error is the answer
            found.append(type(err).__name__)
    return found


# --- ps5.vmap --------------------------------------------------------------------------------
@each_case
def probe_vmap(ns, inputs):
    with _GraderFfi(ns) as pinned:
        f = own(ns, "lse_vmappable")
        t = inputs["t"]
        x, w = _array(inputs["x"]), _array(inputs["w"])
        def g(x, w):
            return f(x, w, t)

        for x_axis, w_axis in reversed(inputs["in_axes"]):
            g = jax.vmap(g, in_axes=(x_axis, w_axis))
        run = _Run(pinned.target)
        closed = jax.make_jaxpr(jax.jit(g) if inputs["jit"] else g)(x, w)
        return _report(run, run.closed(closed, [x, w]))


# --- ps5.grad --------------------------------------------------------------------------------
@each_case
def probe_grad(ns, inputs):
    with _GraderFfi(ns) as pinned:
        f = own(ns, "lse")
        t = inputs["t"]
        x, w, ct = _array(inputs["x"]), _array(inputs["w"]), _array(inputs["ct"])
        run = _Run(pinned.target)
        if inputs["mode"] == "jvp":
            dx, dw = _array(inputs["dx"]), _array(inputs["dw"])

            def jvp(x, w, dx, dw):
                return jax.jvp(lambda x, w: f(x, w, t), (x, w), (dx, dw))

            closed = jax.make_jaxpr(jvp)(x, w, dx, dw)
            return _report(run, run.closed(closed, [x, w, dx, dw]))

        def loss(x, w):
            return jnp.sum(f(x, w, t) * ct)

        g = jax.grad(loss, argnums=(0, 1))
        closed = jax.make_jaxpr(jax.jit(g) if inputs["mode"] == "jit_grad" else g)(x, w)
        return _report(run, run.closed(closed, [x, w]))


# --- ps5.cuda --------------------------------------------------------------------------------
_compiled: dict[str, dict] = {}


def probe_cuda_compiles(ns, inputs):
    source = ns.get("LSE_CU")
    if not isinstance(source, str):
        raise TypeError("LSE_CU is not the CUDA source")
    key = hashlib.sha256(source.encode()).hexdigest()
    if key not in _compiled:
        try:
            library = compile_library(source, compiler="nvcc", name="lse_cuda",
                                      timeout_s=float(inputs["timeout_s"]))
        except KernelBuildError as err:
            _compiled[key] = {"compiled": False, "message": str(err), "symbols": []}
        else:
            nm = shutil.which("nm") or "nm"
            listed = subprocess.run([nm, "-D", "--defined-only", str(library)],
                                    capture_output=True, text=True, timeout=60, check=False)
            symbols = re.findall(r"\s[TW]\s+(\w+)$", listed.stdout, flags=re.MULTILINE)
            every = subprocess.run([nm, str(library)], capture_output=True, text=True,
                                   timeout=60, check=False).stdout
            _compiled[key] = {"compiled": True, "message": "",
                              "symbols": sorted(s for s in symbols if "Lse" in s)[:20],
                              # nvcc gives each __global__ function a host-side launch stub
                              "kernels": every.count("__device_stub__"),
                              "writers": _kernels_that_store(source, inputs["timeout_s"])}
    return _compiled[key]


def _kernels_that_store(source: str, timeout_s: float) -> list[str]:
    """The __global__ functions whose device code stores to global memory (``st.global`` in
    their PTX): a kernel that stores nothing never writes its result."""
    try:
        text = ptx(source, timeout_s=timeout_s)
    except KernelBuildError:
        return []
    parts = re.split(r"\.entry\s+", text)[1:]
    return sorted(part.split("(")[0].strip() for part in parts if "st.global" in part)[:20]


def _has(platform: str) -> bool:
    try:
        return bool(jax.devices(platform))
    except RuntimeError:  # no backend for that platform here
        return False


def _call_types(text: str) -> tuple[list[list[int]], list[list[int]]]:
    """For each custom call in a lowered program's text: the number of elements of each of its
    operands, in order, and its first result's shape, from the call's type
    (``... : (tensor<3x5xf32>, tensor<5xf32>) -> tensor<3xf32>``)."""
    sizes, results = [], []
    for line in text.splitlines():
        if "custom_call @" not in line:
            continue
        signature = re.search(r"\}\s*:\s*\(([^()]*)\)\s*->\s*\(?\s*tensor<([^>]*)>", line)
        types = re.findall(r"tensor<([^>]*)>", signature.group(1)) if signature else []
        sizes.append([math.prod(int(d) for d in t.split("x")[:-1]) for t in types])
        results.append([int(d) for d in signature.group(2).split("x")[:-1]] if signature else [])
    return sizes, results


@each_case
def probe_cuda_lowering(ns, inputs):
    with _GraderFfi(ns):
        f = own(ns, "lse_any")
        t = inputs["t"]
        x, w = _array(inputs["x"]), _array(inputs["w"])
        found = {"target": _name(ns, "TARGET"), "cuda_target": _name(ns, "CUDA_TARGET")}
        # What cuda_kernel was asked to build under that name: on a GPU it compiles the source
        # and looks the symbol up; here it only names them, so the probe reads the request.
        request = cuda_request(found["cuda_target"])  # _name made it a str
        source = ns.get("LSE_CU")
        found["cuda_request"] = None if request is None else {
            "from_lse_cu": isinstance(source, str) and request[0] == source_digest(source),
            "symbol": request[1] if isinstance(request[1], str) else repr(request[1])}
        for platform in ("cpu", "cuda"):
            # The grader's lse_ffi is a host callback, which lowers only for the backend of the
            # devices it runs on: a CPU device for the CPU's program, a GPU for the GPU's where
            # one exists (tracing on one platform and lowering for the other is refused).
            where = (jax.default_device(jax.devices(platform)[0]) if _has(platform)
                     else contextlib.nullcontext())
            with where:
                text = jax.jit(lambda x, w: f(x, w, t)).trace(x, w).lower(
                    lowering_platforms=(platform,)).as_text()
            found[platform] = re.findall(r"custom_call @([\w.]+)\(", text)
            found[f"{platform}_t"] = re.findall(r"\bt = ([-+0-9.eE]+) : f32", text)
            found[f"{platform}_operands"], found[f"{platform}_results"] = _call_types(text)
        # And run on a CPU: the CPU branch's values (with the grader's lse_ffi, as above).
        with jax.default_device(jax.devices("cpu")[0]):
            found["cpu_y"] = np.asarray(jax.jit(lambda x, w: f(x, w, t))(x, w))
        return found


def probe_cuda_values(ns, inputs):
    """The CUDA kernel's y for each call through the grader's own ffi_call on the GPU (lse_any's
    choice of kernel is ps5.cuda.lowering's)."""
    target = _name(ns, "CUDA_TARGET")
    return [_kernel(target, _array(case["x"]), _array(case["w"]), inputs["t"], platform="gpu")[0]
            for case in inputs["cases"]]


def probe_cuda_speed(ns, inputs):
    """Best-of-N seconds of the CUDA kernel and of XLA's own code for the same operation, each on
    the GPU (the kernel in its own process where kernels are isolated)."""
    t, repeats = inputs["t"], int(inputs["repeats"])
    x, w = speed_operands(inputs["seed"], inputs["shape"])
    y, kernel = _kernel(_name(ns, "CUDA_TARGET"), x, w, t, platform="gpu", repeats=repeats)
    gpu = jax.devices("gpu")[0]
    xla = jax.jit(lambda x, w: t * jax.nn.logsumexp(x / t, axis=-1, b=w))
    x, w = jax.device_put(x, gpu), jax.device_put(w, gpu)
    xla(x, w).block_until_ready()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        xla(x, w).block_until_ready()
        best = min(best, time.perf_counter() - start)
    return {"kernel": kernel, "xla": best, "y": y}


def speed_operands(seed, shape) -> tuple[np.ndarray, np.ndarray]:
    """x and w of the timed call, drawn from the seed the grader sent (64 MiB do not fit in a
    frame); the grader draws the same to judge the kernel's y."""
    rng = np.random.default_rng(int(seed))
    shape = tuple(int(d) for d in shape)
    x = (3.0 * rng.standard_normal(shape)).astype(np.float32)
    return x, rng.uniform(0.1, 2.0, size=shape[-1]).astype(np.float32)
