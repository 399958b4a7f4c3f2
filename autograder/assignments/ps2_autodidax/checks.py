"""Hidden checks of ps2_autodidax (grader side only).

Every input is drawn at grading time from the check's seeded generator: random programs over the
primitives (programs.py) at ranks 0 to 4 with reductions over several and negative axes, points
with ties and tiny divisors, closures over outer tracers and constants, batch axes at every
position (negative ones too) and unmapped operands, nested vmap, Jacobians between spaces of
different sizes, pytrees with empty containers and axes given as prefixes. Expectations come from
real JAX in float64, as the NumPy-based core computes.

A check that scores a rule also fails when the rule was never called (the probe counts calls).

Input classes run on every grading (one case each, drawn at random within its class):
- ps2.matmul.vmap and ps2.matmul.jvp_of_vmap: every pair of in-axes there is for x and y, for
  members that are matrices (rank 2: each axis None or 0 to 2, 15 pairs) and stacks of one axis
  (rank 3: None or 0 to 3, 24 pairs), not both None; each axis written non-negative or negative
  at random.
"""

from __future__ import annotations

import functools
from contextlib import contextmanager

import jax
import jax.numpy as jnp
import numpy as np

from autograder.worker import banned, judge
from autograder.assignments.ps2_autodidax import programs
from autograder.spec import Assignment, Check, Outcome, Task, Verdict

X64 = (("jax_enable_x64", True),)  # float64, as the NumPy-based core computes
RTOL = 1e-7

TASKS = (
    Task("ps2.jvp_rules", "the JVP rules of exp, log, div and maximum",
         banned=banned.DERIVATIVES),
    Task("ps2.matmul", "matmul's JVP rule and batching rule",
         banned=(*banned.DERIVATIVES, *banned.BATCHING)),
    Task("ps2.shape_rules", "the batching rules of transpose and broadcast (nested vmap)",
         banned=banned.BATCHING),
    Task("ps2.out_axes", "vmap_axes: vmap with in_axes and out_axes as pytree prefixes",
         banned=banned.BATCHING),
)


# --- Judges ----------------------------------------------------------------------------------
def _scaled_close(expected, outcome: Outcome) -> Verdict:
    """Close, with an absolute tolerance scaled to the largest expected magnitude: correct rules
    written in different orders round differently, most where large terms cancel."""
    return judge.close_scaled(expected, outcome, rtol=RTOL, atol=1e-9)


def called(*rules: str):
    """A judge: each of ``rules`` ran at least once, then the value is close."""

    def judge_(expected, outcome: Outcome) -> Verdict:
        failed = judge.raised(outcome)
        if failed:
            return failed
        got = outcome.value
        calls = got.get("calls") if isinstance(got, dict) else None
        if not isinstance(calls, dict):
            return Verdict(False, "the probe returned no call counts")
        never = [rule for rule in rules if not (isinstance(calls.get(rule), int)
                                                and calls[rule] > 0)]
        if never:
            return Verdict(False, f"{', '.join(never)} was never called: the interpreter did not "
                                  "use your rule")
        return _scaled_close(expected["value"], Outcome(value=got.get("value")))

    return judge_


def structured(expected, outcome: Outcome) -> Verdict:
    """{"structure": str, "values": tree}: the containers must match exactly, then the values."""
    failed = judge.raised(outcome)
    if failed:
        return failed
    got = outcome.value
    if not isinstance(got, dict) or got.get("structure") != expected["structure"]:
        return Verdict(False, "the output has the wrong container structure")
    return _scaled_close(expected["values"], Outcome(value=got.get("values")))


