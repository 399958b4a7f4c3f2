"""Realistic wrong fixes for ps3_pitfalls, and correct fixes written differently.

MUTANTS: name -> (description, {solution cell grade_id: the cell's source as the student wrote
it}). Each must lose points on its own task, ``TASK[name]``, and nowhere else (the contract
tests, tests/contract/, check it).
DEMO: the mutants that the demo class hands in.
ALTERNATIVES: correct fixes written differently from the reference (scan, while_loop,
register_dataclass, register_pytree_node, logsumexp, perf_counter_ns, donate_argnames, debug.callback,
expand_dims with a batched host function, ...), same format; each must earn every point of its
task, so the checks do not demand the reference's exact form.

All of them obey the grader's cell policy: they import only jax, numpy, math, functools and the
like, and touch no name or attribute that starts with an underscore.
"""

from __future__ import annotations

from pathlib import Path

import yaml

# ps3.pure ---------------------------------------------------------------------------------------

_PURE_STILL_STORES = '''
def leaky_relu(x, slope):
    inputs_seen.append(x)
    return jnp.where(x > 0.0, x, slope * x)
'''

_PURE_GLOBAL_SLOPE = '''
def leaky_relu(x, alpha):
    return jnp.where(x > 0.0, x, slope * x)
'''

_PURE_FLOAT_SLOPE = '''
def leaky_relu(x, slope):
    slope = float(slope)
    return jnp.where(x > 0.0, x, slope * x)
'''

_PURE_STATIC_SLOPE = '''
from functools import partial


@partial(jax.jit, static_argnames="slope")
def leaky_relu(x, slope):
    return jnp.where(x > 0.0, x, slope * x)
'''

_PURE_ZEROS = '''
def leaky_relu(x, slope):
    return jnp.zeros_like(x * slope)
'''

# ps3.loop ---------------------------------------------------------------------------------------

_LOOP_UNROLLED = '''
def integrate(x, v, steps, dt):
    for i in range(steps):
        force = -x + 0.5 * jnp.sin(i * dt)
        v = v + dt * force
        x = x + dt * v
    return x, v
'''

_LOOP_JIT_UNROLLED = '''
from functools import partial


@partial(jax.jit, static_argnums=2)
def integrate(x, v, steps, dt):
    for i in range(steps):
        force = -x + 0.5 * jnp.sin(i * dt)
        v = v + dt * force
        x = x + dt * v
    return x, v
'''

_LOOP_FROM_ONE = '''
def integrate(x, v, steps, dt):
    def body(i, state):
        x, v = state
        v = v + dt * (-x + 0.5 * jnp.sin(i * dt))
        return x + dt * v, v

    return lax.fori_loop(1, steps, body, (x, v))
'''

_LOOP_STUCK_INDEX = '''
def integrate(x, v, steps, dt):
    def body(state, _):
        x, v, i = state
        v = v + dt * (-x + 0.5 * jnp.sin(i * dt))
        x = x + dt * v
        return (x, v, i), None

    (x, v, _), _ = lax.scan(body, (x, v, 0), None, length=steps)
    return x, v
'''

_LOOP_FLOAT32_TIMES = '''
def integrate(x, v, steps, dt):
    def body(state, t):
        x, v = state
        v = v + dt * (-x + 0.5 * jnp.sin(t))
        return (x + dt * v, v), None

    times = jnp.arange(steps, dtype=jnp.float32) * dt
    return lax.scan(body, (x, v), times)[0]
'''

_LOOP_X_FIRST = '''
def integrate(x, v, steps, dt):
    def body(i, state):
        x, v = state
        x = x + dt * v
        v = v + dt * (-x + 0.5 * jnp.sin(i * dt))
        return x, v

    return lax.fori_loop(0, steps, body, (x, v))
'''

# ps3.method -------------------------------------------------------------------------------------

_METHOD_STATIC_SELF = '''
class Normaliser(StaticNormaliser):
    pass
'''

