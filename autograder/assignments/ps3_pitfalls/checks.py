"""Hidden checks of ps3_pitfalls (grader side). Each check runs the student's fix under the
transformation that exposes its pitfall; expectations come from real JAX on inputs drawn here.

Inputs come from generators seeded per student and check (the runner's rng): ranks 0 to 4, edge
values (zero steps, rows exactly at a threshold, inputs below a clip threshold, values beyond
every clip, zeros, tiny positive numbers, logits far from zero), float64 under
``jax_enable_x64``, and ``vmap`` and ``grad`` compositions. Checks about how a value is computed
judge that too: compilations of a jitted method, traces of a pure function, leaked tracers,
buffers reused by XLA after donation (and no ``.delete()``), host callbacks called, lines printed
at run time, a second device.
"""

from __future__ import annotations

import re
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from autograder.spec import Assignment, Check, Outcome, Task, Verdict
from autograder.worker import judge

NAME = "ps3_pitfalls"

TASKS = (
    Task("ps3.pure", "leaky_relu(x, slope): a pure function that jit can cache"),
    Task("ps3.loop", "integrate(x, v, steps, dt): the Python loop as a JAX loop primitive"),
    Task("ps3.method", "Normaliser: a pytree class whose jitted method sees mutations"),
    Task("ps3.placement", "put_batch(batch, device): every leaf committed to a device"),
    Task("ps3.divide", "unit(v): traceable normalisation with finite gradients"),
    Task("ps3.safe_log", "plogp(p): p log p with a finite gradient where p <= 0"),
    Task("ps3.log_or_y", "inv_sqrt_or(x, fallback): 1/sqrt(x) or a fallback, finite gradients"),
    Task("ps3.smooth_step", "soft_argmax(logits, temperature): argmax with a usable gradient"),
    Task("ps3.benchmark", "benchmark(f, *args, repeats): first-call and steady-state seconds"),
    Task("ps3.donate", "momentum_step: an update that donates params and velocity"),
    Task("ps3.debug_print", "newton_sqrt(a, steps): prints every iterate at run time"),
    Task("ps3.callback", "histogram(v, bins): a NumPy routine called through pure_callback"),
)

# Every check runs where the student's process has two CPU devices, so that placement can ask for
# one that is not the default. The count must be set before JAX starts its backend; the sandbox
# applies a check's jax_config before the notebook's first cell. All checks share this config,
# so one process per student runs them all; float64 checks turn x64 on around their own calls.
TWO_DEVICES = (("jax_num_cpu_devices", 2),)
TOL = 2.0**-20  # unit(): rows whose sum of squares is at most TOL become zeros


# Reference computations, in real JAX, on the grader's side. --------------------------------------


def _leaky(x, slope):
    return jnp.where(x > 0.0, x, slope * x)


def _integrate(x, v, steps, dt):
    for i in range(steps):
        force = -x + 0.5 * jnp.sin(i * dt)
        v = v + dt * force
        x = x + dt * v
    return x, v


def _normalise(x, mean, scale, clip):
    z = (x - mean) / scale
    return z if clip is None else jnp.clip(z, -clip, clip)


def _unit(v):
    sq = jnp.sum(v * v, axis=-1, keepdims=True)
    ok = sq > TOL
    return jnp.where(ok, v / jnp.sqrt(jnp.where(ok, sq, 1.0)), 0.0)


def _plogp(p):
    ok = p > 0.0
    return jnp.where(ok, p * jnp.log(jnp.where(ok, p, 1.0)), 0.0)


def _inv_sqrt_or(x, fallback):
    ok = x > 0.0
    return jnp.where(ok, 1.0 / jnp.sqrt(jnp.where(ok, x, 1.0)), fallback)


def _soft_argmax(logits, temperature):
    return jax.nn.softmax(logits / temperature, axis=-1)


def _weighted_grad(f, argnums, w, *args):
    g = jax.grad(lambda *a: (f(*a) * w).sum(), argnums=argnums)(*args)
    return tuple(np.asarray(x) for x in g) if isinstance(g, tuple) else np.asarray(g)


def _newton_iterates(a: np.float32, steps: int) -> tuple[list[float], np.ndarray]:
    """The value of x at the start of every iteration, and the result, in float32."""
    x, seen = jnp.float32(a), []
    for _ in range(steps):
        seen.append(np.float32(x))
        x = 0.5 * (x + a / x)
    return seen, np.asarray(x)


def _host_histogram(v, bins):
    counts, _ = np.histogram(np.asarray(v), bins=bins, range=(0.0, 1.0))
    return counts.astype(np.int32)


# Input generators. ------------------------------------------------------------------------------


def _f32(v, dtype="float32"):
    return np.asarray(v, dtype)


def _shape(rng: np.random.Generator, rank: int, low: int = 1, high: int = 4) -> tuple:
    return tuple(int(n) for n in rng.integers(low, high + 1, rank))


def _values(rng, shape, low=-3.0, high=3.0, dtype="float32") -> list:
    return rng.uniform(low, high, shape).astype(dtype).tolist()


def _with_edges(rng, shape, edges, low, high, dtype="float32") -> list:
    """Random values of ``shape`` with every edge value written at random positions."""
    flat = rng.uniform(low, high, int(np.prod(shape, dtype=int))).astype(dtype)
    spots = rng.permutation(flat.size)[:len(edges)]
    flat[spots] = np.asarray(edges, dtype)[:len(spots)]
    return flat.reshape(shape).tolist()


def _leaf(values, dtype="float32") -> dict:
    return {"array": values, "dtype": dtype}


def _cases(cases: list) -> dict:
    """Inputs that hold every input class of a check: ``cases`` (one dict per class, each with
    a ``case`` naming it) and, at the top level, the first case's keys (for reproducers). Probes
    run every case (probe_helpers.each_case); _check's expectation and judge follow them
    (judge.expect_each, judge.judge_each)."""
    return {**cases[0], "cases": cases}


def _slopes(rng) -> list[float]:
    """One slope of every class the text's "every slope" holds, in a random order: in (0, 1),
    above 1 (where max(x, slope * x) picks the wrong branch), negative, and exactly 0 and 1."""
    slopes = [rng.uniform(0.05, 0.95), rng.uniform(1.25, 4.0), rng.uniform(-3.0, -0.05), 0.0, 1.0]
    return [float(np.float32(s)) for s in rng.permutation(slopes)]


