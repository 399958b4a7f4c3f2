"""Realistic wrong fixes for ps3_pitfalls, one or more per task.

MUTANTS: name -> (description, {solution cell grade_id: the cell's source as the student wrote
it}). Each must lose points on its own task (the solution cell's grade_id is the task id without
its ``ps3.`` prefix) and nowhere else; tests/assignments/test_ps3_pitfalls.py checks both.
DEMO: the mutants that the demo class hands in.
ALTERNATIVES: correct fixes written differently from the reference (scan, while_loop,
register_dataclass, tanh, monotonic clock, ...), same format; each must earn every point of its task, so
the checks do not demand the reference's exact form.
"""

from __future__ import annotations

_PURE_GLOBAL = '''
def shift(x, offset):
    # Reuses the old function: the global is still what is read.
    return shift_impure(x)
'''

_PURE_FLOAT = '''
def shift(x, offset):
    return x + float(offset)
'''

_LOOP_UNROLLED = '''
def relax(x, steps):
    for _ in range(steps):
        x = x + 0.25 * (jnp.roll(x, 1) - 2.0 * x + jnp.roll(x, -1))
    return x
'''

_LOOP_JITTED_UNROLLED = '''
from functools import partial


@partial(jax.jit, static_argnums=1)
def relax(x, steps):
    for _ in range(steps):
        x = x + 0.25 * (jnp.roll(x, 1) - 2.0 * x + jnp.roll(x, -1))
    return x
'''

_LOOP_OFF_BY_ONE = '''
def relax(x, steps):
    def body(i, x):
        return x + 0.25 * (jnp.roll(x, 1) - 2.0 * x + jnp.roll(x, -1))

    return lax.fori_loop(1, steps, body, x)
'''

_METHOD_STATIC_SELF = '''
from functools import partial


class Scaler:
    def __init__(self, factor, enabled):
        self.factor = factor
        self.enabled = enabled

    @partial(jax.jit, static_argnums=0)
    def apply(self, y):
        return self.factor * y if self.enabled else y
'''

_METHOD_STATIC_HASHED = _METHOD_STATIC_SELF + '''
    def __hash__(self):
        return hash((self.factor, self.enabled))

    def __eq__(self, other):
        return isinstance(other, Scaler) and (self.factor, self.enabled) == (
            other.factor, other.enabled)
'''

_METHOD_TEMPLATE = '''
@jax.tree_util.register_pytree_node_class
class Scaler:
    def __init__(self, factor, enabled):
        self.factor = factor
        self.enabled = enabled

    @jax.jit
    def apply(self, y):
        return {apply}

    def tree_flatten(self):
        return {flatten}

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        return cls({unflatten})
'''

_METHOD_ALL_CHILDREN = _METHOD_TEMPLATE.format(
    apply="self.factor * y if self.enabled else y",
    flatten="(self.factor, self.enabled), None", unflatten="*children")

_METHOD_ALL_CHILDREN_WHERE = _METHOD_TEMPLATE.format(
    apply="jnp.where(self.enabled, self.factor * y, y)",
    flatten="(self.factor, self.enabled), None", unflatten="*children")

_METHOD_ALL_AUX = _METHOD_TEMPLATE.format(
    apply="self.factor * y if self.enabled else y",
    flatten="(), (self.factor, self.enabled)", unflatten="*aux_data")

_PLACEMENT_NO_DEVICE = '''
def commit_to(x, device):
    return jax.device_put(x)
'''

_PLACEMENT_DEFAULT_DEVICE = '''
def commit_to(x, device):
    with jax.default_device(device):
        return jnp.asarray(x)
'''

_DIVIDE_PYTHON_IF = '''
def divide(x, y):
    return x / y if y >= 1.0 else 0.0
'''

_DIVIDE_SINGLE_WHERE = '''
def divide(x, y):
    return jnp.where(y >= 1.0, x / y, 0.0)
'''

_DIVIDE_STRICT = '''
def divide(x, y):
    ok = y > 1.0
    return jnp.where(ok, x / jnp.where(ok, y, 1.0), 0.0)
'''

_SAFE_LOG_OUTER_ONLY = '''
def safe_log(x):
    return jnp.where(x > 0.0, jnp.log(x), 0.0)
'''

_SAFE_LOG_NAN_TO_NUM = '''
def safe_log(x):
    return jnp.nan_to_num(jnp.log(x), nan=0.0, neginf=0.0)
'''

_LOG_OR_Y_OUTER_ONLY = '''
def log_or_y(x, y):
    return jnp.where(x > 0.0, jnp.log(x), y)
'''

_LOG_OR_Y_INNER_ONLY = '''
def log_or_y(x, y):
    return jnp.log(jnp.where(x > 0.0, x, 1.0))
'''

_STEP_HARD = '''
def smooth_step(x, temperature):
    return (x > 0.0).astype(jnp.float32)
'''

_STEP_NAIVE = '''
def smooth_step(x, temperature):
    return 1.0 / (1.0 + jnp.exp(-x / temperature))
'''