def errors(expected, outcome: Outcome) -> Verdict:
    failed = judge.raised(outcome)
    if failed:
        return failed
    got = outcome.value
    if not isinstance(got, list) or len(got) != len(expected):
        return Verdict(False, "wrong result")
    what = ("an output with out_axes None that is mapped",
            "in_axes whose structure does not match the arguments",
            "mapped arguments of different sizes", "an in_axes beyond the argument's rank",
            "a tuple in_axes longer than the arguments", "a tuple in_axes where a dict is",
            "a dict in_axes with a key the argument lacks", "a list in_axes too short",
            "a list in_axes where a tuple is", "a container in_axes where an array is",
            "a negative in_axes beyond the argument's rank",
            "an out_axes beyond the output's rank", "a negative out_axes beyond the output's rank")
    bad = [f"{w} (raised {g})" for w, g, e in zip(what, got, expected)
           if not isinstance(g, str) or g not in e.split("|")]
    if bad:
        return Verdict(False, "should raise ValueError: " + "; ".join(bad))
    return Verdict(True)


# --- Input makers ----------------------------------------------------------------------------
NEW_JVP = ("exp", "log", "div", "max")


def _elementwise(cover, extra_cases=None):
    """A random program with every op of ``cover``, whose other steps use only the ops whose
    rules the course provides: a check of one rule never runs another rule the student wrote
    (a wrong div_jvp failed ps2.jvp_rules.max whenever its draw added a div step: for some
    course secrets and not others)."""
    def make(rng):
        n_args = int(rng.integers(1, 4))
        inputs = programs.draw_elementwise(rng, n_args, cover,
                                           ops=programs.PROVIDED + tuple(cover))
        if extra_cases:
            inputs["cases"] = extra_cases(rng)
        return inputs

    return make


def _tiny_divisors(rng):
    shape = [int(s) for s in rng.integers(1, 4, size=int(rng.integers(1, 4)))]
    y = rng.choice([-1.0, 1.0], size=shape) * 10.0 ** rng.uniform(-4, -2, size=shape)
    x = rng.uniform(-1.0, 1.0, size=shape)
    scalar = float(rng.uniform(0.5, 1.5))
    tangents = [rng.uniform(-1.0, 1.0, size=shape) for _ in range(2)]
    return [
        {"op": "div", "primals": [x, y], "tangents": tangents},
        # Operands of different rank: a scalar over an array, an array over a scalar.
        {"op": "div", "primals": [scalar, y], "tangents": [0.5, tangents[1]]},
        {"op": "div", "primals": [x, scalar], "tangents": [tangents[0], -0.25]},
    ]


def _ties(rng):
    shape = [int(s) for s in rng.integers(1, 4, size=int(rng.integers(1, 4)))]
    x = np.round(rng.uniform(-1.0, 1.0, size=shape), 1)
    y = np.where(rng.random(size=shape) < 0.5, x, rng.uniform(-1.0, 1.0, size=shape))
    x.flat[0] = y.flat[0]  # at least one tie
    dx, dy = (rng.uniform(-1.0, 1.0, size=shape) for _ in range(2))
    return [
        {"op": "max", "primals": [x, y], "tangents": [dx, dy]},
        {"op": "max", "primals": [x, x], "tangents": [dx, dy]},
        {"op": "max", "primals": [y, 0.0], "tangents": [dy, 0.0]},
        {"op": "max", "primals": [float(x.flat[0]), y], "tangents": [0.75, dy]},
    ]


def _nested(rng):
    # Third derivatives: divisors kept 0.25 from zero (programs.tame says why).
    inputs = programs.draw_elementwise(rng, 1, NEW_JVP, rank=0, extra=int(rng.integers(0, 3)),
                                       margin=0.25)
    return {"program": inputs["program"], "x": float(inputs["primals"][0]), "order": 3}


def _closure(rng):
    return {"x": float(rng.uniform(0.3, 1.2)), "y0": float(rng.uniform(0.3, 1.2)),
            "c": float(rng.uniform(-1.0, 1.0))}


def _stack(rng):
    return [int(s) for s in rng.integers(1, 4, size=int(rng.integers(0, 3)))]


def _dims(rng, n):
    return [int(s) for s in rng.integers(1, 5, size=n)]


def _matmul_chain(rng):
    b, (n, k, m, p) = _stack(rng), _dims(rng, 4)
    shapes = [b + [n, k], b + [k, m], b + [m, p]]
    unary = ("id", "sin", "cos", "neg")
    rank = len(b) + 2
    program = {"u": [unary[int(rng.integers(4))] for _ in range(2)],
               "sum": programs.draw_sum_axes(rng, rank) if rng.random() < 0.7 else []}
    return {"program": program,
            "primals": [rng.uniform(-1.0, 1.0, size=s) for s in shapes],
            "tangents": [rng.uniform(-1.0, 1.0, size=s) for s in shapes]}


