"""Reproducers of ps2_autodidax: the "Try it yourself" cells of the feedback page (grader side).

A snippet runs after the student's cells and uses only what their notebook defines: the names the
setup cell imports (``jvp``, ``deriv``, ``vmap``, the primitives' wrappers, ``jvp_rules``,
``vmap_rules``, ``tree_flatten``) and the functions the student writes. It applies the
transformation its check applies, through the notebook's own interpreters, to functions chosen
here by hand so that they reach every kind of input the check draws: operands of different ranks,
tiny divisors, ties (between operands, with a constant, with a scalar, at an outer tracer),
closures over outer tracers and constants, stacks of matrices, batch axes at every position
(negative too) and unmapped operands, three nested vmaps, pytrees with empty containers and axes
given as prefixes. Array values come from ``public_rng``. The book's ``jacfwd`` takes a vector at
the top level only (``np.size`` of a tracer is 1), so the snippets of the Jacobian checks write
it out as vmap of jvp, as the checks' probes do.

The checks of ``ps2.jvp_rules`` draw random programs that mix in the task's other primitives; the
snippets of those checks do too (``TASK_MIX``), so that a wrong rule that fails a check also fails
its snippet. Each check that scores a rule fails when the rule was never called; its snippet
asserts first that the notebook's rule table holds the student's rule, so that the transformation
it runs calls that rule.

What a correct solution gives is computed here by running the snippet's own lines with real JAX
in place of the notebook's interpreter (``jax.jvp`` for ``jvp`` and ``deriv``, ``jax.vmap`` for
``vmap`` and ``vmap_axes``, ``jnp`` for the wrappers), jitted, in float64 inside
``jax.enable_x64`` (thread-local: the global configuration stays as it was), and written into the
snippet as a literal, rounded to ten significant digits (far inside the checks' tolerance).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import jax
import jax.numpy as jnp
import numpy as np

from autograder.assignments.ps2_autodidax import checks, programs
from autograder.grade.reproduce import literal, public_rng

RTOL = checks.RTOL
CHECK_IDS = {check.id for check in checks.CHECKS}
NEEDS_GPU = {check.id for check in checks.CHECKS if check.needs_gpu}


@dataclass(frozen=True)
class Case:
    """One snippet: what it checks (one line), the rules that must be in their tables, its inputs
    (name -> value, written as literals), the lines that define what it transforms, and the
    expression whose value is compared with a correct solution's."""

    comment: str
    rules: tuple[tuple[str, str, str], ...]  # (table, primitive, the student's rule)
    inputs: dict
    define: str
    expr: str
    alone: bool = False  # run without the batching rules of transpose and broadcast


# --- Inputs ----------------------------------------------------------------------------------
def _draw(rng, shape, low=-1.0, high=1.0):
    """Uniform values with one decimal, so that the literals stay short (never exactly 0)."""
    values = np.round(rng.uniform(low, high, size=shape), 1)
    return np.where(values == 0.0, 0.1, values)


def _batched(rng, member, axis, size):
    """``size`` members of shape ``member`` along ``axis`` (of the batched array)."""
    shape = list(member)
    shape.insert(axis % (len(member) + 1), size)
    return _draw(rng, tuple(shape))


def _nested_args(rng, members, levels, sizes):
    """The arguments of nested vmaps; ``levels`` are their in_axes, the innermost vmap's first."""
    shapes = [list(m) for m in members]
    for axes, size in zip(levels, sizes):
        for shape, axis in zip(shapes, axes):
            if axis is not None:
                shape.insert(axis % (len(shape) + 1), size)
    return [_draw(rng, tuple(s)) for s in shapes]


# --- ps2.jvp_rules ---------------------------------------------------------------------------
ALL_JVP = tuple(("jvp_rules", f"{p}_p", f"{p}_jvp") for p in ("exp", "log", "div", "max"))
# The checks' random programs mix the task's other primitives in (maximum(v, v) is a tie too):
# each snippet's last output does the same. Any x, and any y of x's rank or lower.
TASK_MIX = "maximum(x, x) + exp(x) * log(y * y + 1.0) + div(maximum(sin(x), y), 2.0 + cos(y))"