_METHOD_HASHED = '''
from functools import partial


class Normaliser:
    def __init__(self, mean, scale, clip):
        self.mean = mean
        self.scale = scale
        self.clip = clip

    def key(self):
        return (tuple(np.asarray(self.mean).ravel().tolist()),
                tuple(np.asarray(self.scale).ravel().tolist()), self.clip)

    def __hash__(self):
        return hash(self.key())

    def __eq__(self, other):
        return isinstance(other, Normaliser) and self.key() == other.key()

    @partial(jax.jit, static_argnums=0)
    def apply(self, x):
        z = (x - self.mean) / self.scale
        return z if self.clip is None else jnp.clip(z, -self.clip, self.clip)
'''

_METHOD_TEMPLATE = '''
@jax.tree_util.register_pytree_node_class
class Normaliser:
    def __init__(self, mean, scale, clip):
        self.mean = mean
        self.scale = scale
        self.clip = clip

    {decorator}
    def apply(self, x):
        z = (x - self.mean) / self.scale
        return z if self.clip is None else jnp.clip(z, -self.clip, self.clip)

    def tree_flatten(self):
        return {flatten}

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls({unflatten})
'''


def _method(decorator="@jax.jit", flatten="(self.mean, self.scale), self.clip",
            unflatten="*children, aux"):
    return _METHOD_TEMPLATE.format(decorator=decorator, flatten=flatten, unflatten=unflatten)


_METHOD_ZEROS = _method().replace(
    "        z = (x - self.mean) / self.scale\n", "        z = jnp.zeros_like(x - self.mean)\n")

_LOOP_ZEROS = '''
def integrate(x, v, steps, dt):
    def body(i, state):
        return jnp.zeros_like(state[0]), jnp.zeros_like(state[1])

    return lax.fori_loop(0, steps, body, (x, v))
'''


# ps3.placement ----------------------------------------------------------------------------------

_PLACEMENT_DEFAULT_DEVICE = '''
def put_batch(batch, device):
    with jax.default_device(device):
        return jax.tree.map(jnp.asarray, batch)
'''

_PLACEMENT_SKIP_ARRAYS = '''
def put_batch(batch, device):
    def put(leaf):
        if isinstance(leaf, jax.Array):
            return leaf  # already on a device
        return jax.device_put(leaf, device)

    return jax.tree.map(put, batch)
'''

_PLACEMENT_DICT_ONLY = '''
def put_batch(batch, device):
    return {key: jnp.asarray(value, device=device) for key, value in batch.items()}
'''

# ps3.divide -------------------------------------------------------------------------------------

_DIVIDE_PYTHON_IF = '''
def unit(v):
    sq = jnp.sum(v * v, axis=-1, keepdims=True)
    if sq > TOL:
        return v / jnp.sqrt(sq)
    return jnp.zeros_like(v)
'''

_DIVIDE_SINGLE_WHERE = '''
def unit(v):
    sq = jnp.sum(v * v, axis=-1, keepdims=True)
    return jnp.where(sq > TOL, v / jnp.sqrt(sq), 0.0)
'''

_DIVIDE_WHOLE_ARRAY = '''
def unit(v):
    sq = jnp.sum(v * v)
    ok = sq > TOL
    return jnp.where(ok, v / jnp.sqrt(jnp.where(ok, sq, 1.0)), 0.0)
'''

_DIVIDE_CLAMPED = '''
def unit(v):
    norm = jnp.sqrt(jnp.sum(v * v, axis=-1, keepdims=True))
    return v / jnp.maximum(norm, 2.0**-10)
'''

_DIVIDE_AT_LEAST = '''
def unit(v):
    sq = jnp.sum(v * v, axis=-1, keepdims=True)
    ok = sq >= TOL
    return jnp.where(ok, v / jnp.sqrt(jnp.where(ok, sq, 1.0)), 0.0)
'''

# ps3.safe_log -----------------------------------------------------------------------------------

_SAFE_LOG_OUTER_ONLY = '''
def plogp(p):
    return jnp.where(p > 0.0, p * jnp.log(p), 0.0)
'''

_SAFE_LOG_EPSILON = '''
def plogp(p):
    return jnp.where(p > 0.0, p * jnp.log(p + 1e-12), 0.0)
'''

_SAFE_LOG_CLIP = '''
def plogp(p):
    return p * jnp.log(jnp.clip(p, 1e-12, None))
'''