def _matmul_line(rng):
    inputs = _matmul_chain(rng)
    return {"program": inputs["program"], "base": inputs["primals"], "dirs": inputs["tangents"],
            "t": float(rng.uniform(-0.5, 0.5))}


def _batched(rng, member_shape, axis, size):
    """An array holding ``size`` members along ``axis`` (None: one member, unmapped)."""
    if axis is None:
        return rng.uniform(-1.0, 1.0, size=member_shape)
    rank = len(member_shape) + 1
    pos = axis % rank
    return rng.uniform(-1.0, 1.0, size=member_shape[:pos] + [size] + member_shape[pos:])


def _axis(rng, member_rank, allow_none=True):
    """None, or an axis of the batched array (rank member_rank + 1), written either way."""
    choices = ([None] if allow_none else []) + list(range(-(member_rank + 1), member_rank + 1))
    return choices[int(rng.integers(len(choices)))]


def _matmul_pairs(rng):
    """Every (x's in-axis, y's in-axis) pair there is, one case each, for members of rank 2
    (plain matrices) and 3 (stacks of one axis): each batch axis at every position of its
    batched array (drawn written as a non-negative or a negative index) or None (unmapped), but
    not both None. 15 pairs for matrices, 24 for stacks."""
    cases = []
    for stack in ([], [int(rng.integers(1, 4))]):
        rank = len(stack) + 2  # a member's rank; its batched array has one more axis
        positions = [None, *range(rank + 1)]
        for x_pos in positions:
            for y_pos in positions:
                if x_pos is None and y_pos is None:
                    continue
                n, k, m = _dims(rng, 3)
                size = int(rng.integers(2, 5))
                axes = [None if p is None else p - (rank + 1) * int(rng.integers(2))
                        for p in (x_pos, y_pos)]
                members = [stack + [n, k], stack + [k, m]]
                args = [_batched(rng, s, a, size) for s, a in zip(members, axes)]
                cases.append({"in_axes": axes, "args": args,
                              "tangents": [rng.uniform(-1.0, 1.0, size=np.shape(a))
                                           for a in args],
                              "case": f"members of rank {rank}, in_axes "
                                      f"({x_pos}, {y_pos}) counted from the front"})
    return {"cases": cases}


def _matmul_sizes(rng):
    n, k, m, q = _dims(rng, 4)
    while n * k == q * m:
        q += 1
    return {"x": rng.uniform(-1.0, 1.0, size=(n, k)), "w1": rng.uniform(-1.0, 1.0, size=(q, n)),
            "w2": rng.uniform(-1.0, 1.0, size=(k, m))}


def _shape_cases(kind):
    def make(rng):
        cases = []
        for rank in range(1, 5) if kind == "transpose" else range(4):
            size = int(rng.integers(2, 4))
            member = [int(s) for s in rng.integers(1, 4, size=rank)]
            case = {"kind": kind}
            if kind == "transpose":
                case["perm"] = [int(p) for p in rng.permutation(rank)]
                out_member = [member[p] for p in case["perm"]]
            else:
                new = int(rng.integers(1, 3))
                out_rank = rank + new
                case["axes"] = sorted(int(a) for a in rng.choice(out_rank, new, replace=False))
                sizes = iter(member)
                out_member = [int(rng.integers(1, 4)) if a in case["axes"] else next(sizes)
                              for a in range(out_rank)]
                case["shape"] = out_member
            axis = _axis(rng, rank, allow_none=False)
            args = [_batched(rng, member, axis, size)]
            axes = [axis]
            if rng.random() < 0.5:  # times a second argument, mapped at another axis or not
                other = _axis(rng, len(out_member))
                args.append(_batched(rng, out_member, other, size))
                axes.append(other)
            case.update(in_axes=axes, args=args)
            cases.append(case)
        return {"cases": cases}

    return make


