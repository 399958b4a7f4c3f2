"""Hidden checks of ps5_kernels (grader side only).

Inputs are drawn at grading time: arrays of rank 1 to 4 with odd, one-element and empty axes,
float32 and float64, temperatures from 0.1 to 3, values large enough to overflow an exponential
that is not shifted, weights whose shape carries the leading unit axes ``vmap`` gives an
unbatched operand, batch axes at any position (negative too) and nested ``vmap``. Expectations
come from real JAX: ``t * jax.nn.logsumexp(x / t, axis=-1, b=w)`` in float64, its ``vmap``, its
``grad`` and ``jvp``. Checks about how a value is computed read what the probe reports of the
program: which kernel it calls, how many times, and whether it loops.

The input classes a check runs on every grading (one case each, drawn at random within its class;
the checks of one class are listed once; ``benchmarks/input_classes.py ps5_kernels`` prints them):
- ps5.kernel.f32 and .f64, ps5.ffi_call.float32 and .float64: one row (rank 1: the result is a
  scalar), a matrix (rank 2), several leading axes (rank 3 or 4).
- ps5.kernel.odd: odd sizes (rows of 3, 5 or 7, float32); rows of one element (float64).
- ps5.kernel.empty: one row of no element (rank 1); several rows of no element.
- ps5.kernel.w_shape: w of shape (1, n) and of shape (1, 1, n), each with rows of odd and of
  even length, x of rank 2 to 4.
- ps5.ffi_call.narrow: float16 and bfloat16. ps5.ffi_call.w_wider and .x_wider: every pair of a
  narrower and a wider float (float16 and bfloat16 under float32 and float64, float32 under
  float64).
- ps5.vmap.x: x batched at axis 0, at a positive axis past 0, at a negative axis (w unbatched:
  one kernel call, no loop). ps5.vmap.w: w batched alone (float64), and with x (float32: the
  result's dtype is judged, so weights a rule makes up in another dtype than x's show).
- ps5.vmap.nested: each of the nine (outer, inner) mixes of x, w or both batched, under jit.
- ps5.kernel.large: large x / t of both signs (exp overflows unless shifted); rows whose every
  x / t lies far below zero (exp(x / t) underflows: a running maximum that starts anywhere but
  -inf, 0 say, loses the whole row).
- ps5.kernel.refuses: a good call first, then w one weight too long and too short, int32 arrays,
  x float32 with w float64, t < 0 and t = 0; each refusal must be an ffi::Error::InvalidArgument
  (the task names it), not another error code.
- ps5.grad.grad, .jit and .jvp: float64 inputs and float32 inputs (whose derivatives are float32).
- ps5.cuda.lowering: a matrix and an x of three axes, each with three or more float32 rows (x
  larger than w), lowered for a GPU (the CUDA call's operands, x then w, its result's shape, t)
  and for a CPU, and run on the CPU (the CPU branch's values).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from autograder.worker import banned, judge
from autograder.assignments.ps5_kernels.probes import speed_operands
from autograder.spec import Assignment, Check, Outcome, Task, Verdict

# float64, and the CPU as the default device: the C++ kernel has a CPU handler only, so on a machine
# with a GPU the checks (and the notebook, whose first cell sets the same) run it on the CPU; the
# GPU checks put their arrays on the GPU themselves.
X64 = (("jax_enable_x64", True), ("jax_default_device", "cpu"))
TOL = {"float32": (2e-5, 2e-5), "float64": (1e-11, 1e-11),
       # a float16 or bfloat16 result is a float32 one rounded once: half a unit in the last
       # place, and one more unit where rounding twice differs
       "float16": (1e-3, 1e-3), "bfloat16": (8e-3, 8e-3)}
KERNEL, FFI, VMAP, GRAD, CUDA = "ps5.kernel", "ps5.ffi_call", "ps5.vmap", "ps5.grad", "ps5.cuda"

TASKS = (
    Task(KERNEL, "LseRows and LseCheck, the C++ kernel"),
    Task(FFI, "lse_ffi, the ffi_call of the kernel for every floating dtype"),
    Task(VMAP, "lse_vmappable, batching", banned=banned.BATCHING),
    Task(GRAD, "lse, the derivative", banned=banned.DERIVATIVES),
    Task(CUDA, "LseRowsKernel and lse_any, the CUDA kernel and the choice of kernel"),
)


# --- the operation, in real JAX --------------------------------------------------------------
def lse_jax(x, w, t):
    """float64, whatever x's dtype; w holds x.shape[-1] weights in any shape."""
    x = jnp.asarray(x, jnp.float64)
    w = jnp.reshape(jnp.asarray(w, jnp.float64), (-1,))
    return t * jax.nn.logsumexp(x / t, axis=-1, b=w)


def _t(value: float) -> float:
    return float(np.float32(value))  # the attribute is a float32: the kernel sees this t


# --- input makers ----------------------------------------------------------------------------
def _shape(rng, rank: int, *, odd: bool = False, empty: bool = False) -> list[int]:
    # odd: 1, 3, 5 or 7 (every axis, the last one included); otherwise 2, 4, 6 or 8
    sizes = rng.integers(0, 4, size=rank) * 2 + 1 if odd else rng.integers(1, 5, size=rank) * 2
    shape = [int(s) for s in sizes]
    if empty:
        shape[int(rng.integers(rank))] = 0
    return shape


