"""Reproducers of ps1_primitives' checks: a cell a student pastes after their own cells.

Each snippet binds ``weighted_sum_p`` itself (``Primitive.bind``, as the probes do, so a rewritten
``weighted_sum`` or a patched ``bind`` changes nothing), applies the check's transformation to
small inputs, prints what the student's rules return next to what a correct solution returns, and
asserts. Inputs are chosen by hand to reach every class of input the check draws from (every rank,
both signs of the axis, its first, middle and last position, size-1 axes, every layout of batch
axes), with values drawn by :func:`public_rng`: small integers, exact in float32 and bfloat16, and
for float64 tenths, which float32 cannot hold, so that a rule computing in float32 is caught.
Expected values come from the check's own ``expect`` (float64 NumPy), under the check's config.

Where the check measures how a result is computed, the snippet measures it the same way: the
number of applications of ``weighted_sum`` in a traced JVP (``jax.make_jaxpr``), rules that must
trace (``jax.make_jaxpr`` of the transformation), StableHLO free of callbacks (``.lower(...)``).
Checks of the JVP, transpose and batching rules run eagerly and under ``jax.jit``, as the probes
do; the snippet asserts both (the grader accepts either, so a failed check has both wrong).
"""

from __future__ import annotations

import contextlib
import re
import textwrap

import jax
import numpy as np

from autograder.assignments.ps1_primitives import checks
from autograder.grade.reproduce import literal, public_rng

CHECKS = {check.id: check for check in checks.ASSIGNMENT.checks}

# Inputs ------------------------------------------------------------------------------------------

# (x's shape, axis): every rank, both signs, the first, a middle and the last axis.
RANKED = (((3,), -1), ((1,), 0), ((2, 3), 0), ((5, 2), -1), ((3, 1), 1), ((2, 3, 4), 1),
          ((4, 2, 3), -3), ((2, 1, 3, 2), -2), ((1, 2, 3, 2), 3))
# checks.EDGES, each in both signs where it matters: a contracted axis of size 1, the first or the
# last axis of rank 2 to 4, rank 1.
EDGES = (((1,), 0), ((1,), -1), ((2, 1, 3), -2), ((3, 1), 1), ((3, 1), -1), ((1, 2, 3, 2), -4),
         ((2, 1, 3, 2), 3), ((3, 2, 5), 0), ((5, 2), -1), ((5, 2), 1))
# Well-formed calls of ps1.abstract_eval: x's shape, axis (w is 1-D, as long as x along axis).
SHAPES = RANKED + (((3, 2, 5), 2), ((3, 2, 5), -2), ((2, 3, 1, 5), -1), ((2, 3, 1, 5), 0))
RANK23 = tuple(((2, 3), axis) for axis in (0, 1, -1, -2)) + tuple(
    ((3, 2, 5), axis) for axis in (0, 1, 2, -1, -2, -3)) + (((3, 1), 1), ((2, 1, 3), -2))
# ps1.jvp: (x's shape, axis, with respect to). "x" or "w": the other operand is closed over.
JVP_BOTH = tuple((shape, axis, "both") for shape, axis in RANKED)
JVP_ZEROS = tuple((shape, axis, "wx"[i % 2]) for i, (shape, axis) in enumerate(EDGES))
JVP_FLOAT64 = (((3,), -1, "both"), ((2, 3), 0, "x"), ((3, 2), -1, "w"), ((2, 1, 3), 1, "both"),
               ((2, 3, 1, 2), -4, "w"), ((2, 3, 2), 2, "x"))
JVP_TRACED = (((2, 3), -1), ((2, 3), 0), ((3, 2, 5), 1), ((2, 1, 3), -3))
# ps1.transpose: (x's shape, axis, the linear operand).
TRANSPOSE_X = tuple((shape, axis, "x") for shape, axis in RANKED)
TRANSPOSE_W = tuple((shape, axis, "w") for shape, axis in RANKED)
TRANSPOSE_EDGES = (((1,), 0, "x"), ((1,), -1, "w"), ((2, 1, 3), -2, "x"), ((2, 1, 3), 1, "w"),
                   ((3, 1), 1, "w"), ((3, 1), -1, "x"), ((1, 2, 3, 2), -4, "w"),
                   ((2, 1, 3, 2), 3, "x"), ((3, 2, 5), 0, "w"), ((3, 2, 5), -3, "x"),
                   ((5, 2), -1, "x"),
                   ((2, 1, 3), 1, "zero_x"), ((3, 2, 5), -1, "zero_w"))
