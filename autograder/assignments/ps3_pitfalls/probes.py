"""Probes for ps3_pitfalls: run in the student's process, call the student's code under the
transformation that exposes each pitfall, and return plain data. They never compare anything.

Everything a probe relies on is imported here, before any student code runs, so rebinding names
in the student's namespace or in these modules' globals later cannot change what a probe calls.
Probes that measure how a value is computed (compilations, host calls, reused buffers, leaked
tracers, printed lines) count it here and send the counts; the grader judges them.
"""

from __future__ import annotations

import contextlib
import io
import time
import timeit
import types
import warnings
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from autograder.student.probe_helpers import each_case
from jaxcourse.faq_tools import count_equations

_jit, _grad, _vmap, _make_jaxpr = jax.jit, jax.grad, jax.vmap, jax.make_jaxpr
_tree_leaves, _tree_map, _tree_structure = (jax.tree_util.tree_leaves, jax.tree_util.tree_map,
                                            jax.tree_util.tree_structure)
_device_put, _devices = jax.device_put, jax.devices
_ShapeDtypeStruct = jax.ShapeDtypeStruct
# An array XLA owns. jax.device_put of a NumPy array may share the array's memory on the CPU,
# and XLA never reuses a donated buffer it does not own: the donation checks then failed even the
# reference, for some inputs (a third of small float32 arrays).
_owned = jnp.asarray
_block, _effects_barrier = jax.block_until_ready, jax.effects_barrier
_Tracer = jax.core.Tracer
# float64 checks switch x64 on around the call only, so every check shares one process.
_enable_x64 = jax.enable_x64


def _arr(values: Any, dtype: str = "float32") -> jax.Array:
    return _owned(np.asarray(values, dtype=dtype))


def _np(values: Any, dtype: str = "float32") -> np.ndarray:
    return np.asarray(values, dtype=dtype)


# ps3.pure ---------------------------------------------------------------------------------------


def _pure_calls(ns: dict, inputs: dict, fn: Any) -> list:
    x = _arr(inputs["x"], inputs.get("dtype", "float32"))
    results = []
    for slope in inputs["slopes"]:
        # Keep the notebook's global in step, as a caller who still uses it would: a function
        # that reads the global is then right eagerly and wrong only because jit cached a trace.
        ns["slope"] = slope
        results.append(fn(x, slope))
    return results


def probe_pure_jit(ns: dict, inputs: dict) -> list:
    return _pure_calls(ns, inputs, _jit(ns["leaky_relu"]))


def probe_pure_grad(ns: dict, inputs: dict) -> list:
    f = ns["leaky_relu"]
    return _pure_calls(ns, inputs, _jit(_grad(lambda x, s: f(x, s).sum(), argnums=1)))


def probe_pure_compiles(ns: dict, inputs: dict) -> dict:
    f = ns["leaky_relu"]
    traces = [0]

    def counted(x, s):
        traces[0] += 1  # runs once per trace, never on a cache hit
        return f(x, s)

    values = _pure_calls(ns, inputs, _jit(counted))
    return {"values": values, "traces": traces[0]}


def _tracers(value: Any, depth: int, seen: set, found: set, budget: list) -> None:
    """Adds to ``found`` the id of every tracer reachable from ``value``: through containers,
    an object's attributes, a function's defaults and closure, at most ``depth`` steps deep
    (``budget``: how many more objects may be visited)."""
    if isinstance(value, _Tracer):
        found.add(id(value))
        return
    if (depth == 0 or budget[0] <= 0 or id(value) in seen
            or isinstance(value, (str, bytes, int, float, np.ndarray, jax.Array, type,
                                  types.ModuleType))):
        return
    seen.add(id(value))
    budget[0] -= 1
    try:
        if isinstance(value, dict):
            inner = list(value.values())
        elif isinstance(value, (list, tuple, set, frozenset)):
            inner = list(value)
        elif isinstance(value, types.FunctionType):
            inner = [*(value.__defaults__ or ()), *(value.__kwdefaults__ or {}).values(),
                     *(_contents(c) for c in value.__closure__ or ())]
        else:
            inner = list(vars(value).values()) if hasattr(value, "__dict__") else []
    except Exception:  # noqa: BLE001 - an object that hides its attributes holds nothing found
        return
    for item in inner[:10000]:
        _tracers(item, depth - 1, seen, found, budget)