def _arrays(rng, shape, dtype, *, scale=3.0, w_shape=None, offset=0.0):
    n = shape[-1]
    x = (offset + scale * rng.standard_normal(shape)).astype(dtype)
    w = rng.uniform(0.1, 2.0, size=n).astype(dtype)
    if w_shape is not None:
        w = w.reshape(w_shape)
    return x, w


def _kernel_case(kind: str, *, ranks: tuple[int, int] = (1, 5), dtype=None):
    """One kernel call of class ``kind``, x of a rank drawn from ``ranks`` (a range) and of
    ``dtype`` where given (otherwise the kind's own, or either float at random)."""
    def make(rng):
        chosen = dtype or {"f32": np.float32, "f64": np.float64}.get(kind) or (
            np.float32 if rng.integers(2) else np.float64)
        return _kernel_draw(rng, kind, int(rng.integers(*ranks)), chosen)

    return make


def _kernel_draw(rng, kind: str, rank: int, dtype) -> dict:
    t = _t(rng.uniform(0.3, 3.0))
    scale, offset, w_shape = 3.0, 0.0, None
    if kind in ("f32", "f64"):
        shape = _shape(rng, rank)
    elif kind == "odd":  # every axis odd, rows of 3, 5 or 7 elements
        shape = _several_rows(rng, _shape(rng, rank, odd=True))
        shape[-1] = int(rng.choice([3, 5, 7]))
    elif kind == "one":  # rows of one element, the other axes odd
        shape = _several_rows(rng, _shape(rng, rank, odd=True))
        shape[-1] = 1
    elif kind == "empty":  # rows of no element: XLA skips a call whose result is empty
        shape = _shape(rng, rank)
        shape[-1] = 0
    elif kind == "large":
        shape, scale, t = _shape(rng, rank), float(rng.uniform(100, 300)), _t(0.1)
    elif kind == "below":  # every x / t from -1e4 to -1e3: exp(x / t) underflows
        shape = _shape(rng, rank)
        x = -t * rng.uniform(1e3, 1e4, size=shape)
        w = rng.uniform(0.1, 2.0, size=shape[-1])
        return {"x": x.astype(dtype), "w": w.astype(dtype), "t": t}
    elif kind.startswith(("w_one_lead", "w_two_leads")):  # rows odd or even, as named
        shape = _shape(rng, rank, odd=kind.endswith("_odd"))
        w_shape = [1] * (1 if kind.startswith("w_one_lead") else 2) + [shape[-1]]
    else:  # "precise": float64 rows far from zero, where float32 arithmetic loses digits;
        # x / t is past 800, so that exp(x / t) overflows unless shifted by the row's maximum
        # (from 1e3, an unshifted kernel was right where t was large: 3 seeds of 60).
        shape, dtype, offset = _shape(rng, rank), np.float64, float(rng.uniform(2.5e3, 1e4))
    x, w = _arrays(rng, shape, dtype, scale=scale, w_shape=w_shape, offset=offset)
    return {"x": x, "w": w, "t": t}


def _several_rows(rng, shape: list[int]) -> list[int]:
    """``shape`` with more rows than its first axis holds, where it has rank 3 or more: odd
    shapes draw axes of size 1, and a kernel that takes the rows from the first axis is right
    on (3, 1, 5)."""
    if len(shape) >= 3 and int(np.prod(shape[1:-1])) == 1:
        shape[1] = int(rng.choice([3, 5, 7]))
    return shape


def _cases(*named):
    """A case matrix: ``named`` holds (class name, input maker) pairs; every class is drawn on
    every grading, in this order, its values at random."""
    def make(rng):
        return {"cases": [dict(maker(rng), case=name) for name, maker in named]}

    return make


# Ranks as classes: one row (the result is a scalar), the rows of a matrix, several leading axes.
RANK_CLASSES = (("one row (rank 1)", (1, 2)), ("a matrix (rank 2)", (2, 3)),
                ("several leading axes (rank 3 or 4)", (3, 5)))


def _kernel_ranks(kind: str):
    return _cases(*((name, _kernel_case(kind, ranks=ranks)) for name, ranks in RANK_CLASSES))


# Several leading axes, for the checks whose classes are not ranks: x of rank 3 or 4, with more
# rows than its first axis holds. A kernel that takes the rows from x's first axis is right
# where x has rank 1 or 2: drawn at ranks 1 to 4, .odd, .empty, .large and .precise passed it
# at 27, 18, 17 and 31 seeds of 60. Now it fails each, every grading.
SEVERAL = (3, 5)

# The classes of each kernel check's case matrix, each named as its failure message says.
KERNEL_MATRICES = {
    "f32": _kernel_ranks("f32"),
    "f64": _kernel_ranks("f64"),
    "odd": _cases(("odd sizes, float32", _kernel_case("odd", ranks=SEVERAL, dtype=np.float32)),
                  ("rows of one element, float64",
                   _kernel_case("one", ranks=SEVERAL, dtype=np.float64))),
    "empty": _cases(("one row of no element (rank 1), float64",
                     _kernel_case("empty", ranks=(1, 2), dtype=np.float64)),
                    ("several rows of no element, float32",
                     _kernel_case("empty", ranks=SEVERAL, dtype=np.float32))),
    # Each kind of large x in each dtype: a kernel that stores its result as a float passed
    # when both cases drew float32 (12 seeds of 60).
    "large": _cases(*((f"{what}, {name}", _kernel_case(kind, ranks=SEVERAL, dtype=dtype))
                      for kind, what in (
                          ("large", "large x / t of both signs"),
                          ("below", "rows wholly far below zero, where exp(x / t) underflows"))
                      for name, dtype in (("float32", np.float32), ("float64", np.float64)))),
    # Both row parities for each w, and several rows, every grading: a kernel that drops an odd
    # row's last element passed when both rows drawn (odd or even at random) were even (48 or
    # 46 of 50), one that takes rows along the first axis whenever x had rank 1.
    "w_shape": _cases(*((f"w of shape {w}, n {parity}", _kernel_case(
        f"{kind}_{parity}", ranks=(2, 5), dtype=dtype))
        for w, kind, dtype in (("(1, n)", "w_one_lead", np.float64),
                               ("(1, 1, n)", "w_two_leads", np.float32))
        for parity in ("odd", "even"))),
}


