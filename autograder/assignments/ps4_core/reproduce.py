"""Reproducers of ps4_core: the "Try it yourself" cells of the feedback page (grader side).

A snippet runs after the student's cells and uses only what their notebook defines: the names
the setup cell imports (``grad``, ``make_jaxpr``, ``eval_jaxpr``, ``Jaxpr``, ...) and the three
functions the student writes. Shapes and programs are chosen here by hand so that each snippet
reaches every kind of input its check draws (new axes, stretched axes, a rank-0 operand; dead
chains, unused inputs, closed-over constants, outputs nothing else reads; transitive folding,
literals, folded outputs, constants no longer read); array values come from ``public_rng``.
What a correct solution gives is computed here as the check computes its expectation (real
JAX, in float64 inside ``jax.enable_x64``, which leaves the global configuration as it was; the
gradients under ``jax.jit``, one compilation instead of one per operation) and written into the
snippet as a literal.

``jit`` is not among the notebook's names: the snippet of the ``jit`` check stages ``grad`` with
``make_jaxpr``, which is what ``jit`` does first, so the rule sees a tracer as cotangent too.
"""

from __future__ import annotations

from string import Template

import jax
import jax.numpy as jnp
import numpy as np

from autograder.assignments.ps4_core import checks, programs
from autograder.grade.reproduce import literal, public_rng

TOLERANCE = f"rtol={checks.RTOL!r}, atol={checks.ATOL!r}"
DESCRIPTION = {check.id: check.description for check in checks.CHECKS}

# --- ps4.broadcast_transpose: (x's shape, shape, axes) per check ------------------------------
BROADCASTS = {
    "ps4.broadcast_transpose.new_axes": [((), (3,), (0,)), ((2,), (2, 3), (1,)),
                                         ((3,), (2, 3, 2), (0, 2))],
    "ps4.broadcast_transpose.stretched": [((1, 1), (2, 3), ()), ((2, 1), (2, 3), ()),
                                          ((1,), (2, 3), (0,)), ((1, 2), (3, 2, 2), (1,))],
    "ps4.broadcast_transpose.direct": [((), (3,), (0,)), ((2,), (2, 3), (1,)),
                                       ((1, 1), (2, 3), ()), ((2, 1), (2, 3), ()),
                                       ((1, 3), (2, 2, 3), (0,))],
    "ps4.broadcast_transpose.jit": [((), (2,), (0,)), ((3,), (3, 2), (1,)),
                                    ((2, 1), (2, 3, 2), (1,)), ((1, 1), (2, 2, 3), (0,))],
}

# --- Programs, in the format of programs.py ---------------------------------------------------
# dce: arguments x, y and the closed-over constant c. y is read by dead code only, dead values
# feed other dead ones, the constant is read by a live equation, the last equation is read by
# no other one (only by the outputs), some live values are needed only as the first operand of
# an equation, others only as the second, the live equations are not a palindrome.
DCE_SCATTERED = {"steps": [["mul", 0, 2], ["cos", 1], ["add", 4, 0], ["sin", 0], ["neg", 0],
                           ["add", 3, 6], ["scale", 8]],
                 "outs": [8, 9]}
DCE_CHAIN = {"steps": [["sin", 0], ["mul", 3, 2], ["add", 1, 4], ["neg", 5], ["sin", 6],
                       ["scale", 7], ["add", 0, 4], ["scale", 9]],
             "outs": [9, 10]}
# fold_constants: constants c0, c1 and the input x. Folded results feed further folds (also
# through the literal 2.0), an equation mixes a constant with x, a folded result is an output
# (and read by a kept equation too), folded results and an original constant are read only by
# folded equations; a folded step has params (sum_back: reduce_sum, then broadcast).
FOLD_CHAIN = {"steps": [["sum_back", 0], ["cos", 3], ["scale", 4], ["mul", 1, 2], ["add", 6, 5],
                        ["mul", 2, 7]],
              "outs": [8, 5]}
FOLD_LITERAL = {"steps": [["scale", 0], ["mul", 3, 1], ["sum_back", 1], ["mul", 2, 4],
                          ["add", 6, 0], ["mul", 2, 7]],
                "outs": [8, 4]}
