"""Hidden checks of ps2_autodidax (grader side only).

Inputs are drawn at grading time: random programs over the core's primitives (programs.py),
random points and tangents, random pytrees with a registered custom node, random `in_axes`.
Expectations come from real JAX on the same programs, in float64 like the NumPy-based core.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from autograder import judge
from autograder.assignments.ps2_autodidax import programs
from autograder.spec import Assignment, Check, Outcome, Task, Verdict

X64 = (("jax_enable_x64", True),)
RTOL, ATOL = 1e-7, 1e-9

TASKS = (
    Task("ps2.jvp_rules", "the JVP rules of add, mul, neg, sin, cos, reduce_sum, greater, less"),
    Task("ps2.jvp_trace", "JVPTrace.process_primitive"),
    Task("ps2.pytree", "tree_flatten, tree_unflatten and flatten_fun"),
    Task("ps2.jvp", "jvp_flat and jvp"),
    Task("ps2.vmap_rules", "the batching rules (binary, unary, reduce_sum)"),
    Task("ps2.vmap", "vmap_flat and vmap"),
    Task("ps2.jacfwd", "jacfwd"),
)


# --- Judges ----------------------------------------------------------------------------------
def close(expected, outcome: Outcome) -> Verdict:
    return judge.close(expected, outcome, rtol=RTOL, atol=ATOL)


def structured(expected, outcome: Outcome) -> Verdict:
    """{"structure": str, "values": tree}: the containers must match exactly, then the values."""
    if outcome.raised is None:
        got = outcome.value
        if not isinstance(got, dict) or got.get("structure") != expected["structure"]:
            return Verdict(False, "the output has the wrong container structure")
        outcome = Outcome(value=got.get("values"))
    return close(expected["values"], outcome)


def flags_and_values(expected, outcome: Outcome) -> Verdict:
    if outcome.raised is None:
        got = outcome.value
        flags = got.get("flags") if isinstance(got, dict) else None
        if flags != expected["flags"]:
            what = ("dicts with the same keys in another order get different structures",
                    "different containers get equal structures",
                    "flatten_fun's store does not hold the output structure")
            bad = [w for w, g, e in zip(what, flags or [None] * 3, expected["flags"]) if g != e]
            return Verdict(False, "; ".join(bad) or "wrong result")
        outcome = Outcome(value=got.get("out"))
    return close(expected["out"], outcome)


# --- Input makers ----------------------------------------------------------------------------
def _vec(rng, n):
    return rng.uniform(-2.0, 2.0, size=n)


def _composite(n_args):
    def make(rng):
        n = int(rng.integers(2, 5))
        return {"program": programs.draw_program(rng, n_args, int(rng.integers(1, 4)), sums=True),
                "primals": [_vec(rng, n) for _ in range(n_args)],
                "tangents": [_vec(rng, n) for _ in range(n_args)]}

    return make


def _nested(rng):
    return {"program": programs.draw_program(rng, 1, int(rng.integers(1, 4)), sums=False),
            "x": float(rng.uniform(-2.0, 2.0)), "order": 3}


def _comparisons(rng):
    n = int(rng.integers(1, 4))
    c = float(rng.uniform(-0.5, 0.5))
    return {"x": _vec(rng, n), "y": _vec(rng, n), "c": c,
            "points": [c - float(rng.uniform(0.2, 1.0)), c + float(rng.uniform(0.2, 1.0))]}


def _tree(rng):
    spec = {"top": programs.draw_tree(rng), "node": {"__pair__": [programs.draw_tree(rng), 1.5]},
            "z": [programs.draw_tree(rng), (0.5, {"b": 2.0, "a": -1.0})]}
    return {"tree": spec}


def _reorder(spec, rng):
    if isinstance(spec, dict) and set(spec) != {"__pair__"}:
        keys = list(spec)
        rng.shuffle(keys)
        return {k: _reorder(spec[k], rng) for k in keys}
    if isinstance(spec, dict):
        return {"__pair__": [_reorder(s, rng) for s in spec["__pair__"]]}
    if isinstance(spec, (list, tuple)):
        return type(spec)(_reorder(s, rng) for s in spec)
    return spec


def _structures(rng):
    spec = _tree(rng)["tree"]
    other = dict(spec, z=list(spec["z"]) + [3.0])  # one more leaf
    return {"tree": spec, "reordered": _reorder(spec, rng), "other": other}


def _tree_jvp(rng):
    n = int(rng.integers(2, 5))
    return {"program": programs.draw_program(rng, 4, int(rng.integers(1, 4)), sums=True),
            "primals": [_vec(rng, n) for _ in range(4)],
            "tangents": [_vec(rng, n) for _ in range(4)]}


def _perturbation(rng):
    return {"x": float(rng.uniform(-2.0, 2.0)), "y0": float(rng.uniform(-2.0, 2.0))}


def _axes_args(rng, n_args, batch, n):
    """in_axes from 0, 1 and None, with a 1 always and a None whenever there are three or more
    arguments, and arguments shaped to match."""
    axes = [[0, 1, None][rng.integers(3)] for _ in range(n_args)]
    positions = rng.permutation(n_args)
    if 1 not in axes:
        axes[positions[0]] = 1
    if n_args >= 3 and None not in axes:
        axes[positions[1]] = None
    shapes = {0: (batch, n), 1: (n, batch), None: (n,)}
    return axes, [rng.uniform(-2.0, 2.0, size=shapes[ax]) for ax in axes]


def _sizes(rng):
    batch = int(rng.integers(2, 5))
    return batch, batch + int(rng.integers(1, 3))  # unequal, so a misplaced axis cannot hide


def _mixed_axes(n_args):
    def make(rng):
        axes, args = _axes_args(rng, n_args, *_sizes(rng))
        # The covering steps put an axis-1 argument through every primitive, the binary ones
        # together with an unmapped argument: the cases a batching rule most often gets wrong.
        focus = [i for i, ax in enumerate(axes) if ax == 1]
        partners = [i for i, ax in enumerate(axes) if ax is None]
        program = programs.draw_program(rng, n_args, int(rng.integers(1, 4)), sums=False,
                                        focus=focus, partners=partners)
        return {"program": program, "in_axes": axes, "args": args}

    return make


def _reduce_sum_cases(rng):
    cases = []
    for in_axis in range(3):
        shape = [int(s) for s in rng.integers(2, 5, size=3)]
        summed = [[0], [1], [0, 1]][rng.integers(3)]
        cases.append((rng.uniform(-2.0, 2.0, size=shape), in_axis, summed))
    return {"cases": cases}


def _batch_of_points(rng):
    batch = int(rng.integers(2, 6))
    return {"program": programs.draw_program(rng, 1, int(rng.integers(1, 4)), sums=False),
            "xs": _vec(rng, batch), "ts": _vec(rng, batch)}


def _jvp_of_vmap(rng):
    inputs = _mixed_axes(2)(rng)
    inputs["primals"] = inputs.pop("args")
    inputs["tangents"] = [rng.uniform(-2.0, 2.0, size=np.shape(a)) for a in inputs["primals"]]
    return inputs


def _vmap_pytree(rng):
    inputs = _mixed_axes(4)(rng)
    # Unmapped, and shaped like one example (the notebook's rules assume operands of one rank).
    first, axis = inputs["args"][0], inputs["in_axes"][0]
    inputs["scale"] = _vec(rng, np.shape(first)[0 if axis == 1 else -1])
    return inputs


def _unmapped(rng):
    axis = int(rng.integers(2))
    batch, n = int(rng.integers(2, 5)), int(rng.integers(2, 5))
    return {"axis": axis, "x": rng.uniform(-2.0, 2.0, size=(batch, n) if axis == 0 else (n, batch)),
            "y": _vec(rng, n), "const": _vec(rng, n)}


def _jac_vector(rng):
    return {"program": programs.draw_program(rng, 1, int(rng.integers(1, 4)), sums=False),
            "x": _vec(rng, int(rng.integers(2, 5)))}


def _jac_matrix(rng):
    return {"program": programs.draw_program(rng, 1, int(rng.integers(1, 4)), sums=False),
            "x": rng.uniform(-2.0, 2.0, size=(2, int(rng.integers(2, 4))))}


# --- Expectations (real JAX) -----------------------------------------------------------------
def _np(x):
    return np.asarray(x, dtype=np.float64)


def _f(program):
    return programs.build(program, programs.theirs())


def expect_composite(inputs):
    primal, tangent = jax.jvp(_f(inputs["program"]), tuple(inputs["primals"]),
                              tuple(inputs["tangents"]))
    return [_np(primal), _np(tangent)]


def expect_nested(inputs):
    out, g = [], _f(inputs["program"])
    for _ in range(inputs["order"]):
        g = jax.grad(g)
        out.append(_np(g(inputs["x"])))
    return out


def expect_comparisons(inputs):
    x, y, c = inputs["x"], inputs["y"], inputs["c"]
    out = []
    for compare in (jnp.greater, jnp.less):
        out += [_np(compare(x, y)), np.zeros(np.shape(x))]

    def branchy(v):
        return jnp.sin(v) * v if v > c else jnp.cos(v)

    for v in inputs["points"]:
        out += [_np(t) for t in jax.jvp(branchy, (v,), (1.0,))]
    return out


def _tree_fn(program):
    programs.register_pair_with_jax()
    return programs.tree_function(program, programs.theirs())


def expect_tree_leaves(inputs):
    programs.register_pair_with_jax()
    return _np(jax.tree_util.tree_leaves(programs.decode(inputs["tree"])))


def expect_roundtrip(inputs):
    doubled = _double(programs.decode(inputs["tree"]))
    return {"structure": programs.describe(doubled),
            "values": np.asarray(programs.canonical_leaves(doubled), dtype=np.float64)}


def _double(tree):
    programs.register_pair_with_jax()
    return jax.tree_util.tree_map(lambda v: 2.0 * v, tree)


def expect_structures(inputs):
    programs.register_pair_with_jax()
    return {"flags": [True, True, True],
            "out": _np(jax.tree_util.tree_leaves(programs.decode(inputs["other"])))}


def _tree_args(inputs):
    def tree(vals):
        x, y, z, w = vals
        return {"a": x, "b": [y, programs.Pair(z, w)]}

    return tree(inputs["primals"]), tree(inputs["tangents"])


def expect_tree_jvp(inputs):
    primals, tangents = _tree_args(inputs)
    out, dout = jax.jvp(_tree_fn(inputs["program"]), (primals,), (tangents,))
    return {"structure": programs.describe(out) + programs.describe(dout),
            "values": [programs.encode(out), programs.encode(dout)]}


def expect_perturbation(inputs):
    x, y0 = inputs["x"], inputs["y0"]
    grad = jax.grad
    return [
        _np(grad(lambda a: a * grad(lambda b: a + b)(y0))(x)),
        _np(grad(lambda a: a * grad(lambda b: a + 0.0 * b)(y0))(x)),
        _np(grad(lambda a: jnp.sin(a) * grad(lambda b: a * b)(y0))(x)),
    ]


def expect_jvp_of_vmap(inputs):
    f = _f(inputs["program"])
    batched = jax.vmap(lambda *a: jnp.sum(f(*a), 0), in_axes=tuple(inputs["in_axes"]))
    primal, tangent = jax.jvp(batched, tuple(inputs["primals"]), tuple(inputs["tangents"]))
    return [_np(primal), _np(tangent)]


def expect_mixed_axes(inputs):
    f = _f(inputs["program"])
    return _np(jax.vmap(lambda *a: jnp.sum(f(*a), 0), in_axes=tuple(inputs["in_axes"]))(
        *inputs["args"]))


def expect_reduce_sum(inputs):
    return [_np(jax.vmap(lambda v, axis=tuple(axis): jnp.sum(v, axis), in_axes=in_axis)(x))
            for x, in_axis, axis in inputs["cases"]]


def expect_vmap_of_jvp_tangents(inputs):
    f = _f(inputs["program"])
    return _np(jax.vmap(lambda x, t: jax.jvp(f, (x,), (t,))[1])(inputs["xs"], inputs["ts"]))


def expect_vmap_of_jvp(inputs):
    f = _f(inputs["program"])
    primal, tangent = jax.vmap(lambda x, t: jax.jvp(f, (x,), (t,)))(inputs["xs"], inputs["ts"])
    return [_np(primal), _np(tangent)]


def expect_vmap_pytree(inputs):
    programs.register_pair_with_jax()
    body = _f(inputs["program"])

    def f(tree, scale):
        x, (y, pair) = tree["a"], tree["b"]
        out = body(x, y, pair.first, pair.second)
        return {"sum": jnp.sum(out, 0), "pair": programs.Pair(out, x * scale)}

    a = inputs["args"]
    ax = inputs["in_axes"]
    args = ({"a": a[0], "b": [a[1], programs.Pair(a[2], a[3])]}, inputs["scale"])
    axes = ({"a": ax[0], "b": [ax[1], programs.Pair(ax[2], ax[3])]}, None)
    out = jax.vmap(f, in_axes=axes)(*args)
    return {"structure": programs.describe(out), "values": programs.encode(out)}


def expect_unmapped(inputs):
    const = inputs["const"]
    def f(x, y):
        return [jnp.sin(x), y, jnp.asarray(const)]

    outs = jax.vmap(f, in_axes=(inputs["axis"], None))(inputs["x"], inputs["y"])
    return [_np(v) for v in outs]


def expect_jac_mixing(inputs):
    f = _f(inputs["program"])
    return _np(jax.jacfwd(lambda v: f(v) * jnp.sum(v, 0))(inputs["x"]))


def expect_jac_matrix(inputs):
    return _np(jax.jacfwd(_f(inputs["program"]))(inputs["x"]))


# --- The checks ------------------------------------------------------------------------------
def _check(id, task, cell, points, description, probe, make, expect, judge_=close, blame=""):
    return Check(id=id, task=task, description=description, points=points, grade_cell=cell,
                 probe=probe, make_inputs=make, expect=expect, judge=judge_, blame=blame,
                 jax_config=X64, timeout_s=60.0)


CHECKS = (
    _check("ps2.jvp_rules.composite", "ps2.jvp_rules", "test_jvp_rules", 4,
           "jvp of random compositions of add, mul, neg, sin, cos and reduce_sum",
           "probe_jvp_rules_composite", _composite(2), expect_composite,
           blame="A tangent is wrong: check each rule against its derivative (the product rule "
                 "for mul, the signs of the sin and cos rules)."),
    _check("ps2.jvp_rules.nested", "ps2.jvp_rules", "test_jvp_rules", 3,
           "derivatives of order 1 to 3 of random scalar functions",
           "probe_jvp_rules_nested", _nested, expect_nested,
           blame="Higher derivatives differentiate your rules themselves: compute them with the "
                 "primitive wrappers (sin, cos, mul, neg), not NumPy, and mind the signs."),
    _check("ps2.jvp_rules.comparisons", "ps2.jvp_rules", "test_jvp_rules", 3,
           "greater and less (value, zero tangent) and Python control flow on their result",
           "probe_jvp_rules_comparisons", _comparisons, expect_comparisons,
           blame="greater_jvp and less_jvp must return the comparison and a zero tangent."),
    _check("ps2.jvp_trace.composite", "ps2.jvp_trace", "test_jvp_trace", 3,
           "jvp of random compositions (with reduce_sum's axis) through your JVPTrace",
           "probe_jvp_trace_composite", _composite(2), expect_composite,
           blame="process_primitive must pass the params to the rule as keywords and box every "
                 "output primal with its own tangent in a JVPTracer of this trace."),
    _check("ps2.jvp_trace.nested", "ps2.jvp_trace", "test_jvp_trace", 3,
           "derivatives of order 1 to 3 through your JVPTrace",
           "probe_jvp_trace_nested", _nested, expect_nested,
           blame="Nested derivatives need each output boxed in a tracer of *this* trace."),
    _check("ps2.pytree.leaves", "ps2.pytree", "test_pytree", 3,
           "the leaves of nested dicts, lists, tuples and a registered custom node, in order",
           "probe_pytree_leaves", _tree, expect_tree_leaves,
           blame="tree_flatten must visit children depth first, left to right, using the "
                 "registered NodeType (dict children come in sorted key order)."),
    _check("ps2.pytree.roundtrip", "ps2.pytree", "test_pytree", 3,
           "tree_unflatten rebuilds the same containers with new leaves in the same places",
           "probe_pytree_roundtrip", _tree, expect_roundtrip, structured,
           blame="tree_unflatten must consume the leaves in the order tree_flatten produced "
                 "them and rebuild each node with its NodeType.from_iterable."),
    _check("ps2.pytree.structure", "ps2.pytree", "test_pytree", 2,
           "structures compare equal exactly when the containers match; flatten_fun",
           "probe_pytree_structure", _structures, expect_structures, flags_and_values,
           blame="A PyTreeDef must depend only on the containers (sorted dict keys), and "
                 "flatten_fun must store the output structure."),
    _check("ps2.jvp.pytree", "ps2.jvp", "test_jvp", 3,
           "jvp of a function from a pytree (dict, list, custom node) to a pytree",
           "probe_jvp_pytree", _tree_jvp, expect_tree_jvp, structured,
           blame="jvp must flatten primals and tangents, wrap f with flatten_fun and rebuild both "
                 "outputs with the stored output structure."),
    _check("ps2.jvp.perturbation", "ps2.jvp", "test_jvp", 3,
           "nested jvp where the inner function closes over the outer variable",
           "probe_jvp_perturbation", _perturbation, expect_perturbation,
           blame="Perturbation confusion: jvp_flat must bring every output to its own trace with "
                 "full_raise before reading tangents, or an outer tracer's tangent leaks in."),
    _check("ps2.jvp.nested", "ps2.jvp", "test_jvp", 2,
           "derivatives of order 1 to 3 by nesting your jvp",
           "probe_jvp_nested", _nested, expect_nested,
           blame="Each jvp must push its own interpreter with new_main."),
    _check("ps2.jvp.of_vmap", "ps2.jvp", "test_jvp", 2,
           "jvp of a vmapped function (in_axes mixing 0, 1 and None)",
           "probe_jvp_of_vmap", _jvp_of_vmap, expect_jvp_of_vmap,
           blame="jvp must work on any function of arrays, including a batched one."),
    _check("ps2.vmap_rules.mixed_axes", "ps2.vmap_rules", "test_vmap_rules", 5,
           "vmap of random elementwise compositions with in_axes mixing 0, 1 and None",
           "probe_vmap_rules_mixed_axes", _mixed_axes(3), expect_mixed_axes,
           blame="binop_batching_rule must move both operands to one batch axis, broadcasting "
                 "an unmapped operand with move_batch_axis."),
    _check("ps2.vmap_rules.reduce_sum", "ps2.vmap_rules", "test_vmap_rules", 3,
           "vmap of reduce_sum for every position of the batch axis",
           "probe_vmap_rules_reduce_sum", _reduce_sum_cases, expect_reduce_sum,
           blame="reduce_sum_batching_rule: shift the summed axes past the batch axis, and move "
                 "the output batch axis left by the number of summed axes before it."),
    _check("ps2.vmap_rules.of_jvp", "ps2.vmap_rules", "test_vmap_rules", 2,
           "vmap of jvp (your batching rules applied to JVP rules' operations)",
           "probe_vmap_rules_of_jvp", _batch_of_points, expect_vmap_of_jvp_tangents,
           blame="The batching rules must handle the unmapped constants that JVP rules create."),
    _check("ps2.vmap.pytree", "ps2.vmap", "test_vmap", 4,
           "vmap of a pytree function, in_axes mixing 0, 1 and None in a matching tree",
           "probe_vmap_pytree", _vmap_pytree, expect_vmap_pytree, structured,
           blame="vmap_flat must map only the arguments with an axis, find the batch size from "
                 "them, and move every output's batch axis to 0."),
    _check("ps2.vmap.of_jvp", "ps2.vmap", "test_vmap", 2,
           "vmap of jvp", "probe_vmap_of_jvp", _batch_of_points, expect_vmap_of_jvp,
           blame="vmap must return every output of the function, batched along axis 0."),
    _check("ps2.vmap.unmapped_outputs", "ps2.vmap", "test_vmap", 2,
           "outputs that do not depend on a mapped input are broadcast to the batch",
           "probe_vmap_unmapped_outputs", _unmapped, expect_unmapped,
           blame="Bring outputs to the trace with full_raise and broadcast unmapped ones with "
                 "move_batch_axis."),
    _check("ps2.jacfwd.mixing", "ps2.jacfwd", "test_jacfwd", 4,
           "the Jacobian of a function that mixes its inputs",
           "probe_jacfwd_mixing", _jac_vector, expect_jac_mixing,
           blame="jacfwd must return rows indexed by outputs and columns by inputs, like "
                 "jax.jacfwd: vmap stacks the pushed-forward basis vectors along axis 0."),
    _check("ps2.jacfwd.matrix", "ps2.jacfwd", "test_jacfwd", 2,
           "the Jacobian at a matrix, shaped f(x).shape + x.shape",
           "probe_jacfwd_matrix", _jac_matrix, expect_jac_matrix,
           blame="Use one basis vector per entry of x, shaped like x."),
)

ASSIGNMENT = Assignment(name="ps2_autodidax", notebook="ps2_autodidax.ipynb", tasks=TASKS,
                        checks=CHECKS, extra={"own_primitives": ()})