_SAFE_LOG_FLOAT32 = '''
def plogp(p):
    p = jnp.asarray(p, jnp.float32)
    ok = p > 0.0
    return jnp.where(ok, p * jnp.log(jnp.where(ok, p, 1.0)), 0.0)
'''

_SAFE_LOG_XLOGY = '''
def plogp(p):
    return jax.scipy.special.xlogy(p, p)
'''

# ps3.log_or_y -----------------------------------------------------------------------------------

_LOG_OR_Y_OUTER_ONLY = '''
def inv_sqrt_or(x, fallback):
    return jnp.where(x > 0.0, 1.0 / jnp.sqrt(x), fallback)
'''

_LOG_OR_Y_INNER_ONLY = '''
def inv_sqrt_or(x, fallback):
    return 1.0 / jnp.sqrt(jnp.where(x > 0.0, x, 1.0))
'''

_LOG_OR_Y_CLAMPED = '''
def inv_sqrt_or(x, fallback):
    return jnp.where(x > 0.0, lax.rsqrt(jnp.maximum(x, 1e-12)), fallback)
'''

# ps3.smooth_step --------------------------------------------------------------------------------

_STEP_HARD = '''
def soft_argmax(logits, temperature):
    return jax.nn.one_hot(jnp.argmax(logits / temperature, axis=-1), logits.shape[-1])
'''

_STEP_NAIVE_EXP = '''
def soft_argmax(logits, temperature):
    e = jnp.exp(logits / temperature)
    return e / e.sum(axis=-1, keepdims=True)
'''

_STEP_GLOBAL_MAX = '''
def soft_argmax(logits, temperature):
    z = logits / temperature
    e = jnp.exp(z - z.max())
    return e / e.sum(axis=-1, keepdims=True)
'''

_STEP_AXIS_ZERO = '''
def soft_argmax(logits, temperature):
    return jax.nn.softmax(logits / temperature, axis=0)
'''

_STEP_TIMES_T = '''
def soft_argmax(logits, temperature):
    return jax.nn.softmax(logits * temperature, axis=-1)
'''

# ps3.benchmark ----------------------------------------------------------------------------------

_BENCH_COMPILE_IN_STEADY = '''
def benchmark(f, *args, repeats=5):
    args = jax.device_put(args)
    times = []
    for _ in range(repeats + 1):
        start = time.perf_counter()
        jax.block_until_ready(f(*args))
        times.append(time.perf_counter() - start)
    return times[0], sum(times) / len(times)
'''

# The reference's form, and the two wrong solutions the mutation run found surviving
# (benchmarks/README.md), each one line away from it.
_BENCH_CORRECT = '''
def benchmark(f, *args, repeats=5):
    args = jax.device_put(args)
    start = time.perf_counter()
    jax.block_until_ready(f(*args))
    first = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(repeats):
        jax.block_until_ready(f(*args))
    return first, (time.perf_counter() - start) / repeats
'''
_BENCH_ADDS_START = _BENCH_CORRECT.replace("first = time.perf_counter() - start",
                                           "first = time.perf_counter() + start")
_BENCH_DEFAULT_SIX = _BENCH_CORRECT.replace("repeats=5", "repeats=6")

_BENCH_NO_WAIT = '''
def benchmark(f, *args, repeats=5):
    args = jax.device_put(args)
    start = time.perf_counter()
    f(*args)
    first = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(repeats):
        f(*args)
    return first, (time.perf_counter() - start) / repeats
'''

_BENCH_METHOD_BLOCK = '''
def benchmark(f, *args, repeats=5):
    args = jax.device_put(args)
    start = time.perf_counter()
    f(*args).block_until_ready()
    first = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(repeats):
        f(*args).block_until_ready()
    return first, (time.perf_counter() - start) / repeats
'''

_BENCH_TRANSFERS = '''
def benchmark(f, *args, repeats=5):
    start = time.perf_counter()
    jax.block_until_ready(f(*args))
    first = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(repeats):
        jax.block_until_ready(f(*args))
    return first, (time.perf_counter() - start) / repeats
'''

_BENCH_TOTAL = '''
def benchmark(f, *args, repeats=5):
    args = jax.device_put(args)
    start = time.perf_counter()
    jax.block_until_ready(f(*args))
    first = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(repeats):
        jax.block_until_ready(f(*args))
    return first, time.perf_counter() - start
'''

