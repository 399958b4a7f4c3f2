"""Hidden checks of ps2_autodidax (grader side only).

Every input is drawn at grading time from the check's seeded generator: random programs over the
primitives (programs.py) at ranks 0 to 4 with reductions over several and negative axes, points
with ties and tiny divisors, closures over outer tracers and constants, batch axes at every
position (negative ones too) and unmapped operands, nested vmap, Jacobians between spaces of
different sizes, pytrees with empty containers and axes given as prefixes. Expectations come from
real JAX in float64, as the NumPy-based core computes.

A check that scores a rule also fails when the rule was never called (the probe counts calls),
and a program drawn to test how an argument is batched has an output that moves with it (terms
that cancel are redrawn).

Input classes run on every grading (one case each, drawn at random within its class):
- ps2.matmul.vmap and ps2.matmul.jvp_of_vmap: every pair of in-axes there is for x and y, for
  members that are matrices (rank 2: each axis None or 0 to 2, 15 pairs) and stacks of one axis
  (rank 3: None or 0 to 3, 24 pairs), not both None; each axis written non-negative or negative
  at random.
- ps2.jvp_rules.exp_log: scalars (rank 0), and arrays of rank 1 to 4 (more than one element).
- ps2.jvp_rules.nested: every binary step of the four primitives on two different values, with
  exp, log and the operand maximum takes at x computed values not affine in x (never x itself,
  whose tangent is the constant 1); and maximum and div of one value twice (a tie, x / x), the
  tie of a value that moves with x (never of x / x or what follows from it alone, where the
  tie's tangent is 0).
- ps2.jvp_rules.closure: the outer x below 1 and above 1 (the inner maximum(a * b, b) takes b,
  then a * b).
- ps2.matmul.jvp and .nested: plain matrices (rank 2) and stacks of them (rank 3 or 4), matrix
  sizes 2 to 4 (1 x 1 matrices commute).
- ps2.shape_rules.nested_vmap: members of one rank whose batch axes are never in front (every
  inner vmap transposes under the outer ones), and operands of lower rank (a scalar) with batch
  axes anywhere, summed over some axes.
- ps2.out_axes.in_axes: in_axes in full (x at a negative axis other than the front one, y in
  its list and z unmapped), and as prefixes (an int standing for y's subtree, at y's front axis
  written negative, the lowest there is; x and z mapped, z after the empty container).
- ps2.out_axes.out_axes: out_axes in full (negative axes, None for sin(y) of an unmapped y) and
  as prefixes (non-negative axes, one int for both outputs of "q", never 0: y has an axis).
- ps2.out_axes.ints: negative in_axes and out_axes, and non-negative ones, none of them in front.
The others draw every class in each draw: ps2.matmul.jacfwd (a batched tangent times an unmapped
constant on either side; x at least 2 x 2, never a batch of one), ps2.shape_rules.hessian (the
inner jacfwd transposes under the outer vmap; the program has every op the course provides),
ps2.out_axes.errors (all thirteen errors), and the cases of .div and .max. ps2.shape_rules.transpose
(member ranks 1 to 4) and .broadcast (ranks 0 to 3) run one case per rank: the lowest rank's batch
axis in front, every other rank's anywhere but in front, written either way.
"""

from __future__ import annotations

import functools
from contextlib import contextmanager

import jax
import jax.numpy as jnp
import numpy as np

from autograder.assignments.ps2_autodidax import programs
from autograder.spec import Assignment, Check, Outcome, Task, Verdict
from autograder.worker import banned, judge

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
        while True:  # no step negates a computed value (_cancelled says why)
            n_args = int(rng.integers(1, 4))
            inputs = programs.draw_elementwise(rng, n_args, cover,
                                               ops=programs.PROVIDED + tuple(cover))
            if not _cancelled(inputs["program"], n_args):
                break
        if extra_cases:
            inputs["cases"] = extra_cases(rng)
        return inputs

    return make