def _nested_vmap(rng):
    n_args = 3
    rank = int(rng.integers(0, 4))
    shapes = programs.draw_shapes(rng, n_args, rank)
    # The first step multiplies x (mapped at every level) by y (unmapped inside, mapped outside):
    # the inner vmap broadcasts y, a tracer of the outer one, which calls broadcast_batch.
    steps = [["mul", 0, 1]] + programs.draw_steps(rng, n_args + 1, list(programs.PROVIDED),
                                                  int(rng.integers(0, 3)), programs.PROVIDED)
    program = {"steps": steps, "sum": programs.draw_sum_axes(rng, rank)}
    levels = []
    members = [list(s) for s in shapes]
    for level in range(3):
        size = int(rng.integers(2, 4))
        axes = [_axis(rng, len(s), allow_none=False) for s in members]
        axes[1] = None if level == 0 else axes[1]
        if rng.random() < 0.5:
            axes[2] = None
        levels.append(axes)
        members = [s if a is None else s[:a % (len(s) + 1)] + [size] + s[a % (len(s) + 1):]
                   for s, a in zip(members, axes)]
    args = [rng.uniform(-1.0, 1.0, size=s) for s in members]
    return {"program": program, "levels": levels, "args": args}


def _hessian(rng):
    program = {"steps": programs.draw_steps(rng, 1, list(programs.PROVIDED), 1,
                                            programs.PROVIDED), "sum": []}
    return {"program": program, "x": rng.uniform(-1.0, 1.0, size=int(rng.integers(2, 4)))}


def _tree_inputs(rng):
    rank = int(rng.integers(1, 4))
    shapes = programs.draw_shapes(rng, 3, rank)
    program = {"steps": programs.draw_steps(rng, 3, list(programs.PROVIDED),
                                            int(rng.integers(0, 3)), programs.PROVIDED),
               "sum": programs.draw_sum_axes(rng, rank) if rng.random() < 0.5 else []}
    size = int(rng.integers(2, 5))
    axes = [_axis(rng, len(s)) for s in shapes]
    axes[0] = _axis(rng, len(shapes[0]), allow_none=False)
    args = [_batched(rng, s, a, size) for s, a in zip(shapes, axes)]
    return {"program": program, "args": args, "in_axes": axes,
            "in_style": ["full", "prefix"][int(rng.integers(2))],
            "const": rng.uniform(-1.0, 1.0, size=shapes[0])}


def _out_axes_of(rng, inputs, out_rank_p, vary=True):
    x_rank = np.ndim(inputs["args"][0]) - 1
    y_rank = np.ndim(inputs["args"][1]) - (inputs["in_axes"][1] is not None)
    if not vary:
        return [0, 0, 0, 0]
    return [_axis(rng, out_rank_p, allow_none=False), _axis(rng, x_rank, allow_none=False),
            _axis(rng, y_rank, allow_none=False), [None, 0, -1][int(rng.integers(3))]]


def _moved_axis(rng, member_rank):
    """An output axis other than the front one (member_rank >= 1), written either way."""
    axis = int(rng.integers(1, member_rank + 1))
    return axis - (member_rank + 1) if rng.random() < 0.5 else axis


def _p_rank(inputs):
    shape = np.shape(inputs["const"])
    return len(shape) - len(inputs["program"]["sum"])


def _in_axes_only(rng):
    inputs = _tree_inputs(rng)
    inputs.update(out_axes=[0, 0, 0, None], out_style="full")
    return inputs