def _case_pure(rng, rank, dtype="float32", repeat=False):
    slopes = _slopes(rng)
    if repeat:  # a slope seen before, between new ones: no result may be remembered by value
        slopes = [slopes[0], slopes[1], slopes[0], slopes[2], slopes[1], *slopes[3:]]
    x = _with_edges(rng, _shape(rng, rank, 2, 4) if rank else (), [0.0, -1.0], -3, 3)
    if rank == 0:
        x = float(rng.choice([-1.5, -0.5, 0.75, 2.0]))  # a scalar either side of 0
    return {"case": f"rank {rank}, {dtype}" + (", repeated slopes" if repeat else ""), "x": x,
            "slopes": slopes, "dtype": dtype}


def _inputs_pure(rng, dtypes=("float16", "bfloat16")):
    # Classes: x of rank 0, 1, 2 and 3 in float32, and in float16 and bfloat16 (the result keeps
    # x's dtype; 0 and negative entries in every array); in every case one slope of each class
    # (_slopes), and slopes repeated between others (memoisation).
    half = [_case_pure(rng, rank, dtype) for rank, dtype in zip((1, 2), dtypes)]
    return _cases([*(_case_pure(rng, r) for r in range(4)), *half,
                   _case_pure(rng, 2, repeat=True)])


def _inputs_pure_grad(rng):
    # ps3.pure's classes in float32 only: the derivative in the slope is a sum over x, which
    # float16 and bfloat16 round in whatever order XLA adds (the student's process compiles
    # with other flags than the grader's), past any tolerance that still means something. The
    # dtype classes are the other ps3.pure checks', where every value is exact.
    return _inputs_pure(rng, dtypes=())


def _inputs_loop(rng, dtype="float32"):
    # Classes: x and v of rank 0, 1, 2 and 3, random step counts and dt, in float32 (float64
    # for ps3.loop.x64).
    return _cases([_case_loop(rng, r, dtype) for r in range(4)])


def _case_loop(rng, rank, dtype):
    shape = _shape(rng, rank, 1, 3)
    batch = (int(rng.integers(2, 4)), *shape)
    return {"x": _values(rng, shape, -1, 1, dtype), "v": _values(rng, shape, -1, 1, dtype),
            "xb": _values(rng, batch, -1, 1), "vb": _values(rng, batch, -1, 1),
            "steps": int(rng.integers(2, 30)), "dt": float(rng.choice([0.05, 0.1, 0.2])),
            "step_counts": [int(rng.integers(3, 12)), 200], "dtype": dtype,
            "case": f"rank {rank}"}


def _inputs_method(rng):
    # Classes: random values of x, and x with values beyond every clip in every column, above
    # +clip and below -clip (an apply that loses clip, or clips one side only, changes them), in
    # float32; random values in float16 and in bfloat16 (apply keeps what StaticNormaliser
    # computes: their dtype). In every case clips of every kind the text allows: None, positive
    # floats and 0.0 (a falsy clip that still clips everything to 0). Each class has its own
    # number of rows, so the compiled versions one class makes are never those the next one asks
    # for (ps3.method.compiles counts them).
    return _cases([_case_method(rng, "random values", rows=(2, 3)),
                   _case_method(rng, "values beyond every clip", rows=(4, 5), beyond=True),
                   _case_method(rng, "float16", rows=(6, 7), dtype="float16"),
                   _case_method(rng, "bfloat16", rows=(8, 9), dtype="bfloat16")])


_BEYOND = (9.0, 12.0)  # |x| here: |x - mean| / scale > 1.5 even for the doubled mean and scale
# The specs of ps3.method.pytree (indices into a case's "specs"): no clip, a positive clip, 0.0.
PYTREE_SPECS = (0, 2, 6)


def _case_method(rng, case, rows, beyond=False, dtype="float32"):
    n = int(rng.integers(3, 7))
    c1, c2 = (float(c) for c in rng.choice([0.5, 0.75, 1.0, 1.5], 2, replace=False))

    def values(count):
        x = rng.uniform(-4, 4, (count, n)).astype(np.float32)
        if beyond:  # in every column, one row far above every clip and another far below
            for col in range(n):
                up, down = rng.permutation(count)[:2]
                x[up, col], x[down, col] = rng.uniform(*_BEYOND), -rng.uniform(*_BEYOND)
        return x.tolist()

    def spec(clip):
        return [_values(rng, (n,), -1, 1), _values(rng, (n,), 0.5, 2.0), clip]

    x = values(int(rng.integers(rows[0], rows[1] + 1)))
    a, b = spec(None), spec(None)
    # New arrays reuse the compiled method; a new clip (static) compiles a new one, 0.0 too.
    specs = [a, b, [*a[:2], c1], [*b[:2], c1], [*a[:2], c2], [*b[:2], None], [*b[:2], 0.0]]
    batch = int(rng.integers(2, 4))
    return {"case": case, "x": x, "specs": specs, "dtype": dtype,
            "pytree_specs": list(PYTREE_SPECS),
            "batched": [_values(rng, (batch, n), -1, 1), _values(rng, (batch, n), 0.5, 2.0), c1],
            "xb": values(batch)}


def _expect_normalised(inputs, specs):
    dtype = inputs.get("dtype", "float32")
    x = _typed(inputs["x"], dtype)
    return [np.asarray(_normalise(x, _typed(m, dtype), _typed(s, dtype), c))
            for m, s, c in specs]


def _expect_method_pytree(i):
    dtype = i.get("dtype", "float32")
    specs = [i["specs"][k] for k in i["pytree_specs"]]
    doubled = [[2.0 * _typed(m, dtype), 2.0 * _typed(s, dtype), c] for m, s, c in specs]
    return {"leaves": [[_f32(m, dtype), _f32(s, dtype)] for m, s, _ in specs],
            "described": [[[[len(m)], dtype], [[len(s)], dtype]] for m, s, _ in specs],
            "values": _expect_normalised(i, doubled)}


_PLACEMENT_DTYPES = ("float32", "int32", "float16", "bool", "uint8")


def _inputs_placement(rng):
    # Classes: a top-level dict (nested lists, None, {}), a top-level list (with [] and a dict),
    # a single leaf; leaves of rank 0 to 3 and of dtypes float32, int32, float16, bool, uint8;
    # the second device and the first (put_batch takes any device).
    def leaf(dtype=None):
        rank = int(rng.integers(0, 4))
        dtype = dtype or str(rng.choice(_PLACEMENT_DTYPES))
        values = rng.uniform(-5, 5, _shape(rng, rank))
        if dtype == "bool":
            values = values > 0
        elif dtype == "uint8":
            values = np.abs(values)
        return _leaf(values.astype(dtype).tolist(), dtype)

    as_dict = {"images": leaf("float32"), "labels": [leaf("int32"), leaf("float16")],
               "mask": None, "empty": {}, "nested": {"w": leaf("bool"), "u": leaf("uint8")}}
    as_list = [leaf(), [], {"a": leaf(), "b": None}, [leaf(), leaf()]]
    return _cases([{"case": "a dict, second device", "batch": as_dict, "device": -1},
                   {"case": "a list, second device", "batch": as_list, "device": -1},
                   {"case": "one leaf, second device", "batch": leaf(), "device": -1},
                   {"case": "a dict, first device", "batch": as_dict, "device": 0},
                   {"case": "a list, first device", "batch": as_list, "device": 0}])