_BENCH_FIRST_UNWAITED = '''
def benchmark(f, *args, repeats=5):
    args = jax.device_put(args)
    start = time.perf_counter()
    out = f(*args)
    first = time.perf_counter() - start
    jax.block_until_ready(out)
    start = time.perf_counter()
    for _ in range(repeats):
        jax.block_until_ready(f(*args))
    return first, (time.perf_counter() - start) / repeats
'''

# ps3.donate -------------------------------------------------------------------------------------

_DONATE_BY_HAND = '''
update = jax.jit(momentum_update)


def momentum_step(params, velocity, grads, lr, beta):
    result = update(params, velocity, grads, lr, beta)
    for leaf in jax.tree.leaves((params, velocity)):
        leaf.delete()
    return result
'''

_DONATE_COPIES = '''
update = jax.jit(momentum_update, donate_argnums=(0, 1))


def momentum_step(params, velocity, grads, lr, beta):
    return update(jax.tree.map(jnp.copy, params), jax.tree.map(jnp.copy, velocity), grads,
                  lr, beta)
'''

# ps3.debug_print --------------------------------------------------------------------------------

_PRINT_TEMPLATE = '''
def newton_sqrt(a, steps):
    def body(i, x):
        {before}
        x = 0.5 * (x + a / x)
        {after}
        return x

    {outside}
    return lax.fori_loop(0, steps, body, a)
'''


def _print(before="pass", after="pass", outside="pass"):
    return _PRINT_TEMPLATE.format(before=before, after=after, outside=outside)


# ps3.callback -----------------------------------------------------------------------------------

_CALLBACK_TEMPLATE = '''
def histogram(v, bins):
    result = jax.ShapeDtypeStruct({shape}, {dtype})
    return jax.pure_callback(lambda u: host_histogram(u, bins), result, v{method})
'''


def _callback(shape="(bins,)", dtype="jnp.int32", method=', vmap_method="sequential"'):
    return _CALLBACK_TEMPLATE.format(shape=shape, dtype=dtype, method=method)


_CALLBACK_DIRECT = '''
def histogram(v, bins):
    return jnp.asarray(host_histogram(v, bins))
'''

_CALLBACK_JNP = '''
def histogram(v, bins):
    counts, _ = jnp.histogram(v, bins=bins, range=(0.0, 1.0))
    return counts.astype(jnp.int32)
'''