def _contents(cell: Any) -> Any:
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return None


def _global_tracers(ns: dict) -> dict[str, set]:
    """name -> the ids of the tracers reachable through that global of the notebook (a
    module's: through its attributes, one step deep)."""
    seen: set = set()
    budget = [200_000]
    held = {}
    for name, value in list(ns.items()):
        found: set = set()
        if isinstance(value, types.ModuleType):
            for attr in list(vars(value).values()):
                _tracers(attr, 2, seen, found, budget)
        else:
            _tracers(value, 6, seen, found, budget)
        held[name] = found
    return held


def probe_pure_leaks(ns: dict, inputs: dict) -> dict:
    """The globals that hold a tracer after jit(leaky_relu) ran and did not before: the task's
    words, "leaves no tracer behind in any global" (the set-up cell's own leak is older).
    jax.checking_leaks is not asked: it also reports tracers JAX's own caches keep (a
    jnp.piecewise branch closing over a traced argument), which no global of the student's
    holds."""
    f = ns["leaky_relu"]
    x = _arr(inputs["x"], inputs.get("dtype", "float32"))
    before = _global_tracers(ns)
    value = _block(_jit(lambda x, s: f(x, s))(x, inputs["slopes"][0]))
    after = _global_tracers(ns)
    leaked = sorted(name for name, ids in after.items() if ids - before.get(name, set()))
    return {"leaked": bool(leaked), "message": ", ".join(leaked)[:200], "values": value}


# ps3.loop ---------------------------------------------------------------------------------------


def _loop_args(inputs: dict) -> tuple:
    dtype = inputs.get("dtype", "float32")
    return _arr(inputs["x"], dtype), _arr(inputs["v"], dtype)


def _loop_sizes(f: Any, x: Any, v: Any, inputs: dict) -> list[int]:
    """Equations (nested jaxprs' included) of integrate's jaxpr for a few steps and for 200."""
    return [count_equations(_make_jaxpr(f, static_argnums=2)(x, v, n, inputs["dt"]))
            for n in inputs["step_counts"]]


def probe_loop_values(ns: dict, inputs: dict) -> dict:
    f = ns["integrate"]
    x, v = _loop_args(inputs)
    steps, dt = inputs["steps"], inputs["dt"]
    direct = _jit(f, static_argnums=2)(x, v, steps, dt)
    batched = _jit(_vmap(lambda a, b: f(a, b, steps, dt)))(_arr(inputs["xb"]), _arr(inputs["vb"]))
    return {"values": {"direct": tuple(direct), "batched": tuple(batched)},
            "counts": _loop_sizes(f, x, v, inputs)}


def probe_loop_zero(ns: dict, inputs: dict) -> dict:
    f = _jit(ns["integrate"], static_argnums=2)
    x, v = _loop_args(inputs)
    return {"values": [tuple(f(x, v, steps, inputs["dt"])) for steps in (0, 1)],
            "counts": _loop_sizes(ns["integrate"], x, v, inputs)}


def probe_loop_size(ns: dict, inputs: dict) -> dict:
    x, v = _loop_args(inputs)
    f = ns["integrate"]
    # The values of the few-step jaxpr's function: a small jaxpr must also integrate.
    values = tuple(_jit(f, static_argnums=2)(x, v, inputs["step_counts"][0], inputs["dt"]))
    return {"counts": _loop_sizes(f, x, v, inputs), "values": values}


def probe_loop_x64(ns: dict, inputs: dict) -> dict:
    with _enable_x64(True):
        x, v = _loop_args(inputs)
        values = tuple(np.asarray(a) for a in _jit(ns["integrate"], static_argnums=2)(
            x, v, inputs["steps"], inputs["dt"]))
        return {"values": values, "counts": _loop_sizes(ns["integrate"], x, v, inputs)}


# ps3.method -------------------------------------------------------------------------------------


def _normaliser(cls: Any, spec: list, dtype: str = "float32") -> Any:
    mean, scale, clip = spec
    return cls(_arr(mean, dtype), _arr(scale, dtype), clip)