def _inputs_divide(rng):
    # Classes: v of rank 2, 3 and 4, each with a zero row, a row exactly at TOL, a row just above
    # it, a row of 1e-20 and random rows.
    return _cases([_case_divide(rng, r) for r in (2, 3, 4)])


def _case_divide(rng, rank):
    shape = list(_shape(rng, rank, 2, 3))
    shape[-1] = int(rng.integers(3, 5))
    v = rng.uniform(-2, 2, shape).astype(np.float32)
    rows = v.reshape(-1, shape[-1])
    edge_rows = [np.zeros(shape[-1]), np.eye(shape[-1])[0] * 2.0**-10,  # sum of squares == TOL
                 np.eye(shape[-1])[1] * 2.0**-9, np.full(shape[-1], 1e-20)]
    for row, edge in zip(rng.permutation(len(rows))[:len(edge_rows)], edge_rows):
        rows[row] = edge
    return {"v": rows.reshape(shape).tolist(), "w": _values(rng, shape), "case": f"rank {rank}"}


def _case_plogp(rng, rank, dtype):
    tiny = [1e-30, 1e-20] if dtype == "float32" else [1e-300, 1e-200]
    if rank == 0:  # a scalar p > 0 (the edges are in the arrays)
        return {"case": "rank 0", "p": float(rng.uniform(0.05, 2.0)), "dtype": dtype}
    shape = [*_shape(rng, rank - 1, 2, 3), int(rng.integers(8, 11))]
    edges = [0.0, -1.0, -0.0, *tiny, 1.0]
    p = np.asarray(_with_edges(rng, shape, edges, -0.5, 2.0, dtype), dtype)
    rows = p.reshape(-1, shape[-1])
    # Values that expect p log p != 0 in every case: p > 0 away from 0 and 1, at spots no edge uses.
    free = [k for k in range(rows.size) if rows.flat[k] not in edges][:3]
    rows.flat[free] = rng.uniform(0.05, 0.9, len(free)) if len(free) else []
    if len(rows) > 1:  # a row entirely at or below zero
        rows[-1] = np.resize(np.asarray([0.0, -0.0, -1.0, -0.25], dtype), shape[-1])
    return {"case": f"rank {rank}", "p": rows.reshape(shape).tolist(), "dtype": dtype}


def _inputs_plogp(rng, dtype="float32"):
    # Classes: p of rank 0 (p > 0) and ranks 1 to 4 with p = 0, -0.0, p < 0, tiny p > 0, p = 1
    # and p > 0 in every array, and (ranks 2 to 4) a row entirely at or below zero.
    return _cases([_case_plogp(rng, r, dtype) for r in range(5)])


def _case_inv_sqrt(rng, rank, fallback_rank):
    shape = _shape(rng, rank, 2, 3)
    x = _with_edges(rng, shape, [0.0, -1.0, 1e-14, 1.0, -0.0], -1.0, 3.0)
    if fallback_rank <= rank:
        fallback_shape = shape[rank - fallback_rank:]
    else:  # more axes than x: the result takes the fallback's shape
        fallback_shape = (*_shape(rng, fallback_rank - rank, 2, 3), *shape)
    fallback = _values(rng, fallback_shape, -5, 5)
    out_shape = np.broadcast_shapes(shape, fallback_shape)
    # vmap maps x's first axis: only when the fallback has fewer axes than x.
    return {"case": f"x of rank {rank}, fallback of rank {fallback_rank}", "x": x,
            "fallback": fallback, "w": _values(rng, out_shape), "vmap": fallback_rank < rank}


def _inputs_inv_sqrt(rng):
    # Classes: x of rank 1 to 4 (0, -0.0, x < 0, 1e-14, 1 and x > 0 in each) with a scalar
    # fallback, one of x's rank less one, of x's rank, and with more axes than x.
    cases = [_case_inv_sqrt(rng, r, 0) for r in (1, 2, 3, 4)]
    cases += [_case_inv_sqrt(rng, r, r - 1) for r in (2, 3)]
    cases += [_case_inv_sqrt(rng, 2, 2), _case_inv_sqrt(rng, 1, 2)]
    return _cases(cases)


def _inputs_soft_argmax(rng):
    # Classes: logits of rank 1 to 4 with rows far above and below zero (ranks 2 to 4) and a
    # random temperature; the vmap check takes ranks 2 to 4.
    return _cases([_case_soft_argmax(rng, r) for r in (1, 2, 3, 4)])


def _case_soft_argmax(rng, rank):
    shape = list(_shape(rng, rank, 2, 3))
    shape[-1] = int(rng.integers(3, 6))
    temperature = float(np.float32(rng.uniform(0.1, 2.0)))
    logits = rng.uniform(-3, 3, shape).astype(np.float32)
    rows = logits.reshape(-1, shape[-1])
    # Rows far from zero: exp overflows (or underflows to 0 / 0) unless the max is subtracted
    # per row.
    rows[0] = rows[0] * 0.1 + 800.0 * temperature
    if len(rows) > 1:
        rows[-1] = rows[-1] * 0.1 - 800.0 * temperature
    return {"logits": rows.reshape(shape).tolist(), "temperature": temperature,
            "w": _values(rng, shape), "case": f"rank {rank}"}


def _inputs_benchmark(rng):
    # Classes: repeats below the default 5 and above it (a benchmark that bounds repeats by the
    # default, or by anything between, calls f a wrong number of times in one of them), each
    # with the result's slow leaf first and last (a wait on one leaf alone ends early in one of
    # them); each case also runs with repeats left to its default. In every case: two NumPy
    # arguments (copied on every call unless put on the device first), a clock that does not
    # start at 0, compile, copy and compute times in disjoint ranges (no mistake can trade one
    # for another), and calls of different lengths, one of them three times the others (a
    # median, a minimum or one call's time is not the mean).
    return _cases([_case_benchmark(rng, f"repeats {when} the default, slow leaf {slow}",
                                   repeats, slow_leaf)
                   for when, repeats in (("below", (3, 4)), ("above", (6, 7)))
                   for slow, slow_leaf in (("first", 0), ("last", 1))])