def _refusals(rng):
    n = int(rng.integers(2, 7))
    x = rng.standard_normal((3, n))
    return {"cases": [
        {"x": x, "w": rng.uniform(0.1, 2.0, size=n), "t": 1.0, "classes": ["a good call"]},
        {"x": x, "w": rng.uniform(0.1, 2.0, size=n + 1), "t": 1.0, "classes": ["w too long"]},
        {"x": x, "w": rng.uniform(0.1, 2.0, size=n - 1), "t": 1.0, "classes": ["w too short"]},
        {"x": x.astype(np.int32), "w": np.ones(n, np.int32), "t": 1.0,
         "classes": ["int32 x and w"]},
        {"x": x.astype(np.float32), "w": np.ones(n, np.float64), "t": 1.0,
         "classes": ["float32 x, float64 w"]},
        {"x": x, "w": np.ones(n), "t": float(-rng.uniform(0.1, 2.0)), "classes": ["t < 0"]},
        {"x": x, "w": np.ones(n), "t": 0.0, "classes": ["t = 0"]},
    ]}


# What a refused call must raise: the status of the ffi::Error::InvalidArgument the task asks
# for, which XLA puts at the head of the error's message.
REFUSAL = "INVALID_ARGUMENT"


_FLOATS = ("float16", "bfloat16", "float32", "float64")


def _ffi_case(kind: str, *, ranks: tuple[int, int] = (1, 5), dtypes=None):
    """One call of lse_ffi. ``kind``: 'float' (x and w of ``dtypes``, a pair of dtype names)
    or 'method' (the vmap_method arguments reach ffi_call)."""
    def make(rng):
        x_dtype, w_dtype = dtypes or (str(rng.choice(_FLOATS[2:])),) * 2
        shape = _shape(rng, int(rng.integers(*ranks)), odd=bool(rng.integers(2)))
        x, w = _arrays(rng, shape, np.float64)
        inputs = {"x": x.astype(jnp.dtype(x_dtype)), "w": w.astype(jnp.dtype(w_dtype)),
                  "t": _t(rng.uniform(0.3, 3.0))}
        if kind == "method":
            methods = ["expand_dims", "broadcast_all", "sequential"]
            inputs["vmap_methods"] = [str(m) for m in rng.permutation(methods)]
        return inputs

    return make


def _ffi_ranks(dtype: str):
    return _cases(*((name, _ffi_case("float", ranks=ranks, dtypes=(dtype, dtype)))
                    for name, ranks in RANK_CLASSES))


def _ffi_pairs(*pairs: tuple[str, str]):
    """x and w of each (x's dtype, w's dtype) pair, one case each."""
    return _cases(*((f"x {x}, w {w}", _ffi_case("float", dtypes=(x, w))) for x, w in pairs))


# Promotion takes the wider of the two: every narrow dtype under float32 and float64, and
# float32 under float64.
WIDER_PAIRS = (("float16", "float32"), ("bfloat16", "float32"), ("float16", "float64"),
               ("bfloat16", "float64"), ("float32", "float64"))
FFI_MATRICES = {
    # Each float dtype: from one case of either dtype, lse_ffi that always asks ffi_call for a
    # float32 result passed this check at 30 seeds of 60 (those that drew float32).
    "method": _cases(*((dtype, _ffi_case("method", dtypes=(dtype, dtype)))
                       for dtype in ("float32", "float64"))),
    "float32": _ffi_ranks("float32"),
    "float64": _ffi_ranks("float64"),
    "narrow": _ffi_pairs(("float16", "float16"), ("bfloat16", "bfloat16")),
    "w_wider": _ffi_pairs(*WIDER_PAIRS),
    "x_wider": _ffi_pairs(*((w, x) for x, w in WIDER_PAIRS)),
}


def _ffi_ints(rng):
    n = int(rng.integers(1, 6))
    x = rng.integers(-5, 5, size=(int(rng.integers(1, 4)), n))
    floats = rng.standard_normal(x.shape)
    return {"t": 1.0, "cases": [
        {"x": x.astype(np.int32), "w": np.ones(n, np.int32), "classes": ["int32 x and w"]},
        {"x": floats.astype(np.float32), "w": np.ones(n, np.int8), "classes": ["an int8 w"]},
        {"x": x.astype(np.int64), "w": np.ones(n, np.float64), "classes": ["an int64 x"]},
        {"x": floats.astype(np.float32), "w": np.ones(n, bool), "classes": ["a bool w"]},
    ]}


def _insert(shape: list[int], axis: int | None, size: int) -> list[int]:
    if axis is None:
        return shape
    position = axis if axis >= 0 else len(shape) + 1 + axis
    return shape[:position] + [size] + shape[position:]