TRANSPOSE_FLOAT64 = (((2, 3), -1, "x"), ((2, 3), 0, "w"), ((2, 1, 3), 1, "x"),
                     ((3, 2, 5), -3, "w"), ((2, 1, 3, 2), -2, "x"), ((1, 2, 3, 2), 3, "w"))
TRANSPOSE_CHAIN = (((2, 3, 5), 1), ((3, 2, 5), -1), ((2, 1, 3), 0), ((2, 1, 3, 2), -2),
                   ((1, 2, 3, 2), 0))
TRANSPOSE_TRACED = (((2, 3), -1, "x"), ((2, 3), 0, "w"), ((2, 3), -2, "w"), ((3, 2, 5), 1, "x"),
                    ((3, 2, 5), -1, "x"), ((3, 2, 5), -3, "w"))
# ps1.batch: (one element's x shape, axis, in_axes per level, out_axes per level), innermost
# level first; batches of 4 (and 5 for the outer level), sizes no element's axis has.
X0, X1, XL = (0, None), (1, None), (-1, None)
W0, W1, WL = (None, 0), (None, 1), (None, -1)
VMAP_X = (((3,), -1, [XL], [0]), ((2, 3), 0, [X1], [0]), ((5, 2), -1, [X0], [0]),
          ((2, 1, 3), -3, [XL], [0]), ((2, 1, 3), 1, [X1], [0]), ((3, 2, 5), 2, [X0], [0]),
          ((1, 2, 3, 2), -2, [X1], [0]), ((2, 1, 3, 2), 0, [XL], [0]))
VMAP_W = (((3,), -1, [WL], [0]), ((2, 3), 0, [W1], [0]), ((5, 2), -1, [W0], [0]),
          ((2, 1, 3), -3, [WL], [0]), ((2, 1, 3), 1, [W1], [0]), ((1, 2, 3, 2), -2, [W0], [0]),
          ((2, 1, 3, 2), 3, [W1], [0]))
VMAP_BOTH = (((3,), -1, [(0, 0)], [0]), ((2, 3), 0, [(1, 0)], [0]), ((5, 2), -1, [(-1, 1)], [0]),
             ((2, 1, 3), -3, [(0, -1)], [0]), ((2, 1, 3), 1, [(1, 1)], [0]),
             ((1, 2, 3, 2), -2, [(-1, 0)], [0]), ((2, 1, 3, 2), 3, [(0, 0)], [0]))
MIXED = (X0, X1, XL, W0, W1, WL, (0, 0), (1, 0), (-1, 1), (0, -1), (1, 1), (-1, 0))


def _every_layout(shapes, out_axes=(0,)) -> tuple:
    """Each layout of MIXED once (x alone, w alone or both batched, along 0, 1 or -1), with the
    (x's shape, axis) pairs of ``shapes`` and the ``out_axes`` in turn."""
    return tuple((*shapes[i % len(shapes)], [layout], [out_axes[i % len(out_axes)]])
                 for i, layout in enumerate(MIXED))


VMAP_OUT = _every_layout((((2, 3), -1), ((2, 1, 3, 2), 0), ((5, 2), 0), ((1, 2, 3, 2), -2),
                          ((3, 2), 1), ((2, 1, 3, 2), 3), ((2, 3), -2)), out_axes=(1, -1, -1, 1))
VMAP_NESTED = (((3,), -1, [X1, W0], [0, 0]), ((3,), 0, [WL, (1, 0)], [0, 1]),
               ((3,), 0, [X0, (-1, 1)], [0, 0]), ((3,), -1, [(1, 1), X1], [0, 1]),
               ((2, 1, 3), -1, [(0, 1), X0], [0, 0]), ((2, 1, 3), 0, [XL, WL], [1, 0]))
VMAP_EDGES = _every_layout(EDGES + (((2, 1, 3), 1), ((1, 2, 3, 2), 0)))
VMAP_FLOAT64 = _every_layout((((2, 3), -1), ((2, 1, 3), 1), ((3, 2), 0), ((3, 2, 5), -3),
                              ((2, 3), 1), ((2, 1, 3), -1), ((3, 2), -2)))
VMAP_BFLOAT16 = _every_layout((((2, 3), 0), ((3, 2, 5), -1), ((3, 2), -1), ((2, 1, 3), 1),
                               ((2, 3), -2), ((3, 2, 5), 2), ((2, 1, 3), -3)))
VMAP_TRACED = _every_layout((((2, 3), -1), ((1, 2, 3, 2), 2), ((2, 3), 0), ((2, 1, 3, 2), -4),
                             ((5, 2), 1)))
BATCH, NESTED = 4, 5