def _case_benchmark(rng, case, repeats, slow_leaf):
    repeats = int(rng.choice(repeats))  # never the default
    # Enough for the most calls any case asks for; one steady call three times as long as the
    # others (below every copy time still), so its mean is far from their median.
    compute = rng.uniform(2, 2.5, 1 + 7)
    compute[1 + int(rng.integers(repeats))] *= 3.0
    return {"case": case, "compile_s": float(rng.uniform(20, 40)),
            "compute_s": [float(c) for c in compute], "slow_leaf": slow_leaf,
            "transfer_s": float(rng.uniform(8, 12)), "dispatch_s": 1e-3, "repeats": repeats,
            "start_s": float(rng.uniform(1e3, 1e4)),
            "shapes": [[int(rng.integers(2, 5))] * 2, [int(rng.integers(2, 5))]]}


def _expect_benchmark(i):
    compute, repeats = i["compute_s"], i.get("repeats", 5)
    return {"steady": float(np.mean(compute[1:1 + repeats])) + i["dispatch_s"],
            "first": i["compile_s"] + compute[0] + i["dispatch_s"], "calls": 1 + repeats}


def _inputs_donate(rng, rows=3):
    # Classes: lr and beta as Python floats, and as 0-d arrays (a schedule's); each followed by a
    # second step with new values of the same kind (traced: it compiles nothing new). Each case
    # holds trees with leaves of rank 0 to 3 and a None, the same structure in params, velocity
    # and grads. lr and beta come from disjoint continuous ranges, so they never coincide (a step
    # that swaps them would pass where they do) and no constant a wrapper might pass in their
    # place equals them. Each check and case its own shapes: JAX warns of unusable donations
    # only when it first lowers.
    return _cases([_case_donate(rng, "lr and beta Python floats", rows, "float"),
                   _case_donate(rng, "lr and beta 0-d arrays", rows + 2, "array")])


def _case_donate(rng, case, rows, scalars):
    def tree():
        return {"w": _leaf(_values(rng, (rows, 2))), "b": _leaf(_values(rng, (2,))),
                "layers": [_leaf(_values(rng, ())), _leaf(_values(rng, (2, 1, 2)))],
                "frozen": None}

    lr, lr2 = (float(np.float32(v)) for v in rng.uniform(0.02, 0.3, 2))
    beta, beta2 = (float(np.float32(v)) for v in rng.uniform(0.55, 0.95, 2))
    return {"case": case, "params": tree(), "velocity": tree(), "grads": tree(),
            "lr": lr, "beta": beta, "next": [lr2, beta2], "scalars": scalars}


def _newton_starts(rng, count):
    """``count`` distinct values of a for newton_sqrt, the first not an integer. All are above
    every iteration index (at most 4) and step count (at most 5) a line may show besides x: a
    print of the updated x that also shows the index never shows a as if it were x. The
    non-integer one is not shown by a line that rounds x."""
    values = [float(v) for v in rng.choice(np.arange(6, 60), count, replace=False)]
    values[0] += float(rng.choice([0.25, 0.5, 0.75]))  # exact in float32
    return values


def _inputs_debug_print(rng):
    # One draw holds every class: a first call (it compiles), a new a on the compiled version, a
    # repeated a, and 0 steps (no line); a non-integer a and an integer one, both above every
    # index a line may show. newton_sqrt ignoring steps fails the 0-step call.
    a, b = _newton_starts(rng, 2)
    steps = int(rng.integers(2, 6))
    return {"calls": [[a, steps], [b, steps], [a, steps], [b, 0]]}


def _inputs_debug_print_vmap(rng):
    # Classes: 2 or 3 steps, and 4 or 5 (a newton_sqrt that ignores steps is wrong in one of
    # them); a batch of three values of a in each, one not an integer.
    return _cases([{"case": f"{low} or {low + 1} steps", "a": _newton_starts(rng, 3),
                    "steps": int(rng.integers(low, low + 2))} for low in (2, 4)])


def _inputs_callback(rng):
    # Classes: 2 or 3 bins, and 4 or 5 (a histogram that ignores bins, declaring or asking for a
    # fixed count, is wrong in one of them). In every case: a batch of three vectors, longer than
    # bins (a result declared with v's shape is wrong), one of them holding the right edge 1.0;
    # under vmap also a batch of batches (vmap of vmap). Each class its own vector length and
    # bins, so it compiles its own version. The probe's host_histogram adds ``offset`` to every
    # count it returns: only a result that comes from host_histogram's own calls has it, so a
    # count of calls is never judged without the values those calls gave.
    return _cases([_case_callback(rng, "2 or 3 bins", (2, 3), (5, 6)),
                   _case_callback(rng, "4 or 5 bins", (4, 5), (7, 8))])


def _case_callback(rng, case, bins, lengths):
    n, bins = int(rng.choice(lengths)), int(rng.choice(bins))
    values = rng.uniform(0, 1, (3, n)).astype(np.float32)
    values[0, 0] = 1.0  # numpy puts the right edge in the last bin
    nested = rng.uniform(0, 1, (2, 2, n)).astype(np.float32)
    return {"case": case, "bins": bins, "batch": values.tolist(), "nested": nested.tolist(),
            "offset": int(rng.integers(1, 1000))}


def _host_counts(i, vectors):
    return np.stack([_host_histogram(v, i["bins"]) + np.int32(i["offset"]) for v in vectors])


def _expect_callback_vmap(i):
    batch, nested = np.asarray(i["batch"], np.float32), np.asarray(i["nested"], np.float32)
    by_row = _host_counts(i, nested.reshape(-1, nested.shape[-1]))
    twice = by_row.reshape(*nested.shape[:-1], i["bins"])
    return {"values": [_host_counts(i, batch)] * 2 + [twice] * 2, "min_calls": 4}


# Judges. ----------------------------------------------------------------------------------------


_HALF = ("float16", "bfloat16")


def _low_precision(expected) -> bool:
    if isinstance(expected, dict):
        return any(_low_precision(v) for v in expected.values())
    if isinstance(expected, (list, tuple)):
        return any(_low_precision(v) for v in expected)
    return np.asarray(expected).dtype.name in _HALF


def _judge_typed(expected, outcome):
    """judge.close (values, shapes, dtypes); where the expectation is in float16 or bfloat16, a
    tolerance of their precision: correct code that rounds in another order differs by ulps."""
    if _low_precision(expected):
        return judge.close_scaled(expected, outcome, rtol=2e-2, atol=2e-2)
    return judge.close(expected, outcome)