def _vmap_case(levels_of, *, jit: bool = False, dtype=np.float64):
    """One batched call. ``levels_of(rng, rank)`` gives the in_axes of each vmap, from the outer
    one in: [(x's batch axis or None, w's or None), ...], for an unbatched x of rank ``rank``.
    Each level batches 1 to 5 (2 to 5 where it batches w)."""
    def make(rng):
        x_shape = _shape(rng, int(rng.integers(1, 4)), odd=bool(rng.integers(2)))
        w_shape = [x_shape[-1]]
        # A level that batches w batches at least two: over a batch of one, a rule that hands
        # the batched w to the kernel unchanged is right (w holds n weights), and passed
        # ps5.vmap.w at 2 seeds of 60 when both its cases drew a batch of one.
        levels = [(xa, wa, int(rng.integers(1 if wa is None else 2, 6)))
                  for xa, wa in levels_of(rng, len(x_shape))]
        # Build the shapes from the innermost vmap outwards.
        for x_axis, w_axis, size in reversed(levels):
            x_shape = _insert(x_shape, x_axis, size)
            w_shape = _insert(w_shape, w_axis, size)
        x = (3.0 * rng.standard_normal(x_shape)).astype(dtype)
        w = rng.uniform(0.1, 2.0, size=w_shape).astype(dtype)
        return {"x": x, "w": w, "t": _t(rng.uniform(0.3, 3.0)), "jit": jit,
                "in_axes": [[xa, wa] for xa, wa, _ in levels]}

    return make


def _batched(kind: str, rank: int, rng, x_axis: str = "any") -> tuple[int | None, int | None]:
    """The in_axes of one vmap level: ``kind`` 'x', 'w' or 'both' batched; x's batch axis at
    ``x_axis``: 'first' (0), 'positive' (1 to rank), 'negative' or 'any' (where it lands in a
    batched x of rank ``rank`` + 1)."""
    xa = wa = None
    if kind in ("x", "both"):
        xa = {"first": 0, "positive": int(rng.integers(1, rank + 1)),
              "negative": int(rng.integers(-rank - 1, 0)),
              "any": int(rng.integers(-rank - 1, rank + 1))}[x_axis]
    if kind in ("w", "both"):
        wa = int(rng.choice([0, -1, -2]))
    return xa, wa


def _one_level(kind: str, x_axis: str = "any"):
    return lambda rng, rank: [_batched(kind, rank, rng, x_axis)]


def _two_levels(outer: str, inner: str):
    def levels(rng, rank):
        inner_axes = _batched(inner, rank, rng)
        # The outer vmap sees x with the inner batch axis, where the inner level batches x.
        outer_axes = _batched(outer, rank + (inner_axes[0] is not None), rng)
        return [outer_axes, inner_axes]

    return levels


_F32, _F64 = np.float32, np.float64
VMAP_MATRICES = {
    "x": _cases(("x batched at axis 0, float32", _vmap_case(_one_level("x", "first"), dtype=_F32)),
                ("x batched at a positive axis past 0, float64",
                 _vmap_case(_one_level("x", "positive"))),
                ("x batched at a negative axis, float32",
                 _vmap_case(_one_level("x", "negative"), dtype=_F32))),
    "w": _cases(("w batched, x not, float64", _vmap_case(_one_level("w"))),
                ("w and x batched, float32", _vmap_case(_one_level("both"), dtype=_F32))),
    # Every pair of (outer, inner) batched arguments: what the inner level hands the outer
    # one differs in each.
    "nested": _cases(*(
        (f"outer vmap batches {outer}, inner {inner}",
         _vmap_case(_two_levels(outer, inner), jit=True, dtype=(_F32, _F64)[n % 2]))
        for n, (outer, inner) in enumerate(
            (o, i) for o in ("x", "w", "both") for i in ("x", "w", "both")))),
}


def _grad_case(mode: str, dtype=np.float64):
    def make(rng):
        shape = _shape(rng, int(rng.integers(1, 4)), odd=bool(rng.integers(2)))
        x, w = _arrays(rng, shape, dtype)
        if rng.integers(2):
            w = w.reshape([1] * int(rng.integers(1, 3)) + [shape[-1]])
        return {"x": x, "w": w, "t": _t(rng.uniform(0.3, 3.0)), "mode": mode,
                "ct": rng.standard_normal(shape[:-1]), "dx": rng.standard_normal(shape),
                "dw": rng.standard_normal(w.shape)}

    return make


GRAD_CLASSES = {"float64": np.float64, "float32": np.float32}


def _grad_cases(mode: str):
    """Every dtype of GRAD_CLASSES, one case each: x, w, and the cotangent or the tangents
    drawn in that dtype."""
    def make(rng):
        cases = []
        for name, dtype in GRAD_CLASSES.items():
            case = _grad_case(mode, dtype)(rng)
            for key in ("x", "w", "ct", "dx", "dw"):
                case[key] = np.asarray(case[key]).astype(dtype)
            cases.append(dict(case, case=f"{name} inputs"))
        return {"cases": cases}

    return make


def _cuda_case(rank: int):
    # Three or more rows, so that x holds more elements than w and a call that hands the kernel
    # its operands in another order, or one of them only, shows in the lowered call's types.
    def make(rng):
        shape = [int(rng.choice([3, 5, 7]))] + _shape(rng, rank - 1, odd=True)
        x, w = _arrays(rng, shape, np.float32)
        return {"x": x, "w": w, "t": _t(rng.uniform(0.3, 3.0))}

    return make


# A matrix and three axes: the result's shape is x's without its last axis, which for a matrix
# is also x's first axis alone.
CUDA_LOWERING_CASES = _cases(("a matrix of three or more rows", _cuda_case(2)),
                             ("three axes, three or more rows in front", _cuda_case(3)))