MUTANTS: dict[str, tuple[str, dict[str, str]]] = {
    "pure_still_stores": ("slope an argument, but inputs still appended to a global list",
                          {"pure": _PURE_STILL_STORES}),
    "pure_global_slope": ("the argument renamed, so the global slope is still read",
                          {"pure": _PURE_GLOBAL_SLOPE}),
    "pure_float_slope": ("float(slope): fine eagerly, a concretization error under jit",
                         {"pure": _PURE_FLOAT_SLOPE}),
    "pure_static_slope": ("slope made static: a traced slope cannot be a static argument",
                          {"pure": _PURE_STATIC_SLOPE}),
    "pure_zeros": ("pure and traced once, but returns zeros", {"pure": _PURE_ZEROS}),
    "loop_unrolled": ("the Python loop left in (bug left in)", {"loop": _LOOP_UNROLLED}),
    "loop_jit_unrolled": ("jit added around the Python loop: still unrolled",
                          {"loop": _LOOP_JIT_UNROLLED}),
    "loop_from_one": ("fori_loop from 1: one step short, and the index shifted",
                      {"loop": _LOOP_FROM_ONE}),
    "loop_stuck_index": ("scan carrying a step index it never increments",
                         {"loop": _LOOP_STUCK_INDEX}),
    "loop_float32_times": ("scan over float32 times: float64 inputs computed partly in float32",
                           {"loop": _LOOP_FLOAT32_TIMES}),
    "loop_x_first": ("x updated before v: a different integrator", {"loop": _LOOP_X_FIRST}),
    "loop_zeros": ("a fori_loop whose body returns zeros: small jaxpr, wrong values",
                   {"loop": _LOOP_ZEROS}),
    "method_zeros": ("a jitted pytree whose apply returns zeros", {"method": _METHOD_ZEROS}),
    "method_static_self": ("self static, inherited (bug left in)",
                           {"method": _METHOD_STATIC_SELF}),
    "method_hashed": ("static self hashed by value: right values, recompiles for new arrays",
                      {"method": _METHOD_HASHED}),
    "method_clip_child": ("clip a child: traced, so a new clip does not recompile",
                          {"method": _method(flatten="(self.mean, self.scale, self.clip), None",
                                             unflatten="*children")}),
    "method_all_aux": ("every field auxiliary data: arrays are not hashable",
                       {"method": _method(flatten="(), (self.mean, self.scale, self.clip)",
                                          unflatten="*aux")}),
    "method_not_jitted": ("a pytree, but apply is not jitted",
                          {"method": _method(decorator="")}),
    "method_swapped": ("tree_unflatten swaps mean and scale",
                       {"method": _method(unflatten="children[1], children[0], aux")}),
    "method_aux_dropped": ("tree_unflatten ignores the auxiliary data: clip is lost",
                           {"method": _method(unflatten="*children, None")}),
    "placement_default_device": ("jax.default_device: right device, uncommitted (bug left in)",
                                 {"placement": _PLACEMENT_DEFAULT_DEVICE}),
    "placement_no_device": ("device_put without the device",
                            {"placement": "def put_batch(batch, device):\n"
                                          "    return jax.device_put(batch)\n"}),
    "placement_first_device": ("always the first device",
                               {"placement": "def put_batch(batch, device):\n"
                                             "    return jax.device_put(batch, jax.devices()[0])\n"}),
    "placement_skip_arrays": ("JAX arrays left where they are", {"placement": _PLACEMENT_SKIP_ARRAYS}),
    "placement_dict_only": ("a dict comprehension: nested lists, None and {} break",
                            {"placement": _PLACEMENT_DICT_ONLY}),
    "divide_python_if": ("Python if on the sum of squares (bug left in)",
                         {"divide": _DIVIDE_PYTHON_IF}),
    "divide_single_where": ("only the outer where: nan gradient for zero rows",
                            {"divide": _DIVIDE_SINGLE_WHERE}),
    "divide_whole_array": ("sum of squares over the whole array, not per row",
                           {"divide": _DIVIDE_WHOLE_ARRAY}),
    "divide_clamped": ("norm clamped from below: tiny rows are not zeroed",
                       {"divide": _DIVIDE_CLAMPED}),
    "divide_at_least": (">= TOL: the row exactly at the threshold is normalised",
                        {"divide": _DIVIDE_AT_LEAST}),
    "safe_log_outer_only": ("only the outer where (bug left in)",
                            {"safe_log": _SAFE_LOG_OUTER_ONLY}),
    "safe_log_epsilon": ("log(p + 1e-12): wrong gradient for tiny p",
                         {"safe_log": _SAFE_LOG_EPSILON}),
    "safe_log_clip": ("log of p clipped at 1e-12, no where: wrong below 0",
                      {"safe_log": _SAFE_LOG_CLIP}),
    "safe_log_float32": ("cast to float32 first: float64 input loses precision",
                         {"safe_log": _SAFE_LOG_FLOAT32}),
    "safe_log_xlogy": ("xlogy(p, p): nan below 0", {"safe_log": _SAFE_LOG_XLOGY}),
    "log_or_y_outer_only": ("only the outer where (bug left in)",
                            {"log_or_y": _LOG_OR_Y_OUTER_ONLY}),
    "log_or_y_inner_only": ("only the inner where: 1 instead of the fallback",
                            {"log_or_y": _LOG_OR_Y_INNER_ONLY}),
    "log_or_y_clamped": ("x clamped at 1e-12 instead of an inner where: wrong for tiny x",
                         {"log_or_y": _LOG_OR_Y_CLAMPED}),
    "step_hard": ("one_hot of argmax (bug left in)", {"smooth_step": _STEP_HARD}),
    "step_naive_exp": ("exp without the max subtracted: overflow", {"smooth_step": _STEP_NAIVE_EXP}),
    "step_global_max": ("the max of the whole array subtracted, not per row",
                        {"smooth_step": _STEP_GLOBAL_MAX}),
    "step_axis_zero": ("softmax along axis 0", {"smooth_step": _STEP_AXIS_ZERO}),
    "step_times_t": ("logits * temperature", {"smooth_step": _STEP_TIMES_T}),
    "bench_compile_in_steady": ("the compiling call averaged into the steady state",
                                {"benchmark": _BENCH_COMPILE_IN_STEADY}),
    "bench_no_wait": ("no block_until_ready: dispatch is timed", {"benchmark": _BENCH_NO_WAIT}),
    "bench_method_block": ("result.block_until_ready() on a pytree result",
                           {"benchmark": _BENCH_METHOD_BLOCK}),
    "bench_transfers": ("no device_put: a copy per timed call", {"benchmark": _BENCH_TRANSFERS}),
    "bench_total": ("total instead of per-call time", {"benchmark": _BENCH_TOTAL}),
    "bench_first_unwaited": ("the first call timed without waiting for it",
                             {"benchmark": _BENCH_FIRST_UNWAITED}),
    "bench_adds_start": ("the first call's time adds the start instead of subtracting it",
                         {"benchmark": _BENCH_ADDS_START}),
    "bench_default_six": ("repeats defaults to 6, not the task's 5",
                          {"benchmark": _BENCH_DEFAULT_SIX}),
    "donate_nothing": ("jit without donation (bug left in)",
                       {"donate": "momentum_step = jax.jit(momentum_update)\n"}),
    "donate_params_only": ("only params donated",
                           {"donate": "momentum_step = jax.jit(momentum_update, "
                                      "donate_argnums=0)\n"}),
    "donate_everything": ("grads donated too",
                          {"donate": "momentum_step = jax.jit(momentum_update, "
                                     "donate_argnums=(0, 1, 2))\n"}),
    "donate_by_hand": ("the old buffers deleted by hand after the call",
                       {"donate": _DONATE_BY_HAND}),
    "donate_copies": ("copies donated; the caller's buffers survive", {"donate": _DONATE_COPIES}),
    "print_plain": ("print: runs once, while tracing (bug left in)",
                    {"debug_print": _print(before='print("iterate", x)')}),
    "print_fstring": ("jax.debug.print with an f-string: formatted at trace time",
                      {"debug_print": _print(before='jax.debug.print(f"iterate {x}")')}),
    "print_after_update": ("prints the new iterate, not the one the step starts from",
                           {"debug_print": _print(after='jax.debug.print("iterate {}", x)')}),
    "print_once": ("one jax.debug.print outside the loop",
                   {"debug_print": _print(outside='jax.debug.print("start {}", a)')}),
    "callback_direct": ("NumPy called on the tracer (bug left in)",
                        {"callback": _CALLBACK_DIRECT}),
    "callback_input_shape": ("result declared with the input's shape",
                             {"callback": _callback(shape="v.shape")}),
    "callback_float_result": ("result declared float32, host returns int32",
                              {"callback": _callback(dtype="jnp.float32")}),
    "callback_no_vmap_method": ("no vmap_method: fails under vmap",
                                {"callback": _callback(method="")}),
    "callback_expand_dims": ("vmap_method='expand_dims' with a host function of one vector",
                             {"callback": _callback(method=', vmap_method="expand_dims"')}),
    "callback_jnp": ("rewritten with jnp.histogram: host_histogram is never called",
                     {"callback": _CALLBACK_JNP}),
    "bench_ns_median": (("the median of per-call times (perf_counter_ns): the text asks for "
                         "the mean, and calls differ in length"),
                        {"benchmark": '''
import time


def benchmark(f, *args, repeats=5):
    args = [jax.device_put(a) for a in args]
    t0 = time.perf_counter_ns()
    jax.block_until_ready(f(*args))
    first = (time.perf_counter_ns() - t0) / 1e9
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter_ns()
        jax.block_until_ready(f(*args))
        times.append((time.perf_counter_ns() - t0) / 1e9)
    return first, float(np.median(times))
'''}),
}