def _judge_pure_compiles(expected, outcome):
    if failed := judge.raised(outcome):
        return failed
    if outcome.value["traces"] != 1:
        return Verdict(False, f"jit traced leaky_relu {outcome.value['traces']} times for "
                              f"{len(expected)} slopes of the same type; it should trace once")
    return _judge_typed(expected, Outcome(value=outcome.value["values"]))


def _judge_leaks(expected, outcome):
    if failed := judge.raised(outcome):
        return failed
    if outcome.value["leaked"]:
        return Verdict(False, "a tracer escaped the jitted function into a global "
                              f"({outcome.value['message']})")
    # No leak is not enough: the values computed must be right too.
    return _judge_typed(expected, Outcome(value=outcome.value["values"]))


def _unrolled(outcome: Outcome) -> Verdict | None:
    """A failed verdict when integrate's jaxpr grows with steps: Python still unrolls the loop
    (the given integrate_unrolled, or a jit around it: its body is counted inside the nested
    jaxpr). Every ps3.loop check asks this first: the values of an unrolled loop are those of
    the given code, which earn nothing on this task."""
    small, large = outcome.value["counts"]
    if large > small:
        return Verdict(False, f"the jaxpr has {small} equations for a few steps and {large} for "
                              "200 steps (nested jaxprs counted): the loop is still unrolled by "
                              "Python while tracing")
    return None


def _looped(judge_fn):
    def judge_looped(expected, outcome):
        if failed := judge.raised(outcome):
            return failed
        if failed := _unrolled(outcome):
            return failed
        return judge_fn(expected, Outcome(value=outcome.value["values"]))
    return judge_looped


def _judge_loop_size(expected: Any, outcome: Outcome) -> Verdict:
    if failed := judge.raised(outcome):
        return failed
    if failed := _unrolled(outcome):
        return failed
    if outcome.value["counts"][1] > expected["max"]:
        return Verdict(False, f"the jaxpr has {outcome.value['counts'][1]} equations, more than "
                              "a loop body needs")
    # A small jaxpr is not enough: the loop it traces must compute the integration.
    return judge.close(expected["values"], Outcome(value=outcome.value["values"]))


def _judge_soft_grad(expected, outcome):
    if failed := judge.raised(outcome):
        return failed
    got = outcome.value
    if not isinstance(got, (list, tuple)) or len(got) != 2:
        return Verdict(False, "grad with respect to (logits, temperature) is not a pair")
    if not (verdict := _judge_soft(expected["logits"], Outcome(value=got[0]))).passed:
        return verdict
    # d/dT of softmax(logits / T) sums terms of size |w logits| / T**2 that cancel: float32
    # rounding of that sum differs between correct ways of writing it.
    return judge.close(expected["temperature"], Outcome(value=got[1]), rtol=2e-3,
                       atol=expected["atol"])


def _judge_x64(expected, outcome):
    return judge.close(expected, outcome, rtol=1e-11, atol=1e-13)


def _judge_soft(expected, outcome):
    # Logits hundreds of temperatures from zero: dividing by the temperature (or multiplying by
    # its inverse, as XLA may rewrite it) moves z by an ulp of a large number.
    return judge.close(expected, outcome, rtol=2e-3, atol=1e-4)


def _judge_method_compiles(expected, outcome):
    if failed := judge.raised(outcome):
        return failed
    got = outcome.value
    if not got["jitted"]:
        return Verdict(False, "Normaliser.apply is not a jitted function (decorate it with "
                              "@jax.jit)")
    if got["added"] != expected["added"]:
        what = ("new mean and scale arrays recompiled apply: they must be dynamic (children)"
                if any(a and not e for a, e in zip(got["added"], expected["added"]))
                else "a new clip did not compile a new version: clip must be static "
                     "(auxiliary data)")
        return Verdict(False, f"compilations per call {got['added']}: {what}")
    return _judge_typed(expected["values"], Outcome(value=got["values"]))


def _judge_method_pytree(expected, outcome):
    if failed := judge.raised(outcome):
        return failed
    got = outcome.value
    leaves = judge.close(expected["leaves"], Outcome(value=got["leaves"]))
    if not leaves.passed:
        return Verdict(False, "jax.tree.leaves of a Normaliser must be exactly its mean and its "
                              f"scale, in that order, as given ({leaves.message})")
    if got["described"] != expected["described"]:
        return Verdict(False, "jax.tree.map with a function that returns no array (a "
                              "jax.ShapeDtypeStruct per leaf) did not give a Normaliser holding "
                              "those results: tree_unflatten must accept any children")
    return _judge_typed(expected["values"], Outcome(value=got["values"]))


def _judge_placement(expected, outcome):
    if failed := judge.raised(outcome):
        return failed
    got = outcome.value
    if not got["structure"]:
        return Verdict(False, "the result does not have the batch's pytree structure")
    if not all(got["on_device"]):
        return Verdict(False, "some leaves are not on the requested device")
    if not all(got["committed"]):
        return Verdict(False, "some leaves are not committed: JAX may still move them")
    if not all(got["follows"]):
        return Verdict(False, "computations on the result do not run on the requested device")
    return judge.close(expected, Outcome(value=got["values"]))


_REL = 0.01  # the simulated clock is exact; this only absorbs the ways of averaging


def _judge_benchmark(expected, outcome):
    if failed := judge.raised(outcome):
        return failed
    got = outcome.value
    first, steady = got["first"], got["steady"]
    if (got.get("calls"), got.get("default_calls")) != (expected["calls"], 1 + 5):
        return Verdict(False, "f must be called once for the first call, then `repeats` more "
                              "times (repeats=5 when not given)")
    if abs(steady / expected["steady"] - 1) > _REL:
        if steady > expected["steady"]:
            return Verdict(False, "the steady-state time is too large: it includes compilation, "
                                  "copies of NumPy arguments to the device, is not per call, or "
                                  "is not the mean")
        return Verdict(False, "the steady-state time is too small: the results were not waited "
                              "for (block_until_ready), or it is divided by too much")
    if abs(first / expected["first"] - 1) > _REL:
        if first < expected["first"]:
            return Verdict(False, "the first call's time is too small: its whole result was not "
                                  "waited for, or it was not the call that compiled")
        return Verdict(False, "the first call's time is too large: it includes copying the "
                              "arguments to the device")
    return Verdict(True)