def _cuda_values(rng):
    # Three calls: rows across several blocks with lengths across a block's tail, a few short
    # rows, and no rows at all. Each call has rows to write but the last, so a kernel that writes
    # nothing never passes on an empty draw. x stays under the channel's frame (50 x 4099
    # float32 is 0.8 MB).
    scale = float(rng.uniform(1, 100))
    cases = []
    for rows, lengths, named in (
            ([7, 50], [255, 257, 1000, 4099], "rows across several blocks, a block's tail"),
            ([1, 3], [1, 3, 33], "a few short rows"), ([0], [1, 257], "no rows")):
        shape = [int(rng.choice(rows)), int(rng.choice(lengths))]
        x, w = _arrays(rng, shape, np.float32, scale=scale)
        cases.append({"x": x, "w": w, "classes": [named]})
    return {"cases": cases, "t": _t(rng.uniform(0.3, 3.0))}


def expect_cuda_values(inputs):
    return [expect_kernel(dict(case, t=inputs["t"])) for case in inputs["cases"]]


def judge_cuda_values(expected, outcome: Outcome) -> Verdict:
    failed = judge.raised(outcome)
    if failed:
        return failed
    got = outcome.value if isinstance(outcome.value, list) else []
    if len(got) != len(expected):
        return Verdict(False, f"expected the kernel's y for {len(expected)} calls")
    for want, y in zip(expected, got):
        verdict = judge_kernel(want, Outcome(value=y))
        if not verdict.passed:
            return Verdict(False, f"for x with {want.shape[0]} rows: {verdict.message}")
    return Verdict(True)


def _cuda_speed(rng):
    # 64 MiB of operands, too much for a frame: the probe draws them from this seed.
    return {"seed": int(rng.integers(2**31)), "shape": [8192, 2048], "t": 1.0, "repeats": 20}


# --- expectations ----------------------------------------------------------------------------
# Expectations are evaluated under jit: one compilation per drawn shape, where eager dispatch
# compiles each primitive of logsumexp for each new shape (about 17 s of a worker's time per ps5
# notebook, against 4; the values agree to a few float64 ulps, far inside TOL).
_lse = jax.jit(lse_jax)


@jax.jit
def _lse_jvp(x, w, t, dx, dw):
    return jax.jvp(lambda x, w: lse_jax(x, w, t), (x, w), (dx, dw))


@jax.jit
def _lse_grad(x, w, t, ct):
    return jax.grad(lambda x, w: jnp.sum(lse_jax(x, w, t) * ct), argnums=(0, 1))(x, w)


def expect_kernel(inputs):
    x = inputs["x"]
    return np.asarray(_lse(x, inputs["w"], inputs["t"])).astype(x.dtype)


def expect_ffi(inputs):
    dtype = jnp.promote_types(inputs["x"].dtype, inputs["w"].dtype)
    value = np.asarray(_lse(inputs["x"], inputs["w"], inputs["t"]))
    expected = {"value": value.astype(dtype)}
    if inputs.get("vmap_methods"):
        expected["vmap_methods"] = inputs["vmap_methods"]
    return expected


def expect_vmap(inputs):
    t = inputs["t"]

    def g(x, w):
        return lse_jax(x, w, t)

    for x_axis, w_axis in reversed(inputs["in_axes"]):
        g = jax.vmap(g, in_axes=(x_axis, w_axis))
    x = inputs["x"]
    only_x = all(wa is None for _, wa in inputs["in_axes"])
    return {"value": np.asarray(jax.jit(g)(x, inputs["w"])).astype(x.dtype), "one_call": only_x}


def expect_grad(inputs):
    """In float64 whatever the dtype; the result has the inputs' dtype, as JAX's own
    derivatives of a float32 function are float32."""
    t, x, w = inputs["t"], inputs["x"], inputs["w"]
    dtype = np.asarray(x).dtype
    x64, w64 = np.asarray(x, np.float64), np.asarray(w, np.float64)
    if inputs["mode"] == "jvp":
        y, dy = _lse_jvp(x64, w64, t, np.asarray(inputs["dx"], np.float64),
                         np.asarray(inputs["dw"], np.float64))
        return [np.asarray(y).astype(dtype), np.asarray(dy).astype(dtype)]
    gx, gw = _lse_grad(x64, w64, t, np.asarray(inputs["ct"]))
    return [np.asarray(gx).astype(dtype), np.asarray(gw).astype(dtype)]


def expect_cuda_lowering(inputs):
    """t as the CUDA call's float32 attribute, the sizes of its operands (x, then w), its
    result's shape, and lse_any's values on a CPU."""
    x, w = inputs["x"], inputs["w"]
    return {"t": _t(inputs["t"]), "operands": [int(x.size), int(w.size)],
            "result": list(x.shape[:-1]),
            "y": np.asarray(lse_jax(x, w, inputs["t"])).astype(x.dtype)}


# --- judges ----------------------------------------------------------------------------------
def judge_kernel(expected, outcome: Outcome) -> Verdict:
    rtol, atol = TOL[expected.dtype.name]
    return judge.close_scaled(expected, outcome, rtol=rtol, atol=atol)


