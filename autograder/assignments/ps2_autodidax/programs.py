"""Random programs as plain data, built the same way on both sides.

A *program* is a dict: ``steps``, a list of ``[op, i]`` or ``[op, i, j]`` (step ``k`` appends
``op(vals[i], vals[j])`` to ``vals``, which starts as the function's arguments), and ``sum``, the
axes the output is summed over at the end (several, some negative, or none). The grader draws
programs, the probe builds them on the course's core (``build(program, ours())``) and the grader
on real JAX (``build(program, theirs())``); NumPy (``numpy_lib()``) screens out programs whose
values overflow.

Nothing here knows a JVP or batching rule: it only calls primitives.
"""

from __future__ import annotations

import numpy as np

UNARY = ("sin", "cos", "neg", "exp", "log")
BINARY = ("add", "mul", "div", "max")
PROVIDED = ("sin", "cos", "neg", "add", "mul")  # the ops whose rules the course provides
LOG_SHIFT = 0.25  # "log" takes the log of v * v + LOG_SHIFT, so that any v is in its domain


def ours() -> dict:
    from jaxcourse.autodidax import core, extra

    return {"sin": core.sin, "cos": core.cos, "neg": core.neg, "exp": extra.exp,
            "log": extra.log, "add": core.add, "mul": core.mul, "div": extra.div,
            "max": extra.maximum, "matmul": extra.matmul, "sum": core.reduce_sum,
            "transpose": core.transpose, "broadcast": core.broadcast}


def theirs() -> dict:
    import jax.numpy as jnp  # grader side only, never at import

    return {"sin": jnp.sin, "cos": jnp.cos, "neg": jnp.negative, "exp": jnp.exp,
            "log": jnp.log, "add": jnp.add, "mul": jnp.multiply, "div": jnp.divide,
            "max": jnp.maximum, "matmul": jnp.matmul, "sum": lambda x, axis: jnp.sum(x, axis),
            "transpose": jnp.transpose,
            "broadcast": lambda x, shape, axes: jnp.broadcast_to(
                jnp.expand_dims(x, tuple(sorted(axes))), shape)}


def numpy_lib() -> dict:
    return {"sin": np.sin, "cos": np.cos, "neg": np.negative, "exp": np.exp, "log": np.log,
            "add": np.add, "mul": np.multiply, "div": np.divide, "max": np.maximum,
            "matmul": np.matmul, "sum": lambda x, axis: np.sum(x, tuple(axis)),
            "transpose": np.transpose,
            "broadcast": lambda x, shape, axes: np.broadcast_to(
                np.expand_dims(x, tuple(sorted(axes))), shape)}


def apply(op: str, lib: dict, *vals):
    if op == "log":
        (v,) = vals
        return lib["log"](lib["add"](lib["mul"](v, v), LOG_SHIFT))
    return lib[op](*vals)


def build(program: dict, lib: dict):
    """The program as a function of its arguments. The output adds up every value computed (and
    the first argument, which has the full shape), so that each step counts."""

    def f(*args):
        vals = list(args)
        for op, *operands in program["steps"]:
            vals.append(apply(op, lib, *(vals[i] for i in operands)))
        out = lib["add"](vals[-1], args[0])
        for val in vals[len(args):-1]:
            out = lib["add"](out, val)
        if program["sum"]:
            out = lib["sum"](out, tuple(program["sum"]))
        return out

    return f


def draw_shapes(rng: np.random.Generator, n_args: int, rank: int) -> list[list[int]]:
    """The first argument's shape has ``rank`` axes; the others are it or a suffix of it (a lower
    rank, which NumPy broadcasting aligns on the trailing axes)."""
    full = [int(s) for s in rng.integers(1, 4, size=rank)]
    shapes = [full]
    for _ in range(n_args - 1):
        shapes.append(full[int(rng.integers(0, rank + 1)):] if rng.random() < 0.5 else full)
    return shapes


def draw_sum_axes(rng: np.random.Generator, rank: int) -> list[int]:
    """A random set of axes, each written positive or negative; empty for a scalar."""
    if rank == 0:
        return []
    count = int(rng.integers(1, rank + 1))
    axes = sorted(int(a) for a in rng.choice(rank, size=count, replace=False))
    return [a - rank if rng.random() < 0.5 else a for a in axes]


def draw_steps(rng: np.random.Generator, n_args: int, cover, extra: int, ops=UNARY + BINARY):
    """Every op in ``cover`` once, in a random order, then ``extra`` random ops from ``ops``."""
    cover = [cover[i] for i in rng.permutation(len(cover))]
    steps, n = [], n_args
    for op in cover + [ops[int(rng.integers(len(ops)))] for _ in range(extra)]:
        if op in UNARY:
            steps.append([op, int(rng.integers(n))])
        else:
            steps.append([op, int(rng.integers(n)), int(rng.integers(n))])
        n += 1
    return steps