# With equations of two outputs (jit2: an xla_call equation, as jit stages one), as the checks
# draw them: dce.structure reads only the second output of one, dce.chains has one nobody reads.
DCE_SCATTERED_CALL = {"steps": [*DCE_SCATTERED["steps"], ["jit2", 0, 2], ["sin", 11],
                                ["neg", 10]],
                      "outs": [8, 9, 12]}
DCE_CHAIN_CALL = {"steps": [*DCE_CHAIN["steps"], ["jit2", 0, 2], ["cos", 12]],
                  "outs": [9, 10]}
# fold_constants.structure and .consts: c1 is float32 (its negation, folded, is read by a kept
# equation), and an equation of two outputs over constants has both read by kept ones.
FOLD_CHAIN_CALL = {"steps": [*FOLD_CHAIN["steps"], ["neg", 1], ["jit2", 0, 3], ["mul", 9, 2],
                             ["add", 10, 12], ["mul", 11, 13]],
                   "outs": [8, 5, 14]}
PROGRAMS = {
    "ps4.dce.structure": DCE_SCATTERED_CALL, "ps4.dce.chains": DCE_CHAIN_CALL,
    "ps4.dce.values": DCE_CHAIN, "ps4.fold_constants.structure": FOLD_CHAIN_CALL,
    "ps4.fold_constants.literals": FOLD_LITERAL, "ps4.fold_constants.consts": FOLD_CHAIN_CALL,
}
FLOAT32_C1 = ("ps4.fold_constants.structure", "ps4.fold_constants.consts")
CALLS = {"sin": "sin({})", "cos": "cos({})", "neg": "neg({})", "add": "add({}, {})",
         "mul": "mul({}, {})", "scale": "{} * 2.0",
         "sum_back": "broadcast(reduce_sum({}, 0), (3,), (0,))", "jit2": "jit2({}, {})"}
# The notebook does not import jit: a snippet whose program has an equation of two outputs
# stages it as jit does, one xla_call equation holding the function's jaxpr.
JIT2 = """\
# jit(f) stages one equation, of the primitive xla_call, whose params hold f's jaxpr
xla_call_p = next(p for p in transpose_rules if p.name == "xla_call")
pair = make_jaxpr(lambda a, b: [mul(sin(a), b), add(a, cos(b))])(x, x).jaxpr


def jit2(a, b):  # what jit(lambda a, b: [sin(a) * b, a + cos(b)]) stages: two outputs
    return bind(xla_call_p, a, b, name="pair", jaxpr=pair)


"""


# --- Snippets: string.Template, so that the snippets' own braces stay as they are -------------
GRAD = Template("""\
# $check_id: $description
import numpy as np

transpose_rules[broadcast_p] = broadcast_transpose
cases = [  # x, shape, axes, weights w, and the gradient a correct solution gives
$cases]
for x, shape, axes, w, want in cases:
    def loss(v):
        return reduce_sum(mul(sin(broadcast(v, shape, axes)), w))

$gradient
    print(f"broadcast to shape={shape}, axes={axes}, x of shape {x.shape}")
    print("  your code:         ", g)
    print("  a correct solution:", want)
    assert np.shape(g) == x.shape, f"the gradient has shape {np.shape(g)}, x has shape {x.shape}"
    np.testing.assert_allclose(g, want, $tolerance)
""")
EAGER = "    g = grad(loss)(x)"
STAGED = """\
    staged = make_jaxpr(grad(loss))(x)  # staged as jit does: the cotangent is a tracer
    g = eval_jaxpr(staged.jaxpr, staged.consts, [x])[0]"""

DIRECT = Template("""\
# $check_id: $description
import numpy as np

cases = [  # x's shape, shape, axes, cotangent, and x's cotangent from a correct rule
$cases]
for x_shape, shape, axes, ct, want in cases:
    x = UndefinedPrimal(ShapedArray(x_shape, np.float64))
    out = broadcast_transpose([ct], x, shape=shape, axes=axes)
    print(f"broadcast to shape={shape}, axes={axes}, x of shape {x_shape}")
    print("  your code:         ", out)
    print("  a correct solution:", [want])
    assert isinstance(out, (list, tuple)) and len(out) == 1, "return a list of one cotangent"
    assert np.shape(out[0]) == x_shape, f"the cotangent has shape {np.shape(out[0])}"
    np.testing.assert_allclose(out[0], want, $tolerance)
""")

