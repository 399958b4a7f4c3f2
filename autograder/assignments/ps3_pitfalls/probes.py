"""Probes for ps3_pitfalls: run in the student's process, call the student's code under the
transformation that exposes each pitfall, and return plain data. They never compare anything.

Everything a probe relies on is imported here, before any student code runs, so rebinding names
in the student's namespace or in these modules' globals later cannot change what a probe calls.
"""

from __future__ import annotations

import contextlib
import io
import time
import timeit
from typing import Any

import jax
import numpy as np

from jaxcourse.faq_tools import count_equations

_jit, _grad, _vmap, _make_jaxpr = jax.jit, jax.grad, jax.vmap, jax.make_jaxpr
_tree_leaves, _device_put = jax.tree_util.tree_leaves, jax.device_put
_block, _effects_barrier = jax.block_until_ready, jax.effects_barrier


def _f32(values: Any) -> jax.Array:
    return _device_put(np.asarray(values, dtype=np.float32))


# ps3.pure ---------------------------------------------------------------------------------------


def probe_pure_jit(ns: dict, inputs: dict) -> list:
    shift = _jit(ns["shift"])
    x = _f32(inputs["x"])
    results = []
    for offset in inputs["offsets"]:
        # Keep the notebook's global in step, as a caller who still uses it would: a shift that
        # reads the global is then right eagerly and wrong only because jit cached its first trace.
        ns["offset"] = offset
        results.append(shift(x, offset))
    return results


# ps3.loop ---------------------------------------------------------------------------------------


def probe_loop_values(ns: dict, inputs: dict) -> Any:
    return _jit(ns["relax"], static_argnums=1)(_f32(inputs["x"]), inputs["steps"])


def probe_loop_size(ns: dict, inputs: dict) -> list:
    x = _f32(inputs["x"])
    return [count_equations(_make_jaxpr(ns["relax"], static_argnums=1)(x, n))
            for n in inputs["step_counts"]]


# ps3.method -------------------------------------------------------------------------------------


def probe_method_mutation(ns: dict, inputs: dict) -> list:
    scaler_cls = ns["Scaler"]
    y = _f32(inputs["y"])
    f1, f2, f3 = inputs["factors"]
    s = scaler_cls(_f32(f1), True)
    results = [s.apply(y)]
    s.factor = _f32(f2)
    results.append(s.apply(y))
    s.enabled = False
    results.append(s.apply(y))
    s.enabled = True
    s.factor = _f32(f3)
    results.append(s.apply(y))
    return results


def probe_method_pytree(ns: dict, inputs: dict) -> dict:
    scaler_cls = ns["Scaler"]
    y = _f32(inputs["y"])
    f1, f2 = inputs["factors"][:2]
    traces = [0]

    def call(obj, arg):
        traces[0] += 1  # runs once per compilation, never on a cache hit
        return obj.apply(arg)

    call_jit = _jit(call)
    values, compilations = [], []
    for factor, enabled in [(f1, True), (f2, True), (f1, False)]:
        values.append(call_jit(scaler_cls(_f32(factor), enabled), y))
        compilations.append(traces[0])
    leaves = _tree_leaves(scaler_cls(_f32(f1), True))
    return {"values": values, "compilations": compilations, "leaves": len(leaves)}


# ps3.placement ----------------------------------------------------------------------------------


def _placement(ns: dict, x: Any) -> dict:
    device = jax.devices()[-1]
    placed = ns["commit_to"](x, device)
    return {"values": placed, "committed": placed.committed,
            "on_device": placed.devices() == {device}}


def probe_placement_host(ns: dict, inputs: dict) -> dict:
    return _placement(ns, np.asarray(inputs["x"], np.float32))


def probe_placement_uncommitted(ns: dict, inputs: dict) -> dict:
    # An uncommitted JAX array, already on the default device: it must still come back committed.
    return _placement(ns, _device_put(np.asarray(inputs["x"], np.float32)))


# ps3.divide, ps3.safe_log, ps3.log_or_y, ps3.smooth_step -----------------------------------------


def probe_divide_jit(ns: dict, inputs: dict) -> Any:
    return _jit(ns["divide"])(_f32(inputs["x"]), _f32(inputs["y"]))


def probe_divide_grad(ns: dict, inputs: dict) -> tuple:
    grads = _jit(_vmap(_grad(ns["divide"], argnums=(0, 1))))
    return tuple(grads(_f32(inputs["x"]), _f32(inputs["y"])))


def probe_safe_log_values(ns: dict, inputs: dict) -> Any:
    return _jit(ns["safe_log"])(_f32(inputs["x"]))


def probe_safe_log_grad(ns: dict, inputs: dict) -> Any:
    return _jit(_vmap(_grad(ns["safe_log"])))(_f32(inputs["x"]))


def probe_log_or_y_values(ns: dict, inputs: dict) -> Any:
    return _jit(ns["log_or_y"])(_f32(inputs["x"]), _f32(inputs["y"]))


