"""Hidden checks of ps1_primitives (grader side only; never imported in the student's process).

The primitive is ``weighted_sum(x, w, *, axis)``, x's axis ``axis`` contracted with the 1-D w.
Inputs are drawn at grading time from the generator the engine passes (seeded per student and
check); expectations come from float64 NumPy (values) and ``jax.eval_shape`` of
``jnp.tensordot`` (abstract values). Checks are grouped by the test cell
whose nbgrader points they make up, and each grades one rule: see probes.py for how the probes
keep the other rules out of the way.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from autograder.worker import banned, judge
from autograder.spec import Assignment, Check, Outcome, Task, Verdict

NAME = "ps1_primitives"
X64 = (("jax_enable_x64", True),)
# Tolerances per dtype: float32 sums in another order; float64 tight enough that a rule that
# computes in float32 fails; bfloat16 keeps about three significant digits.
TOLERANCE = {
    "float32": {"rtol": 1e-4, "atol": 1e-5},
    "float64": {"rtol": 1e-9, "atol": 1e-11},
    "bfloat16": {"rtol": 5e-2, "atol": 1e-1},
}

TASKS = (
    Task("ps1.impl", "weighted_sum_impl, the impl rule"),
    Task("ps1.abstract_eval", "weighted_sum_abstract_eval, the abstract evaluation rule"),
    Task("ps1.lowering", "weighted_sum_lowering, the lowering rule (cpu and cuda)"),
    Task("ps1.jvp", "weighted_sum_value_and_jvp, the JVP rule", banned=banned.PS1_JVP),
    Task("ps1.transpose", "weighted_sum_transpose, the transpose rule",
         banned=banned.PS1_TRANSPOSE),
    Task("ps1.batch", "weighted_sum_batch, the batching rule", banned=banned.PS1_BATCH),
)


def weighted_sum(x, w, axis):
    return jnp.tensordot(jnp.asarray(x), jnp.asarray(w), axes=([axis], [0]))


def _np(tree):
    return jax.tree.map(np.asarray, tree)


# Inputs ------------------------------------------------------------------------------------------

# Shapes come from a fixed menu while values and axes stay random per student: a grader worker then
# reuses what it compiled for earlier students. Every rank the primitive allows up to 4, with
# size-1 dimensions; no dimension is BATCH (or NESTED), so a rule that mixes up the batch axis
# with another cannot pass by coincidence.
SHAPES = {
    1: ((3,), (5,), (1,)),
    2: ((2, 3), (3, 1), (5, 2)),
    3: ((2, 1, 3), (3, 2, 5)),
    4: ((2, 3, 1, 5), (1, 2, 3, 5)),
}
BATCH = 4  # the mapped axis' size under vmap
NESTED = 6  # the outer mapped axis' size under nested vmap
DTYPES = {"float32": np.float32, "float64": np.float64, "bfloat16": jnp.bfloat16}


def _pick(rng: np.random.Generator, options):
    return options[int(rng.integers(len(options)))]


def _in_turn(rng: np.random.Generator, options, n: int) -> list:
    """``n`` picks from ``options`` in turn from a random start: every option is drawn once
    ``n`` reaches their number (a random pick per case could miss one, and with it the class of
    mistakes only that option shows)."""
    start = int(rng.integers(len(options)))
    return [options[(start + i) % len(options)] for i in range(n)]


def _normal(rng: np.random.Generator, shape, dtype: str) -> np.ndarray:
    return rng.standard_normal(shape).astype(DTYPES[dtype])


def _case(rng, shape, axis: int, dtype: str, named: str) -> dict:
    """One case; ``named``: its input class (``classes``, below)."""
    shape = tuple(shape)
    return {"x": _normal(rng, shape, dtype), "w": _normal(rng, (shape[axis],), dtype),
            "axis": axis, "classes": [named]}


# Every case lists its input classes under "classes": what the check covers on every grading,
# named without what is drawn on top (sizes, values, a middle axis' sign), so that the set of
# names a check's inputs carry is the same whatever the seed (benchmarks/input_classes.py
# prints it; tests/contract/test_input_classes.py holds it). The probes read only the arrays,
# axes and layouts: a name changes no draw and no verdict.
def _classes(case: dict, *more: str) -> dict:
    """``case`` with ``more`` input classes added to its own."""
    return {**case, "classes": [*case.get("classes", ()), *more]}


def _out_shape(shape, axis: int) -> list[int]:
    axis %= len(shape)
    return [int(n) for n in (*shape[:axis], *shape[axis + 1:])]


def _pins(cases: list[dict], dtype: str) -> list:
    """The result's abstract value for each (x, w, axis) signature a probe binds."""
    return [[list(c["x"].shape), list(c["w"].shape), c["axis"], dtype,
             _out_shape(c["x"].shape, c["axis"])] for c in cases]


# Shapes with two dimensions of one size, the contracted axis one of them: a rule that finds the
# axis by its size (x.shape.index(w.shape[0])) or swaps two axes of equal size shows only here.
REPEATED = {2: ((3, 3), (0, 1)), 3: ((2, 3, 2), (0, 2)), 4: ((3, 2, 3, 2), (0, 1, 2, 3))}


def _positions(rng: np.random.Generator, rank: int) -> list[int]:
    """The axes a check contracts for one rank: its first and last axis (one axis for rank 1),
    and a middle one from rank 3. Signs alternate by rank so that, over ranks 1 to 4, each end
    comes in both spellings: -1 (a rule slicing ``shape[axis + 1:]`` with it breaks) on even
    ranks, the first axis with two or more after it (a rule swapping instead of moving breaks)
    on ranks 3 and 4."""
    if rank == 1:
        return [0 if rng.integers(2) else -1]
    first, last = (0, -1) if rank % 2 == 0 else (-rank, rank - 1)
    middle = [int(rng.integers(1, rank - 1)) - rank * int(rng.integers(2))] if rank >= 3 else []
    return [first, *middle, last]