def judge_refusals(expected, outcome: Outcome) -> Verdict:
    failed = judge.raised(outcome)
    if failed:
        return failed
    got = outcome.value if isinstance(outcome.value, list) else []
    if not got or got[0] != "returned":
        return Verdict(False, "the kernel refused a good call")
    got = got[1:]
    labels = ["w with one weight too many", "w with one weight too few", "int32 arrays",
              "x float32 with w float64", "t < 0", "t = 0"]
    for label, what in zip(labels, got + ["returned"] * len(labels)):
        if what == "returned":
            return Verdict(False, f"the kernel returned a result for {label} instead of an "
                                  "ffi::Error::InvalidArgument")
        if what != REFUSAL:
            return Verdict(False, f"the kernel refused {label} with {what}, not with the "
                                  "ffi::Error::InvalidArgument the task asks for")
    return Verdict(True)


def _program(outcome: Outcome) -> tuple[dict | None, Verdict | None]:
    failed = judge.raised(outcome)
    if failed:
        return None, failed
    got = outcome.value
    if not isinstance(got, dict) or not isinstance(got.get("values"), list):
        return None, Verdict(False, "the probe did not get a result")
    return got, None


def _values(expected, values: list) -> Verdict:
    first = expected if isinstance(expected, list) else [expected]
    tol = max(TOL.get(np.asarray(e).dtype.name, TOL["float64"]) for e in first)
    factor = 10 if tol[0] < 1e-3 else 1  # a wide float's result may differ in its last digits
    return judge.close_scaled(first, Outcome(value=values), rtol=tol[0] * factor,
                              atol=tol[1] * factor)


def judge_ffi(expected, outcome: Outcome) -> Verdict:
    got, failed = _program(outcome)
    if failed:
        return failed
    if got.get("calls") != 1 or got.get("loops"):
        return Verdict(False, f"lse_ffi must make exactly one ffi_call of the kernel; the "
                              f"program made {got.get('calls')}")
    if "vmap_methods" in expected and got.get("vmap_methods") != expected["vmap_methods"]:
        return Verdict(False, "the vmap_method argument does not reach ffi_call")
    return _values(expected["value"], got["values"])


def judge_ffi_ints(expected, outcome: Outcome) -> Verdict:
    failed = judge.raised(outcome)
    if failed:
        return failed
    got = outcome.value if isinstance(outcome.value, list) else []
    labels = ["int32 x and w", "an int8 w", "an int64 x", "a bool w"]
    for label, what in zip(labels, got + ["nothing"] * len(labels)):
        if what != "TypeError":
            shown = "returned a program" if what == "returned" else f"raised {what}"
            return Verdict(False, f"lse_ffi with {label} {shown}; a TypeError is expected")
    return Verdict(True)


def judge_vmap(expected, outcome: Outcome) -> Verdict:
    got, failed = _program(outcome)
    if failed:
        return failed
    if expected["one_call"] and (got.get("calls") != 1 or got.get("loops")):
        return Verdict(False, "with only x batched the whole batch must go to one kernel call; "
                              f"the program made {got.get('calls')} call(s) and loops "
                              f"{got.get('loops') or 'none'}")
    if not got.get("calls"):
        return Verdict(False, "the batched program never calls the kernel")
    return _values(expected["value"], got["values"])


def judge_grad(expected, outcome: Outcome) -> Verdict:
    got, failed = _program(outcome)
    if failed:
        return failed
    if not got.get("calls"):
        return Verdict(False, "the forward pass does not call the kernel")
    return _values(expected, got["values"])


def judge_cuda_compiles(expected, outcome: Outcome) -> Verdict:
    failed = judge.raised(outcome)
    if failed:
        return failed
    got = outcome.value if isinstance(outcome.value, dict) else {}
    if not got.get("compiled"):
        return Verdict(False, "nvcc could not compile LSE_CU:\n" + str(got.get("message"))[:1500])
    if "LseCuda" not in (got.get("symbols") or []):
        return Verdict(False, "the compiled library does not export the handler LseCuda")
    if not got.get("kernels"):
        return Verdict(False, "LSE_CU defines no __global__ kernel to launch")
    if not got.get("writers"):
        return Verdict(False, "LseRowsKernel stores nothing to global memory (its PTX has no "
                              "st.global), so it never writes y")
    return Verdict(True)


def judge_cuda_lowering(expected, outcome: Outcome) -> Verdict:
    failed = judge.raised(outcome)
    if failed:
        return failed
    got = outcome.value if isinstance(outcome.value, dict) else {}
    target, cuda_target = got.get("target"), got.get("cuda_target")
    if not isinstance(cuda_target, str) or cuda_target == target:
        return Verdict(False, "CUDA_TARGET must be the name cuda_kernel returned")
    request = got.get("cuda_request")
    if not isinstance(request, dict):
        return Verdict(False, "CUDA_TARGET is not a name cuda_kernel returned")
    if request.get("from_lse_cu") is not True:
        return Verdict(False, "CUDA_TARGET was built from another source than LSE_CU")
    if request.get("symbol") != "LseCuda":
        return Verdict(False, f"cuda_kernel was asked for the handler symbol "
                              f"{request.get('symbol')}; LSE_CU's handler is LseCuda")
    if got.get("cuda") != [cuda_target]:
        return Verdict(False, f"lowered for a GPU, lse_any calls {got.get('cuda')}, not the "
                              "CUDA kernel alone")
    if got.get("cuda_operands") != [expected["operands"]]:
        return Verdict(False, "lowered for a GPU, the CUDA call's operands hold "
                              f"{got.get('cuda_operands')} elements; x's and w's, in that order, "
                              f"hold {expected['operands']}")
    if got.get("cuda_results") != [expected["result"]]:
        return Verdict(False, f"lowered for a GPU, the CUDA call returns the shape(s) "
                              f"{got.get('cuda_results')}; x's rows are {expected['result']}")
    # The probe runs lse_any with the grader's lse_ffi (a host callback, not the notebook's
    # ffi_call, which ps5.ffi_call grades): on a CPU, one call that is not the CUDA kernel.
    cpu = got.get("cpu") or []
    if len(cpu) != 1 or cuda_target in cpu:
        return Verdict(False, f"lowered for a CPU, lse_any calls {cpu}, not the CPU kernel alone")
    values = [float(v) for v in got.get("cuda_t") or []]
    if len(values) != 1 or not np.isclose(values[0], expected["t"], rtol=1e-6):
        return Verdict(False, "the CUDA call does not pass t as its float32 attribute")
    on_cpu = _values(expected["y"], [got.get("cpu_y")])
    if not on_cpu.passed:
        return Verdict(False, f"run on a CPU, lse_any gives wrong values: {on_cpu.message}")
    return Verdict(True)