PLANS = {
    "ps1.impl.float32": RANKED, "ps1.impl.edges": EDGES, "ps1.impl.float64": RANKED,
    "ps1.impl.bfloat16": RANKED,
    "ps1.abstract_eval.float32": SHAPES, "ps1.abstract_eval.edges": EDGES,
    "ps1.abstract_eval.float64": SHAPES, "ps1.abstract_eval.bfloat16": SHAPES,
    "ps1.lowering.jit": RANKED, "ps1.lowering.float64": RANKED, "ps1.lowering.bfloat16": EDGES,
    "ps1.lowering.cpu": RANK23, "ps1.lowering.cuda": RANK23,
    "ps1.jvp.both": JVP_BOTH, "ps1.jvp.symbolic_zeros": JVP_ZEROS,
    "ps1.jvp.float64": JVP_FLOAT64, "ps1.jvp.through_primitive": JVP_TRACED,
    "ps1.transpose.x": TRANSPOSE_X, "ps1.transpose.w": TRANSPOSE_W,
    "ps1.transpose.edges": TRANSPOSE_EDGES, "ps1.transpose.float64": TRANSPOSE_FLOAT64,
    "ps1.transpose.chain": TRANSPOSE_CHAIN, "ps1.transpose.traced": TRANSPOSE_TRACED,
    "ps1.batch.x_batched": VMAP_X, "ps1.batch.w_batched": VMAP_W,
    "ps1.batch.both_batched": VMAP_BOTH, "ps1.batch.out_axes": VMAP_OUT,
    "ps1.batch.nested": VMAP_NESTED, "ps1.batch.edges": VMAP_EDGES,
    "ps1.batch.float64": VMAP_FLOAT64, "ps1.batch.bfloat16": VMAP_BFLOAT16,
    "ps1.batch.traced": VMAP_TRACED,
}


def _dtype(check) -> str:
    for dtype in ("float64", "bfloat16"):
        if dtype in check.id:
            return dtype
    return "float32"


def _draw(rng: np.random.Generator, shape, dtype: str) -> np.ndarray:
    """Nonzero values: small integers (exact in every dtype), or tenths for float64."""
    if dtype == "float64":
        values = rng.integers(1, 20, size=shape) / 10
    else:
        values = rng.integers(1, 4, size=shape).astype(np.float64)
    return (values * rng.choice([-1.0, 1.0], size=shape)).astype(checks.DTYPES[dtype])


def _out(shape, axis: int) -> tuple:
    return tuple(checks._out_shape(shape, axis))


def _expected(check, inputs: dict):
    """The check's own expectation, under the check's JAX configuration (restored after)."""
    with contextlib.ExitStack() as stack:
        for key, value in check.jax_config:
            if key != "jax_enable_x64":
                raise ValueError(f"no reproducer for a check configuring {key}")
            stack.enter_context(jax.enable_x64(value))
        return check.expect(inputs)


# Source --------------------------------------------------------------------------------------

class _Src(str):
    """Source text already written (an array literal), kept as it is by :func:`_row`."""


def _array(value) -> _Src:
    """An array literal on one line; rank 2 and more as a flat list reshaped."""
    array = np.asarray(value)
    text = literal(array.reshape(-1) if array.ndim >= 2 else array)
    text = re.sub(r"\s+", " ", text).replace("[ ", "[").replace(" ]", "]").replace(" ,", ",")
    return _Src(f"{text}.reshape{array.shape}" if array.ndim >= 2 else text)


def _row(*items) -> str:
    """One case of the table, on one line."""
    return "    (" + ", ".join(i if isinstance(i, _Src) else literal(i) for i in items) + "),"


def _aval(value: np.ndarray) -> str:
    """An abstract value as the snippets print it: 'float32[2, 3]'."""
    return f"{value.dtype}{[int(n) for n in value.shape]}"


HEAD = """\
# {check_id}: {description}.
import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import Primitive


def ws(x, w, axis):  # one application of weighted_sum_p, bound directly, as the grader does
    return Primitive.bind(weighted_sum_p, x, w, axis=axis)
"""

COMPARE = """

def compare(label, got, want):  # your value next to a correct one: same shape, dtype, values
    got = np.asarray(got)
    print(f"  {{label}}:\\n    your code:          {{got!r}}\\n    a correct solution: {{np.asarray(want)!r}}")
    assert (got.shape, got.dtype) == (want.shape, want.dtype), label + ": wrong shape or dtype"
    np.testing.assert_allclose(got.astype(np.float64), np.asarray(want, np.float64),
                               rtol={rtol}, atol={atol}, err_msg=label)
"""