def _ranked_cases(rng, dtype: str, ranks=(1, 2, 3, 4)) -> list[dict]:
    """The case matrix of a check over ``ranks``: each rank at its first, last (and from rank 3
    a middle) axis, in both spellings across ranks (``_positions``), then a shape with a repeated
    dimension size (of one of the ranks that has one). Every class on every grading; shapes and
    values drawn on top."""
    drawn = [_case(rng, _pick(rng, SHAPES[r]), axis, dtype, _position_class(r, i, axes))
             for r in ranks for axes in [_positions(rng, r)] for i, axis in enumerate(axes)]
    repeated = [r for r in ranks if r in REPEATED]
    if repeated:
        shape, axes = REPEATED[_pick(rng, repeated)]
        drawn.append(_case(rng, shape, _pick(rng, axes) - len(shape) * int(rng.integers(2)),
                           dtype, "two dimensions of one size, one contracted"))
    return drawn


def _position_class(rank: int, i: int, axes: list[int]) -> str:
    """The class of the ``i``-th of ``_positions``' axes for ``rank``: rank 1's one axis (its
    spelling drawn), the first and the last axis in the spelling the rank gives them, a middle
    axis (its place and spelling drawn)."""
    if rank == 1:
        return "rank 1"
    if 0 < i < len(axes) - 1:
        return f"rank {rank}, a middle axis"
    return f"rank {rank}, {'first' if i == 0 else 'last'} axis written {axes[i]}"


# The edge cases: the contracted axis of size 1, the first axis, the last axis, rank 1 (a 0-d
# result), each in its positive or negative spelling.
EDGES = (((1,), 0), ((2, 1, 3), 1), ((3, 1), 1), ((1, 2, 3, 5), 0), ((2, 3, 1, 5), 3),
         ((3, 2, 5), 0), ((5, 2), 1))


def _edge_cases(rng, dtype: str) -> list[dict]:
    """Every edge case in both spellings of its axis (a last axis spelled -1 breaks a rule that
    slices ``shape[axis + 1:]``; only its positive spelling, one that forgets to wrap), in a
    drawn order (the values are drawn too, where the check has any)."""
    cases = [_case(rng, shape, axis - len(shape) * negative, dtype,
                   f"x of shape {shape}, axis written {axis - len(shape) * negative}")
             for shape, axis in EDGES for negative in (0, 1)]
    return [cases[int(i)] for i in rng.permutation(len(cases))]


def cases(dtype: str = "float32", *, edges: bool = False, extra=(), ranks=(1, 2, 3, 4)):
    """Cases of weighted_sum; ``extra`` names further arrays: tangents, cotangents."""
    def make(rng: np.random.Generator) -> dict:
        drawn = _edge_cases(rng, dtype) if edges else _ranked_cases(rng, dtype, ranks)
        for c in drawn:
            out = _out_shape(c["x"].shape, c["axis"])
            for name in extra:
                shape = {"xt": c["x"].shape, "wt": c["w"].shape, "ct": out}[name]
                c[name] = _normal(rng, shape, dtype)
        return {"cases": drawn, "pins": _pins(drawn, dtype), "dtype": dtype}
    return make


def jvp_cases(dtype: str = "float32", *, wrt=("both",), edges: bool = False):
    def make(rng: np.random.Generator) -> dict:
        inputs = cases(dtype, edges=edges, extra=("xt", "wt"))(rng)
        inputs["cases"] = [{**_classes(c, f"tangents of {pick}"), "wrt": pick} for c, pick in
                           zip(inputs["cases"], _in_turn(rng, wrt, len(inputs["cases"])))]
        return inputs
    return make


def jvp_trace_cases(rng: np.random.Generator) -> dict:
    """Both symbolic-zero layouts on each of two cases: the rule is traced four times."""
    inputs = cases("float32", extra=("xt", "wt"), ranks=(2, 3))(rng)
    inputs["cases"] = [{**_classes(c, f"symbolic zero: tangent of {wrt} only"), "wrt": wrt}
                       for c in inputs["cases"] for wrt in ("x", "w")]
    return inputs


def transpose_cases(dtype: str = "float32", *, wrt=("x",), edges: bool = False,
                    ranks=(1, 2, 3, 4)):
    """Each case once per operand in ``wrt``. ``edges``: the edge layouts, then the rule called
    directly with a symbolic-zero cotangent (``ad.Zero``, as the task text says it may get),
    once with x linear and once with w linear, on a rank-3 case; its linear operand's cotangent
    must be zero (None and ad.Zero count as zero, as JAX's backward pass reads them)."""
    def make(rng: np.random.Generator) -> dict:
        inputs = cases(dtype, edges=edges, extra=("ct",), ranks=ranks)(rng)
        # Every layout with respect to each operand the check names. Taking the operands in
        # turn left some layouts to w alone: a rule that broadcasts w against x's last axis is
        # right exactly where the axis is the last or has size 1, and passed .edges, .float64
        # and .traced whenever the draws gave x only such layouts (17, 6 and 5 of 60 seeds).
        inputs["cases"] = [{**_classes(c, f"linear in {pick}"), "wrt": pick}
                           for c in inputs["cases"] for pick in wrt]
        if edges:
            zero = [{**_classes(c, f"symbolic-zero cotangent, {pick[5:]} linear"), "wrt": pick}
                    for c, pick in zip(
                cases(dtype, extra=("ct",), ranks=(3,))(rng)["cases"], ("zero_x", "zero_w"))]
            inputs["cases"] += zero
            inputs["pins"] += _pins(zero, dtype)
        return inputs
    return make


def chain_cases(rng: np.random.Generator) -> dict:
    """x -> weighted_sum(weighted_sum(x, w, axis), v, 0) on rank 3 and 4: two transposes."""
    drawn = _ranked_cases(rng, "float32", (3, 4))
    pins = _pins(drawn, "float32")
    for c in drawn:
        mid = _out_shape(c["x"].shape, c["axis"])
        c["v"] = _normal(rng, (mid[0],), "float32")
        c["ct"] = _normal(rng, mid[1:], "float32")
        c["wrt"] = "chain"
        c["classes"].append("two transposes in a chain")
        pins.append([mid, [mid[0]], 0, "float32", mid[1:]])
    return {"cases": drawn, "pins": pins, "dtype": "float32"}