def tame(program: dict, args: list, bound: float = 1e3, margin: float = 0.0) -> bool:
    """Whether every value the program computes on ``args`` is finite and below ``bound``, and
    every divisor at least ``margin`` from zero (``log`` is taken of v*v + LOG_SHIFT: safe).

    The margin is for higher derivatives: the k-th derivative of ``a / b`` carries rounding
    error of about eps / |b|**(k + 1), so near zero two correct rules applied in a different
    order differ by more than any tolerance, however the expectation is computed (``x / x``
    at x = 0.0078: a third derivative of 2e-8 where the exact one is 0)."""
    lib = numpy_lib()
    vals = [np.asarray(a, dtype=np.float64) for a in args]
    with np.errstate(all="ignore"):
        for op, *operands in program["steps"]:
            if margin and op == "div" and np.any(np.abs(vals[operands[-1]]) < margin):
                return False
            vals.append(np.asarray(apply(op, lib, *(vals[i] for i in operands))))
    return all(np.all(np.isfinite(v)) and np.all(np.abs(v) < bound) for v in vals)


def draw_elementwise(rng: np.random.Generator, n_args: int, cover, *, rank=None, extra=None,
                     margin: float = 0.0, ops=UNARY + BINARY):
    """A tame random program over arrays of one rank (0 to 4) and lower, its arguments and
    tangents: {"program", "primals", "tangents"}; ``margin``: see ``tame``; ``ops``: what the
    steps after ``cover`` draw from."""
    for _ in range(200):
        r = int(rng.integers(0, 5)) if rank is None else rank
        shapes = draw_shapes(rng, n_args, r)
        n_extra = int(rng.integers(1, 4)) if extra is None else extra
        program = {"steps": draw_steps(rng, n_args, list(cover), n_extra, ops),
                   "sum": draw_sum_axes(rng, r)}
        args = [rng.uniform(-1.5, 1.5, size=s) for s in shapes]
        if tame(program, args, margin=margin):
            return {"program": program, "primals": args,
                    "tangents": [rng.uniform(-1.0, 1.0, size=s) for s in shapes]}
    raise RuntimeError("no tame program found")  # pragma: no cover - vanishingly unlikely


# --- Nested derivatives with closures (ps2.jvp_rules) ------------------------------------------
def closures(lib: dict, deriv, y0: float, c: float) -> list:
    """Scalar functions of ``a`` whose inner derivative closes over ``a`` (an outer tracer) or a
    constant: perturbation confusion shows in their derivatives. ``deriv`` is the derivative
    operator of the side building them (the student's rules, or jax.grad)."""

    def log_op(v):
        return apply("log", lib, v)

    return [
        lambda a: lib["mul"](a, deriv(lambda b: lib["exp"](lib["mul"](a, b)))(y0)),
        lambda a: deriv(lambda b: lib["div"](a, b))(y0),
        lambda a: log_op(lib["add"](lib["mul"](a, a),
                                    deriv(lambda b: lib["max"](lib["mul"](a, b), b))(y0))),
        lambda a: lib["mul"](lib["exp"](a), deriv(
            lambda b: lib["div"](c, lib["add"](lib["mul"](b, b), lib["mul"](a, a))))(y0)),
        lambda a: lib["mul"](a, deriv(lambda b: lib["max"](a, b))(a)),  # a tie, at an outer tracer
        lambda a: deriv(lambda b: lib["mul"](log_op(b), lib["div"](b, lib["exp"](a))))(a),
    ]


# --- Matrix products (ps2.matmul) --------------------------------------------------------------
def _unary(op, lib, v):
    return v if op == "id" else lib[op](v)


def matmul_chain(program: dict, lib: dict):
    """(x, y, z) -> a function of ``matmul(u2(matmul(u1(x), y)), z)``, summed over some axes."""

    def f(x, y, z):
        u1, u2 = program["u"]
        a = lib["matmul"](_unary(u1, lib, x), y)
        out = lib["matmul"](_unary(u2, lib, a), z)
        out = lib["add"](lib["mul"](out, out), lib["sin"](out))
        return lib["sum"](out, tuple(program["sum"])) if program["sum"] else out

    return f


def matmul_line(inputs: dict, lib: dict):
    """t -> the sum of the chain at base + t * direction: a scalar function of a scalar."""
    chain = matmul_chain(inputs["program"], lib)

    def g(t):
        moved = [lib["add"](b, lib["mul"](t, d)) for b, d in zip(inputs["base"], inputs["dirs"])]
        return lib["sum"](chain(*moved), None)

    return g


def matmul_pair(lib: dict):
    def f(x, y):
        return lib["add"](lib["matmul"](x, y), lib["matmul"](lib["sin"](x), lib["neg"](y)))

    return f