def _out_axes(rng):
    inputs = _tree_inputs(rng)
    inputs["out_axes"] = _out_axes_of(rng, inputs, _p_rank(inputs))
    # x's double is mapped and has rank 1 or more: its axis is never the front one, so a vmap
    # that ignores out_axes cannot pass by chance.
    x_rank = np.ndim(inputs["args"][0]) - 1
    inputs["out_axes"][1] = _moved_axis(rng, x_rank)
    if inputs["in_axes"][1] is None and rng.random() < 0.5:
        inputs["out_axes"][2] = None  # sin(y) of an unmapped y: None keeps it as it is
    # The constant output is never mapped: an int out_axes must broadcast it to the batch
    # (ps2.out_axes.in_axes keeps it as it is, with None).
    inputs["out_axes"][3] = [0, -1][int(rng.integers(2))]
    inputs["out_style"] = ["full", "prefix"][int(rng.integers(2))]
    if inputs["out_style"] == "prefix":  # one axis for both outputs of "q": valid for both
        lowest = min(np.ndim(inputs["args"][0]) - 1,
                     np.ndim(inputs["args"][1]) - (inputs["in_axes"][1] is not None))
        inputs["out_axes"][1] = inputs["out_axes"][2] = (
            _moved_axis(rng, lowest) if lowest else 0)
        if not lowest:  # the constant output (rank 1 or more) then takes a moved axis
            inputs["out_axes"][3] = -1
    return inputs


def _out_axes_ints(rng):
    rank = int(rng.integers(1, 4))
    shapes = programs.draw_shapes(rng, 2, rank)
    shapes[1] = list(shapes[0])
    program = {"steps": programs.draw_steps(rng, 2, list(programs.PROVIDED), 1,
                                            programs.PROVIDED),
               "sum": programs.draw_sum_axes(rng, rank) if rng.random() < 0.5 else []}
    in_axis = _axis(rng, rank, allow_none=False)
    out_rank = rank - len(program["sum"])
    size = int(rng.integers(2, 5))
    # Also the defaults (in_axes=0, out_axes=0, the task's signature), every time: every other
    # check passes both, so a wrong default would go unseen.
    return {"program": program, "in_axes": in_axis,
            "out_axes": _moved_axis(rng, out_rank) if out_rank else 0,
            "args": [_batched(rng, s, in_axis, size) for s in shapes],
            "default_args": [_batched(rng, s, 0, size) for s in shapes]}


def _error_inputs(rng):
    n = int(rng.integers(2, 4))
    return {"x": rng.uniform(-1.0, 1.0, size=(3, n)), "y": rng.uniform(-1.0, 1.0, size=(4, n))}


# --- Expectations (real JAX) -----------------------------------------------------------------
# Each expectation is one jitted computation: one XLA compilation per check instead of one per
# operation (eager nested derivatives cost tens of seconds per student).
@contextmanager
def _quick_compile():
    """XLA's optimisations off while an expectation compiles: these small programs run once, and
    optimising them costs more than it saves."""
    previous = jax.config.values["jax_disable_most_optimizations"]
    jax.config.update("jax_disable_most_optimizations", True)
    try:
        yield
    finally:
        jax.config.update("jax_disable_most_optimizations", previous)


def _quick(expect):
    @functools.wraps(expect)
    def wrapped(inputs):
        with _quick_compile():
            return expect(inputs)

    return wrapped


def _np(x):
    return np.asarray(x, dtype=np.float64)


def _tree_np(tree):
    return jax.tree_util.tree_map(_np, tree)


@_quick
def expect_jvp_composite(inputs):
    lib = programs.theirs()
    f = programs.build(inputs["program"], lib)
    cases = inputs.get("cases", [])

    def compute(primals, tangents, case_primals, case_tangents):
        out = list(jax.jvp(f, tuple(primals), tuple(tangents)))
        for case, p, t in zip(cases, case_primals, case_tangents):
            out += list(jax.jvp(lib[case["op"]], tuple(p), tuple(t)))
        return out

    def f64(values):
        return [[jnp.asarray(v, dtype=jnp.float64) for v in vs] for vs in values]

    out = jax.jit(compute)(inputs["primals"], inputs["tangents"],
                           f64(c["primals"] for c in cases), f64(c["tangents"] for c in cases))
    return {"value": _tree_np(list(out))}


def _derivatives(g, x, order):
    def compute(x):
        out, h = [], g
        for _ in range(order):
            h = jax.grad(h)
            out.append(h(x))
        return out

    return _tree_np(jax.jit(compute)(x))


@_quick
def expect_nested(inputs):
    f = programs.build(inputs["program"], programs.theirs())
    return {"value": _derivatives(f, inputs["x"], inputs["order"])}