def _steps_using(rng, n_args: int, extra: int, index, before=()) -> list:
    """Random steps over every op the course provides (then ``extra`` more), after the steps
    ``before``, whose program's output moves with argument ``index`` (an int, or a tuple of them:
    with each). The output of a program that never reads an argument, or in which its terms
    cancel (x + z, then its negation, then z * x: the output adds up every value), does not
    depend on how that argument is batched (a vmap that left z unmapped passed such a draw)."""
    while True:
        steps = list(before) + programs.draw_steps(rng, n_args + len(before),
                                                   list(programs.PROVIDED), extra,
                                                   programs.PROVIDED)
        if all(_moves_with(steps, n_args, i) for i in np.atleast_1d(index)):
            return steps


def _moves_with(steps: list, n_args: int, index: int) -> bool:
    """Whether the output of the program ``steps`` (on scalars: its ops are elementwise, and its
    sum adds what each element gives) changes when argument ``index`` does, at two points."""
    f = programs.build({"steps": steps, "sum": []}, programs.numpy_lib())
    points = np.random.default_rng(0).uniform(-1.0, 1.0, size=(2, n_args))
    for args in points:
        moved = args.copy()
        moved[index] += 0.5
        before, after = f(*args), f(*moved)
        if abs(after - before) > 1e-6 * max(1.0, abs(before)):
            return True
    return False


def _cancelled(program: dict, n_args: int) -> bool:
    """Whether a step negates a computed value: the program's output adds up every value, so the
    value and its negation cancel, and so does a wrong rule's tangent of it."""
    return any(op == "neg" and i >= n_args for op, i, *_ in program["steps"])


def _exp_log_cases(rng):
    """Scalars (rank 0: a rule written with ``math.exp`` passes there) and arrays of rank 1 to 4
    with more than one element (operands of lower rank, summed over some axes), one case each;
    the other steps, as in ``_elementwise``, use only the ops whose rules the course provides."""
    cover, ops = ("exp", "log"), programs.PROVIDED + ("exp", "log")
    while True:
        scalars = programs.draw_elementwise(rng, int(rng.integers(1, 4)), cover, rank=0,
                                            ops=ops)
        if not _cancelled(scalars["program"], len(scalars["primals"])):
            break
    while True:
        arrays = programs.draw_elementwise(rng, int(rng.integers(1, 4)), cover,
                                           rank=int(rng.integers(1, 5)), ops=ops)
        if (np.size(arrays["primals"][0]) > 1
                and not _cancelled(arrays["program"], len(arrays["primals"]))):
            break
    return {"cases": [dict(scalars, case="scalars (rank 0)"),
                      dict(arrays, case="arrays of rank 1 to 4, summed over some axes")]}


def _tiny_divisors(rng):
    shape = [int(s) for s in rng.integers(1, 4, size=int(rng.integers(1, 4)))]
    y = rng.choice([-1.0, 1.0], size=shape) * 10.0 ** rng.uniform(-4, -2, size=shape)
    x = rng.uniform(-1.0, 1.0, size=shape)
    scalar = float(rng.uniform(0.5, 1.5))
    tangents = [rng.uniform(-1.0, 1.0, size=shape) for _ in range(2)]
    return [
        {"op": "div", "primals": [x, y], "tangents": tangents,
         "classes": ["arrays over tiny divisors"]},
        # Operands of different rank: a scalar over an array, an array over a scalar.
        {"op": "div", "primals": [scalar, y], "tangents": [0.5, tangents[1]],
         "classes": ["a scalar over an array"]},
        {"op": "div", "primals": [x, scalar], "tangents": [tangents[0], -0.25],
         "classes": ["an array over a scalar"]},
    ]


def _ties(rng):
    shape = [int(s) for s in rng.integers(1, 4, size=int(rng.integers(1, 4)))]
    x = np.round(rng.uniform(-1.0, 1.0, size=shape), 1)
    y = np.where(rng.random(size=shape) < 0.5, x, rng.uniform(-1.0, 1.0, size=shape))
    x.flat[0] = y.flat[0]  # at least one tie
    dx, dy = (rng.uniform(-1.0, 1.0, size=shape) for _ in range(2))
    return [
        {"op": "max", "primals": [x, y], "tangents": [dx, dy], "classes": ["some ties"]},
        {"op": "max", "primals": [x, x], "tangents": [dx, dy], "classes": ["ties everywhere"]},
        {"op": "max", "primals": [y, 0.0], "tangents": [dy, 0.0],
         "classes": ["an array against a scalar zero"]},
        {"op": "max", "primals": [float(x.flat[0]), y], "tangents": [0.75, dy],
         "classes": ["a scalar against an array"]},
    ]