def probe_method_mutation(ns: dict, inputs: dict) -> list:
    dtype = inputs.get("dtype", "float32")
    x = _arr(inputs["x"], dtype)
    obj = _normaliser(ns["Normaliser"], inputs["specs"][0], dtype)
    results = [obj.apply(x)]
    for mean, scale, clip in inputs["specs"][1:]:
        obj.mean, obj.scale, obj.clip = _arr(mean, dtype), _arr(scale, dtype), clip
        results.append(obj.apply(x))
    return results


def probe_method_compiles(ns: dict, inputs: dict) -> dict:
    cls = ns["Normaliser"]
    dtype = inputs.get("dtype", "float32")
    apply = cls.apply
    size = getattr(apply, "_cache_size", None)
    if size is None:
        return {"jitted": False, "added": [], "values": []}
    # A shape no other probe uses, so the cache holds no entry for it yet.
    x = _arr([inputs["x"]], dtype)
    added, values = [], []
    for spec in inputs["specs"]:
        before = size()
        values.append(_normaliser(cls, spec, dtype).apply(x))
        added.append(size() - before)
    return {"jitted": True, "added": added, "values": values}


def _described(leaf: Any) -> list:
    """A leaf that jax.tree.map made a jax.ShapeDtypeStruct, as plain data (anything else: its
    type's name)."""
    if isinstance(leaf, _ShapeDtypeStruct):
        return [list(leaf.shape), str(leaf.dtype)]
    return [type(leaf).__name__]


def probe_method_pytree(ns: dict, inputs: dict) -> dict:
    cls = ns["Normaliser"]
    dtype = inputs.get("dtype", "float32")
    x = _arr(inputs["x"], dtype)
    leaves, described, values = [], [], []
    for k in inputs["pytree_specs"]:
        obj = _normaliser(cls, inputs["specs"][k], dtype)
        leaves.append(list(_tree_leaves(obj)))
        # A map whose results are not arrays: unflatten must take them as they are.
        shapes = _tree_map(lambda a: _ShapeDtypeStruct(a.shape, a.dtype), obj)
        described.append([_described(leaf) for leaf in _tree_leaves(shapes)])
        doubled = _tree_map(lambda a: a * 2.0, obj)
        values.append(doubled.apply(x))
    return {"leaves": leaves, "described": described, "values": values}


def probe_method_vmap(ns: dict, inputs: dict) -> Any:
    cls = ns["Normaliser"]
    dtype = inputs.get("dtype", "float32")
    mean, scale, clip = inputs["batched"]
    batch = cls(_arr(mean, dtype), _arr(scale, dtype), clip)
    return _jit(_vmap(lambda n, x: n.apply(x)))(batch, _arr(inputs["xb"], dtype))


# ps3.placement ----------------------------------------------------------------------------------


def _build_batch(spec: Any, make: Any) -> Any:
    """A pytree from its plain description: None, a dict, a list, or {"array": values}."""
    if spec is None:
        return None
    if isinstance(spec, dict):
        if "array" in spec:
            return make(_np(spec["array"], spec.get("dtype", "float32")))
        return {k: _build_batch(v, make) for k, v in spec.items()}
    return [_build_batch(v, make) for v in spec]


def _describe(batch: Any, placed: Any, device: Any) -> dict:
    leaves = _tree_leaves(placed)
    return {
        "structure": str(_tree_structure(placed)) == str(_tree_structure(batch)),
        "values": [np.asarray(leaf) for leaf in leaves],
        "committed": [bool(leaf.committed) for leaf in leaves],
        "on_device": [leaf.devices() == {device} for leaf in leaves],
        # Committed data pulls the computation to its device.
        "follows": [(leaf * 2.0 + 1.0).devices() == {device} for leaf in leaves],
        "devices": len(_devices()),
    }


def probe_placement_host(ns: dict, inputs: dict) -> dict:
    device = _devices()[inputs.get("device", -1)]
    batch = _build_batch(inputs["batch"], lambda a: a)
    return _describe(batch, ns["put_batch"](batch, device), device)


def probe_placement_moved(ns: dict, inputs: dict) -> dict:
    devices = _devices()
    device = devices[inputs.get("device", -1)]
    other = devices[0] if device != devices[0] else devices[-1]
    # Some leaves committed to the other device, some uncommitted: all must end up on `device`.
    flip = [0]

    def make(a):
        flip[0] += 1
        return _device_put(a, other) if flip[0] % 2 else _device_put(a)

    batch = _build_batch(inputs["batch"], make)
    return _describe(batch, ns["put_batch"](batch, device), device)