def _source(check, *helpers: str, rows: list[str], header: str, loop: str) -> str:
    """HEAD, the helpers, the table of cases, then ``loop`` over them (inside
    ``jax.enable_x64(True)`` when the check enables x64)."""
    text = HEAD.format(check_id=check.id, description=check.description)
    for helper in helpers:
        text += helper.format(**checks.TOLERANCE[_dtype(check)])
    text += f"\n\ncases = [  # {header}\n" + "\n".join(rows) + "\n]\n"
    body = textwrap.dedent(loop).strip("\n") + "\n"
    if dict(check.jax_config).get("jax_enable_x64"):
        body = "with jax.enable_x64(True):  # as the grader runs this check\n" + textwrap.indent(
            body, "    ")
    return text + body


# ps1.impl and ps1.lowering's values: weighted_sum eagerly or under jax.jit ----------------------

def _values(check, rng, jitted: bool) -> str:
    dtype = _dtype(check)
    cases = [{"x": _draw(rng, shape, dtype), "w": _draw(rng, (shape[axis],), dtype), "axis": axis}
             for shape, axis in PLANS[check.id]]
    wants = _expected(check, {"cases": cases, "pins": checks._pins(cases, dtype), "dtype": dtype})
    rows = [_row(_array(c["x"]), _array(c["w"]), c["axis"], _array(want))
            for c, want in zip(cases, wants)]
    how, call = (("under jax.jit", "jax.jit(ws, static_argnums=2)(x, w, axis)") if jitted
                 else ("eagerly", "ws(x, w, axis)"))
    return _source(check, COMPARE, rows=rows,
                   header="x, w, axis, and what a correct solution returns", loop=f"""
        for x, w, axis, want in cases:
            print(f"x of shape {{x.shape}}, axis={{axis}}")
            compare("{how}", {call}, want)
        """)


# ps1.abstract_eval ---------------------------------------------------------------------------

EVAL_SHAPE = """

def abstract_eval_of(x_shape, w_shape, axis, x_dtype, w_dtype):  # jax.eval_shape of ws
    x = jax.ShapeDtypeStruct(x_shape, jnp.dtype(x_dtype))
    w = jax.ShapeDtypeStruct(w_shape, jnp.dtype(w_dtype))
    out = jax.eval_shape(lambda a, b: ws(a, b, axis), x, w)
    return f"{{out.dtype}}{{[int(n) for n in out.shape]}}"
"""
FITTING = """
    for x_shape, w_shape, axis, want in cases:
        print(f"x {{x_shape}}, w {{w_shape}}, axis={{axis}}")
        got = abstract_eval_of(x_shape, w_shape, axis, "{dtype}", "{dtype}")
        print(f"  your code: {{got}}, a correct solution: {{want}}")
        assert got == want, "the result must have x's shape without the axis `axis`, and x's dtype"
    """


def _fitting(check, shapes, dtype: str) -> list[str]:
    rows = []
    for shape, axis in shapes:
        c = {"x_shape": list(shape), "w_shape": [shape[axis]], "axis": axis, "dtype": dtype}
        if check.probe == "probe_abstract_eval_rejects":
            want = _expected(check, {"good": c, "cases": []})["matched"]
        else:
            want = _expected(check, {"cases": [c]})[0]["result"]
        rows.append(_row(shape, (shape[axis],), axis, want))
    return rows


def _abstract_eval(check, rng) -> str:
    dtype = _dtype(check)
    return _source(check, EVAL_SHAPE, rows=_fitting(check, PLANS[check.id], dtype),
                   header="x's shape, w's shape, axis, and a correct solution's abstract value",
                   loop=FITTING.format(dtype=dtype))


# Ill-formed calls: (x's shape, w's shape, axis, why it does not fit).
BAD_OPERANDS = (
    ((2, 3), (2,), 1, "w's length is x's size along another axis"),
    ((2, 3), (2,), -1, "w's length is x's size along another axis"),
    ((3, 2, 5), (3,), 1, "w's length is x's size along another axis"),
    ((2, 3), (2, 3), 0, "w is not 1-D"),
    ((3,), (1, 3), 0, "w is not 1-D"),
    ((2, 3), (3,), 2, "the axis is out of range"),
    ((2, 3), (2,), -3, "the axis is out of range"),
    ((3, 2, 5), (5,), 3, "the axis is out of range"),
    ((3,), (3,), -2, "the axis is out of range"),
)
# Ill-formed by their dtypes: (x's shape, axis, x's dtype, w's dtype).
BAD_DTYPES = (((2, 3), -1, "float32", "bfloat16"), ((3, 2, 5), 0, "int32", "float32"),
              ((2, 1, 3), 2, "float32", "float16"), ((5, 2), 0, "bfloat16", "float32"),
              ((3, 2), -2, "float32", "int32"), ((2, 3), 1, "float16", "float32"))