def _nested_one(rng, twice: bool):
    """A scalar program with all four primitives. ``twice``: maximum and div take one value as
    both operands (a tie, and x / x); else every binary step of the four takes two different
    values (``_distinct_steps``). Third derivatives: divisors kept 0.25 from zero (programs.tame
    says why)."""
    while True:
        if twice:
            inputs = programs.draw_elementwise(rng, 1, NEW_JVP, rank=0,
                                               extra=int(rng.integers(0, 3)), margin=0.25)
            program, x = inputs["program"], inputs["primals"][0]
        else:
            x = rng.uniform(-1.5, 1.5)
            program = {"steps": _distinct_steps(rng, x), "sum": []}
        if _cancelled(program, 1):
            continue
        if twice:
            for step in program["steps"]:
                if step[0] in ("max", "div"):
                    step[2] = step[1]
            if _tie_of_constant(program):
                continue
        if not programs.tame(program, [x], margin=0.25):
            continue
        return {"program": program, "x": float(x), "order": 3}


def _distinct_steps(rng, x: float) -> list:
    """The steps of a program of x with the four primitives, where each binary one takes two
    different values, and exp, log and the operand maximum takes at x are computed values that
    are not affine in x (sin(x), cos(x) or x * x comes first). An affine value's tangent is a
    constant: a rule that drops the input tangent is right on x, whose tangent is 1
    (exp_jvp_forgets_dx passed 25 draws in 60), and a max_jvp with np.where, which fails on
    tracers, worked whenever maximum took x (9 in 60)."""
    first = [["sin", 0], ["cos", 0], ["mul", 0, 0]][int(rng.integers(3))]
    while True:
        steps = [first] + programs.draw_steps(rng, 2, list(NEW_JVP), int(rng.integers(1, 4)))
        if any(len(step) == 3 and step[1] == step[2] and step[0] in NEW_JVP for step in steps):
            continue
        vals = _values_near(steps, x)
        if vals is None:
            continue
        taken = [step[1] for step in steps if step[0] in ("exp", "log")]
        taken += [max(step[1:], key=lambda i: vals[i][1]) for step in steps if step[0] == "max"]
        if all(_curved(vals[i]) for i in taken):
            return steps


def _values_near(steps: list, x: float, h: float = 1e-3):
    """Every value of the program at x - h, x and x + h (NumPy, float64), or None where
    maximum's operands come within 0.01 of each other near x (the kink of maximum)."""
    lib = programs.numpy_lib()
    vals = [np.array([x - h, x, x + h])]
    with np.errstate(all="ignore"):
        for op, *operands in steps:
            if op == "max" and np.min(np.abs(vals[operands[0]] - vals[operands[1]])) < 0.01:
                return None
            vals.append(programs.apply(op, lib, *(vals[i] for i in operands)))
    return vals


def _curved(v, h: float = 1e-3) -> bool:
    """Whether a value at x - h, x, x + h is not affine in x (its second difference is not 0)."""
    second = (v[2] - 2 * v[1] + v[0]) / h ** 2
    return bool(np.isfinite(second) and abs(second) > 1e-3)


def _tie_of_constant(program: dict) -> bool:
    """Whether a maximum of one value twice takes a value that does not depend on the argument
    (x / x is 1, and so is whatever is computed from it only): the tie's tangent is then 0, where
    a rule that sums the two tangents is right too (it passed for 4 course secrets in 30)."""
    constant = [False]  # the argument
    for op, *operands in program["steps"]:
        if op == "max" and len(operands) == 2 and operands[0] == operands[1] \
                and constant[operands[0]]:
            return True
        constant.append(all(constant[i] for i in operands)
                        or (op == "div" and len(operands) == 2 and operands[0] == operands[1]))
    return False