# ps3.divide, ps3.safe_log, ps3.log_or_y, ps3.smooth_step -----------------------------------------


def _weighted_grad(f: Any, argnums: Any, weights: np.ndarray) -> Any:
    w = _arr(weights)
    return _jit(_grad(lambda *a: (f(*a) * w).sum(), argnums=argnums))


def probe_divide_jit(ns: dict, inputs: dict) -> Any:
    return _jit(ns["unit"])(_arr(inputs["v"]))


def probe_divide_vmap(ns: dict, inputs: dict) -> list:
    f, v = ns["unit"], _arr(inputs["v"])
    return [_vmap(f)(v), _jit(_vmap(f, in_axes=-2, out_axes=-2))(v)]


def probe_divide_grad(ns: dict, inputs: dict) -> Any:
    return _weighted_grad(ns["unit"], 0, inputs["w"])(_arr(inputs["v"]))


def probe_safe_log_values(ns: dict, inputs: dict) -> Any:
    return _jit(ns["plogp"])(_arr(inputs["p"], inputs.get("dtype", "float32")))


def probe_safe_log_grad(ns: dict, inputs: dict) -> Any:
    p = _arr(inputs["p"], inputs.get("dtype", "float32")).reshape(-1)
    return _jit(_vmap(_grad(ns["plogp"])))(p)


def probe_safe_log_x64(ns: dict, inputs: dict) -> dict:
    with _enable_x64(True):
        return {"values": np.asarray(probe_safe_log_values(ns, inputs)),
                "grads": np.asarray(probe_safe_log_grad(ns, inputs))}


def probe_log_or_y_values(ns: dict, inputs: dict) -> list:
    f = ns["inv_sqrt_or"]
    x, fb = _arr(inputs["x"]), _arr(inputs["fallback"])
    if not inputs.get("vmap", True):  # a fallback with more axes than x: no vmap over x alone
        return [_jit(f)(x, fb)]
    return [_jit(f)(x, fb), _jit(_vmap(f, in_axes=(0, None)))(x, fb)]


def probe_log_or_y_grad(ns: dict, inputs: dict) -> tuple:
    grads = _weighted_grad(ns["inv_sqrt_or"], (0, 1), inputs["w"])
    return tuple(grads(_arr(inputs["x"]), _arr(inputs["fallback"])))


def probe_smooth_step_values(ns: dict, inputs: dict) -> Any:
    return _jit(ns["soft_argmax"])(_arr(inputs["logits"]), inputs["temperature"])


def probe_smooth_step_grad(ns: dict, inputs: dict) -> Any:
    grads = _weighted_grad(ns["soft_argmax"], (0, 1), inputs["w"])
    return tuple(grads(_arr(inputs["logits"]), _arr(inputs["temperature"])))


def probe_smooth_step_vmap(ns: dict, inputs: dict) -> Any:
    f = ns["soft_argmax"]
    return _jit(_vmap(f, in_axes=(-2, None), out_axes=-2))(_arr(inputs["logits"]),
                                                           inputs["temperature"])


# ps3.benchmark ----------------------------------------------------------------------------------


class _SimulatedDevice:
    """A function with a simulated clock: compiling on the first call, transferring host
    (NumPy) arguments, and running asynchronously on an in-order device queue each cost
    simulated seconds, each call its own compute time (``compute_s[k]`` for the k-th call). Its
    result is a pytree (a pair) of pending arrays that become ready at different times: the
    leaf ``slow_leaf`` when the call's computation ends, the other a quarter of the way in. What
    a benchmark reports can then be checked exactly, with no real timing noise."""

    def __init__(self, compile_s: float, compute_s: list, transfer_s: float, dispatch_s: float,
                 start_s: float = 0.0, slow_leaf: int = 1):
        self.compile_s, self.compute_s = compile_s, list(compute_s)
        self.transfer_s, self.dispatch_s = transfer_s, dispatch_s
        self.slow_leaf = slow_leaf
        # A clock that does not start at 0: "now + start" is then not "now - start".
        self.now = start_s
        self.queue_free_at = start_s
        self.calls = 0

    def clock(self) -> float:
        return self.now

    def clock_ns(self) -> int:
        return int(self.now * 1e9)

    def __call__(self, *args: Any) -> tuple:
        self.calls += 1
        host = sum(isinstance(a, np.ndarray) for a in args)
        self.now += host * self.transfer_s + self.dispatch_s
        if self.calls == 1:
            self.now += self.compile_s  # tracing and compiling run on the host, before dispatch
        compute = self.compute_s[(self.calls - 1) % len(self.compute_s)]
        begins = max(self.now, self.queue_free_at)
        self.queue_free_at = begins + compute
        ready = [begins + compute / 4, begins + compute / 4]
        ready[self.slow_leaf] = self.queue_free_at
        return tuple(_PendingResult(self, at) for at in ready)