def _exp_log(rng):
    return Case(
        "jvp through exp and log, operands of ranks 2 and 1 summed over axis -2, and scalars",
        ALL_JVP, {"x": _draw(rng, (2, 3)), "y": _draw(rng, (3,), 0.2, 1.5),
                  "dx": _draw(rng, (2, 3)), "dy": _draw(rng, (3,)),
                  "s": float(_draw(rng, ())), "t": float(_draw(rng, (), 0.2, 1.5)),
                  "ds": 0.5, "dt": -0.25},
        f"f = lambda x, y: (reduce_sum(exp(x) * log(y) + exp(neg(y)), (-2,)),\n"
        f"                  {TASK_MIX})\n"
        f"g = lambda x, y: (exp(x) * log(y) + exp(neg(y)),  # for scalars\n"
        f"                  {TASK_MIX})",
        "[jvp(f, (x, y), (dx, dy)), jvp(g, (s, t), (ds, dt))]")


def _div(rng):
    tiny = rng.choice([-1.0, 1.0], size=(2, 3)) * rng.choice([0.002, 0.0005, 0.001], size=(2, 3))
    y = np.where(rng.random(size=(2, 3)) < 0.5, tiny, _draw(rng, (2, 3), 0.5, 1.5))
    y.flat[0] = tiny.flat[0]  # at least one tiny divisor
    return Case(
        "jvp through div: tiny divisors, a scalar s over an array, an array over s",
        ALL_JVP, {"x": _draw(rng, (2, 3)), "y": y, "s": 0.8, "dx": _draw(rng, (2, 3)),
                  "dy": _draw(rng, (2, 3)), "ds": 0.5},
        f"f = lambda x, y, s: (div(x, y), div(s, y), div(x, s),\n"
        f"                     {TASK_MIX})",
        "jvp(f, (x, y, s), (dx, dy, ds))")


def _max(rng):
    x, y = _draw(rng, (2, 3)), _draw(rng, (2, 3))
    y[0] = x[0]  # ties along the first row
    y[1, 0] = 0.0  # a tie with the constant 0.0
    return Case(
        "jvp through maximum, with ties: x == y on the first row, y == 0.0, s == y[1, 2]",
        ALL_JVP, {"x": x, "y": y, "s": float(y[1, 2]), "dx": _draw(rng, (2, 3)),
                  "dy": _draw(rng, (2, 3)), "ds": 0.75},
        f"f = lambda x, y, s: (maximum(x, y), maximum(y, 0.0), maximum(s, y),\n"
        f"                     {TASK_MIX})",
        "jvp(f, (x, y, s), (dx, dy, ds))")


def _nested(rng):
    return Case(
        "derivatives of order 1, 2 and 3 of a scalar function of all four primitives",
        ALL_JVP, {"x": float(np.round(rng.uniform(0.9, 1.3), 2))},
        "f = lambda x: (div(exp(sin(x)), log(x * x + 2.0)) + maximum(x * x, cos(x))\n"
        "               + maximum(sin(x), sin(x)) + div(cos(x) + 2.0, cos(x) + 2.0))"
        "  # a tie, x / x",
        "[deriv(f)(x), deriv(deriv(f))(x), deriv(deriv(deriv(f)))(x)]")


def _closure(rng):
    return Case(
        "derivatives of functions whose inner derivative closes over the outer a or over c, "
        "at a < 1 and a > 1",
        ALL_JVP, {"a0": float(np.round(rng.uniform(0.7, 0.95), 2)),
                  "a1": float(np.round(rng.uniform(1.05, 1.25), 2)), "c": 0.4},
        """\
gs = [
    lambda a: a * deriv(lambda b: exp(a * b))(0.6),
    lambda a: deriv(lambda b: div(a, b * b))(0.6),
    lambda a: exp(a) * deriv(lambda b: div(c, b * b + a * a))(0.6),
    lambda a: log(a * a + deriv(lambda b: maximum(a * b, b))(0.6)),
    lambda a: a * deriv(lambda b: maximum(a, b))(a),  # a tie, at an outer tracer
    lambda a: deriv(lambda b: log(b) * div(b, exp(a)))(a),
]""", "[[deriv(g)(a) for g in gs] for a in (a0, a1)]")