def _nested(rng):
    return {"cases": [
        dict(_nested_one(rng, False), case="every binary step on two different values"),
        dict(_nested_one(rng, True), case="maximum and div of one value twice (a tie, x / x)"),
    ]}


def _closure(rng):
    """x below 1 and above 1, one case each: the inner maximum(a * b, b) takes b, or a * b."""
    return {"cases": [
        {"x": float(x), "y0": float(rng.uniform(0.3, 1.2)), "c": float(rng.uniform(-1.0, 1.0)),
         "case": name}
        for x, name in ((rng.uniform(0.3, 0.95), "x below 1: the inner maximum takes b"),
                        (rng.uniform(1.05, 1.3), "x above 1: the inner maximum takes a * b"))]}


def _stack(rng):
    return [int(s) for s in rng.integers(1, 4, size=int(rng.integers(0, 3)))]


def _dims(rng, n):
    return [int(s) for s in rng.integers(1, 5, size=n)]


def _matmul_chain(rng, stack=None):
    """A chain of three matmuls; ``stack``: the stack axes (drawn when None). Matrix sizes 2 to 4:
    1 x 1 matrices commute, where dy @ x passes for x @ dy."""
    b = _stack(rng) if stack is None else stack
    n, k, m, p = (int(s) for s in rng.integers(2, 5, size=4))
    shapes = [b + [n, k], b + [k, m], b + [m, p]]
    unary = ("id", "sin", "cos", "neg")
    rank = len(b) + 2
    program = {"u": [unary[int(rng.integers(4))] for _ in range(2)],
               "sum": programs.draw_sum_axes(rng, rank) if rng.random() < 0.7 else []}
    return {"program": program,
            "primals": [rng.uniform(-1.0, 1.0, size=s) for s in shapes],
            "tangents": [rng.uniform(-1.0, 1.0, size=s) for s in shapes]}


def _matmul_line(rng, stack=None):
    inputs = _matmul_chain(rng, stack)
    return {"program": inputs["program"], "base": inputs["primals"], "dirs": inputs["tangents"],
            "t": float(rng.uniform(-0.5, 0.5))}


def _matmul_cases(draw):
    """Plain matrices and stacks of them (one or two stack axes), one case each: a rule written
    for 2-d operands only (transposes with (1, 0)) is right on matrices alone."""
    def make(rng):
        stack = [int(s) for s in rng.integers(1, 4, size=int(rng.integers(1, 3)))]
        return {"cases": [dict(draw(rng, []), case="matrices (rank 2)"),
                          dict(draw(rng, stack), case="stacks of matrices (rank 3 or 4)")]}

    return make


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
    # x has two rows and two columns or more: jacfwd's batch is never of size 1, where a batch
    # axis can be anywhere.
    n, k = (int(s) for s in rng.integers(2, 5, size=2))
    m, q = _dims(rng, 2)
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
            # The lowest rank's batch axis is in front (a rank-0 member's only place); every
            # other rank's is not: a rule that assumes the front passed 1 draw in 24 before.
            lowest = rank == (1 if kind == "transpose" else 0)
            axis = (rng.choice([0, -(rank + 1)]).item() if lowest
                    else _moved_axis(rng, rank))
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