def _judge_donate(expected, outcome, *, selective):
    if failed := judge.raised(outcome):
        return failed
    got = outcome.value
    values = judge.close(expected, Outcome(value={"params": got["params"],
                                                  "velocity": got["velocity"]}))
    if not values.passed:
        return values
    if got["recompiled"]:
        return Verdict(False, "a second step with new lr and beta compiled a new version: lr and "
                              "beta must be traced arguments, not static ones")
    if got["delete_calls"]:
        return Verdict(False, f".delete() was called {got['delete_calls']} times: the buffers "
                              "must be donated to XLA, not deleted by hand")
    for name in ("params", "velocity"):
        # XLA may place a small output elsewhere, but a donation it honoured reuses some buffer.
        if not all(got["deleted"][name]) or not any(got["reused"][name]):
            return Verdict(False, f"the {name} buffers were not donated: XLA did not reuse "
                                  "them for the outputs")
    if selective and (any(got["deleted"]["grads"]) or got["unusable"] or got["grads_donated"]):
        return Verdict(False, "more than params and velocity was donated (grads too?); the "
                              "caller still needs grads")
    return Verdict(True)


_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def _numbers(line: str) -> list[float]:
    return [float(m) for m in _NUMBER.findall(line)]


def _shows(line: str, value: float) -> bool:
    return any(abs(n - value) <= 1e-4 * max(1.0, abs(value)) for n in _numbers(line))


def _judge_print_lines(lines: list[str], iterates: list[list[float]], exact: bool) -> str:
    """'' when every iteration printed a line showing its iterates; else what is wrong."""
    if "Tracer" in "\n".join(lines):
        return "a tracer was printed, not a value: format at run time (no f-string)"
    steps = len(iterates)
    if (len(lines) != steps) if exact else not (steps <= len(lines)):
        return f"{steps} iterations printed {len(lines)} lines; each iteration should print one"
    for k, values in enumerate(iterates):
        if not all(any(_shows(line, v) for line in lines) for v in values):
            return f"no line shows the value of x at the start of iteration {k}"
    return ""


def _judge_debug_print_runtime(expected, outcome):
    if failed := judge.raised(outcome):
        return failed
    for i, (call, (iterates, _)) in enumerate(zip(outcome.value, expected)):
        lines = [ln for ln in call["text"].splitlines() if ln.strip()]
        if problem := _judge_print_lines(lines, [[v] for v in iterates], exact=True):
            return Verdict(False, f"jitted call {i + 1}: {problem}")
    return judge.close([r for _, r in expected], Outcome(value=[c["value"] for c in outcome.value]))


def _judge_debug_print_vmap(expected, outcome):
    if failed := judge.raised(outcome):
        return failed
    lines = [ln for ln in outcome.value["text"].splitlines() if ln.strip()]
    if problem := _judge_print_lines(lines, expected["iterates"], exact=False):
        return Verdict(False, f"under vmap: {problem}")
    return judge.close(expected["value"], Outcome(value=outcome.value["value"]))


def _judge_callback(expected, outcome):
    if failed := judge.raised(outcome):
        return failed
    got = outcome.value
    if got["host_calls"] < expected["min_calls"]:
        return Verdict(False, f"host_histogram ran {got['host_calls']} times for "
                              f"{expected['min_calls']} executions: it must be called at run "
                              "time, through jax.pure_callback")
    if not (values := judge.close(expected["values"], Outcome(value=got["values"]))).passed:
        return Verdict(False, "the counts are not those host_histogram's calls returned (the "
                              "hidden test's host_histogram returns its own counts): return "
                              f"the callback's result ({values.message})")
    return values


# The checks. ------------------------------------------------------------------------------------


def _check(id_, task, description, points, cell, inputs, expect, judge_fn=judge.close, blame="",
           probe="", jax_config=TWO_DEVICES):
    # The probe is named after the check id (ps3.loop.size -> probe_loop_size) unless shared.
    return Check(id=id_, task=task, description=description, points=points, grade_cell=cell,
                 probe=probe or "probe_" + id_.removeprefix("ps3.").replace(".", "_"),
                 make_inputs=inputs, expect=judge.expect_each(expect),
                 judge=judge.judge_each(judge_fn),
                 blame=blame,
                 jax_config=jax_config)


def _in_x64(compute):
    with jax.enable_x64(True):
        return compute()


def _typed(values, dtype="float32") -> jax.Array:
    """A JAX array: NumPy's own arithmetic on a bfloat16 array promotes unlike JAX's."""
    return jnp.asarray(np.asarray(values, dtype))


def _x_pure(i):
    return _typed(i["x"], i.get("dtype", "float32"))


def _expect_pure(i):
    return [np.asarray(_leaky(_x_pure(i), s)) for s in i["slopes"]]


def _expect_loop_values(i):
    steps, dt = i["steps"], i["dt"]
    batched = jax.vmap(lambda a, b: _integrate(a, b, steps, dt))(_f32(i["xb"]), _f32(i["vb"]))
    return {"direct": tuple(np.asarray(a) for a in _integrate(_f32(i["x"]), _f32(i["v"]),
                                                               steps, dt)),
            "batched": tuple(np.asarray(a) for a in batched)}


def _expect_debug_print(i):
    return [_newton_iterates(np.float32(a), steps) for a, steps in i["calls"]]


def _expect_debug_print_vmap(i):
    runs = [_newton_iterates(np.float32(a), i["steps"]) for a in i["a"]]
    iterates = [[seen[k] for seen, _ in runs] for k in range(i["steps"])]
    return {"iterates": iterates, "value": np.stack([r for _, r in runs])}


def _expect_donate(i):
    def leaves(name):
        return [_f32(leaf["array"]) for leaf in jax.tree.leaves(
            i[name], is_leaf=lambda t: isinstance(t, dict) and "array" in t)]

    params, velocity, grads = leaves("params"), leaves("velocity"), leaves("grads")
    new_v = [np.float32(i["beta"]) * v + g for v, g in zip(velocity, grads)]
    return {"params": [p - np.float32(i["lr"]) * v for p, v in zip(params, new_v)],
            "velocity": new_v}


def _expect_soft_grad(i):
    w, logits, t = _f32(i["w"]), _f32(i["logits"]), np.float32(i["temperature"])
    g_logits, g_t = _weighted_grad(_soft_argmax, (0, 1), w, logits, t)
    return {"logits": g_logits, "temperature": g_t,
            "atol": float(1e-4 + 1e-6 * np.abs(w * logits).sum() / t**2)}


def _expect_placement(i):
    return [_f32(leaf["array"], leaf["dtype"]) for leaf in jax.tree.leaves(
        i["batch"], is_leaf=lambda t: isinstance(t, dict) and "array" in t)]