def matmul_sizes(inputs: dict, lib: dict):
    """A function from (n, k) matrices to (q, m) ones: input and output sizes differ."""
    w1, w2 = inputs["w1"], inputs["w2"]
    return lambda x: lib["sin"](lib["matmul"](w1, lib["matmul"](x, w2)))


# --- Shapes under vmap (ps2.shape_rules) -------------------------------------------------------
def shape_case(case: dict, lib: dict):
    if case["kind"] == "transpose":
        def op(v):
            return lib["transpose"](v, case["perm"])
    else:
        def op(v):
            return lib["broadcast"](v, case["shape"], case["axes"])
    if len(case["args"]) == 1:
        return op
    return lambda v, w: lib["mul"](op(v), w)


def mixing(program: dict, lib: dict):
    """A vector function that mixes its inputs: the program times the sum of the input."""
    body = build(program, lib)
    return lambda v: lib["mul"](body(v), lib["sum"](v, (0,)))


# --- Pytrees for vmap with in_axes and out_axes (ps2.out_axes) ---------------------------------
def tree_args(x, y, z):
    """Two arguments: a dict with a list (holding an empty tuple) and an empty dict, and z."""
    return ({"a": x, "b": [y, ()], "e": {}}, z)


def in_axes_tree(axes, style: str):
    ax_x, ax_y, ax_z = axes
    if style == "full":
        return ({"a": ax_x, "b": [ax_y, ()], "e": {}}, ax_z)
    return ({"a": ax_x, "b": ax_y, "e": None}, ax_z)  # axes as prefixes of whole subtrees


def out_axes_tree(axes, style: str):
    ap, aq0, aq1, ac = axes
    if style == "full":
        return {"p": ap, "q": (aq0, aq1), "r": [], "c": ac}
    return {"p": ap, "q": aq0, "r": 0, "c": ac}


def tree_function(program: dict, lib: dict, const):
    body = build(program, lib)

    def f(tree, z):
        x, y = tree["a"], tree["b"][0]
        return {"p": body(x, y, z), "q": (lib["mul"](x, 2.0), lib["sin"](y)), "r": [],
                "c": const}

    return f


def describe(tree) -> str:
    """The container structure of a pytree as a string."""
    if type(tree) is dict:
        return "{" + ",".join(f"{k}:{describe(tree[k])}" for k in sorted(tree)) + "}"
    if type(tree) is list:
        return "[" + ",".join(describe(t) for t in tree) + "]"
    if type(tree) is tuple:
        return "(" + ",".join(describe(t) for t in tree) + ")"
    return "*"


def encode(tree):
    """Plain data for a pytree; leaves become float64 arrays."""
    if type(tree) is dict:
        return {str(k): encode(v) for k, v in tree.items()}
    if type(tree) in (list, tuple):
        return [encode(t) for t in tree]
    return np.asarray(tree, dtype=np.float64)


def error_cases(inputs: dict, lib: dict) -> list:
    """Calls of a vmap that must raise: each takes the vmap to call."""
    x, y = inputs["x"], inputs["y"]
    rank = np.ndim(x)
    return [
        lambda vmap: vmap(lib["sin"], in_axes=0, out_axes=None)(x),  # a mapped output
        lambda vmap: vmap(lambda d: lib["sin"](d["a"]), in_axes=({"a": 0},))({"a": x, "b": x}),
        lambda vmap: vmap(lib["add"], in_axes=(0, 0))(x, y),  # two batch sizes
        lambda vmap: vmap(lib["sin"], in_axes=rank)(x),  # no such axis
        # in_axes that do not match the arguments, every other kind, each on every grading: a
        # tuple longer than the arguments, a tuple where a dict is, a key too many, a list too
        # short, a list where a tuple is, a container where an array is
        lambda vmap: vmap(lib["sin"], in_axes=(0, 0))(x),
        lambda vmap: vmap(lambda d: lib["sin"](d["a"]), in_axes=((0,),))({"a": x}),
        lambda vmap: vmap(lambda d: lib["sin"](d["a"]), in_axes=({"a": 0, "b": 0},))({"a": x}),
        lambda vmap: vmap(lambda p: lib["sin"](p[0]), in_axes=([0],))([x, x]),
        lambda vmap: vmap(lambda p: lib["sin"](p[0]), in_axes=([0, 0],))((x, x)),
        lambda vmap: vmap(lib["sin"], in_axes=((0,),))(x),
        # axes out of range, the other kinds: a negative in_axes, out_axes either way (the
        # batched output has the rank of x)
        lambda vmap: vmap(lib["sin"], in_axes=-rank - 1)(x),
        lambda vmap: vmap(lib["sin"], out_axes=rank)(x),
        lambda vmap: vmap(lib["sin"], out_axes=-rank - 1)(x),
    ]


ERRORS = ["ValueError", "ValueError|TypeError", "ValueError", "ValueError",
          *["ValueError|TypeError"] * 6, *["ValueError"] * 3]