def _nested_vmap_one(rng, lower: bool):
    """Three nested vmaps of a random program of x, y, z. ``lower``: operands of lower rank (z a
    scalar, y of x's rank or lower), batch axes anywhere (in front too), summed over some axes;
    else members of one rank whose batch axes are never in front (written either way), so that
    each inner vmap moves them with transpose under the outer ones."""
    n_args = 3
    rank = int(rng.integers(1, 4))
    if lower:
        shapes = programs.draw_shapes(rng, n_args, rank)
        shapes[2] = []
    else:
        full = [int(s) for s in rng.integers(1, 4, size=rank)]
        shapes = [list(full) for _ in range(n_args)]
    # The first step multiplies x (mapped at every level) by y (unmapped inside, mapped outside):
    # the inner vmap broadcasts y, a tracer of the outer one, which calls broadcast_batch.
    steps = _steps_using(rng, n_args, int(rng.integers(0, 3)), (1, 2),
                         before=[["mul", 0, 1]])
    program = {"steps": steps, "sum": programs.draw_sum_axes(rng, rank) if lower else []}
    levels = []
    members = [list(s) for s in shapes]
    for level in range(3):
        size = int(rng.integers(2, 4))
        axes = [_axis(rng, len(s), allow_none=False) if lower else _moved_axis(rng, len(s))
                for s in members]
        axes[1] = None if level == 0 else axes[1]
        if rng.random() < 0.5:
            axes[2] = None
        levels.append(axes)
        members = [s if a is None else s[:a % (len(s) + 1)] + [size] + s[a % (len(s) + 1):]
                   for s, a in zip(members, axes)]
    args = [rng.uniform(-1.0, 1.0, size=s) for s in members]
    return {"program": program, "levels": levels, "args": args}


def _nested_vmap(rng):
    return {"cases": [
        dict(_nested_vmap_one(rng, False),
             case="members of one rank, batch axes never in front (negative too)"),
        dict(_nested_vmap_one(rng, True),
             case="operands of lower rank (a scalar), batch axes anywhere, summed over axes"),
    ]}


def _hessian(rng):
    program = {"steps": programs.draw_steps(rng, 1, list(programs.PROVIDED), 1,
                                            programs.PROVIDED), "sum": []}
    return {"program": program, "x": rng.uniform(-1.0, 1.0, size=int(rng.integers(2, 4)))}


def _tree_inputs(rng, signs):
    """A random program of the pytree arguments. ``signs``: how x's, y's and z's in-axes are
    written: "-" (a negative axis, never the front one where the member has an axis), "-front"
    (the front one, written negative: minus the batched rank), "+" (a non-negative one, anywhere)
    or None (unmapped)."""
    rank = int(rng.integers(1, 4))
    shapes = programs.draw_shapes(rng, 3, rank)
    program = {"steps": _steps_using(rng, 3, int(rng.integers(0, 3)), 2),  # z counts
               "sum": programs.draw_sum_axes(rng, rank) if rng.random() < 0.5 else []}
    size = int(rng.integers(2, 5))
    axes = []
    for shape, sign in zip(shapes, signs):
        rank_b = len(shape) + 1  # the batched argument's rank
        if sign is None:
            axes.append(None)
        elif sign == "+":
            axes.append(int(rng.integers(rank_b)))
        elif sign == "-front":
            axes.append(-rank_b)
        else:  # A negative axis in front is 0 once normalised: a vmap that keeps a negative
            # axis as given, unless it is the front one, passed at 7 draws in 40.
            axes.append(int(rng.integers(min(1, rank_b - 1), rank_b)) - rank_b)
    args = [_batched(rng, s, a, size) for s, a in zip(shapes, axes)]
    return {"program": program, "args": args, "in_axes": axes,
            "const": rng.uniform(-1.0, 1.0, size=shapes[0])}


# The in_axes of the two cases of ps2.out_axes.in_axes and .out_axes. The first: x at a negative
# axis other than the front one, y (in a list) and z (an argument) unmapped. The second: y mapped
# (where an int stands for the subtree [y, ()] when the axes are prefixes) at its front axis
# written negative (the lowest axis there is), x and z at non-negative ones: z, after the empty
# container "e", takes its own axis only where None stands for no leaf.
IN_SIGNS = (("-", None, None), ("+", "-front", "+"))


def _moved_axis(rng, member_rank, sign=None):
    """An output axis other than the front one (member_rank >= 1), written either way (``sign``
    "-" or "+": that way)."""
    axis = int(rng.integers(1, member_rank + 1))
    negative = rng.random() < 0.5 if sign is None else sign == "-"
    return axis - (member_rank + 1) if negative else axis


def _p_rank(inputs):
    shape = np.shape(inputs["const"])
    return len(shape) - len(inputs["program"]["sum"])