# Well-formed calls next to them (a rule that always raises must not pass): every position of the
# axis, each in both signs.
FITS = (((3, 2, 5), -3), ((3, 2, 5), 1), ((3, 2, 5), -1), ((2, 1, 3), 0), ((2, 1, 3), -2),
        ((2, 1, 3), 2))
REJECTED = """
    for x_shape, w_shape, axis, x_dtype, w_dtype in calls:
        print(f"x {x_shape} {x_dtype}, w {w_shape} {w_dtype}, axis={axis}")
        try:
            got = abstract_eval_of(x_shape, w_shape, axis, x_dtype, w_dtype)
        except Exception as err:  # which exception it is, is the point
            got = err
        print(f"  your code: {got!r}, a correct solution: TypeError")
        assert isinstance(got, TypeError), "this call must raise a TypeError"
    """


def _rejects(check, rng) -> str:
    if check.id.endswith("dtypes"):
        bad = [_row(xs, (xs[axis],), axis, xd, wd) + "  # the dtypes differ"
               for xs, axis, xd, wd in BAD_DTYPES]
    else:
        bad = [_row(xs, ws, axis, "float32", "float32") + f"  # {why}"
               for xs, ws, axis, why in BAD_OPERANDS]
    text = _source(check, EVAL_SHAPE, rows=_fitting(check, FITS, "float32"),
                   header="calls that fit: x's shape, w's shape, axis, and a correct solution's "
                   "abstract value", loop=FITTING.format(dtype="float32"))
    return (text + "\ncalls = [  # x's shape, w's shape, axis, x's dtype, w's dtype: none fits\n"
            + "\n".join(bad) + "\n]\n" + textwrap.dedent(REJECTED).strip("\n") + "\n")


# ps1.lowering's StableHLO -------------------------------------------------------------------

def _lowered(check, rng) -> str:
    platform = check.id.rsplit(".", 1)[1]
    rows = [_row(shape, (shape[axis],), axis) for shape, axis in PLANS[check.id]]
    return _source(check, rows=rows, header="x's shape, w's shape, axis (float32)", loop=f"""
        for x_shape, w_shape, axis in cases:
            print(f"x {{x_shape}}, axis={{axis}}, lowered for {platform}")
            x, w = jax.ShapeDtypeStruct(x_shape, jnp.float32), jax.ShapeDtypeStruct(w_shape, jnp.float32)
            traced = jax.jit(ws, static_argnums=2).trace(x, w, axis)
            text = traced.lower(lowering_platforms=("{platform}",)).as_text()
            words = set(text.replace("(", " ").replace('"', " ").split())
            print(f"  your code: {{sorted(word for word in words if word.startswith('stablehlo.'))}}")
            print("  a correct solution: a stablehlo.dot_general (or reduce), no custom_call or callback")
            assert "custom_call" not in text and "callback" not in text, "build the rule from StableHLO operations, not a call back into Python"
            assert words & {{"stablehlo.dot_general", "stablehlo.reduce"}}, "the lowering contracts no axis"
        """)


# ps1.jvp ------------------------------------------------------------------------------------

JVP_OF = """

def jvp_of(x, w, xt, wt, axis, wrt):  # jax.jvp of ws with respect to x, w or both
    if wrt == "x":  # w is closed over: its tangent reaches your rule as ad.Zero
        return jax.jvp(lambda a: ws(a, w, axis), (x,), (xt,))
    if wrt == "w":  # x is closed over: its tangent reaches your rule as ad.Zero
        return jax.jvp(lambda b: ws(x, b, axis), (w,), (wt,))
    return jax.jvp(lambda a, b: ws(a, b, axis), (x, w), (xt, wt))
"""


def _jvp(check, rng) -> str:
    dtype = _dtype(check)
    cases = [{"x": _draw(rng, shape, dtype), "w": _draw(rng, (shape[axis],), dtype),
              "xt": _draw(rng, shape, dtype), "wt": _draw(rng, (shape[axis],), dtype),
              "axis": axis, "wrt": wrt} for shape, axis, wrt in PLANS[check.id]]
    wants = _expected(check, {"cases": cases, "pins": checks._pins(cases, dtype), "dtype": dtype})
    rows = [_row(*map(_array, (c["x"], c["w"], c["xt"], c["wt"])), c["axis"], c["wrt"],
                 _array(want[0]), _array(want[1])) for c, want in zip(cases, wants)]
    return _source(check, COMPARE, JVP_OF, rows=rows, header="x, w, xt, wt, axis, with respect "
                   "to, and a correct solution's output and tangent", loop="""
        for x, w, xt, wt, axis, wrt, want_out, want_tangent in cases:
            print(f"x of shape {x.shape}, axis={axis}, jax.jvp with respect to {wrt}")
            for how, run in (("eagerly", jvp_of), ("under jax.jit", jax.jit(jvp_of, static_argnums=(4, 5)))):
                out, tangent = run(x, w, xt, wt, axis, wrt)
                compare(f"output, {how}", out, want_out)
                compare(f"tangent, {how}", tangent, want_tangent)
        """)