def expect_cuda_speed(inputs):
    """The y of the timed call: a kernel is timed only where it computes the right values (one
    that writes nothing is fast)."""
    x, w = speed_operands(inputs["seed"], inputs["shape"])
    return expect_kernel({"x": x, "w": w, "t": inputs["t"]})


def judge_cuda_speed(expected, outcome: Outcome) -> Verdict:
    failed = judge.raised(outcome)
    if failed:
        return failed
    got = outcome.value if isinstance(outcome.value, dict) else {}
    values = judge_kernel(expected, Outcome(value=got.get("y")))
    if not values.passed:
        return Verdict(False, "on the timed input the kernel's values are wrong, so its speed "
                              f"does not count: {values.message}")
    kernel, xla = got.get("kernel"), got.get("xla")
    if not all(isinstance(v, float) and v > 0 for v in (kernel, xla)):
        return Verdict(False, "the timing did not complete")
    if kernel > SPEED_FLOOR * xla:
        return Verdict(False, f"the CUDA kernel took {kernel / xla:.1f} times as long as XLA's "
                              f"own code; at most {SPEED_FLOOR:g} times is expected")
    return Verdict(True)


SPEED_FLOOR = 3.0  # the kernel may take at most this many times XLA's fused time


def _check(id_, task, description, points, cell, probe, make, expect, judge_fn, **kw):
    if task == KERNEL:
        # The kernel runs in a process of its own, which the probe gives 10 s per call (small
        # arrays: a kernel that takes longer never returns) after up to 60 s to start.
        kw.setdefault("timeout_s", 90.0)
    return Check(id=id_, task=task, description=description, points=points, grade_cell=cell,
                 probe=probe, make_inputs=make, expect=expect, judge=judge_fn, jax_config=X64,
                 **kw)