# --- ps2.matmul ------------------------------------------------------------------------------
MATMUL_JVP = (("jvp_rules", "matmul_p", "matmul_jvp"),)
MATMUL_BATCH = (("vmap_rules", "matmul_p", "matmul_batch"),)
PAIR = "f = lambda x, y: matmul(x, y) + matmul(sin(x), neg(y))"


def _named(rng, shapes: dict) -> dict:
    return {name: _draw(rng, shape) for name, shape in shapes.items()}


def _matmul_jvp(rng):
    shapes = {"x": (2, 2, 3), "y": (2, 3, 2), "z": (2, 2, 1)}
    return Case(
        "jvp of a chain of matmul of stacks of two matrices, summed over axes 0 and -1",
        MATMUL_JVP, {**_named(rng, shapes), **_named(rng, {f"d{k}": s for k, s in shapes.items()})},
        "f = lambda x, y, z: reduce_sum(matmul(sin(matmul(x, y)), z), (0, -1))",
        "jvp(f, (x, y, z), (dx, dy, dz))")


def _matmul_nested(rng):
    shapes = {"a": (2, 2, 3), "b": (2, 3, 2), "c": (2, 2, 1), "da": (2, 2, 3), "dc": (2, 2, 1)}
    return Case(
        "first and second derivatives along a line through a chain of matmul (stacks of two)",
        MATMUL_JVP, {**_named(rng, shapes), "t": float(np.round(rng.uniform(-0.5, 0.5), 2))},
        "g = lambda t: reduce_sum(matmul(sin(matmul(a + t * da, b)), c + t * dc), None)",
        "[deriv(g)(t), deriv(deriv(g))(t)]")


def _matmul_vmap(rng):
    inputs = {"x1": _batched(rng, (2, 3), -1, 4), "y1": _draw(rng, (3, 2)),
              "x2": _draw(rng, (2, 3)), "y2": _batched(rng, (3, 2), 1, 4),
              "x3": _batched(rng, (2, 1, 2), 2, 3), "y3": _batched(rng, (2, 2, 1), -2, 3)}
    return Case(
        "vmap of matmul: batch axes last, unmapped, in the middle; x3, y3: stacks of two",
        MATMUL_BATCH, inputs, PAIR,
        "[vmap(f, (-1, None))(x1, y1), vmap(f, (None, 1))(x2, y2), vmap(f, (2, -2))(x3, y3)]")


def _matmul_jacfwd(rng):
    return Case(
        "jacfwd as vmap of jvp, of a function from (2, 3) matrices to (3, 1) ones",
        MATMUL_JVP + MATMUL_BATCH, _named(rng, {"x": (2, 3), "w1": (3, 2), "w2": (3, 1)}),
        "f = lambda x: sin(matmul(w1, matmul(x, w2)))\n"
        "directions = np.eye(6).reshape(6, 2, 3)  # one per entry of x",
        "vmap(lambda v: jvp(f, (x,), (v,))[1], (0,))(directions)  # the Jacobian, row by row",
        alone=True)


def _matmul_jvp_of_vmap(rng):
    inputs = {"x1": _batched(rng, (1, 3), 1, 4), "y1": _draw(rng, (3, 2)),
              "x2": _draw(rng, (2, 3)), "y2": _batched(rng, (3, 1), -1, 4)}
    inputs.update({f"d{name}": _draw(rng, np.shape(value)) for name, value in inputs.items()})
    return Case(
        "jvp of vmap of matmul: x1 mapped at axis 1 and y1 unmapped, then x2 unmapped",
        MATMUL_JVP + MATMUL_BATCH, inputs, PAIR,
        "[jvp(vmap(f, (1, None)), (x1, y1), (dx1, dy1)),\n"
        "       jvp(vmap(f, (None, -1)), (x2, y2), (dx2, dy2))]")