_STEP_TIMES_TEMPERATURE = '''
def smooth_step(x, temperature):
    return jax.nn.sigmoid(x * temperature)
'''

_BENCH_COMPILES = '''
def benchmark(f, *args, repeats=5):
    args = jax.device_put(args)
    start = time.perf_counter()
    for _ in range(repeats):
        jax.block_until_ready(f(*args))
    return (time.perf_counter() - start) / repeats
'''

_BENCH_NO_WAIT = '''
def benchmark(f, *args, repeats=5):
    args = jax.device_put(args)
    f(*args)
    start = time.perf_counter()
    for _ in range(repeats):
        f(*args)
    return (time.perf_counter() - start) / repeats
'''

_BENCH_TRANSFERS = '''
def benchmark(f, *args, repeats=5):
    jax.block_until_ready(f(*args))
    start = time.perf_counter()
    for _ in range(repeats):
        jax.block_until_ready(f(*args))
    return (time.perf_counter() - start) / repeats
'''

_BENCH_TOTAL = '''
def benchmark(f, *args, repeats=5):
    args = jax.device_put(args)
    jax.block_until_ready(f(*args))
    start = time.perf_counter()
    for _ in range(repeats):
        jax.block_until_ready(f(*args))
    return time.perf_counter() - start
'''

_DONATE_COPY = '''
_update_donating = jax.jit(sgd_update, donate_argnums=0)


def sgd_step(params, grads, lr):
    return _update_donating(jax.tree.map(jnp.copy, params), grads, lr)
'''

_PRINT_PLAIN = '''
def traced_sqrt(x):
    print("x =", x)
    return jnp.sqrt(x)
'''

_PRINT_FSTRING = '''
def traced_sqrt(x):
    jax.debug.print(f"x = {x}")
    return jnp.sqrt(x)
'''

_CALLBACK_DIRECT = '''
def ranks(x):
    return jnp.asarray(host_ranks(x))
'''

_CALLBACK_NO_VMAP_METHOD = '''
def ranks(x):
    return jax.pure_callback(host_ranks, jax.ShapeDtypeStruct(x.shape, jnp.int32), x)
'''

_CALLBACK_WRONG_DTYPE = '''
def ranks(x):
    result = jax.ShapeDtypeStruct(x.shape, x.dtype)
    return jax.pure_callback(host_ranks, result, x, vmap_method="sequential")
'''

MUTANTS: dict[str, tuple[str, dict[str, str]]] = {
    "pure_calls_impure": ("shift still reads the global offset (bug left in)",
                          {"pure": _PURE_GLOBAL}),
    "pure_float_offset": ("float(offset): works eagerly, fails under jit", {"pure": _PURE_FLOAT}),
    "loop_unrolled": ("the Python loop left in (bug left in)", {"loop": _LOOP_UNROLLED}),
    "loop_jit_unrolled": ("jit added around the Python loop: still unrolled",
                          {"loop": _LOOP_JITTED_UNROLLED}),
    "loop_off_by_one": ("fori_loop from 1: one step short", {"loop": _LOOP_OFF_BY_ONE}),
    "method_static_self": ("self marked static (strategy 2): mutations are missed",
                           {"method": _METHOD_STATIC_SELF}),
    "method_static_hashed": ("static self with __hash__/__eq__: an array factor is unhashable",
                             {"method": _METHOD_STATIC_HASHED}),
    "method_all_children": ("enabled as a child: traced, so `if` fails under jit",
                            {"method": _METHOD_ALL_CHILDREN}),
    "method_children_where": ("enabled as a child with jnp.where: right values, no recompile",
                              {"method": _METHOD_ALL_CHILDREN_WHERE}),
    "method_all_aux": ("factor as aux data: static, an array cannot be a cache key",
                       {"method": _METHOD_ALL_AUX}),
    "placement_no_device": ("device_put without the device: uncommitted",
                            {"placement": _PLACEMENT_NO_DEVICE}),
    "placement_default_device": ("jax.default_device: right device, uncommitted",
                                 {"placement": _PLACEMENT_DEFAULT_DEVICE}),
    "divide_python_if": ("Python if on y (bug left in)", {"divide": _DIVIDE_PYTHON_IF}),
    "divide_single_where": ("only the outer where: nan gradient at y = 0",
                            {"divide": _DIVIDE_SINGLE_WHERE}),
    "divide_strict": ("y > 1 instead of y >= 1", {"divide": _DIVIDE_STRICT}),
    "safe_log_outer_only": ("only the outer where (bug left in)",
                            {"safe_log": _SAFE_LOG_OUTER_ONLY}),
    "safe_log_nan_to_num": ("nan_to_num on the output: values fine, gradient not",
                            {"safe_log": _SAFE_LOG_NAN_TO_NUM}),
    "log_or_y_outer_only": ("only the outer where: nan gradient at x = 0",
                            {"log_or_y": _LOG_OR_Y_OUTER_ONLY}),
    "log_or_y_inner_only": ("only the inner where: 0 instead of y",
                            {"log_or_y": _LOG_OR_Y_INNER_ONLY}),
    "smooth_step_hard": ("the comparison left in (bug left in)", {"smooth_step": _STEP_HARD}),
    "smooth_step_naive": ("1 / (1 + exp(-z)) by hand: nan gradient far below 0",
                          {"smooth_step": _STEP_NAIVE}),
    "smooth_step_times_t": ("x * temperature instead of x / temperature",
                            {"smooth_step": _STEP_TIMES_TEMPERATURE}),
    "benchmark_times_compilation": ("no untimed warm-up call: compilation is timed",
                                    {"benchmark": _BENCH_COMPILES}),
    "benchmark_no_wait": ("no block_until_ready: dispatch is timed", {"benchmark": _BENCH_NO_WAIT}),
    "benchmark_transfers": ("no device_put: a copy per timed call",
                            {"benchmark": _BENCH_TRANSFERS}),
    "benchmark_total": ("total instead of per-call time", {"benchmark": _BENCH_TOTAL}),
    "donate_nothing": ("jit without donation", {"donate": "sgd_step = jax.jit(sgd_update)\n"}),
    "donate_a_copy": ("a defensive copy of params is donated, the caller's survive",
                      {"donate": _DONATE_COPY}),
    "donate_wrong_argument": ("grads donated instead of params",
                              {"donate": "sgd_step = jax.jit(sgd_update, donate_argnums=1)\n"}),
    "print_plain": ("print: runs once, while tracing (bug left in)",
                    {"debug_print": _PRINT_PLAIN}),
    "print_fstring": ("jax.debug.print with an f-string: formatted at trace time",
                      {"debug_print": _PRINT_FSTRING}),
    "callback_direct": ("NumPy called on the tracer", {"callback": _CALLBACK_DIRECT}),
    "callback_no_vmap_method": ("pure_callback without vmap_method: fails under vmap",
                                {"callback": _CALLBACK_NO_VMAP_METHOD}),
    "callback_wrong_dtype": ("result declared float32, host returns int32",
                             {"callback": _CALLBACK_WRONG_DTYPE}),
}