# Rejected calls: (x shape, w shape, axis), each wrong in one way.
BAD_CALLS = (
    ((2, 3), (2,), 1),  # w's length is x's size along another axis
    ((2, 3), (2,), -1),
    ((3, 2, 5), (3,), 1),
    ((2, 3), (2, 3), 0),  # w is not 1-D
    ((3,), (1, 3), 0),
    ((2, 3), (3,), 2),  # the axis is out of range
    ((2, 3), (2,), -3),
    ((3, 2, 5), (5,), 3),
    # Out of range, but axis % ndim names a dimension w fits: a rule that wraps accepts these.
    ((2, 3), (2,), 2),
    ((2, 3), (3,), -3),
    ((3, 2, 5), (3,), 3),
    ((3, 2, 5), (5,), -4),
)
OTHER_DTYPES = ("bfloat16", "float16", "int32")


def rejected(kind: str):
    def make(rng: np.random.Generator) -> dict:
        # The well-formed call contracts the last axis, written -1, every time: a rule that
        # refuses a negative axis, or misreads -1 (shape[:axis] + shape[axis + 1:]), otherwise
        # failed these checks only when the draw spelled the axis so (44 to 47, and 45 or 47,
        # with the course secret and the student id).
        good = _pick(rng, [c for c in _ranked_cases(rng, "float32", (3,))
                           if c["x"].ndim == 3 and c["axis"] % 3 == 2])
        good = {"x_shape": list(good["x"].shape), "w_shape": list(good["w"].shape),
                "axis": -1, "dtype": "float32"}
        if kind == "dtype":
            # Each other dtype, for x and for w, on shapes of ranks 2 and 3.
            drawn = _ranked_cases(rng, "float32", (2, 3))
            bad = []
            for i, (other, x_first) in enumerate((o, f) for o in OTHER_DTYPES
                                                 for f in (True, False)):
                c = drawn[i % len(drawn)]
                dtypes = ["float32", other] if x_first else [other, "float32"]
                bad.append({"x_shape": list(c["x"].shape), "w_shape": list(c["w"].shape),
                            "axis": c["axis"], "x_dtype": dtypes[0], "w_dtype": dtypes[1],
                            "classes": [*c["classes"], f"x {dtypes[0]}, w {dtypes[1]}"]})
        else:
            # Every kind of mistake, every time.
            bad = [{"x_shape": list(xs), "w_shape": list(ws), "axis": axis,
                    "x_dtype": "float32", "w_dtype": "float32",
                    "classes": [f"x of shape {xs}, w of shape {ws}, axis {axis}"]}
                   for xs, ws, axis in (BAD_CALLS[int(i)]
                                        for i in rng.permutation(len(BAD_CALLS)))]
        return {"good": good, "cases": bad}
    return make


def struct_cases(dtype: str, *, edges: bool = False):
    def make(rng: np.random.Generator) -> dict:
        drawn = _edge_cases(rng, dtype) if edges else _ranked_cases(rng, dtype)
        return {"cases": [{"x_shape": list(c["x"].shape), "w_shape": list(c["w"].shape),
                           "axis": c["axis"], "dtype": dtype, "classes": c["classes"]}
                          for c in drawn]}
    return make


def lowering_inputs(platform: str, dtype: str = "float32"):
    def make(rng: np.random.Generator) -> dict:
        inputs = cases(dtype, ranks=(2, 3))(rng)
        return {**inputs, "platform": platform}
    return make


def _batched(rng, example, axis: int, dtype: str, in_axes, sizes) -> dict:
    """One vmap case: ``in_axes`` and ``sizes`` per level of vmap, innermost first."""
    shapes = {"x": list(example), "w": [example[axis]]}
    for level_axes, size in zip(in_axes, sizes):
        for name, at in zip("xw", level_axes):
            if at is not None:
                at = at if at >= 0 else len(shapes[name]) + 1 + at
                shapes[name].insert(at, size)
    return {"x": _normal(rng, shapes["x"], dtype), "w": _normal(rng, shapes["w"], dtype),
            "axis": axis}


# in_axes layouts for (x, w): x may be batched along 0, 1 or -1; w (2-D once batched) along
# 0, 1 or -1; None marks an unbatched operand.
X_ONLY = ((0, None), (1, None), (-1, None))
W_ONLY = ((None, 0), (None, 1), (None, -1))
BOTH = ((0, 0), (1, 0), (-1, 1), (0, -1), (1, 1), (-1, 0))
MIXED = X_ONLY + W_ONLY + BOTH
# Each layout's kind: which operands it batches.
KIND = {**dict.fromkeys(X_ONLY, "x"), **dict.fromkeys(W_ONLY, "w"), **dict.fromkeys(BOTH, "both")}


def _kinds_and_signs(inner: list, axes: list[tuple[int, bool]]) -> set[tuple[str, bool]]:
    """(kind of layout, whether the contracted axis is negative) of each case that can tell one
    contracted axis from another; ``axes``: (axis, whether it can) per case."""
    return {(KIND[tuple(layout)], axis < 0)
            for layout, (axis, telling) in zip(inner, axes) if telling}


def _covering(inner: list, axes: list[tuple[int, bool]]) -> list:
    """``inner`` rotated to the first start (none when the drawn one does) at which each kind of
    layout (x alone, w alone, both) meets a negative and a non-negative axis, or the most such
    pairs; then, while a pair is still missing, two cases swapped to add one. Over a batch of
    one, only a contracted axis longer than 1 counts: contracting the size-1 batch axis instead
    of a size-1 axis gives the same values. The edge cases have few such axes, in runs no
    rotation spreads over every kind.

    Batching x moves the axis being contracted when it is written non-negative and not when it is
    written negative, so a rule that shifts a negative axis too (or forgets a positive one) fails
    only on its kind and sign. With a random start alone, ps1.batch.edges, .float64 and .bfloat16
    drew no x-alone case on a negative axis at 2 to 4 seeds of 30, and such a rule passed them.
    """
    n = len(inner)
    best = max(range(n), key=lambda s: (len(_kinds_and_signs(inner[s:] + inner[:s], axes)), -s))
    inner = inner[best:] + inner[:best]
    while len(have := _kinds_and_signs(inner, axes)) < 6:
        swaps = []
        for a in range(n):
            for b in range(a + 1, n):
                swapped = list(inner)
                swapped[a], swapped[b] = inner[b], inner[a]
                swaps.append((len(_kinds_and_signs(swapped, axes)), -a, -b, swapped))
        gained, *_, swapped = max(swaps, key=lambda t: t[:3])
        if gained <= len(have):
            break
        inner = swapped
    return inner