def probe_log_or_y_grad(ns: dict, inputs: dict) -> tuple:
    grads = _jit(_vmap(_grad(ns["log_or_y"], argnums=(0, 1))))
    return tuple(grads(_f32(inputs["x"]), _f32(inputs["y"])))


def probe_smooth_step_values(ns: dict, inputs: dict) -> Any:
    return _jit(ns["smooth_step"])(_f32(inputs["x"]), inputs["temperature"])


def probe_smooth_step_grad(ns: dict, inputs: dict) -> Any:
    grads = _jit(_vmap(_grad(ns["smooth_step"]), in_axes=(0, None)))
    return grads(_f32(inputs["x"]), inputs["temperature"])


# ps3.benchmark ----------------------------------------------------------------------------------


class _SimulatedDevice:
    """A function with a simulated clock: compiling on the first call, transferring host
    (NumPy) arguments, and running asynchronously on an in-order device queue each cost
    simulated seconds. What a benchmark reports can then be checked exactly, with no real
    timing noise."""

    def __init__(self, compile_s: float, compute_s: float, transfer_s: float, dispatch_s: float):
        self.compile_s, self.compute_s = compile_s, compute_s
        self.transfer_s, self.dispatch_s = transfer_s, dispatch_s
        self.now = 0.0
        self.queue_free_at = 0.0
        self.calls = 0
        self.host_arguments = 0
        self.waits = 0

    def clock(self) -> float:
        return self.now

    def clock_ns(self) -> int:
        return int(self.now * 1e9)

    def __call__(self, *args: Any) -> _PendingResult:
        self.calls += 1
        if self.calls == 1:
            self.now += self.compile_s
        host = sum(isinstance(a, np.ndarray) for a in args)
        self.host_arguments += host
        self.now += host * self.transfer_s + self.dispatch_s
        self.queue_free_at = max(self.now, self.queue_free_at) + self.compute_s
        return _PendingResult(self, self.queue_free_at)


class _PendingResult:
    def __init__(self, device: _SimulatedDevice, ready_at: float):
        self._device, self._ready_at = device, ready_at

    def block_until_ready(self) -> _PendingResult:
        self._device.waits += 1
        self._device.now = max(self._device.now, self._ready_at)
        return self


@contextlib.contextmanager
def _simulated_clocks(ns: dict, device: _SimulatedDevice):
    real = {name: getattr(time, name) for name in ("perf_counter", "time", "monotonic")}
    real_ns = time.perf_counter_ns
    real_timer = timeit.default_timer
    rebound = {k: v for k, v in ns.items() if any(v is r for r in (*real.values(), real_timer))}
    try:
        for name in real:
            setattr(time, name, device.clock)
        time.perf_counter_ns = device.clock_ns
        timeit.default_timer = device.clock
        for key in rebound:
            ns[key] = device.clock
        yield
    finally:
        for name, fn in real.items():
            setattr(time, name, fn)
        time.perf_counter_ns = real_ns
        timeit.default_timer = real_timer
        ns.update(rebound)


def probe_benchmark(ns: dict, inputs: dict) -> dict:
    device = _SimulatedDevice(inputs["compile_s"], inputs["compute_s"], inputs["transfer_s"],
                              inputs["dispatch_s"])
    args = [np.ones(shape, np.float32) for shape in inputs["shapes"]]
    benchmark = ns["benchmark"]
    with _simulated_clocks(ns, device):
        seconds = benchmark(device, *args, repeats=inputs["repeats"])
    return {"seconds": float(seconds), "calls": device.calls,
            "host_arguments": device.host_arguments, "waits": device.waits}


# ps3.donate -------------------------------------------------------------------------------------


def probe_donate(ns: dict, inputs: dict) -> dict:
    params = {name: _f32(value) for name, value in inputs["params"].items()}
    grads = {name: _f32(value) for name, value in inputs["grads"].items()}
    new = ns["sgd_step"](params, grads, inputs["lr"])
    return {
        "new": {name: new[name] for name in sorted(params)},
        "params_deleted": [params[n].is_deleted() for n in sorted(params)],
        "grads_deleted": [grads[n].is_deleted() for n in sorted(grads)],
    }


# ps3.debug_print, ps3.callback ------------------------------------------------------------------


def probe_debug_print(ns: dict, inputs: dict) -> dict:
    traced_sqrt = _jit(ns["traced_sqrt"])
    captured = io.StringIO()
    values = []
    with contextlib.redirect_stdout(captured):
        for v in inputs["values"]:
            values.append(_block(traced_sqrt(np.float32(v))))
        _effects_barrier()
    return {"values": values, "text": captured.getvalue()[:5000]}


def probe_callback_jit(ns: dict, inputs: dict) -> Any:
    return _jit(ns["ranks"])(_f32(inputs["batch"][0]))


def probe_callback_vmap(ns: dict, inputs: dict) -> list:
    ranks = ns["ranks"]
    batch = _f32(inputs["batch"])
    return [_vmap(ranks)(batch), _jit(_vmap(ranks))(batch)]