class _PendingResult:
    def __init__(self, device: _SimulatedDevice, ready_at: float):
        self._device, self._ready_at = device, ready_at

    def block_until_ready(self) -> _PendingResult:
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
    """benchmark with the drawn repeats, then again on a fresh device with its default."""
    benchmark = ns["benchmark"]
    runs = []
    for repeats in (inputs["repeats"], None):
        device = _SimulatedDevice(inputs["compile_s"], inputs["compute_s"],
                                  inputs["transfer_s"], inputs["dispatch_s"],
                                  inputs.get("start_s", 0.0), inputs.get("slow_leaf", 1))
        args = [np.ones(shape, np.float32) for shape in inputs["shapes"]]
        with _simulated_clocks(ns, device):
            result = (benchmark(device, *args) if repeats is None
                      else benchmark(device, *args, repeats=repeats))
        first, steady = result
        runs.append({"first": float(first), "steady": float(steady), "calls": device.calls})
    return {**runs[0], "default_calls": runs[1]["calls"]}


# ps3.donate -------------------------------------------------------------------------------------


def _tree(spec: Any) -> Any:
    return _build_batch(spec, lambda a: _owned(a))


def probe_donate(ns: dict, inputs: dict) -> dict:
    params, velocity, grads = (_tree(inputs[k]) for k in ("params", "velocity", "grads"))
    pointers = {name: [leaf.unsafe_buffer_pointer() for leaf in _tree_leaves(tree)]
                for name, tree in (("params", params), ("velocity", velocity))}
    step = ns["momentum_step"]
    array_type = type(_tree_leaves(params)[0])
    real_delete = array_type.delete
    deletes = [0]

    def counting_delete(self):
        deletes[0] += 1
        return real_delete(self)

    def scalar(value: float) -> Any:  # lr and beta as the case passes them
        return _owned(np.float32(value)) if inputs.get("scalars") == "array" else value

    lr, beta = scalar(inputs["lr"]), scalar(inputs["beta"])
    grads_donated = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # Which arguments the lowered program donates (a jitted step has .lower; a wrapper not).
        if hasattr(step, "lower"):
            text = step.lower(params, velocity, grads, lr, beta).as_text()
            head = text.split("@main(", 1)[1].split(") -> ", 1)[0]
            donors = ["aliasing_output" in a or "buffer_donor" in a for a in head.split("%arg")[1:]]
            first = len(pointers["params"]) + len(pointers["velocity"])
            grads_donated = any(donors[first:first + len(_tree_leaves(grads))])
        array_type.delete = counting_delete
        try:
            new_params, new_velocity = step(params, velocity, grads, lr, beta)
            _block((new_params, new_velocity))
        finally:
            array_type.delete = real_delete
        recompiled = _next_step_compiles(step, inputs, scalar)
    # JAX warns, when it lowers, that an argument was donated which XLA had no output to write
    # into (grads here).
    unusable = [str(w.message)[:200] for w in caught if "not usable" in str(w.message)]
    out_pointers = {leaf.unsafe_buffer_pointer()
                    for leaf in _tree_leaves((new_params, new_velocity))}
    return {
        "params": [np.asarray(leaf) for leaf in _tree_leaves(new_params)],
        "velocity": [np.asarray(leaf) for leaf in _tree_leaves(new_velocity)],
        "deleted": {name: [leaf.is_deleted() for leaf in _tree_leaves(tree)]
                    for name, tree in (("params", params), ("velocity", velocity),
                                       ("grads", grads))},
        "reused": {name: [p in out_pointers for p in ptrs] for name, ptrs in pointers.items()},
        "delete_calls": deletes[0],
        "unusable": unusable,
        "grads_donated": grads_donated,
        "recompiled": recompiled,
    }