CHECKS = (
    _check("ps3.pure.jit", "ps3.pure", "jit(leaky_relu) with a new slope on every call", 1,
           "test_pure", _inputs_pure, _expect_pure, _judge_typed,
           blame="leaky_relu must take everything it uses as arguments; a global is read only "
                 "once, while jit traces"),
    _check("ps3.pure.grad", "ps3.pure", "jit(grad(leaky_relu)) with respect to the slope", 1,
           "test_pure", _inputs_pure_grad,
           lambda i: [np.asarray(jax.grad(lambda s: _leaky(_x_pure(i), s).sum())(s))
                      for s in i["slopes"]], _judge_typed,
           blame="leaky_relu: the slope must be an input that gradients flow through"),
    _check("ps3.pure.compiles", "ps3.pure", "one trace for every slope", 1, "test_pure",
           _inputs_pure, _expect_pure, _judge_pure_compiles,
           blame="leaky_relu: a traced slope reuses the compiled function; a static or "
                 "converted one recompiles for every value"),
    _check("ps3.pure.leaks", "ps3.pure", "jit(leaky_relu) leaves no tracer in a global", 1,
           "test_pure", _inputs_pure, lambda i: np.asarray(_leaky(_x_pure(i), i["slopes"][0])),
           _judge_leaks,
           blame="leaky_relu: store nothing in a global from inside a jitted function"),
    _check("ps3.loop.values", "ps3.loop", "jit(integrate) and jit(vmap(integrate)) match the "
           "unrolled loop", 1, "test_loop", _inputs_loop, _expect_loop_values,
           _looped(judge.close),
           blame="integrate: the loop body, its use of the step index or the number of "
                 "iterations differs from integrate_unrolled"),
    _check("ps3.loop.zero", "ps3.loop", "integrate with 0 and 1 steps", 1, "test_loop",
           _inputs_loop,
           lambda i: [tuple(np.asarray(a) for a in _integrate(_f32(i["x"]), _f32(i["v"]), n,
                                                              i["dt"])) for n in (0, 1)],
           _looped(judge.close),
           blame="integrate: 0 steps must return x and v unchanged, and 1 step must match "
                 "integrate_unrolled's one step (its force uses the step index 0); a loop run "
                 "once too often or too rarely, or an index off by one, fails here first"),
    _check("ps3.loop.size", "ps3.loop", "the jaxpr of integrate does not grow with steps", 2,
           "test_loop", _inputs_loop,
           lambda i: {"max": 60, "values": tuple(np.asarray(a) for a in _integrate(
               _f32(i["x"]), _f32(i["v"]), i["step_counts"][0], i["dt"]))},
           _judge_loop_size,
           blame="integrate: use lax.fori_loop, lax.scan or lax.while_loop so the body is "
                 "traced once"),
    _check("ps3.loop.x64", "ps3.loop", "integrate on float64 inputs stays float64", 1,
           "test_loop", lambda rng: _inputs_loop(rng, "float64"),
           lambda i: _in_x64(lambda: tuple(np.asarray(a) for a in _integrate(
               _f32(i["x"], "float64"), _f32(i["v"], "float64"), i["steps"], i["dt"]))),
           _looped(_judge_x64),
           blame="integrate: on float64 inputs the values must be integrate_unrolled's, in "
                 "float64; a float32 constant, index or cast loses precision, and values off "
                 "by a step (a loop run once too often or too rarely, or an index off by one) "
                 "are wrong in any dtype: compare with ps3.loop.values"),
    _check("ps3.method.mutation", "ps3.method", "Normaliser.apply after mutating every field",
           1, "test_method", _inputs_method,
           lambda i: _expect_normalised(i, i["specs"]), _judge_typed,
           blame="Normaliser: a static self is looked up by identity (or hash), so a mutated "
                 "object reuses a stale compiled method"),
    _check("ps3.method.compiles", "ps3.method",
           "Normaliser.apply is jitted; new arrays reuse it, a new clip recompiles", 2,
           "test_method", _inputs_method,
           lambda i: {"added": [1, 0, 1, 0, 1, 0, 1],
                      "values": [v[None] for v in _expect_normalised(i, i["specs"])]},
           _judge_method_compiles,
           blame="Normaliser: mean and scale are children (dynamic), clip is auxiliary data "
                 "(static), and apply is decorated with @jax.jit"),
    _check("ps3.method.pytree", "ps3.method", "jax.tree.map over a Normaliser", 1,
           "test_method", _inputs_method,
           _expect_method_pytree, _judge_method_pytree, probe="probe_method_pytree",
           blame="Normaliser: tree_flatten returns (mean, scale) as children and clip as aux "
                 "data; tree_unflatten rebuilds them in the same order"),
    _check("ps3.method.vmap", "ps3.method", "jit(vmap) over a batch of Normalisers", 1,
           "test_method", _inputs_method,
           lambda i: np.asarray(jax.vmap(lambda m, s, x: _normalise(x, m, s, i["batched"][2]))(
               *(_typed(a, i.get("dtype", "float32")) for a in (*i["batched"][:2], i["xb"])))),
           _judge_typed,
           blame="Normaliser: unflattening must accept any children (tracers, batched arrays)"),
    _check("ps3.placement.host", "ps3.placement",
           "put_batch(a pytree of NumPy arrays, the second device)", 1, "test_placement",
           _inputs_placement, _expect_placement, _judge_placement,
           blame="put_batch: jax.device_put with a device commits every leaf; default_device "
                 "does not"),
    _check("ps3.placement.moved", "ps3.placement",
           "put_batch(JAX arrays on another device or uncommitted, the second device)", 1,
           "test_placement", _inputs_placement, _expect_placement, _judge_placement,
           blame="put_batch: arrays already on a device must move to the requested one"),
    _check("ps3.divide.jit", "ps3.divide", "jit(unit) at ranks 2 to 4, with zero, tiny and "
           "threshold rows", 1, "test_divide", _inputs_divide,
           lambda i: np.asarray(_unit(_f32(i["v"]))),
           blame="unit: Python if/else needs a concrete value; select with jnp.where, row by "
                 "row along the last axis, zeros where the sum of squares is at most TOL"),
    _check("ps3.divide.vmap", "ps3.divide", "vmap(unit) over axis 0 and jit(vmap) over axis -2",
           1, "test_divide", _inputs_divide,
           lambda i: [np.asarray(_unit(_f32(i["v"])))] * 2,
           blame="unit: normalise along the last axis only"),
    _check("ps3.divide.grad", "ps3.divide", "jit(grad(unit)), zero and threshold rows included",
           1, "test_divide", _inputs_divide,
           lambda i: _weighted_grad(_unit, 0, _f32(i["w"]), _f32(i["v"])),
           blame="unit: the branch not taken must not divide by zero or take sqrt(0) (inner "
                 "jnp.where)"),
    _check("ps3.safe_log.values", "ps3.safe_log", "jit(plogp), p <= 0 and tiny p included", 1,
           "test_safe_log", _inputs_plogp, lambda i: np.asarray(_plogp(_f32(i["p"]))),
           blame="plogp: p log p where p > 0, else 0"),
    _check("ps3.safe_log.grad", "ps3.safe_log", "jit(vmap(grad(plogp))) at 0, below, and tiny p",
           1, "test_safe_log", _inputs_plogp,
           lambda i: np.asarray(jax.vmap(jax.grad(_plogp))(_f32(i["p"]).reshape(-1))),
           blame="plogp: the outer where alone still differentiates log at 0; guard its input, "
                 "and do not clip or shift p where p > 0"),
    _check("ps3.safe_log.x64", "ps3.safe_log", "plogp and its gradient in float64", 1,
           "test_safe_log", lambda rng: _inputs_plogp(rng, "float64"),
           lambda i: _in_x64(lambda: {
               "values": np.asarray(_plogp(_f32(i["p"], "float64"))),
               "grads": np.asarray(jax.vmap(jax.grad(_plogp))(_f32(i["p"], "float64").ravel()))}),
           _judge_x64,
           blame="plogp: part of it is computed in float32; keep the input's dtype"),
    _check("ps3.log_or_y.values", "ps3.log_or_y", "jit(inv_sqrt_or) and vmap, fallback of any "
           "broadcastable rank", 1, "test_log_or_y", _inputs_inv_sqrt,
           lambda i: [np.asarray(_inv_sqrt_or(_f32(i["x"]), _f32(i["fallback"])))]
           * (2 if i["vmap"] else 1),
           blame="inv_sqrt_or: the outer where must choose the fallback where x <= 0, and "
                 "1/sqrt(x) itself (unclipped) where x > 0"),
    _check("ps3.log_or_y.grad", "ps3.log_or_y", "jit(grad(inv_sqrt_or)) in x and fallback", 1,
           "test_log_or_y", _inputs_inv_sqrt,
           lambda i: _weighted_grad(_inv_sqrt_or, (0, 1), _f32(i["w"]), _f32(i["x"]),
                                    _f32(i["fallback"])),
           blame="inv_sqrt_or: guard the input of sqrt with an inner where"),
    _check("ps3.smooth_step.values", "ps3.smooth_step", "jit(soft_argmax), logits far from 0 "
           "included", 1, "test_smooth_step", _inputs_soft_argmax,
           lambda i: np.asarray(_soft_argmax(_f32(i["logits"]), np.float32(i["temperature"]))),
           _judge_soft,
           blame="soft_argmax: softmax of logits / temperature along the last axis, with the "
                 "row's maximum subtracted before exp"),
    _check("ps3.smooth_step.grad", "ps3.smooth_step",
           "jit(grad(soft_argmax)) in the logits and the temperature", 1, "test_smooth_step",
           _inputs_soft_argmax, _expect_soft_grad, _judge_soft_grad,
           blame="soft_argmax: argmax and one_hot have zero gradient; exp without the row's "
                 "maximum subtracted overflows"),
    _check("ps3.smooth_step.vmap", "ps3.smooth_step", "jit(vmap(soft_argmax)) over axis -2", 1,
           "test_smooth_step",
           lambda rng: _cases([_case_soft_argmax(rng, r) for r in (2, 3, 4)]),
           lambda i: np.asarray(_soft_argmax(_f32(i["logits"]), np.float32(i["temperature"]))),
           _judge_soft,
           blame="soft_argmax: normalise along the last axis, whatever the rank"),
    _check("ps3.benchmark.simulated", "ps3.benchmark",
           "benchmark on an instrumented function with a simulated clock", 3, "test_benchmark",
           _inputs_benchmark,
           _expect_benchmark, _judge_benchmark,
           blame="benchmark: device_put the arguments, time the first (compiling) call and "
                 "wait for it, then time repeats calls, waiting for their pytree results",
           probe="probe_benchmark"),
    _check("ps3.donate.xla", "ps3.donate", "params and velocity donated to XLA and reused", 2,
           "test_donate", _inputs_donate, _expect_donate,
           lambda e, o: _judge_donate(e, o, selective=False), probe="probe_donate",
           blame="momentum_step: jax.jit with donate_argnums (or donate_argnames) for params "
                 "and velocity"),
    _check("ps3.donate.only", "ps3.donate", "params and velocity donated, grads kept", 1,
           "test_donate", lambda rng: _inputs_donate(rng, rows=4), _expect_donate,
           lambda e, o: _judge_donate(e, o, selective=True), probe="probe_donate",
           blame="momentum_step: donate params and velocity only; the caller keeps grads"),
    _check("ps3.debug_print.runtime", "ps3.debug_print",
           "jit(newton_sqrt) prints every iterate on every call", 2, "test_debug_print",
           _inputs_debug_print, _expect_debug_print, _judge_debug_print_runtime,
           blame="newton_sqrt: print runs only while tracing; jax.debug.print inside the loop "
                 "body runs at every iteration (with a format string, not an f-string)"),
    _check("ps3.debug_print.vmap", "ps3.debug_print", "jit(vmap(newton_sqrt)) prints every "
           "iterate", 1, "test_debug_print", _inputs_debug_print_vmap,
           _expect_debug_print_vmap, _judge_debug_print_vmap,
           blame="newton_sqrt: print the iterate x at the start of every iteration"),
    _check("ps3.callback.jit", "ps3.callback", "jit(histogram) calls host_histogram every time",
           1, "test_callback", _inputs_callback,
           lambda i: {"values": list(_host_counts(i, i["batch"])),
                      "min_calls": len(i["batch"])},
           _judge_callback,
           blame="histogram: NumPy cannot read a tracer; call host_histogram with "
                 "jax.pure_callback, declaring a (bins,) int32 result"),
    _check("ps3.callback.vmap", "ps3.callback",
           "vmap(histogram), jit(vmap(histogram)) and vmap of vmap", 1,
           "test_callback", _inputs_callback,
           _expect_callback_vmap, _judge_callback,
           blame="histogram: host_histogram takes one vector; batch the call with "
                 "vmap_method='sequential'"),
)

ASSIGNMENT = Assignment(name=NAME, notebook=f"{NAME}.ipynb", tasks=TASKS, checks=CHECKS,
                        # The benchmark task times code with time.perf_counter() or, as its
                        # text offers, timeit.default_timer.
                        extra={"allowed_imports": ("time", "timeit")})