def _in_axes_only(rng):
    cases = []
    for style, signs in zip(("full", "prefix"), IN_SIGNS):
        inputs = _tree_inputs(rng, signs)
        inputs.update(in_style=style, out_axes=[0, 0, 0, None], out_style="full",
                      case="in_axes in full: a negative axis not in front, y and z unmapped"
                      if style == "full" else
                      "in_axes as prefixes: an int for a subtree (its front axis, written "
                      "negative), z mapped after {}")
        cases.append(inputs)
    return {"cases": cases}


def _out_axes_one(rng, style):
    """out_axes in full (negative axes, None for sin(y) of an unmapped y) or as prefixes
    (non-negative axes, one for both outputs of "q")."""
    sign = "-" if style == "full" else "+"
    while True:
        inputs = _tree_inputs(rng, IN_SIGNS[style != "full"])
        # As prefixes, y's member has an axis: the one int for both outputs of "q" is then never
        # 0, the axis a vmap gives the second when it lets that int stand for the first alone
        # and takes the next entry (that of the empty "r") for the second (7 draws in 40 passed).
        if style == "full" or np.ndim(inputs["args"][1]) >= 2:
            break
    inputs["in_style"] = "full"  # prefixes of in_axes: ps2.out_axes.in_axes's
    p_rank = _p_rank(inputs)
    # x's double is mapped and has rank 1 or more: its axis is never the front one, so a vmap
    # that ignores out_axes cannot pass by chance.
    x_rank = np.ndim(inputs["args"][0]) - 1
    p_axis = int(rng.integers(p_rank + 1))
    p_axis = p_axis - (p_rank + 1) if sign == "-" else p_axis
    # The constant output is never mapped: an int out_axes must broadcast it to the batch
    # (ps2.out_axes.in_axes keeps it as it is, with None).
    out_axes = [p_axis, _moved_axis(rng, x_rank, sign), None, -1 if sign == "-" else 0]
    if style == "prefix":  # one axis for both outputs of "q": valid for both
        lowest = min(x_rank, np.ndim(inputs["args"][1]) - 1)  # y is mapped (IN_SIGNS)
        out_axes[1] = out_axes[2] = _moved_axis(rng, lowest, sign)
    inputs.update(out_axes=out_axes, out_style=style)
    return inputs


def _out_axes(rng):
    return {"cases": [
        dict(_out_axes_one(rng, "full"),
             case="out_axes in full: negative axes, None for an unmapped output"),
        dict(_out_axes_one(rng, "prefix"),
             case="out_axes as prefixes: non-negative axes, one int for a subtree"),
    ]}


def _out_axes_ints_one(rng, sign):
    rank = int(rng.integers(1, 4))
    shapes = programs.draw_shapes(rng, 2, rank)
    shapes[1] = list(shapes[0])
    # Summed over some axes, never all of them: the output keeps an axis to move.
    program = {"steps": _steps_using(rng, 2, 1, 1),  # y counts
               "sum": (programs.draw_sum_axes(rng, rank)[:rank - 1]
                       if rng.random() < 0.5 else [])}
    # Never the front axis (0 once normalised), written either way.
    in_axis = int(rng.integers(1, rank + 1)) - (rank + 1 if sign == "-" else 0)
    out_rank = rank - len(program["sum"])
    size = int(rng.integers(2, 5))
    # Also the defaults (in_axes=0, out_axes=0, the task's signature), every time: every other
    # check passes both, so a wrong default would go unseen.
    return {"program": program, "in_axes": in_axis,
            "out_axes": _moved_axis(rng, out_rank, sign),
            "args": [_batched(rng, s, in_axis, size) for s in shapes],
            "default_args": [_batched(rng, s, 0, size) for s in shapes]}