# --- ps2.shape_rules -------------------------------------------------------------------------
SHAPE_RULES = (("vmap_rules", "transpose_p", "transpose_batch"),
               ("vmap_rules", "broadcast_p", "broadcast_batch"))


def _transpose(rng):
    inputs = {"x1": _batched(rng, (3,), -1, 2), "x2": _batched(rng, (2, 3), 1, 4),
              "x3": _batched(rng, (1, 2, 3), -1, 2), "w3": _batched(rng, (3, 1, 2), 0, 2),
              "x4": _batched(rng, (1, 2, 1, 3), 2, 4)}
    return Case(
        "vmap of transpose: members of rank 1 to 4, batch axes anywhere (x3 times a mapped w3)",
        SHAPE_RULES, inputs, "", """[
    vmap(lambda v: transpose(v, (0,)), (-1,))(x1),
    vmap(lambda v: transpose(v, (1, 0)), (1,))(x2),
    vmap(lambda v, w: transpose(v, (2, 0, 1)) * w, (-1, 0))(x3, w3),
    vmap(lambda v: transpose(v, (3, 1, 0, 2)), (2,))(x4),
]""")


def _broadcast(rng):
    inputs = {"x0": _batched(rng, (), 0, 3), "x1": _batched(rng, (3,), -1, 2),
              "x2": _batched(rng, (1, 3), 1, 4), "x3": _batched(rng, (2, 1, 3), 1, 2),
              "w3": _batched(rng, (2, 1, 3, 2), 2, 2)}
    return Case(
        "vmap of broadcast: members of rank 0 to 3, new axes anywhere, batch axes anywhere",
        SHAPE_RULES, inputs, "", """[
    vmap(lambda v: broadcast(v, (2,), (0,)), (0,))(x0),
    vmap(lambda v: broadcast(v, (2, 3), (0,)), (-1,))(x1),
    vmap(lambda v: broadcast(v, (1, 2, 3, 1), (1, 3)), (1,))(x2),
    vmap(lambda v, w: broadcast(v, (2, 1, 3, 2), (3,)) * w, (1, -3))(x3, w3),
]""")


def _nested_vmap(rng):
    levels = [(-1, None, 0), (0, -1, None), (1, 0, -1)]  # in_axes, the innermost vmap's first
    x, y, z = _nested_args(rng, [(2,), (2,), ()], levels, [3, 2, 2])
    return Case(
        "three nested vmaps; y is unmapped by the inner one, z by the middle one",
        SHAPE_RULES, {"x": x, "y": y, "z": z},
        "f = lambda x, y, z: x * y + sin(z) * x + cos(y)  # x, y: vectors; z: a number",
        "vmap(vmap(vmap(f, (-1, None, 0)), (0, -1, None)), (1, 0, -1))(x, y, z)")


def _hessian(rng):
    return Case(
        "jacfwd of jacfwd (each vmap of jvp): the second derivative of a vector function",
        SHAPE_RULES, {"x": _draw(rng, (3,))}, """\
f = lambda v: sin(v) * reduce_sum(v * cos(v), (0,))


def jac(f, x):  # jacfwd of a function of 3-vectors: one jvp per direction, under vmap
    columns = vmap(lambda v: jvp(f, (x,), (v,))[1], (0,))(np.eye(3))
    return transpose(columns, list(range(1, np.ndim(columns))) + [0])  # directions last
""", "jac(lambda v: jac(f, v), x)")


# --- ps2.out_axes ----------------------------------------------------------------------------
TREE_F = """
def f(tree, z):
    x, y = tree["a"], tree["b"][0]
    return {"p": x * y + sin(z) * x, "q": (x * 2.0, sin(y)), "r": [], "c": c}

tree = {"a": x, "b": [y, ()], "e": {}}  # y is never mapped below
"""


def _tree_inputs(rng, x_axis, z_axis):
    return {"x": _batched(rng, (2,), x_axis, 3), "y": _draw(rng, (2,)),
            "z": _batched(rng, (), z_axis, 3), "c": _draw(rng, (2,))}