# The task each mutant is wrong in: it must lose points there, and only there.
TASK = {name: "ps3." + next(iter(cells)) for name, (_, cells) in MUTANTS.items()}

DEMO = ("loop_unrolled", "divide_single_where", "bench_compile_in_steady", "donate_by_hand")


ALTERNATIVES: dict[str, tuple[str, dict[str, str]]] = {
    "pure_min_max": ("max and min instead of where", {"pure": '''
def leaky_relu(x, slope):
    return jnp.maximum(x, 0.0) + slope * jnp.minimum(x, 0.0)
'''}),
    # jax.checking_leaks reports a leak for this one (JAX's own trace cache keeps the branch that
    # closes over the traced slope): ps3.pure.leaks looks at the globals instead.
    "pure_piecewise": ("jnp.piecewise with a branch closing over the slope", {"pure": '''
def leaky_relu(x, slope):
    return jnp.piecewise(x, [x > 0.0], [lambda t: t, lambda t: slope * t])
'''}),
    "loop_scan_index": ("lax.scan over the step indices", {"loop": '''
def integrate(x, v, steps, dt):
    def body(carry, i):
        x, v = carry
        v = v + dt * (-x + 0.5 * jnp.sin(i * dt))
        return (x + dt * v, v), None

    (x, v), _ = lax.scan(body, (x, v), jnp.arange(steps))
    return x, v
'''}),
    "loop_while": ("lax.while_loop with the index in the carry", {"loop": '''
def integrate(x, v, steps, dt):
    def cond(state):
        return state[0] < steps

    def body(state):
        i, x, v = state
        v = v + dt * (-x + 0.5 * jnp.sin(i * dt))
        return i + 1, x + dt * v, v

    _, x, v = lax.while_loop(cond, body, (0, x, v))
    return x, v
'''}),
    "method_dataclass": ("a registered dataclass", {"method": '''
import dataclasses
from functools import partial


@partial(jax.tree_util.register_dataclass, data_fields=["mean", "scale"], meta_fields=["clip"])
@dataclasses.dataclass
class Normaliser:
    mean: jax.Array
    scale: jax.Array
    clip: float | None

    @jax.jit
    def apply(self, x):
        z = (x - self.mean) / self.scale
        if self.clip is None:
            return z
        return jnp.clip(z, -self.clip, self.clip)
'''}),
    "method_register_node": ("jax.tree_util.register_pytree_node with two functions",
                             {"method": '''
class Normaliser:
    def __init__(self, mean, scale, clip):
        self.mean, self.scale, self.clip = mean, scale, clip

    @jax.jit
    def apply(self, x):
        z = (x - self.mean) / self.scale
        return z if self.clip is None else jnp.minimum(jnp.maximum(z, -self.clip), self.clip)


def flatten_normaliser(n):
    return [n.mean, n.scale], n.clip


def unflatten_normaliser(clip, children):
    return Normaliser(children[0], children[1], clip)


jax.tree_util.register_pytree_node(Normaliser, flatten_normaliser, unflatten_normaliser)
'''}),
    "method_object_new": (("a pytree class whose unflatten skips __init__ with object.__new__, "
                           "as JAX's pytree documentation writes it"), {"method": '''
@jax.tree_util.register_pytree_node_class
class Normaliser:
    def __init__(self, mean, scale, clip):
        self.mean, self.scale, self.clip = mean, scale, clip

    @jax.jit
    def apply(self, x):
        z = (x - self.mean) / self.scale
        return z if self.clip is None else jnp.minimum(jnp.maximum(z, -self.clip), self.clip)

    def tree_flatten(self):
        return (self.mean, self.scale), self.clip

    @classmethod
    def tree_unflatten(cls, clip, children):
        obj = object.__new__(cls)
        obj.mean, obj.scale = children
        obj.clip = clip
        return obj
'''}),
    "placement_tree_map": ("device_put leaf by leaf", {"placement": '''
def put_batch(batch, device):
    return jax.tree.map(lambda leaf: jax.device_put(leaf, device), batch)
'''}),
    "divide_norm": ("jnp.linalg.norm of a guarded input", {"divide": '''
def unit(v):
    ok = jnp.sum(v * v, axis=-1, keepdims=True) > TOL
    norm = jnp.linalg.norm(jnp.where(ok, v, 1.0), axis=-1, keepdims=True)
    return jnp.where(ok, v / norm, jnp.zeros_like(v))
'''}),
    "safe_log_product": ("a guarded factor times a guarded log", {"safe_log": '''
def plogp(p):
    positive = p > 0
    return jnp.where(positive, p, 0.0) * jnp.log(jnp.where(positive, p, 1.0))
'''}),
    "log_or_y_rsqrt": ("lax.rsqrt of a guarded input", {"log_or_y": '''
def inv_sqrt_or(x, fallback):
    positive = x > 0
    safe = jnp.where(positive, x, jnp.ones_like(x))
    return jnp.where(positive, lax.rsqrt(safe), fallback)
'''}),
    "step_logsumexp": ("exp(z - logsumexp(z))", {"smooth_step": '''
def soft_argmax(logits, temperature):
    z = logits / temperature
    return jnp.exp(z - jax.nn.logsumexp(z, axis=-1, keepdims=True))
'''}),
    "step_manual_max": ("the row maximum subtracted by hand", {"smooth_step": '''
def soft_argmax(logits, temperature):
    z = logits / temperature
    z = z - lax.stop_gradient(jnp.max(z, axis=-1, keepdims=True))
    e = jnp.exp(z)
    return e / jnp.sum(e, axis=-1, keepdims=True)
'''}),
    "bench_block_last": ("only the last steady call waited for (in-order device queue)",
                         {"benchmark": '''
from time import perf_counter


def benchmark(f, *args, repeats=5):
    args = jax.device_put(args)
    t0 = perf_counter()
    out = jax.block_until_ready(f(*args))
    t1 = perf_counter()
    for _ in range(repeats):
        out = f(*args)
    jax.block_until_ready(out)
    return t1 - t0, (perf_counter() - t1) / repeats
'''}),
    "donate_argnames": ("donate_argnames",
                        {"donate": 'momentum_step = jax.jit(momentum_update, '
                                   'donate_argnames=("params", "velocity"))\n'}),
    "print_debug_callback": ("jax.debug.callback with print", {"debug_print": '''
def newton_sqrt(a, steps):
    def body(i, x):
        jax.debug.callback(lambda value: print("x =", value), x)
        return 0.5 * (x + a / x)

    return lax.fori_loop(0, steps, body, a)
'''}),
    "print_positional": ("jax.debug.print with a positional field in a scan", {"debug_print": '''
def newton_sqrt(a, steps):
    def body(x, _):
        jax.debug.print("{}", x)
        return 0.5 * (x + a / x), None

    return lax.scan(body, a, None, length=steps)[0]
'''}),
    "callback_batched_host": ("expand_dims with a host function that loops over the batch",
                              {"callback": '''
def histogram(v, bins):
    def host(u):
        rows = np.reshape(u, (-1, u.shape[-1]))
        counts = np.stack([host_histogram(row, bins) for row in rows])
        return counts.reshape(u.shape[:-1] + (bins,))

    result = jax.ShapeDtypeStruct((bins,), np.int32)
    return jax.pure_callback(host, result, v, vmap_method="expand_dims")
'''}),
    "callback_bound_early": ("host_histogram bound early, as a default argument and a partial",
                             {"callback": '''
import functools


def histogram(v, bins, host=host_histogram):
    result = jax.ShapeDtypeStruct((bins,), jnp.int32)
    return jax.pure_callback(functools.partial(host, bins=bins), result, v,
                             vmap_method="sequential")
'''}),
}


def _blind(path: Path) -> tuple[dict, dict, dict]:
    """The blind set's wrong solutions and shortcuts (name -> (description, cells)), their tasks,
    and its alternatives, from the file its cells were copied into verbatim."""
    found = yaml.safe_load(path.read_text(encoding="utf-8"))
    wrong = {f"blind_{name}": (w["description"], {w["cell"]: w["source"]})
             for name, w in found["wrong"].items()}
    tasks = {f"blind_{name}": w["task"] for name, w in found["wrong"].items()}
    correct = {f"blind_{name}": (a["description"], {a["cell"]: a["source"]})
               for name, a in found["alternatives"].items()}
    return wrong, tasks, correct


BLIND, BLIND_TASK, BLIND_ALTERNATIVES = _blind(Path(__file__).with_name("blind_2026_12_07.yml"))