_K = "in LseRows or LseCheck, the C++ kernel"
CHECKS = (
    _check("ps5.kernel.f32", KERNEL, "float32 arrays of rank 1 to 4", 2, "test_kernel",
           "probe_kernel", KERNEL_MATRICES["f32"],
           judge.expect_each(expect_kernel), judge.judge_each(judge_kernel), blame=_K),
    _check("ps5.kernel.f64", KERNEL, "float64 arrays of rank 1 to 4", 2, "test_kernel",
           "probe_kernel", KERNEL_MATRICES["f64"],
           judge.expect_each(expect_kernel), judge.judge_each(judge_kernel), blame=_K),
    _check("ps5.kernel.odd", KERNEL, "odd sizes, rows of one element", 2, "test_kernel",
           "probe_kernel", KERNEL_MATRICES["odd"],
           judge.expect_each(expect_kernel), judge.judge_each(judge_kernel), blame=_K),
    _check("ps5.kernel.empty", KERNEL, "rows of no element give -inf", 2,
           "test_kernel", "probe_kernel", KERNEL_MATRICES["empty"],
           judge.expect_each(expect_kernel), judge.judge_each(judge_kernel),
           blame=_K),
    _check("ps5.kernel.large", KERNEL, "large x / t of both signs, and rows wholly far below "
           "zero: exp overflows or underflows unless shifted by the row's maximum", 2,
           "test_kernel", "probe_kernel", KERNEL_MATRICES["large"],
           judge.expect_each(expect_kernel), judge.judge_each(judge_kernel), blame=_K),
    _check("ps5.kernel.w_shape", KERNEL, "w with leading axes of size one", 2, "test_kernel",
           "probe_kernel", KERNEL_MATRICES["w_shape"],
           judge.expect_each(expect_kernel), judge.judge_each(judge_kernel),
           blame=_K),
    _check("ps5.kernel.precise", KERNEL, "float64 computed in float64", 2, "test_kernel",
           "probe_kernel", _kernel_case("precise", ranks=SEVERAL), expect_kernel, judge_kernel,
           blame=_K),
    _check("ps5.kernel.refuses", KERNEL, "bad arguments (t = 0 among them) return an "
           "ffi::Error::InvalidArgument", 2, "test_kernel",
           "probe_kernel_refuses", _refusals, lambda inputs: None, judge_refusals, blame=_K),
    _check("ps5.ffi_call.float32", FFI, "float32: one kernel call under jit, result shape and "
           "dtype", 1, "test_ffi_call", "probe_ffi_call", FFI_MATRICES["float32"],
           judge.expect_each(expect_ffi),
           judge.judge_each(judge_ffi), blame="in lse_ffi"),
    _check("ps5.ffi_call.float64", FFI, "float64, computed by the kernel in float64", 1,
           "test_ffi_call", "probe_ffi_call", FFI_MATRICES["float64"],
           judge.expect_each(expect_ffi),
           judge.judge_each(judge_ffi),
           blame="in lse_ffi"),
    _check("ps5.ffi_call.narrow", FFI, "float16 and bfloat16, computed in float32, rounded "
           "back", 2, "test_ffi_call", "probe_ffi_call", FFI_MATRICES["narrow"],
           judge.expect_each(expect_ffi),
           judge.judge_each(judge_ffi), blame="in lse_ffi"),
    _check("ps5.ffi_call.w_wider", FFI, "w of a wider float dtype than x: JAX's promotion", 1,
           "test_ffi_call", "probe_ffi_call", FFI_MATRICES["w_wider"],
           judge.expect_each(expect_ffi),
           judge.judge_each(judge_ffi),
           blame="in lse_ffi"),
    _check("ps5.ffi_call.x_wider", FFI, "x of a wider float dtype than w: JAX's promotion", 1,
           "test_ffi_call", "probe_ffi_call", FFI_MATRICES["x_wider"],
           judge.expect_each(expect_ffi),
           judge.judge_each(judge_ffi),
           blame="in lse_ffi"),
    _check("ps5.ffi_call.ints", FFI, "integer and boolean arrays raise a TypeError", 1,
           "test_ffi_call", "probe_ffi_ints", _ffi_ints, lambda inputs: None, judge_ffi_ints,
           blame="in lse_ffi"),
    _check("ps5.ffi_call.vmap_method", FFI, "vmap_method is passed on to ffi_call", 1,
           "test_ffi_call", "probe_ffi_call", FFI_MATRICES["method"],
           judge.expect_each(expect_ffi), judge.judge_each(judge_ffi), blame="in lse_ffi"),
    _check("ps5.vmap.x", VMAP, "x batched at any axis, w not: one kernel call", 3, "test_vmap",
           "probe_vmap", VMAP_MATRICES["x"], judge.expect_each(expect_vmap),
           judge.judge_each(judge_vmap),
           blame="in lse_vmappable's batching"),
    _check("ps5.vmap.w", VMAP, "w batched, x batched or not", 3, "test_vmap", "probe_vmap",
           VMAP_MATRICES["w"], judge.expect_each(expect_vmap),
           judge.judge_each(judge_vmap), blame="in lse_vmappable's batching"),
    _check("ps5.vmap.nested", VMAP, "nested vmap under jit, any mix of batched arguments", 4,
           "test_vmap", "probe_vmap", VMAP_MATRICES["nested"],
           judge.expect_each(expect_vmap), judge.judge_each(judge_vmap),
           blame="in lse_vmappable's batching"),
    _check("ps5.grad.grad", GRAD, "grad in x and w, float64 and float32", 4, "test_grad",
           "probe_grad", _grad_cases("grad"), judge.expect_each(expect_grad),
           judge.judge_each(judge_grad), blame="in lse's derivative"),
    _check("ps5.grad.jit", GRAD, "jit of grad, float64 and float32", 3, "test_grad",
           "probe_grad", _grad_cases("jit_grad"), judge.expect_each(expect_grad),
           judge.judge_each(judge_grad), blame="in lse's derivative"),
    _check("ps5.grad.jvp", GRAD, "forward mode, tangents for x and w, float64 and float32", 3,
           "test_grad", "probe_grad", _grad_cases("jvp"), judge.expect_each(expect_grad),
           judge.judge_each(judge_grad), blame="in lse's derivative"),
    _check("ps5.cuda.compiles", CUDA,
           "LSE_CU compiles with nvcc, exports LseCuda, its kernel writes y", 3,
           "test_cuda", "probe_cuda_compiles", lambda rng: {"timeout_s": 150.0},
           lambda inputs: None, judge_cuda_compiles, timeout_s=200.0,
           blame="in LSE_CU, the CUDA source"),
    _check("ps5.cuda.lowering", CUDA, "lse_any lowers to the CUDA kernel for a GPU, the C++ "
           "one for a CPU, and its values on a CPU are right", 3, "test_cuda",
           "probe_cuda_lowering", CUDA_LOWERING_CASES, judge.expect_each(expect_cuda_lowering),
           judge.judge_each(judge_cuda_lowering), blame="in lse_any"),
    _check("ps5.cuda.values", CUDA, "on a GPU: the CUDA kernel's values, odd and empty sizes",
           3, "test_cuda", "probe_cuda_values", _cuda_values, expect_cuda_values,
           judge_cuda_values,
           needs_gpu=True, blame="in LseRowsKernel"),
    _check("ps5.cuda.speed", CUDA, f"on a GPU: within {SPEED_FLOOR:g}x of XLA's own code", 3,
           "test_cuda", "probe_cuda_speed", _cuda_speed, expect_cuda_speed, judge_cuda_speed,
           needs_gpu=True, blame="in LseRowsKernel"),
)
# The engine runs checks in this order, restarting the notebook's process after a crash, a given
# number of times. The checks that run the student's native code (the C++ kernel here, the CUDA
# one on a GPU) come last, so that a kernel that crashes or hangs every time costs the restarts of
# its own checks only, never the glue's, which never runs it.
CHECKS = tuple(sorted(CHECKS, key=lambda check: (check.needs_gpu, check.task == KERNEL)))

ASSIGNMENT = Assignment(name="ps5_kernels", notebook="ps5_kernels.ipynb", tasks=TASKS,
                        checks=CHECKS, extra={"own_primitives": ()})