def _in_axes(rng):
    return Case(
        "vmap_axes with in_axes in full and as prefixes: a negative axis, None, empty containers",
        (), _tree_inputs(rng, -1, 0), TREE_F + """\
out_axes = {"p": 0, "q": (0, 0), "r": [], "c": None}
full = ({"a": -1, "b": [None, ()], "e": {}}, 0)
prefixes = ({"a": -1, "b": None, "e": None}, 0)  # the same axes""",
        "[vmap_axes(f, full, out_axes)(tree, z), vmap_axes(f, prefixes, out_axes)(tree, z)]")


def _out_axes(rng):
    return Case(
        "vmap_axes with out_axes as prefixes and in full: negative axes, None, unmapped outputs",
        (), _tree_inputs(rng, -1, -1), TREE_F + """\
in_axes = ({"a": -1, "b": [None, ()], "e": {}}, -1)
prefixes = {"p": -1, "q": 1, "r": 0, "c": None}  # q's 1 stands for both of its outputs
full = {"p": 0, "q": (-2, None), "r": [], "c": -1}""",
        "[vmap_axes(f, in_axes, prefixes)(tree, z), vmap_axes(f, in_axes, full)(tree, z)]")


def _ints(rng):
    return Case(
        "vmap_axes with one int for all in_axes and one for all out_axes, and with the defaults",
        (), {"x": _batched(rng, (3,), -1, 2), "y": _batched(rng, (3,), -1, 2),
             "x0": _batched(rng, (3,), 0, 2), "y0": _batched(rng, (3,), 0, 2)},
        "f = lambda x, y: sin(x) * y + x",
        "[vmap_axes(f, in_axes=-1, out_axes=-1)(x, y), vmap_axes(f)(x0, y0)]")


BUILDERS = {
    "ps2.jvp_rules.exp_log": _exp_log, "ps2.jvp_rules.div": _div, "ps2.jvp_rules.max": _max,
    "ps2.jvp_rules.nested": _nested, "ps2.jvp_rules.closure": _closure,
    "ps2.matmul.jvp": _matmul_jvp, "ps2.matmul.nested": _matmul_nested,
    "ps2.matmul.vmap": _matmul_vmap, "ps2.matmul.jacfwd": _matmul_jacfwd,
    "ps2.matmul.jvp_of_vmap": _matmul_jvp_of_vmap,
    "ps2.shape_rules.transpose": _transpose, "ps2.shape_rules.broadcast": _broadcast,
    "ps2.shape_rules.nested_vmap": _nested_vmap, "ps2.shape_rules.hessian": _hessian,
    "ps2.out_axes.in_axes": _in_axes, "ps2.out_axes.out_axes": _out_axes,
    "ps2.out_axes.ints": _ints,
}


# --- Literals ----------------------------------------------------------------------------------
def _literal(value) -> str:
    """``literal``, with arrays of rank 2 or more written flat and reshaped: a line or two each."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        items = ", ".join(_literal(v) for v in value)
        if isinstance(value, list):
            return f"[{items}]"
        return f"({items},)" if len(value) == 1 else f"({items})"
    if isinstance(value, np.ndarray) and value.ndim >= 2 and value.size:
        return f"{literal(value.ravel())}.reshape{value.shape}"
    return literal(value)


def _pretty(value, indent: int = 0) -> str:
    """``_literal``, with a container that does not fit on its line written an item a line."""
    inline = _literal(value)
    if len(inline) + indent <= 90 or not isinstance(value, (list, tuple, dict)) or not value:
        return inline
    pad = " " * (indent + 4)
    if isinstance(value, dict):
        items = [f"{pad}{k!r}: {_pretty(v, indent + 4)}," for k, v in value.items()]
        ends = "{}"
    else:
        items = [f"{pad}{_pretty(v, indent + 4)}," for v in value]
        ends = "[]" if isinstance(value, list) else "()"
    return ends[0] + "\n" + "\n".join(items) + "\n" + " " * indent + ends[1]


def _inputs_source(inputs: dict) -> str:
    return "\n".join(f"{name} = {_literal(value)}" for name, value in inputs.items())


# --- The correct value: the snippet's own lines, run with real JAX ---------------------------
def _deriv(f):
    """The notebook's ``deriv`` in JAX: forward mode, as the book's (and quick to trace)."""
    return lambda x: jax.jvp(f, (x,), (1.0,))[1]


def _jax_names() -> dict:
    """The notebook's names a snippet uses, as real JAX computes them."""
    lib = programs.theirs()
    wrappers = {name: lib[name] for name in ("exp", "log", "div", "matmul", "sin", "cos", "neg",
                                             "add", "mul", "transpose", "broadcast")}
    return {**wrappers, "np": np, "maximum": lib["max"],
            "reduce_sum": lambda x, axis=None: jnp.sum(x, axis),
            "jvp": jax.jvp, "deriv": _deriv,
            "vmap": lambda f, in_axes: jax.vmap(f, in_axes=in_axes),
            "vmap_axes": lambda f, in_axes=0, out_axes=0: jax.vmap(f, in_axes=in_axes,
                                                                   out_axes=out_axes)}