def _out_axes_ints(rng):
    return {"cases": [
        dict(_out_axes_ints_one(rng, "-"), case="negative in_axes and out_axes"),
        dict(_out_axes_ints_one(rng, "+"), case="non-negative in_axes and out_axes, not in front"),
    ]}


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
           "probe_jvp_cases", _exp_log_cases, judge.expect_each(expect_jvp_composite),
           judge.judge_each(called("exp_jvp", "log_jvp")),
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
           "probe_jvp_nested", _nested, judge.expect_each(expect_nested),
           judge.judge_each(called(*JVP_NAMES)),
           blame="Higher derivatives differentiate your rules themselves: compute tangents with "
                 "the primitive wrappers (exp, log, div, maximum, ...), never with NumPy."),
    _check("ps2.jvp_rules.closure", "ps2.jvp_rules", "test_jvp_rules", 3,
           "nested derivatives whose inner function closes over the outer variable or a constant",
           "probe_jvp_closure", _closure, judge.expect_each(expect_closure),
           judge.judge_each(called(*JVP_NAMES)),
           blame="A rule receives operands of different interpreters (an outer tracer, a "
                 "constant): use the wrappers on both operands, and zero tangents where needed."),
    _check("ps2.matmul.jvp", "ps2.matmul", "test_matmul", 3,
           "jvp of chains of matmul with stacks of matrices, summed over some axes",
           "probe_matmul_jvp", _matmul_cases(_matmul_chain), judge.expect_each(expect_matmul_jvp),
           judge.judge_each(called("matmul_jvp")),
           blame="matmul_jvp: the product rule, dx @ y + x @ dy, in this order of operands."),
    _check("ps2.matmul.nested", "ps2.matmul", "test_matmul", 3,
           "derivatives of order 1 and 2 along a line through a chain of matmul",
           "probe_matmul_nested", _matmul_cases(_matmul_line),
           judge.expect_each(expect_matmul_nested), judge.judge_each(called("matmul_jvp")),
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
           "probe_shape_nested", _nested_vmap, judge.expect_each(expect_nested_vmap),
           judge.judge_each(called("broadcast_batch")),
           blame="An inner vmap moves and broadcasts batch axes with transpose and broadcast, "
                 "which the outer vmap batches with your rules."),
    _check("ps2.shape_rules.hessian", "ps2.shape_rules", "test_shape_rules", 3,
           "jacfwd of jacfwd (the second derivative of a vector function)",
           "probe_shape_hessian", _hessian, expect_hessian, called("transpose_batch"),
           blame="The inner jacfwd transposes its result under the outer vmap."),
    _check("ps2.out_axes.in_axes", "ps2.out_axes", "test_out_axes", 3,
           "vmap_axes with in_axes as full trees or prefixes (negative, None, empty containers)",
           "probe_out_axes", _in_axes_only, judge.expect_each(expect_out_axes),
           judge.judge_each(structured),
           blame="Broadcast each in_axes entry over its argument's subtree (an int or None "
                 "applies to every leaf below it) and normalise negative axes."),
    _check("ps2.out_axes.out_axes", "ps2.out_axes", "test_out_axes", 4,
           "vmap_axes with out_axes per output (negative, None for unmapped outputs, prefixes)",
           "probe_out_axes", _out_axes, judge.expect_each(expect_out_axes),
           judge.judge_each(structured),
           blame="Move each output's batch axis to its out_axes entry (negative counts from the "
                 "end of the batched output); None keeps an unmapped output as it is."),
    _check("ps2.out_axes.ints", "ps2.out_axes", "test_out_axes", 2,
           "vmap_axes with a single int for in_axes and for out_axes, and with the defaults",
           "probe_out_axes_ints", _out_axes_ints, judge.expect_each(expect_out_axes_ints),
           judge.judge_each(_scaled_close),
           blame="A single int (or None) stands for every argument, or every output."),
    _check("ps2.out_axes.errors", "ps2.out_axes", "test_out_axes", 3,
           "vmap_axes raises ValueError where jax.vmap does", "probe_out_axes_errors",
           _error_inputs, expect_errors, errors,
           blame="Raise ValueError for a mapped output whose out_axes is None, in_axes that do "
                 "not match the arguments, different batch sizes and axes out of range."),
)

ASSIGNMENT = Assignment(name="ps2_autodidax", notebook="ps2_autodidax.ipynb", tasks=TASKS,
                        checks=CHECKS, extra={"own_primitives": ()})