DEMO = ("loop_unrolled", "divide_single_where", "benchmark_times_compilation")


ALTERNATIVES: dict[str, tuple[str, dict[str, str]]] = {
    name: ("a correct fix in another form", fills) for name, fills in {
        "loop_scan": {"loop": '''
def relax(x, steps):
    def body(x, _):
        return x + 0.25 * (jnp.roll(x, 1) - 2.0 * x + jnp.roll(x, -1)), None
    return lax.scan(body, x, length=steps)[0]
'''},
        "loop_while": {"loop": '''
def relax(x, steps):
    def body(c):
        i, x = c
        return i + 1, x + 0.25 * (jnp.roll(x, 1) - 2.0 * x + jnp.roll(x, -1))
    return lax.while_loop(lambda c: c[0] < steps, body, (0, x))[1]
'''},
        "method_dataclass": {"method": '''
import dataclasses
from functools import partial

@partial(jax.tree_util.register_dataclass, data_fields=["factor"], meta_fields=["enabled"])
@dataclasses.dataclass
class Scaler:
    factor: jax.Array
    enabled: bool

    @jax.jit
    def apply(self, y):
        return self.factor * y if self.enabled else y
'''},
        "safe_log_inner": {"safe_log": '''
def safe_log(x):
    return jnp.log(jnp.where(x > 0, x, 1.0))
'''},
        "step_tanh": {"smooth_step": '''
def smooth_step(x, temperature):
    return 0.5 * (1 + jnp.tanh(x / (2 * temperature)))
'''},
        "bench_monotonic_median": {"benchmark": '''
import time
def benchmark(f, *args, repeats=5):
    args = [jax.device_put(a) for a in args]
    f(*args).block_until_ready()
    times = []
    for _ in range(repeats):
        t0 = time.monotonic()
        f(*args).block_until_ready()
        times.append(time.monotonic() - t0)
    return float(np.median(times))
'''},
        "bench_block_last": {"benchmark": '''
from time import perf_counter
def benchmark(f, *args, repeats=5):
    args = jax.device_put(args)
    jax.block_until_ready(f(*args))
    t0 = perf_counter()
    for _ in range(repeats):
        out = f(*args)
    out.block_until_ready()
    return (perf_counter() - t0) / repeats
'''},
        "donate_names": {"donate": 'sgd_step = jax.jit(sgd_update, donate_argnames="params")\n'},
        "print_positional": {"debug_print": '''
def traced_sqrt(x):
    jax.debug.print("{}", x)
    return jnp.sqrt(x)
'''},
        "callback_expand": {"callback": '''
def ranks(x):
    result = jax.ShapeDtypeStruct(x.shape, np.int32)
    return jax.pure_callback(host_ranks, result, x, vmap_method="expand_dims")
'''},
    }.items()
}