def _rounded(value) -> np.ndarray:
    array = np.asarray(value, dtype=np.float64)
    return np.array([float(f"{v:.10g}") for v in array.ravel()]).reshape(array.shape)


def expected(case: Case):
    """What a correct solution gives: the case's own lines run with JAX, in float64."""
    names = _jax_names()
    with jax.enable_x64(True):
        exec(_inputs_source(case.inputs) + "\n" + case.define, names)  # noqa: S102 - our text
        # Jitted: one compilation, instead of one dispatch per operation of nested derivatives.
        value = jax.jit(lambda: eval(case.expr, names))()
        return jax.tree_util.tree_map(_rounded, value)


# --- Snippets ----------------------------------------------------------------------------------
def _same(a, b) -> bool:
    """Equal pytrees of arrays (containers and values)."""
    leaves_a, tree_a = jax.tree_util.tree_flatten(a)
    leaves_b, tree_b = jax.tree_util.tree_flatten(b)
    return tree_a == tree_b and all(np.array_equal(x, y) for x, y in zip(leaves_a, leaves_b))


def _registered(rules) -> list[str]:
    """A check scores a rule only when the transformation calls it: it must be in its table."""
    return [f'assert {table}[{prim}] is {rule}, "{table}[{prim}] is not your {rule}: register it"'
            for table, prim, rule in rules]


# The checks of ps2.matmul grade its rules with the course's other rules only: under jacfwd, a
# matmul_jvp that transposes its batched tangents needs a batching rule of transpose, which is
# another task's (ps2.shape_rules). The snippet takes those out of the table while it runs.
ALONE = """\
# graded on their own: without the batching rules of transpose and broadcast (another task)
others = {p: vmap_rules.pop(p) for p in (transpose_p, broadcast_p) if p in vmap_rules}
try:
    got = EXPR
finally:
    vmap_rules.update(others)"""


def _snippet(check_id: str, case: Case) -> str:
    want = expected(case)
    scale = max([float(np.max(np.abs(v))) for v in jax.tree_util.tree_leaves(want) if v.size]
                + [1.0])
    atol = float(f"{1e-9 * scale:.2g}")  # the check's: scaled to the largest expected value
    lines = [f"# {check_id}: {case.comment}", "import numpy as np", "",
             *_registered(case.rules), _inputs_source(case.inputs)]
    if case.define:
        lines.append(case.define)
    if case.alone:
        lines += [ALONE.replace("EXPR", case.expr.replace("\n", "\n    "))]
    else:
        lines += [f"got = {case.expr}"]
    if isinstance(want, list) and len(want) > 1 and all(_same(want[0], w) for w in want):
        # Equal results (the same axes written two ways): the literal once.
        lines += [f"correct = {_pretty(want[0])}",
                  f"want = [{', '.join(['correct'] * len(want))}]"]
    else:
        lines += [f"want = {_pretty(want)}"]
    lines += [
        'print("your code:         ", got)',
        'print("a correct solution:", want)',
        ('assert tree_flatten(got)[1] == tree_flatten(want)[1], "not the containers of a correct '
         'result"'),
        "for i, (g, w) in enumerate(zip(tree_flatten(got)[0], tree_flatten(want)[0])):",
        '    assert np.shape(g) == np.shape(w), f"array {i}: shape {np.shape(g)}, not {np.shape(w)}"',
        f'    np.testing.assert_allclose(g, w, rtol={RTOL!r}, atol={atol!r}, err_msg=f"array {{i}}")',
    ]
    return "\n".join(lines) + "\n"