def _layout_kind(layout) -> str:
    return {"x": "x alone", "w": "w alone", "both": "x and w"}[KIND[tuple(layout)]]


def _vmap_classes(example: dict, levels: list, outs: list, size: int) -> list[str]:
    """A vmap case's classes: its example's, each level's in_axes layout and out_axes, and for
    one level the kind of layout against the contracted axis' sign where the values tell them
    apart (``_covering``); nested, the pairs ``vmap_cases`` makes sure of."""
    axis = example["axis"]
    named = [*example["classes"]]
    for level, (layout, out) in enumerate(zip(levels, outs)):
        where = ("inner " if level == 0 else "outer ") if len(levels) > 1 else ""
        named += [f"{where}in_axes {tuple(layout)}", f"{where}out_axes {out}"]
    inner = tuple(levels[0])
    if len(levels) == 1 and (size > 1 or example["x"].shape[axis] > 1):
        named.append(f"{_layout_kind(inner)} batched, contracted axis "
                     f"{'negative' if axis < 0 else 'non-negative'}")
    if len(levels) > 1 and inner in W_ONLY and levels[1][0] is not None:
        named.append("w alone batched inside a vmap of x")
    if len(levels) > 1 and inner in X_ONLY and axis < 0:
        named.append("x alone batched inside, contracted axis negative")
    return named