def _next_step_compiles(step: Any, inputs: dict, scalar: Any) -> int:
    """Versions a second step with new lr and beta (and fresh trees of the same shapes) added
    to the jitted step's cache; 0 where the step is no jitted function (nothing to count)."""
    size = getattr(step, "_cache_size", None)
    if size is None:
        return 0
    before = size()
    lr, beta = (scalar(v) for v in inputs["next"])
    trees = [_tree(inputs[k]) for k in ("params", "velocity", "grads")]
    _block(step(*trees, lr, beta))
    return size() - before


# ps3.debug_print, ps3.callback ------------------------------------------------------------------


def _printed(run: Any) -> tuple[Any, str]:
    captured = io.StringIO()
    with contextlib.redirect_stdout(captured):
        value = run()
        _effects_barrier()
    return value, captured.getvalue()[:20000]


def probe_debug_print_runtime(ns: dict, inputs: dict) -> list:
    f = _jit(ns["newton_sqrt"], static_argnums=1)
    calls = []
    for a, steps in inputs["calls"]:
        value, text = _printed(lambda a=a, steps=steps: _block(f(_arr(a), steps)))
        calls.append({"value": value, "text": text})
    return calls


def probe_debug_print_vmap(ns: dict, inputs: dict) -> dict:
    f = ns["newton_sqrt"]
    steps = inputs["steps"]
    value, text = _printed(lambda: _block(_jit(_vmap(lambda a: f(a, steps)))(_arr(inputs["a"]))))
    return {"value": value, "text": text}


_HOST_COUNTER = "_probe_host_histogram_counter_"


def _counting_body(*args, **kwargs):
    # Runs as host_histogram's own code (its globals are the notebook's namespace): counts the
    # call, then runs the original code and adds the check's offset to its counts.
    calls, original, offset = _probe_host_histogram_counter_  # noqa: F821 - the notebook's global
    calls[0] += 1
    return original(*args, **kwargs) + offset


@contextlib.contextmanager
def _counting_host(ns: dict, offset: int):
    """Counts the calls of the notebook's ``host_histogram`` function object itself, however the
    student's code reaches it: looked up at call time, bound early (a default argument, a
    ``functools.partial``, a closure) or passed along; each call returns its counts plus
    ``offset`` (an int32 array stays int32), so the result shows whether it came from them."""
    host = ns["host_histogram"]
    calls = [0]
    if not isinstance(host, types.FunctionType) or host.__code__.co_freevars:
        yield calls  # not the given plain function: nothing to count through
        return
    code, scope = host.__code__, host.__globals__
    original = types.FunctionType(code, scope, host.__name__, host.__defaults__)
    original.__kwdefaults__ = host.__kwdefaults__
    scope[_HOST_COUNTER] = (calls, original, np.int32(offset))
    host.__code__ = _counting_body.__code__
    try:
        yield calls
    finally:
        host.__code__ = code
        scope.pop(_HOST_COUNTER, None)


def probe_callback_jit(ns: dict, inputs: dict) -> dict:
    with _counting_host(ns, inputs["offset"]) as calls:
        f = _jit(ns["histogram"], static_argnums=1)
        values = [f(_arr(v), inputs["bins"]) for v in inputs["batch"]]
        _block(values)
    return {"values": values, "host_calls": calls[0]}


def probe_callback_vmap(ns: dict, inputs: dict) -> dict:
    with _counting_host(ns, inputs["offset"]) as calls:
        f, bins = ns["histogram"], inputs["bins"]
        batch, nested = _arr(inputs["batch"]), _arr(inputs["nested"])
        once = _vmap(lambda v: f(v, bins))
        twice = _vmap(_vmap(lambda v: f(v, bins)))
        values = [once(batch), _jit(once)(batch), twice(nested), _jit(twice)(nested)]
        _block(values)
    return {"values": values, "host_calls": calls[0]}


# Checks whose inputs hold every input class (checks._cases) run the probe on each. -------------
for _name in [n for n in globals() if n.startswith("probe_")]:
    globals()[_name] = each_case(globals()[_name])
del _name