DOUBLED = """

def evaluate(closed, args, hot_in, scale):  # the traced JVP, run one equation at a time, with
    # each application of weighted_sum that the tangent reaches multiplied by scale (your impl
    # rule computes them here; the grader uses its own, so that only the JVP rule is tested)
    env, hot = {{}}, set()
    def read(v):
        return v.val if isinstance(v, jax.extend.core.Literal) else env[v]
    env.update(zip(closed.jaxpr.constvars, closed.consts))
    env.update(zip(closed.jaxpr.invars, args))
    hot.update(v for v, h in zip(closed.jaxpr.invars, hot_in) if h)
    for eqn in closed.jaxpr.eqns:
        reached = any(not isinstance(v, jax.extend.core.Literal) and v in hot for v in eqn.invars)
        outs = eqn.primitive.bind(*map(read, eqn.invars),
                                  **eqn.primitive.get_bind_params(eqn.params))
        outs = outs if eqn.primitive.multiple_results else [outs]
        if eqn.primitive is weighted_sum_p and reached:
            outs = [scale * o for o in outs]
        if reached:
            hot.update(eqn.outvars)
        env.update(zip(eqn.outvars, outs))
    return read(closed.jaxpr.outvars[-1])
"""


def _jvp_traced(check, rng) -> str:
    cases = []
    for shape, axis in PLANS[check.id]:
        for wrt in "xw":
            x, xt = _draw(rng, shape, "float32"), _draw(rng, shape, "float32")
            w, wt = (_draw(rng, (shape[axis],), "float32") for _ in range(2))
            cases.append({"axis": axis, "wrt": wrt, "x": x, "w": w, "xt": xt, "wt": wt})
    expected = _expected(check, {"cases": cases})
    rows = [_row(_array(c["x"]), _array(c["w"]), _array(c["xt"]), _array(c["wt"]), c["axis"],
                 c["wrt"], count, _array(tangent))
            for c, count, (tangent, _) in zip(cases, expected["counts"], expected["flows"])]
    return _source(check, JVP_OF, COMPARE, DOUBLED, rows=rows, header="x, w, their tangents, "
                   "axis, with respect to, how many applications of weighted_sum a correct "
                   "solution traces, and its tangent", loop="""
        for x, w, xt, wt, axis, wrt, want, tangent in cases:
            print(f"x {x.shape}, axis={axis}, jax.jvp with respect to {wrt}, traced")
            closed = jax.make_jaxpr(jvp_of, static_argnums=(4, 5))(x, w, xt, wt, axis, wrt)
            count = str(closed).count("weighted_sum[")
            print(f"  your code: {count} applications of weighted_sum, a correct solution: {want} "
                  "(one for the output, one for the tangent)")
            assert count >= want, "compute the tangent with weighted_sum itself, not NumPy or jax.numpy"
            hot = [False, False, wrt != "w", wrt != "x"]  # the tangents of jvp_of's arguments
            compare("the tangent", evaluate(closed, [x, w, xt, wt], hot, 1), tangent)
            # A tangent computed by weighted_sum doubles with the applications that carry it.
            compare("the tangent, weighted_sum's tangent applications doubled",
                    evaluate(closed, [x, w, xt, wt], hot, 2), 2 * tangent)
        """)


# ps1.transpose --------------------------------------------------------------------------------

TRANSPOSE_OF = """

def transpose_of(x, w, ct, axis, wrt):  # the cotangent of x (w fixed) or of w (x fixed)
    if wrt == "x":  # your rule gets x as an ad.UndefinedPrimal
        return jax.linear_transpose(lambda a: ws(a, w, axis), x)(ct)
    return jax.linear_transpose(lambda b: ws(x, b, axis), w)(ct)  # w undefined
"""
# ps1.transpose.edges: also the rule called directly with a symbolic-zero cotangent.
TRANSPOSE_EDGES_OF = "\nfrom jax.interpreters import ad" + TRANSPOSE_OF.replace("""
    return jax.linear_transpose(lambda b""", """
    if wrt in ("zero_x", "zero_w"):  # your rule itself, given ct = ad.Zero (a symbolic zero)
        linear = x if wrt == "zero_x" else w
        undefined = ad.UndefinedPrimal(jax.core.ShapedArray(linear.shape, linear.dtype))
        operands = (undefined, w) if wrt == "zero_x" else (x, undefined)
        cts = weighted_sum_transpose(ad.Zero(jax.core.ShapedArray(ct.shape, ct.dtype)),
                                     *operands, axis=axis)
        got = cts[0 if wrt == "zero_x" else 1]  # None and ad.Zero (of its shape) mean zero
        return (jnp.zeros(linear.shape, linear.dtype) if got is None or type(got) is ad.Zero
                else got,)
    return jax.linear_transpose(lambda b""")