def vmap_cases(layouts, dtype: str = "float32", *, out_axes=(0,), nested: bool = False,
               ranks=(1, 2, 3, 4), edges: bool = False, size: int = BATCH):
    def make(rng: np.random.Generator) -> dict:
        drawn = _edge_cases(rng, dtype) if edges else _ranked_cases(rng, dtype, ranks)
        # Every example shape and every in_axes layout (at each level) and out_axes, in turn
        # from random starts: as many cases as the longest of those lists.
        n = max(len(drawn), len(layouts), len(MIXED) if nested else 0)
        inner = _in_turn(rng, layouts, n)
        outer = _in_turn(rng, MIXED, n)
        # Nested, every grading has an inner vmap of w alone under an outer vmap of x (its rule
        # then broadcasts an outer tracer: a rule written with NumPy, which fails on tracers,
        # passed the draws that paired each layout with itself, 1 in 20), and an inner vmap of
        # x alone on a negative axis (a rule that shifts it by one unnormalised passed 4 in 40).
        # The lists are rotated until both pairs are there.
        axes = [drawn[i % len(drawn)]["axis"] for i in range(n)]
        for shift in range(n * n if nested else 0):
            inner_now = inner[shift // n:] + inner[:shift // n]
            outer_now = outer[shift % n:] + outer[:shift % n]
            if (any(i in W_ONLY and o[0] is not None for i, o in zip(inner_now, outer_now))
                    and any(i in X_ONLY and a < 0 for i, a in zip(inner_now, axes))):
                inner, outer = inner_now, outer_now
                break
        if not nested and layouts == MIXED:
            examples = [drawn[i % len(drawn)] for i in range(n)]
            inner = _covering(inner, [(c["axis"], size > 1 or c["x"].shape[c["axis"]] > 1)
                                      for c in examples])
        outs_drawn = _in_turn(rng, out_axes, n * 2)
        out = []
        for i in range(n):
            example, axis = drawn[i % len(drawn)]["x"].shape, drawn[i % len(drawn)]["axis"]
            levels = [list(inner[i])] + ([list(outer[i])] if nested else [])
            sizes = [size, NESTED][: len(levels)]
            case = _batched(rng, example, axis, dtype, levels, sizes)
            rank = len(example)  # the result's rank once batched: rank - 1 + 1
            outs = []
            for level in range(len(levels)):
                # Each case's levels take the next out_axes in turn: every out_axes the check
                # names on every grading. (Indexing by 2 * i gave one vmap level every other
                # pick, so of out_axes (1, -1) each grading drew one only.)
                o = int(outs_drawn[i * len(levels) + level])
                outs.append(o if o < rank + level else rank + level - 1)
            out.append({**case, "in_axes": levels, "out_axes": outs,
                        "classes": _vmap_classes(drawn[i % len(drawn)], levels, outs, size)})
        return {"cases": out, "dtype": dtype}
    return make


# Expectations ------------------------------------------------------------------------------------

# Values are computed in float64 with NumPy, then rounded to the operands' dtype: an oracle more
# precise than any of the dtypes graded, and one that compiles nothing, so a grader worker spends
# its time on the students' programs. Shapes and dtypes come from jax.eval_shape of jnp.tensordot.

def _ws(x, w, axis: int) -> np.ndarray:
    """weighted_sum in float64."""
    return np.tensordot(np.asarray(x, np.float64), np.asarray(w, np.float64), axes=([axis], [0]))


def _as(value: np.ndarray, like) -> np.ndarray:
    return np.asarray(value).astype(np.asarray(like).dtype)


def _eval(c: dict) -> np.ndarray:
    return _as(_ws(c["x"], c["w"], c["axis"]), c["x"])


def expect_eval(inputs: dict) -> list:
    return [_eval(c) for c in inputs["cases"]]


def expect_abstract_eval(inputs: dict) -> list:
    found = []
    for c in inputs["cases"]:
        out = jax.eval_shape(lambda x, w, axis=c["axis"]: weighted_sum(x, w, axis),
                             jax.ShapeDtypeStruct(tuple(c["x_shape"]), jnp.dtype(c["dtype"])),
                             jax.ShapeDtypeStruct(tuple(c["w_shape"]), jnp.dtype(c["dtype"])))
        found.append({"result": f"{out.dtype}{[int(n) for n in out.shape]}",
                      "primitives": ["weighted_sum"]})
    return found


def expect_rejects(inputs: dict) -> dict:
    good = inputs["good"]
    out = _out_shape(good["x_shape"], good["axis"])
    return {"matched": f"{good['dtype']}{out}", "errors": ["TypeError"] * len(inputs["cases"])}


def expect_lowered_ops(inputs: dict) -> dict:
    return {"callback": False}


def expect_gpu(inputs: dict) -> dict:
    return {"values": expect_eval(inputs), "platforms": ["gpu"] * len(inputs["cases"])}


def _jvp_reference(c: dict) -> list:
    x, w, xt, wt, axis = c["x"], c["w"], c["xt"], c["wt"], c["axis"]
    terms = {"x": [_ws(xt, w, axis)], "w": [_ws(x, wt, axis)],
             "both": [_ws(xt, w, axis), _ws(x, wt, axis)]}[c["wrt"]]
    return [_eval(c), _as(sum(terms), x)]


def expect_jvp(inputs: dict) -> list:
    return [_jvp_reference(c) for c in inputs["cases"]]


def expect_jvp_counts(inputs: dict) -> dict:
    # One application for the primal output and one per nonzero tangent: the tangent is linear
    # in each operand through the primitive itself. With the tangent's applications doubled,
    # the tangent doubles.
    tangents = [_jvp_reference(c)[1] for c in inputs["cases"]]
    return {"counts": [2] * len(inputs["cases"]),
            "flows": [[t, _as(2 * np.asarray(t, np.float64), t)] for t in tangents]}


def _transpose_x(ct, w, axis: int, ndim: int) -> np.ndarray:
    """The cotangent of x: ct broadcast back along ``axis``, weighted by w."""
    axis %= ndim
    shape = [1] * ndim
    shape[axis] = len(w)
    return np.expand_dims(np.asarray(ct, np.float64), axis) * np.reshape(
        np.asarray(w, np.float64), shape)


def _transpose_reference(c: dict) -> list:
    x, w, ct, axis = c["x"], c["w"], c["ct"], c["axis"]
    ndim = np.ndim(x)
    if c["wrt"] in ("zero_x", "zero_w"):  # a symbolic-zero cotangent: a zero cotangent
        linear = x if c["wrt"] == "zero_x" else w
        return [np.zeros(np.shape(linear), np.asarray(linear).dtype)]
    if c["wrt"] == "x":
        return [_as(_transpose_x(ct, w, axis, ndim), x)]
    if c["wrt"] == "chain":
        mid = _transpose_x(ct, c["v"], 0, ndim - 1)
        return [_as(_transpose_x(mid, w, axis, ndim), x)]
    others = [d for d in range(ndim) if d != axis % ndim]
    ct_w = np.tensordot(np.asarray(x, np.float64), np.asarray(ct, np.float64),
                        axes=(others, list(range(np.ndim(ct)))))
    return [_as(ct_w, w)]


def expect_transpose(inputs: dict) -> dict:
    calls = sum(2 if c["wrt"] == "chain" else 1 for c in inputs["cases"])
    return {"values": [_transpose_reference(c) for c in inputs["cases"]], "calls": calls}


def expect_traced_transpose(inputs: dict) -> dict:
    return {"traced": "ok", "calls": len(inputs["cases"])}


def _np_vmap(f, in_axes, out_axes):
    """jax.vmap's meaning, one element of the batch at a time."""
    def mapped(*args):
        size = next(np.shape(a)[d] for a, d in zip(args, in_axes) if d is not None)
        outs = [f(*[a if d is None else np.take(a, i, axis=d) for a, d in zip(args, in_axes)])
                for i in range(size)]
        return np.stack(outs, axis=out_axes)
    return mapped


def _vmap_reference(c: dict) -> np.ndarray:
    f = lambda x, w, axis=c["axis"]: _ws(x, w, axis)
    for in_axes, out_axes in zip(c["in_axes"], c["out_axes"]):
        f = _np_vmap(f, tuple(in_axes), out_axes)
    return _as(f(c["x"], c["w"]), c["x"])


def expect_vmap(inputs: dict) -> dict:
    return {"values": [_vmap_reference(c) for c in inputs["cases"]],
            "calls": len(inputs["cases"])}


def expect_traced_vmap(inputs: dict) -> dict:
    # With w unbatched at every level, the batched program is weighted_sum itself on x with its
    # batch axis moved and the axis shifted: it must still apply the primitive.
    return {"traced": "ok", "calls": len(inputs["cases"]),
            "applies": [int(all(level[1] is None for level in c["in_axes"]))
                        for c in inputs["cases"]]}


# Judges ------------------------------------------------------------------------------------------

def close(dtype: str):
    return lambda expected, outcome: judge.close(expected, outcome, **TOLERANCE[dtype])


def _attempt_problem(expected, attempt, dtype: str) -> str | None:
    """What is wrong with one attempt, or None when it is right."""
    if type(attempt) is not dict or set(attempt) != {"value", "error"}:
        return "the probe's result is malformed"
    if attempt["error"] is not None:
        return f"raised {attempt['error']}"
    verdict = judge.close(expected, Outcome(value=attempt["value"]), **TOLERANCE[dtype])
    return None if verdict.passed else verdict.message


def either_way(dtype: str, *, calls: str = ""):
    """Right when the transformation is right evaluated eagerly (through the impl rule) or under
    jit (through the abstract evaluation and lowering rules), so that a mistake in those rules
    costs no points here; ``calls`` names the rule whose calls the probe counted, if any. The
    probe runs under jit first; the eager run is the check's retry (``eager_retry``), asked for
    only when the jitted result is wrong, and then judged together with it."""
    def judge_either(expected, outcome: Outcome) -> Verdict:
        if failed := judge.raised(outcome):
            return failed
        got = outcome.value
        if type(got) is not dict or "jit" not in got:
            return Verdict(False, "the probe's result is malformed")
        values = expected["values"] if calls else expected
        jitted = _attempt_problem(values, got["jit"], dtype)
        if jitted is not None:
            if "eager" not in got:
                return Verdict(False, jitted)
            eager = _attempt_problem(values, got["eager"], dtype)
            if eager is not None:
                return Verdict(False, eager)
        if calls and (type(got.get("calls")) is not int or got["calls"] < 1):
            return Verdict(False, f"the {calls} rule registered for weighted_sum_p was never "
                                  "called, so these points cannot be earned")
        return Verdict(True)
    return judge_either


def judge_abstract_eval(expected: list, outcome: Outcome) -> Verdict:
    if failed := judge.raised(outcome):
        return failed
    got = outcome.value
    if type(got) is not list or len(got) != len(expected):
        return Verdict(False, "the probe's result is malformed")
    for g, e in zip(got, expected):
        if type(g) is not dict or set(g) != set(e):
            return Verdict(False, "the probe's result is malformed")
        if g["primitives"] != e["primitives"]:
            return Verdict(False, "the traced program is not one application of weighted_sum")
        if g["result"] != e["result"]:
            return Verdict(False, f"the result's abstract value is {g['result']}, which is not "
                                  "x's shape without the axis `axis` and x's dtype")
    return Verdict(True)


def judge_rejects(expected: dict, outcome: Outcome) -> Verdict:
    if failed := judge.raised(outcome):
        return failed
    got = outcome.value
    if type(got) is not dict or set(got) != set(expected) or type(got["errors"]) is not list:
        return Verdict(False, "the probe's result is malformed")
    if got["matched"] != expected["matched"]:
        return Verdict(False, "well-formed operands get the wrong shape or dtype, so the errors "
                              "for ill-formed ones cannot count")
    for error in got["errors"]:
        if error is None:
            return Verdict(False, "expected a TypeError, but nothing was raised")
        if error != "TypeError":
            return Verdict(False, f"expected a TypeError, got {error}")
    return Verdict(True)


def judge_lowered(expected: dict, outcome: Outcome) -> Verdict:
    if failed := judge.raised(outcome):
        return failed
    got = outcome.value
    if type(got) is not dict or type(got.get("ops")) is not list:
        return Verdict(False, "the probe's result is malformed")
    if "custom_call" in got["ops"] or got.get("callback") is not False:
        return Verdict(False, "the lowered module calls out of StableHLO (a custom_call or host "
                              "callback) instead of computing in StableHLO")
    if not {"dot_general", "reduce"} & set(got["ops"]):
        return Verdict(False, "the lowered module has neither a stablehlo.dot_general nor a "
                              "stablehlo.reduce, so it does not contract an axis")
    return Verdict(True)


def judge_gpu(expected: dict, outcome: Outcome) -> Verdict:
    if failed := judge.raised(outcome):
        return failed
    got = outcome.value
    if type(got) is not dict or got.get("platforms") != expected["platforms"]:
        return Verdict(False, "the result did not stay on the GPU")
    return judge.close(expected["values"], Outcome(value=got["values"]), **TOLERANCE["float32"])


def judge_jvp_counts(expected: dict, outcome: Outcome) -> Verdict:
    if failed := judge.raised(outcome):
        return failed
    got = outcome.value
    if type(got) is not dict or type(got.get("counts")) is not list:
        return Verdict(False, "the probe's result is malformed")
    if any(type(n) is not int or n < e for n, e in zip(got["counts"], expected["counts"])):
        return Verdict(False, "the tangent is not computed with weighted_sum itself (it takes "
                              "one application for the output and one per nonzero tangent), so "
                              "reverse mode would never call your transpose rule")
    flows = got.get("flows")
    if type(flows) is not dict or flows.get("error"):
        return Verdict(False, "the traced JVP could not be evaluated again "
                              f"({flows.get('error') if type(flows) is dict else '?'})")
    verdict = judge.close(expected["flows"], Outcome(value=flows["value"]),
                          **TOLERANCE["float32"])
    if not verdict.passed:
        return Verdict(False, "the tangent does not flow through weighted_sum: with every "
                              "application of weighted_sum that the tangent reaches doubled, the "
                              f"tangent must double (a term computed another way, or an "
                              f"application multiplied by zero, does not): {verdict.message}")
    return Verdict(True)


def judge_traced(rule: str):
    def judge_it(expected: dict, outcome: Outcome) -> Verdict:
        if failed := judge.raised(outcome):
            return Verdict(False, f"{failed.message}; transformations call the {rule} rule with "
                                  "tracers, so it must use jax.numpy, jax.lax or the primitive, "
                                  "never NumPy")
        got = outcome.value
        if type(got) is not dict or got.get("traced") != "ok":
            return Verdict(False, "the probe's result is malformed")
        if type(got.get("calls")) is not int or got["calls"] < 1:
            return Verdict(False, f"the {rule} rule registered for weighted_sum_p was never "
                                  "called, so these points cannot be earned")
        return Verdict(True)
    return judge_it


def judge_traced_vmap(expected: dict, outcome: Outcome) -> Verdict:
    verdict = judge_traced("batching")(expected, outcome)
    if not verdict.passed:
        return verdict
    applies = outcome.value.get("applies")
    if type(applies) is not list or len(applies) != len(expected["applies"]) or any(
            type(n) is not int or n < need for n, need in zip(applies, expected["applies"])):
        return Verdict(False, "with only x batched, the batched program no longer applies "
                              "weighted_sum: move x's batch axis and shift axis to match, then "
                              "apply the primitive itself")
    return Verdict(True)


# The checks --------------------------------------------------------------------------------------

def _check(check_id, task, cell, points, description, probe, make_inputs, expect, judge_fn,
           blame, **extra) -> Check:
    if getattr(judge_fn, "__name__", "") == "judge_either":
        extra.setdefault("retry", eager_retry)
    return Check(id=check_id, task=task, description=description, points=points,
                 grade_cell=cell, probe=probe, make_inputs=make_inputs, expect=expect,
                 judge=judge_fn, blame=blame, **extra)


def eager_retry(inputs: dict) -> dict:
    """The retry of a check judged ``either_way``: the same cases, evaluated eagerly."""
    return {**inputs, "eager": True}


IMPL = "the impl rule (weighted_sum_impl) computes the eager result."
ABSTRACT = "the abstract evaluation rule (weighted_sum_abstract_eval) is at fault."
REJECT = ("the abstract evaluation rule (weighted_sum_abstract_eval) must raise TypeError for "
          "operands that do not fit.")
LOWERING = ("the lowering rule (weighted_sum_lowering) is at fault (the result's type comes from "
            "the grader here, not from your abstract evaluation rule).")
JVP = ("the JVP rule (weighted_sum_value_and_jvp) is at fault (the result counts when it is "
       "right either eagerly or under jit).")
TRANSPOSE = ("the transpose rule (weighted_sum_transpose) is at fault: jax.linear_transpose calls "
             "it directly, with x or with w as the linear operand.")
BATCH = ("the batching rule (weighted_sum_batch) is at fault: jax.vmap calls it directly, with "
         "either operand batched along any axis or unbatched (None).")
CHECKS = (
    # ps1.impl: 6 points in test_impl
    _check("ps1.impl.float32", "ps1.impl", "test_impl", 3,
           "eager weighted_sum on float32, ranks 1 to 4, positive and negative axes",
           "probe_eval", cases("float32"), expect_eval, close("float32"), IMPL),
    _check("ps1.impl.edges", "ps1.impl", "test_impl", 1,
           "eager weighted_sum along a size-1 axis, the first or the last axis, and of a vector",
           "probe_eval", cases("float32", edges=True), expect_eval, close("float32"), IMPL),
    _check("ps1.impl.float64", "ps1.impl", "test_impl", 1,
           "eager weighted_sum on float64 (x64 enabled), computed in float64", "probe_eval",
           cases("float64"), expect_eval, close("float64"), IMPL, jax_config=X64),
    _check("ps1.impl.bfloat16", "ps1.impl", "test_impl", 1,
           "eager weighted_sum on bfloat16 keeps the dtype", "probe_eval", cases("bfloat16"),
           expect_eval, close("bfloat16"), IMPL),
    # ps1.abstract_eval: 8 points in test_abstract_eval
    _check("ps1.abstract_eval.float32", "ps1.abstract_eval", "test_abstract_eval", 2,
           "jax.eval_shape: x's shape without the axis, ranks 1 to 4, positive and negative axes",
           "probe_abstract_eval", struct_cases("float32"), expect_abstract_eval,
           judge_abstract_eval, ABSTRACT),
    _check("ps1.abstract_eval.edges", "ps1.abstract_eval", "test_abstract_eval", 1,
           "jax.eval_shape along a size-1 axis, the first or last axis, and of a vector",
           "probe_abstract_eval", struct_cases("float32", edges=True), expect_abstract_eval,
           judge_abstract_eval, ABSTRACT),
    _check("ps1.abstract_eval.float64", "ps1.abstract_eval", "test_abstract_eval", 1,
           "jax.eval_shape keeps float64 (x64 enabled)", "probe_abstract_eval",
           struct_cases("float64"), expect_abstract_eval, judge_abstract_eval, ABSTRACT,
           jax_config=X64),
    _check("ps1.abstract_eval.bfloat16", "ps1.abstract_eval", "test_abstract_eval", 1,
           "jax.eval_shape keeps bfloat16", "probe_abstract_eval", struct_cases("bfloat16"),
           expect_abstract_eval, judge_abstract_eval, ABSTRACT),
    _check("ps1.abstract_eval.rejects_operands", "ps1.abstract_eval", "test_abstract_eval", 2,
           "a w that does not fit x along the axis, a w that is not 1-D, and an axis out of "
           "range raise TypeError", "probe_abstract_eval_rejects", rejected("shape"),
           expect_rejects, judge_rejects, REJECT),
    _check("ps1.abstract_eval.rejects_dtypes", "ps1.abstract_eval", "test_abstract_eval", 1,
           "operands of different dtypes raise TypeError", "probe_abstract_eval_rejects",
           rejected("dtype"), expect_rejects, judge_rejects, REJECT),
    # ps1.lowering: 10 points in test_lowering (2 of them only where a GPU exists)
    _check("ps1.lowering.jit", "ps1.lowering", "test_lowering", 3,
           "jax.jit of weighted_sum on float32, ranks 1 to 4, positive and negative axes",
           "probe_jit", cases("float32"), expect_eval, close("float32"), LOWERING),
    _check("ps1.lowering.float64", "ps1.lowering", "test_lowering", 1,
           "jax.jit of weighted_sum on float64 (x64 enabled), computed in float64", "probe_jit",
           cases("float64", ranks=(2, 3)), expect_eval, close("float64"), LOWERING,
           jax_config=X64),
    _check("ps1.lowering.bfloat16", "ps1.lowering", "test_lowering", 1,
           "jax.jit of weighted_sum on bfloat16 along size-1, first and last axes", "probe_jit",
           cases("bfloat16", edges=True), expect_eval, close("bfloat16"), LOWERING),
    _check("ps1.lowering.cpu", "ps1.lowering", "test_lowering", 1,
           "the CPU lowering contracts in StableHLO, with no host callback",
           "probe_lowered_ops", lowering_inputs("cpu"), expect_lowered_ops, judge_lowered,
           "the lowering rule registered for 'cpu' is at fault."),
    _check("ps1.lowering.cuda", "ps1.lowering", "test_lowering", 2,
           "the cuda lowering (cross-platform, lowering_platforms=('cuda',)) contracts in "
           "StableHLO", "probe_lowered_ops", lowering_inputs("cuda"), expect_lowered_ops,
           judge_lowered, "the lowering rule registered for 'cuda' is at fault: register it for "
           "'cuda' as well as 'cpu', built from StableHLO operations, which lower for any "
           "platform (a host callback does not)."),
    _check("ps1.lowering.gpu", "ps1.lowering", "test_lowering", 2,
           "jax.jit of weighted_sum runs on a GPU", "probe_gpu", cases("float32", ranks=(2, 3)),
           expect_gpu, judge_gpu, "the lowering rule registered for 'cuda' is at fault.",
           needs_gpu=True),
    # ps1.jvp: 8 points in test_jvp
    _check("ps1.jvp.both", "ps1.jvp", "test_jvp", 3,
           "jax.jvp with tangents for x and w, ranks 1 to 4, positive and negative axes",
           "probe_jvp", jvp_cases(), expect_jvp, either_way("float32"), JVP),
    _check("ps1.jvp.symbolic_zeros", "ps1.jvp", "test_jvp", 2,
           "jax.jvp with respect to x alone or w alone (the other tangent arrives as ad.Zero)",
           "probe_jvp", jvp_cases(wrt=("x", "w"), edges=True), expect_jvp, either_way("float32"),
           JVP + " Tangents of closed-over operands arrive as ad.Zero."),
    _check("ps1.jvp.float64", "ps1.jvp", "test_jvp", 1,
           "jax.jvp on float64 (x64 enabled), computed in float64", "probe_jvp",
           jvp_cases("float64", wrt=("both", "x", "w")), expect_jvp, either_way("float64"), JVP,
           jax_config=X64),
    _check("ps1.jvp.through_primitive", "ps1.jvp", "test_jvp", 2,
           "traced jax.jvp: the rule traces (no NumPy on tracers) and computes each tangent "
           "term with weighted_sum", "probe_jvp_traced", jvp_trace_cases, expect_jvp_counts,
           judge_jvp_counts, "the JVP rule (weighted_sum_value_and_jvp) is at fault: under jit "
           "its operands are tracers, and its tangent must go through weighted_sum."),
    # ps1.transpose: 10 points in test_transpose
    _check("ps1.transpose.x", "ps1.transpose", "test_transpose", 3,
           "jax.linear_transpose with respect to x (the cotangent broadcast back along the "
           "axis), ranks 1 to 4, positive and negative axes", "probe_transpose",
           transpose_cases(), expect_transpose, either_way("float32", calls="transpose"),
           TRANSPOSE),
    _check("ps1.transpose.w", "ps1.transpose", "test_transpose", 3,
           "jax.linear_transpose with respect to w (the cotangent contracted with x), ranks 1 "
           "to 4, positive and negative axes", "probe_transpose", transpose_cases(wrt=("w",)),
           expect_transpose, either_way("float32", calls="transpose"), TRANSPOSE),
    _check("ps1.transpose.edges", "ps1.transpose", "test_transpose", 1,
           "jax.linear_transpose along a size-1, first or last axis, and of a vector; the "
           "rule called with a symbolic-zero cotangent (ad.Zero)",
           "probe_transpose", transpose_cases(wrt=("x", "w"), edges=True), expect_transpose,
           either_way("float32", calls="transpose"), TRANSPOSE),
    _check("ps1.transpose.float64", "ps1.transpose", "test_transpose", 1,
           "jax.linear_transpose on float64 (x64 enabled), computed in float64",
           "probe_transpose", transpose_cases("float64", wrt=("x", "w"), ranks=(2, 3, 4)),
           expect_transpose, either_way("float64", calls="transpose"), TRANSPOSE,
           jax_config=X64),
    _check("ps1.transpose.chain", "ps1.transpose", "test_transpose", 1,
           "jax.linear_transpose of two weighted_sums in a row (rank 3 and 4)",
           "probe_transpose", chain_cases, expect_transpose,
           either_way("float32", calls="transpose"), TRANSPOSE),
    _check("ps1.transpose.traced", "ps1.transpose", "test_transpose", 1,
           "traced jax.linear_transpose: the rule works on tracers", "probe_transpose_traced",
           transpose_cases(wrt=("x", "w"), ranks=(2, 3)), expect_traced_transpose,
           judge_traced("transpose"), TRANSPOSE),
    # ps1.batch: 12 points in test_batch
    _check("ps1.batch.x_batched", "ps1.batch", "test_batch", 2,
           "jax.vmap with x batched along 0, 1 or -1 and w unbatched, ranks 1 to 4",
           "probe_vmap", vmap_cases(X_ONLY), expect_vmap, either_way("float32", calls="batching"),
           BATCH),
    _check("ps1.batch.w_batched", "ps1.batch", "test_batch", 2,
           "jax.vmap with w batched along 0, 1 or -1 and x unbatched, ranks 1 to 4",
           "probe_vmap", vmap_cases(W_ONLY), expect_vmap, either_way("float32", calls="batching"),
           BATCH),
    _check("ps1.batch.both_batched", "ps1.batch", "test_batch", 2,
           "jax.vmap with x and w batched along different axes, ranks 1 to 4", "probe_vmap",
           vmap_cases(BOTH), expect_vmap, either_way("float32", calls="batching"), BATCH),
    _check("ps1.batch.out_axes", "ps1.batch", "test_batch", 1,
           "jax.vmap with out_axes 1 or -1 and mixed in_axes", "probe_vmap",
           vmap_cases(MIXED, out_axes=(1, -1), ranks=(2, 4)), expect_vmap,
           either_way("float32", calls="batching"), BATCH),
    _check("ps1.batch.nested", "ps1.batch", "test_batch", 1,
           "jax.vmap of jax.vmap with mixed in_axes at each level", "probe_vmap",
           vmap_cases(MIXED, nested=True, ranks=(1, 3)), expect_vmap,
           either_way("float32", calls="batching"), BATCH),
    _check("ps1.batch.edges", "ps1.batch", "test_batch", 1,
           "jax.vmap over a batch of one, along size-1, first and last axes", "probe_vmap",
           vmap_cases(MIXED, edges=True, size=1), expect_vmap,
           either_way("float32", calls="batching"), BATCH),
    _check("ps1.batch.float64", "ps1.batch", "test_batch", 1,
           "jax.vmap on float64 (x64 enabled), computed in float64", "probe_vmap",
           vmap_cases(MIXED, "float64", ranks=(2, 3)), expect_vmap,
           either_way("float64", calls="batching"), BATCH, jax_config=X64),
    _check("ps1.batch.bfloat16", "ps1.batch", "test_batch", 1,
           "jax.vmap on bfloat16 keeps the dtype", "probe_vmap",
           vmap_cases(MIXED, "bfloat16", ranks=(2, 3)), expect_vmap,
           either_way("bfloat16", calls="batching"), BATCH),
    _check("ps1.batch.traced", "ps1.batch", "test_batch", 1,
           "traced jax.vmap: the rule works on tracers, and with only x batched the batched "
           "program still applies weighted_sum", "probe_vmap_traced",
           vmap_cases(MIXED, ranks=(2, 4)), expect_traced_vmap, judge_traced_vmap, BATCH),
)

ASSIGNMENT = Assignment(
    name=NAME,
    notebook=f"{NAME}.ipynb",
    tasks=TASKS,
    checks=CHECKS,
    extra={"own_primitives": ("weighted_sum",)},
)