DCE = Template("""\
# $check_id: $description
import numpy as np

c = $c  # closed over: a constvar
x = $x
y = $y


$program


closed = make_jaxpr(program)(x, y)
n_eqns = len(closed.jaxpr.eqns)
smaller = dce_jaxpr(closed.jaxpr)
names = [eqn.primitive.name for eqn in smaller.eqns]
print("your code:         ", names, len(smaller.in_binders), "in_binders,",
      len(smaller.constvars), "constvars")
print("a correct solution:", $prims, $n_in, "in_binders,", $n_const, "constvars")
assert len(closed.jaxpr.eqns) == n_eqns, "dce_jaxpr changed the jaxpr it was given"
assert names == $prims, "the equations left are not the right ones (or not in order)"
assert (len(smaller.in_binders), len(smaller.constvars)) == ($n_in, $n_const), (
    "the in_binders or the constvars changed")
typecheck_jaxpr(smaller)
values = eval_jaxpr(smaller, closed.consts, [x, y])
want = $want
print("your code:         ", values)
print("a correct solution:", want)
np.testing.assert_allclose(values, want, $tolerance)
""")

FOLD = Template("""\
# $check_id: $description
import numpy as np

c0 = $c0
c1 = $c1
x = $x


$program


staged = make_jaxpr(program)(c0, c1, x).jaxpr
c0_var, c1_var, x_var = staged.in_binders
as_constants = Jaxpr([c0_var, c1_var], [x_var], staged.eqns, staged.outs)  # c0, c1 known
folded, consts = fold_constants(as_constants, [c0, c1])
names = [eqn.primitive.name for eqn in folded.eqns]
print("your code:         ", names, len(consts), "constants,", len(folded.constvars),
      "constvars,", len(folded.in_binders), "in_binders")
print("a correct solution:", $prims, $n_const, "constants,", $n_constvars, "constvars,", $n_in,
      "in_binders")
assert names == $prims, "the equations left are not the right ones (or not in order)"
assert len(consts) == $n_const, "the wrong constants are kept"
assert len(folded.constvars) == len(consts), "the constvars do not match the constants"
assert len(folded.in_binders) == $n_in, "the input binders changed"
for var, const in zip(folded.constvars, consts):
    print("a constvar:", var.aval.shape, var.aval.dtype, "its constant:", np.shape(const),
          np.asarray(const).dtype)
    assert (tuple(var.aval.shape), np.dtype(var.aval.dtype)) == (
        np.shape(const), np.asarray(const).dtype), "a constvar's type is not its constant's"
typecheck_jaxpr(folded)
values = eval_jaxpr(folded, consts, [x])
want = $want
print("your code:         ", values)
print("a correct solution:", want)
np.testing.assert_allclose(values, want, $tolerance)
""")


def reproducer(check_id: str) -> str | None:
    if check_id in BROADCASTS:
        make = _direct if check_id.endswith(".direct") else _grad
    elif check_id.startswith("ps4.dce."):
        make = _dce
    elif check_id.startswith("ps4.fold_constants."):
        make = _fold
    else:
        return None
    with jax.enable_x64(True):  # the checks' float64, in this block only
        return make(check_id)


# --- Helpers ------------------------------------------------------------------------------------
def _draw(rng: np.random.Generator, shape) -> np.ndarray:
    return np.round(rng.uniform(-2.0, 2.0, size=shape), 2)


def _lit(value, column: int = 0) -> str:
    """``literal(value)``, its continuation lines indented to start under ``np.array(``; an
    array of rank 3 is written flat and reshaped, on one line rather than one per row."""
    value = np.asarray(value)
    if value.ndim >= 3:
        return f"{literal(value.reshape(-1))}.reshape{value.shape}"
    lines = [line for line in literal(value).split("\n") if line.strip()]
    return ("\n" + " " * (column + len("np.array("))).join(lines)


def _lits(values: list, column: int) -> str:
    """A list of arrays, one a line."""
    return "[" + (",\n" + " " * (column + 1)).join(_lit(v, column + 1) for v in values) + "]"