CHAIN_OF = """

def transpose_of(x, w, v, ct, axis):  # x -> ws(ws(x, w, axis), v, 0), transposed
    return jax.linear_transpose(lambda a: ws(ws(a, w, axis), v, 0), x)(ct)
"""


def _transpose(check, rng) -> str:
    dtype = _dtype(check)
    chain = check.id.endswith("chain")
    cases = []
    for plan in PLANS[check.id]:
        shape, axis, wrt = plan if not chain else (*plan, "chain")
        c = {"x": _draw(rng, shape, dtype), "w": _draw(rng, (shape[axis],), dtype),
             "axis": axis, "wrt": wrt}
        out = _out(shape, axis)
        if chain:
            c["v"] = _draw(rng, (out[0],), dtype)
            out = out[1:]
        c["ct"] = _draw(rng, out, dtype)
        cases.append(c)
    wants = _expected(check, {"cases": cases, "pins": [], "dtype": dtype})["values"]
    if chain:
        args, static, what = "x, w, v, ct, axis", "4", ""
        header = "x, w, v, ct, axis, and x's cotangent"
        rows = [_row(*map(_array, (c["x"], c["w"], c["v"], c["ct"])), c["axis"], _array(want))
                for c, (want,) in zip(cases, wants)]
    else:
        args, static, what = "x, w, ct, axis, wrt", "(3, 4)", ", the cotangent of {wrt}"
        header = "x, w, ct, axis, the linear operand, and its cotangent"
        rows = [_row(*map(_array, (c["x"], c["w"], c["ct"])), c["axis"], c["wrt"], _array(want))
                for c, (want,) in zip(cases, wants)]
    snippet = (CHAIN_OF if chain else TRANSPOSE_EDGES_OF if check.id.endswith("edges")
               else TRANSPOSE_OF)
    return _source(check, COMPARE, snippet, rows=rows, header=header,
                   loop=f"""
        for {args}, want in cases:
            print(f"x of shape {{x.shape}}, axis={{axis}}{what}")
            for how, run in (("eagerly", transpose_of), ("under jax.jit", jax.jit(transpose_of, static_argnums={static}))):
                (got,) = run({args})
                compare(how, got, want)
        """)


def _transpose_traced(check, rng) -> str:
    cases = [{"x": np.zeros(shape, np.float32), "w": np.zeros(shape[axis], np.float32),
              "ct": np.zeros(_out(shape, axis), np.float32), "axis": axis, "wrt": wrt}
             for shape, axis, wrt in PLANS[check.id]]
    if _expected(check, {"cases": cases}) != {"traced": "ok", "calls": len(cases)}:
        raise ValueError(f"{check.id} expects more than a transpose rule that traces")
    rows = [_row(c["x"].shape, c["axis"], c["wrt"], _aval(checks._transpose_reference(c)[0]))
            for c in cases]
    return _source(check, TRANSPOSE_OF, rows=rows, header="x's shape, axis, the linear operand, "
                   "and a correct solution's abstract value of its cotangent", loop="""
        for shape, axis, wrt, want in cases:
            print(f"x {shape}, axis={axis}, the cotangent of {wrt}, traced")
            out_shape = tuple(n for d, n in enumerate(shape) if d != axis % len(shape))
            x, w = jax.ShapeDtypeStruct(shape, jnp.float32), jax.ShapeDtypeStruct((shape[axis],), jnp.float32)
            ct = jax.ShapeDtypeStruct(out_shape, jnp.float32)
            jaxpr = jax.make_jaxpr(transpose_of, static_argnums=(3, 4))(x, w, ct, axis, wrt)
            got = [f"{a.dtype}{list(a.shape)}" for a in jaxpr.out_avals]
            print(f"  your code: {got}, a correct solution: {[want]}")
            assert got == [want], "the transposed function has the wrong abstract value"
        """)


# ps1.batch ------------------------------------------------------------------------------------