@_quick
def expect_closure(inputs):
    gs = programs.closures(programs.theirs(), jax.grad, inputs["y0"], inputs["c"])
    return {"value": _tree_np(jax.jit(lambda x: [jax.grad(g)(x) for g in gs])(inputs["x"]))}


@_quick
def expect_matmul_jvp(inputs):
    f = programs.matmul_chain(inputs["program"], programs.theirs())
    out = jax.jit(lambda p, t: list(jax.jvp(f, tuple(p), tuple(t))))(inputs["primals"],
                                                                     inputs["tangents"])
    return {"value": _tree_np(out)}


@_quick
def expect_matmul_nested(inputs):
    g = programs.matmul_line(inputs, programs.theirs())
    return {"value": _derivatives(g, inputs["t"], 2)}


def _matmul_batched(inputs):
    return jax.vmap(programs.matmul_pair(programs.theirs()), in_axes=tuple(inputs["in_axes"]))


# One jitted function per pair of in_axes (39 pairs, each written two ways), so that gradings
# drawing the same shapes reuse its compilations.
@functools.cache
def _jit_batched(in_axes: tuple):
    return jax.jit(_matmul_batched({"in_axes": in_axes}))


@functools.cache
def _jit_jvp_of_batched(in_axes: tuple):
    batched = _matmul_batched({"in_axes": in_axes})
    return jax.jit(lambda p, t: list(jax.jvp(batched, tuple(p), tuple(t))))


@_quick
def expect_matmul_vmap(inputs):
    return {"value": _np(_jit_batched(tuple(inputs["in_axes"]))(*inputs["args"]))}


@_quick
def expect_matmul_jacfwd(inputs):
    f = programs.matmul_sizes(inputs, programs.theirs())
    return {"value": _np(jax.jit(jax.jacfwd(f))(inputs["x"]))}


@_quick
def expect_matmul_jvp_of_vmap(inputs):
    out = _jit_jvp_of_batched(tuple(inputs["in_axes"]))(inputs["args"], inputs["tangents"])
    return {"value": _tree_np(out)}


@_quick
def expect_shape_cases(inputs):
    lib = programs.theirs()
    fs = [jax.vmap(programs.shape_case(case, lib), in_axes=tuple(case["in_axes"]))
          for case in inputs["cases"]]
    out = jax.jit(lambda all_args: [f(*args) for f, args in zip(fs, all_args)])(
        [case["args"] for case in inputs["cases"]])
    return {"value": _tree_np(out)}


@_quick
def expect_nested_vmap(inputs):
    f = programs.build(inputs["program"], programs.theirs())
    for axes in inputs["levels"]:
        f = jax.vmap(f, in_axes=tuple(axes))
    return {"value": _np(jax.jit(f)(*inputs["args"]))}


@_quick
def expect_hessian(inputs):
    f = programs.mixing(inputs["program"], programs.theirs())
    return {"value": _np(jax.jit(jax.jacfwd(jax.jacfwd(f)))(inputs["x"]))}


@_quick
def expect_out_axes(inputs):
    lib = programs.theirs()
    f = programs.tree_function(inputs["program"], lib, jnp.asarray(inputs["const"]))
    in_axes = programs.in_axes_tree(inputs["in_axes"], inputs["in_style"])
    out_axes = programs.out_axes_tree(inputs["out_axes"], inputs["out_style"])
    batched = jax.jit(jax.vmap(f, in_axes=in_axes, out_axes=out_axes))
    out = batched(*programs.tree_args(*inputs["args"]))
    return {"structure": programs.describe(out), "values": programs.encode(out)}


@_quick
def expect_out_axes_ints(inputs):
    f = programs.build(inputs["program"], programs.theirs())
    batched = jax.jit(jax.vmap(f, in_axes=inputs["in_axes"], out_axes=inputs["out_axes"]))
    return [_np(batched(*inputs["args"])), _np(jax.jit(jax.vmap(f))(*inputs["default_args"]))]


@_quick
def expect_errors(inputs):
    return list(programs.ERRORS)