def _fill(template: Template, check_id: str, **fields) -> str:
    return template.substitute(check_id=check_id, description=DESCRIPTION[check_id],
                               tolerance=TOLERANCE, **fields)


def _program_code(program: dict, names: list[str], params: list[str]) -> str:
    """The program (programs.py's format) as a function of the notebook's operations."""
    names, n_args = list(names), len(names)
    lines = [f"def program({', '.join(params)}):"]
    for op, *idx in program["steps"]:
        outs = []
        for _ in range(2 if op in programs.CALLS else 1):
            names.append(f"v{len(names) - n_args + 1}")  # v1, v2, ...
            outs.append(names[-1])
        lines.append(f"    {', '.join(outs)} = {CALLS[op].format(*[names[i] for i in idx])}")
    lines.append(f"    return [{', '.join(names[k] for k in program['outs'])}]")
    code = "\n".join(lines)
    has_call = any(op in programs.CALLS for op, *_ in program["steps"])
    return (JIT2 + code) if has_call else code


# --- ps4.broadcast_transpose --------------------------------------------------------------------
def _expect_grad(shape, axes, x, w) -> np.ndarray:
    """checks.expect_broadcast_grad under jit: one compilation instead of one per operation."""
    loss = checks._jax_loss({"shape": list(shape), "axes": list(axes), "w": w})
    return np.asarray(jax.jit(jax.grad(loss))(jnp.asarray(x)), dtype=np.float64)


def _grad(check_id: str) -> str:
    rng = public_rng(check_id)
    rows = []
    for x_shape, shape, axes in BROADCASTS[check_id]:
        x, w = _draw(rng, x_shape), _draw(rng, shape)
        want = _expect_grad(shape, axes, x, w)
        rows.append(f"    ({_lit(x, 5)}, {shape!r}, {axes!r},\n     {_lit(w, 5)},\n"
                    f"     {_lit(want, 5)}),\n")
    staged = check_id.endswith(".jit")
    return _fill(GRAD, check_id, cases="".join(rows), gradient=STAGED if staged else EAGER)


def _direct(check_id: str) -> str:
    rng = public_rng(check_id)
    rows = []
    for x_shape, shape, axes in BROADCASTS[check_id]:
        ct = _draw(rng, shape)
        want = checks.expect_broadcast_direct({"shape": list(shape), "axes": list(axes),
                                               "x": np.zeros(x_shape), "ct": ct})["cts"][0]["value"]
        rows.append(f"    ({x_shape!r}, {shape!r}, {axes!r},\n     {_lit(ct, 5)},\n"
                    f"     {_lit(want, 5)}),\n")
    return _fill(DIRECT, check_id, cases="".join(rows))


# --- ps4.dce and ps4.fold_constants ------------------------------------------------------------
def _dce(check_id: str) -> str:
    rng = public_rng(check_id)
    program = PROGRAMS[check_id]
    c, x, y = (_draw(rng, 3) for _ in range(3))
    want = checks.expect_dce({"program": program, "args": [x, y], "const": c})
    return _fill(DCE, check_id, c=_lit(c), x=_lit(x), y=_lit(y),
                 program=_program_code(program, ["x", "y", "c"], ["x", "y"]),
                 prims=repr(want["prims"]), n_in=want["n_in"], n_const=want["n_const"],
                 want=_lits(want["values"], len("want = ")))


def _fold(check_id: str) -> str:
    rng = public_rng(check_id)
    program = PROGRAMS[check_id]
    c0, c1, x = (_draw(rng, 3) for _ in range(3))
    if check_id in FLOAT32_C1:
        c1 = c1.astype(np.float32)
    want = checks.expect_fold({"program": program, "consts": [c0, c1], "x": x})
    return _fill(FOLD, check_id, c0=_lit(c0), c1=_lit(c1), x=_lit(x),
                 program=_program_code(program, ["c0", "c1", "x"], ["c0", "c1", "x"]),
                 prims=repr(want["prims"]), n_in=want["n_in"], n_const=want["n_const"],
                 n_constvars=want["n_constvars"],
                 want=_lits(want["values"], len("want = ")))