VMAPPED = """

def vmapped(axis, in_axes, out_axes):  # ws under jax.vmap, one level per entry, innermost first
    f = lambda x, w: ws(x, w, axis)
    for level_in, level_out in zip(in_axes, out_axes):
        f = jax.vmap(f, in_axes=level_in, out_axes=level_out)
    return f
"""
VMAP_HEADER = 'print(f"x of shape {x.shape}, w of shape {w.shape}, axis={axis}, in_axes={in_axes}, out_axes={out_axes}")'


def _batched_shapes(shape, axis: int, in_axes, sizes) -> dict:
    """x's and w's shapes once batched, as checks._batched builds them."""
    shapes = {"x": list(shape), "w": [shape[axis]]}
    for level, size in zip(in_axes, sizes):
        for name, at in zip("xw", level):
            if at is not None:
                shapes[name].insert(at if at >= 0 else len(shapes[name]) + 1 + at, size)
    return shapes


def _vmap(check, rng) -> str:
    dtype = _dtype(check)
    sizes = (1 if check.id.endswith("edges") else BATCH, NESTED)
    cases = []
    for shape, axis, in_axes, out_axes in PLANS[check.id]:
        shapes = _batched_shapes(shape, axis, in_axes, sizes)
        cases.append({"x": _draw(rng, shapes["x"], dtype), "w": _draw(rng, shapes["w"], dtype),
                      "axis": axis, "in_axes": [list(a) for a in in_axes],
                      "out_axes": list(out_axes)})
    expected = _expected(check, {"cases": cases, "dtype": dtype})
    if check.probe == "probe_vmap_traced":
        if (expected["traced"], expected["calls"]) != ("ok", len(cases)):
            raise ValueError(f"{check.id} expects more than a batching rule that traces")
        rows = [_row(c["x"].shape, c["w"].shape, c["axis"], [tuple(a) for a in c["in_axes"]],
                     c["out_axes"], _aval(checks._vmap_reference(c)), need)
                for c, need in zip(cases, expected["applies"])]
        return _source(check, VMAPPED, rows=rows, header="x's shape, w's shape, axis, in_axes "
                       "and out_axes (innermost first), a correct solution's abstract value, and "
                       "how many applications of weighted_sum it keeps at least", loop="""
            for x_shape, w_shape, axis, in_axes, out_axes, want, need in cases:
                x, w = jax.ShapeDtypeStruct(x_shape, jnp.float32), jax.ShapeDtypeStruct(w_shape, jnp.float32)
                HEADER
                jaxpr = jax.make_jaxpr(vmapped(axis, in_axes, out_axes))(x, w)
                got = [f"{a.dtype}{list(a.shape)}" for a in jaxpr.out_avals]
                print(f"  traced, your code: {got}, a correct solution: {[want]}")
                assert got == [want], "the batched function has the wrong abstract value"
                applies = str(jaxpr).count("weighted_sum[")
                print(f"  applications of weighted_sum: yours {applies}, a correct solution {need} or more")
                assert applies >= need, "with only x batched, apply weighted_sum itself"
            """.replace("HEADER", VMAP_HEADER))
    rows = [_row(_array(c["x"]), _array(c["w"]), c["axis"], [tuple(a) for a in c["in_axes"]],
                 c["out_axes"], _array(want)) for c, want in zip(cases, expected["values"])]
    return _source(check, COMPARE, VMAPPED, rows=rows, header="x, w, axis, in_axes and out_axes "
                   "(innermost first), and what a correct solution returns", loop="""
        for x, w, axis, in_axes, out_axes, want in cases:
            HEADER
            f = vmapped(axis, in_axes, out_axes)
            compare("eagerly", f(x, w), want)
            compare("under jax.jit", jax.jit(f)(x, w), want)
        """.replace("HEADER", VMAP_HEADER))


# The entry point ------------------------------------------------------------------------------

TEMPLATES = {
    "probe_eval": lambda check, rng: _values(check, rng, jitted=False),
    "probe_jit": lambda check, rng: _values(check, rng, jitted=True),
    "probe_abstract_eval": _abstract_eval,
    "probe_abstract_eval_rejects": _rejects,
    "probe_lowered_ops": _lowered,
    "probe_jvp": _jvp,
    "probe_jvp_traced": _jvp_traced,
    "probe_transpose": _transpose,
    "probe_transpose_traced": _transpose_traced,
    "probe_vmap": _vmap,
    "probe_vmap_traced": _vmap,
}


def reproducer(check_id: str) -> str | None:
    """The snippet of one check, or None for checks that need a GPU (and unknown ids)."""
    check = CHECKS.get(check_id)
    if check is None or check.needs_gpu:
        return None
    return TEMPLATES[check.probe](check, public_rng(check_id))