# --- The checks ------------------------------------------------------------------------------
def _check(id, task, cell, points, description, probe, make, expect, judge_, blame):
    return Check(id=id, task=task, description=description, points=points, grade_cell=cell,
                 probe=probe, make_inputs=make, expect=expect, judge=judge_, blame=blame,
                 jax_config=X64, timeout_s=60.0)


JVP_NAMES = ("exp_jvp", "log_jvp", "div_jvp", "max_jvp")

CHECKS = (
    _check("ps2.jvp_rules.exp_log", "ps2.jvp_rules", "test_jvp_rules", 3,
           "jvp of random programs with exp and log, at ranks 0 to 4, summed over some axes",
           "probe_jvp_composite", _elementwise(("exp", "log")), expect_jvp_composite,
           called("exp_jvp", "log_jvp"),
           blame="exp_jvp or log_jvp returns a wrong tangent: d exp(x) = exp(x) dx and "
                 "d log(x) = dx / x."),
    _check("ps2.jvp_rules.div", "ps2.jvp_rules", "test_jvp_rules", 3,
           "jvp of programs with div, tiny divisors, and a scalar and an array as operands",
           "probe_jvp_composite", _elementwise(("div",), _tiny_divisors), expect_jvp_composite,
           called("div_jvp"),
           blame="div_jvp: the tangent of x / y is dx / y - x dy / y**2; both operands move, "
                 "and either may be a scalar while the other is an array."),
    _check("ps2.jvp_rules.max", "ps2.jvp_rules", "test_jvp_rules", 3,
           "jvp of programs with maximum, and at ties (equal operands)",
           "probe_jvp_composite", _elementwise(("max",), _ties), expect_jvp_composite,
           called("max_jvp"),
           blame="max_jvp: the tangent follows the larger operand, and at a tie it is the "
                 "average of both tangents (as in JAX)."),
    _check("ps2.jvp_rules.nested", "ps2.jvp_rules", "test_jvp_rules", 4,
           "derivatives of order 1 to 3 of random scalar programs using all four primitives",
           "probe_jvp_nested", _nested, expect_nested, called(*JVP_NAMES),
           blame="Higher derivatives differentiate your rules themselves: compute tangents with "
                 "the primitive wrappers (exp, log, div, maximum, ...), never with NumPy."),
    _check("ps2.jvp_rules.closure", "ps2.jvp_rules", "test_jvp_rules", 3,
           "nested derivatives whose inner function closes over the outer variable or a constant",
           "probe_jvp_closure", _closure, expect_closure, called(*JVP_NAMES),
           blame="A rule receives operands of different interpreters (an outer tracer, a "
                 "constant): use the wrappers on both operands, and zero tangents where needed."),
    _check("ps2.matmul.jvp", "ps2.matmul", "test_matmul", 3,
           "jvp of chains of matmul with stacks of matrices, summed over some axes",
           "probe_matmul_jvp", _matmul_chain, expect_matmul_jvp, called("matmul_jvp"),
           blame="matmul_jvp: the product rule, dx @ y + x @ dy, in this order of operands."),
    _check("ps2.matmul.nested", "ps2.matmul", "test_matmul", 3,
           "derivatives of order 1 and 2 along a line through a chain of matmul",
           "probe_matmul_nested", _matmul_line, expect_matmul_nested, called("matmul_jvp"),
           blame="matmul_jvp must compute with the matmul wrapper, so that its own derivative "
                 "can be taken."),
    _check("ps2.matmul.vmap", "ps2.matmul", "test_matmul", 4,
           "vmap of matmul, matrices and stacks, with every pair of batch axes (each operand's "
           "at every position, negative too, or unmapped)", "probe_matmul_vmap", _matmul_pairs,
           judge.expect_each(expect_matmul_vmap), judge.judge_each(called("matmul_batch")),
           blame="matmul_batch: put both batch axes in front (broadcasting an unmapped "
                 "operand), where matmul treats them as a stack axis; report where the output's "
                 "batch axis is."),
    _check("ps2.matmul.jacfwd", "ps2.matmul", "test_matmul", 3,
           "jacfwd (vmap of jvp) of a function between matrices of different sizes",
           "probe_matmul_jacfwd", _matmul_sizes, expect_matmul_jacfwd,
           called("matmul_jvp", "matmul_batch"),
           blame="Under jacfwd, matmul_batch meets a batched tangent and an unmapped constant."),
    _check("ps2.matmul.jvp_of_vmap", "ps2.matmul", "test_matmul", 3,
           "jvp of a vmapped function of matmul, with every pair of batch axes",
           "probe_matmul_jvp_of_vmap", _matmul_pairs,
           judge.expect_each(expect_matmul_jvp_of_vmap),
           judge.judge_each(called("matmul_jvp", "matmul_batch")),
           blame="The batching rule must work on tracers of the JVP interpreter below it: use "
                 "the wrappers (matmul, transpose, broadcast), not NumPy."),
    _check("ps2.shape_rules.transpose", "ps2.shape_rules", "test_shape_rules", 3,
           "vmap of transpose for member ranks 1 to 4 and every batch axis",
           "probe_shape_cases", _shape_cases("transpose"), expect_shape_cases,
           called("transpose_batch"),
           blame="transpose_batch: perm counts the axes of one member; the batched array has the "
                 "batch axis in between."),
    _check("ps2.shape_rules.broadcast", "ps2.shape_rules", "test_shape_rules", 3,
           "vmap of broadcast for member ranks 0 to 3, new axes anywhere, every batch axis",
           "probe_shape_cases", _shape_cases("broadcast"), expect_shape_cases,
           called("broadcast_batch"),
           blame="broadcast_batch: the target shape and the new axes describe one member; the "
                 "batched output needs the batch size in its shape and the axes shifted."),
    _check("ps2.shape_rules.nested_vmap", "ps2.shape_rules", "test_shape_rules", 5,
           "three nested vmaps of random programs, with negative and None in_axes",
           "probe_shape_nested", _nested_vmap, expect_nested_vmap,
           called("broadcast_batch"),
           blame="An inner vmap moves and broadcasts batch axes with transpose and broadcast, "
                 "which the outer vmap batches with your rules."),
    _check("ps2.shape_rules.hessian", "ps2.shape_rules", "test_shape_rules", 3,
           "jacfwd of jacfwd (the second derivative of a vector function)",
           "probe_shape_hessian", _hessian, expect_hessian, called("transpose_batch"),
           blame="The inner jacfwd transposes its result under the outer vmap."),
    _check("ps2.out_axes.in_axes", "ps2.out_axes", "test_out_axes", 3,
           "vmap_axes with in_axes as full trees or prefixes (negative, None, empty containers)",
           "probe_out_axes", _in_axes_only, expect_out_axes, structured,
           blame="Broadcast each in_axes entry over its argument's subtree (an int or None "
                 "applies to every leaf below it) and normalise negative axes."),
    _check("ps2.out_axes.out_axes", "ps2.out_axes", "test_out_axes", 4,
           "vmap_axes with out_axes per output (negative, None for unmapped outputs, prefixes)",
           "probe_out_axes", _out_axes, expect_out_axes, structured,
           blame="Move each output's batch axis to its out_axes entry (negative counts from the "
                 "end of the batched output); None keeps an unmapped output as it is."),
    _check("ps2.out_axes.ints", "ps2.out_axes", "test_out_axes", 2,
           "vmap_axes with a single int for in_axes and for out_axes, and with the defaults",
           "probe_out_axes_ints", _out_axes_ints, expect_out_axes_ints,
           lambda e, o: _scaled_close(e, o),
           blame="A single int (or None) stands for every argument, or every output."),
    _check("ps2.out_axes.errors", "ps2.out_axes", "test_out_axes", 3,
           "vmap_axes raises ValueError where jax.vmap does", "probe_out_axes_errors",
           _error_inputs, expect_errors, errors,
           blame="Raise ValueError for a mapped output whose out_axes is None, in_axes that do "
                 "not match the arguments, different batch sizes and axes out of range."),
)

ASSIGNMENT = Assignment(name="ps2_autodidax", notebook="ps2_autodidax.ipynb", tasks=TASKS,
                        checks=CHECKS, extra={"own_primitives": ()})