def _errors(rng) -> str:
    x, y = _draw(rng, (3, 2)), _draw(rng, (4, 2))
    return f"""\
# ps2.out_axes.errors: vmap_axes raises ValueError where jax.vmap raises one
import numpy as np

x = {_literal(x)}
y = {_literal(y)}
calls = [  # what is wrong, the call, the errors a correct solution may raise
    ("an output with out_axes None that depends on a mapped input",
     lambda: vmap_axes(sin, in_axes=0, out_axes=None)(x), ValueError),
    ("in_axes whose containers do not match the arguments",
     lambda: vmap_axes(lambda d: sin(d["a"]), in_axes=({{"a": 0}},))({{"a": x, "b": x}}),
     (ValueError, TypeError)),
    ("mapped arguments of different sizes (3 and 4)",
     lambda: vmap_axes(add, in_axes=(0, 0))(x, y), ValueError),
    ("in_axes=2 for an argument of rank 2", lambda: vmap_axes(sin, in_axes=2)(x), ValueError),
    ("in_axes=-3 for an argument of rank 2", lambda: vmap_axes(sin, in_axes=-3)(x), ValueError),
    ("a tuple in_axes longer than the arguments",
     lambda: vmap_axes(sin, in_axes=(0, 0))(x), (ValueError, TypeError)),
    ("a tuple in_axes where a dict is",
     lambda: vmap_axes(lambda d: sin(d["a"]), in_axes=((0,),))({{"a": x}}),
     (ValueError, TypeError)),
    ("a dict in_axes with a key the argument lacks",
     lambda: vmap_axes(lambda d: sin(d["a"]), in_axes=({{"a": 0, "b": 0}},))({{"a": x}}),
     (ValueError, TypeError)),
    ("a list in_axes too short",
     lambda: vmap_axes(lambda p: sin(p[0]), in_axes=([0],))([x, x]), (ValueError, TypeError)),
    ("a list in_axes where a tuple is",
     lambda: vmap_axes(lambda p: sin(p[0]), in_axes=([0, 0],))((x, x)),
     (ValueError, TypeError)),
    ("a container in_axes where an array is",
     lambda: vmap_axes(sin, in_axes=((0,),))(x), (ValueError, TypeError)),
    ("out_axes=2 for a batched output of rank 2",
     lambda: vmap_axes(sin, out_axes=2)(x), ValueError),
    ("out_axes=-3 for a batched output of rank 2",
     lambda: vmap_axes(sin, out_axes=-3)(x), ValueError),
]
for what, call, errors in calls:
    try:
        out = call()
    except errors as err:
        print(f"{{what}}: your code raised {{err!r}}, as a correct solution does")
    else:
        print(f"{{what}}: your code returned {{out}}; a correct solution raises ValueError")
        raise AssertionError(f"vmap_axes should raise ValueError for {{what}}")
"""


def build(check_id: str) -> str | None:
    """The snippet of one check, computed afresh (``reproducer`` caches it)."""
    if check_id not in CHECK_IDS or check_id in NEEDS_GPU:
        return None
    rng = public_rng(check_id)
    if check_id == "ps2.out_axes.errors":
        return _errors(rng)
    return _snippet(check_id, BUILDERS[check_id](rng))


@cache
def reproducer(check_id: str) -> str | None:
    """A cell the student pastes after their own cells: it raises while the rule the check
    scores is wrong, and runs to the end (printing both results) once it is right."""
    return build(check_id)
