"""Random programs as plain data, run the same way on both sides.

A *program* is ``{"steps": [[op, i] or [op, i, j], ...], "outs": [k, ...]}``: step ``n`` appends
``op(vals[i], vals[j])`` to ``vals``, which starts as the function's arguments, and the function
returns ``[vals[k] for k in outs]``. ``scale`` multiplies by the Python float 2.0, which both
systems stage as a literal. The grader draws programs and runs them on real JAX; the probe runs
them on the course's core. Nothing here knows an answer of the assignment.
"""

from __future__ import annotations

import functools

import numpy as np

from jaxcourse.autodidax import core
from jaxcourse.core.control_flow import cond, select
from jaxcourse.core.jit import jit

UNARY = ("sin", "cos", "neg", "scale")
BINARY = ("add", "mul")
# Equations of several outputs: ``[op, i, j]`` appends two values. Each output reads both
# operands, in both branches of the cond, so that no output of a live call leaves an operand
# unused (JAX's own dead-code elimination prunes a call's unused operands; the task keeps whole
# equations).
CALLS = ("jit2", "cond2")
COMPARE = ("greater", "less")

def _sum_back(x):
    # Equations with params (reduce_sum's axis, broadcast's shape and axes): a folding rule that
    # drops an equation's params when it binds it again breaks here.
    return core.broadcast(core.reduce_sum(x, 0), np.shape(x), (0,))


def _pair(lib):
    def pair(a, b):
        return lib["mul"](lib["sin"](a), b), lib["add"](a, lib["cos"](b))

    return pair


def _other_pair(lib):
    def pair(a, b):
        return lib["mul"](a, b), lib["add"](a, b)

    return pair


_ours_pair = _pair({"sin": core.sin, "cos": core.cos, "add": core.add, "mul": core.mul})
_ours_jit = jit(_ours_pair)


def _ours_cond(a, b):
    pred = core.greater(core.reduce_sum(a), 0.0)
    return cond(pred, _other_pair({"add": core.add, "mul": core.mul}), _ours_pair, a, b)


OURS = {"sin": core.sin, "cos": core.cos, "neg": core.neg, "add": core.add, "mul": core.mul,
        "scale": lambda x: x * 2.0, "sum_back": _sum_back, "jit2": _ours_jit,
        "cond2": _ours_cond, "greater": core.greater, "less": core.less, "select": select}


@functools.cache  # one jax.jit of the pair, so that its compilations are cached
def theirs() -> dict:
    import jax  # grader side only, never at import
    import jax.numpy as jnp
    from jax import lax

    lib = {"sin": jnp.sin, "cos": jnp.cos, "neg": jnp.negative, "add": jnp.add,
           "mul": jnp.multiply, "scale": lambda x: x * 2.0,
           "sum_back": lambda x: jnp.broadcast_to(jnp.sum(x, axis=0), jnp.shape(x)),
           "greater": jnp.greater, "less": jnp.less, "select": lax.select}
    pair = _pair(lib)
    lib["jit2"] = jax.jit(pair)
    lib["cond2"] = lambda a, b: lax.cond(jnp.sum(a) > 0.0, _other_pair(lib), pair, a, b)
    return lib


def build(program: dict, lib: dict):
    def f(*args):
        vals = list(args)
        for op, *idx in program["steps"]:
            out = lib[op](*[vals[i] for i in idx])
            vals.extend(out) if op in CALLS else vals.append(out)
        return [vals[k] for k in program["outs"]]

    return f


def draw_multi_out(rng: np.random.Generator, call: str, read: str) -> dict:
    """Like :func:`draw_dead_code` (two inputs and a closed-over constant, the last argument),
    with one equation of two outputs, ``call`` (``"jit2"`` or ``"cond2"``), reading a computed
    value and any other. ``read``: ``"second"``, only its second output is read (by the
    program's first output; a dead chain hangs off its first); ``"none"``, neither is (a dead
    chain hangs off the second; the outputs are values computed before it)."""
    const, n = 2, 3
    steps: list = []
    for _ in range(int(rng.integers(2, 4))):
        steps.append(_step(rng, n, pool=[k for k in range(n) if k != const], second=[const]))
        n += 1
    operand = int(rng.integers(3, n))  # a computed value, so the call is staged
    steps.append([call, operand, int(rng.choice([k for k in range(n) if k != operand]))])
    first, second = n, n + 1
    n += 2
    live = second if read == "second" else None
    dead = first if read == "second" else second
    if live is not None:
        steps.append([("sin", "cos", "neg")[int(rng.integers(3))], live])
        live = n
        n += 1
    steps.append([("sin", "cos", "neg")[int(rng.integers(3))], dead])  # a dead chain
    n += 1
    # Values computed before the call: the outputs, or beside the live one, half the time.
    before = [int(k) for k in rng.choice(range(3, first), size=2, replace=False)]
    if live is None:
        outs = before[: int(rng.integers(1, 3))]
    else:
        outs = [live] + before[: int(rng.integers(2))]
    return {"steps": steps, "outs": sorted(outs)}


def draw_fold_special(rng: np.random.Generator, kind: str) -> dict:
    """Steps over two constants (arguments 0 and 1) and one input (2) whose folded part holds
    what :func:`draw_foldable` never draws. ``kind``: ``"compare"``, a comparison of constants
    (a bool value) read by a kept ``select``; ``"jit2"`` or ``"cond2"``, an equation of two
    outputs over constants, both read by kept equations."""
    unary = ("sin", "cos", "neg")
    steps: list = [[unary[int(rng.integers(3))], int(rng.integers(2))]]  # 3: a constant
    if kind == "compare":
        steps.append([COMPARE[int(rng.integers(2))], 3, 1 - steps[0][1]])  # 4: bool constant
        steps.append([unary[int(rng.integers(3))], 2])  # 5: reads x
        branches = [5, 3] if rng.random() < 0.5 else [3, 5]
        steps.append(["select", 4, *branches])  # 6: kept
        return {"steps": steps, "outs": [6]}
    steps.append([kind, 3, 1 - steps[0][1]])  # 4 and 5: two constants
    steps.append([BINARY[int(rng.integers(2))], 4, 2])  # 6: kept
    steps.append([BINARY[int(rng.integers(2))], 5, 6])  # 7: kept
    return {"steps": steps, "outs": [7]}


def _step(rng, n_vals, pool=None, second=None, ops=UNARY + BINARY):
    """A random step of one of ``ops``, reading values in ``pool``; a binary step's second
    operand may also come from ``second``."""
    pool = list(range(n_vals)) if pool is None else pool
    op = ops[int(rng.integers(len(ops)))]
    if op in UNARY:
        return [op, int(rng.choice(pool))]
    return [op, int(rng.choice(pool)), int(rng.choice(pool + (second or [])))]


def draw_dead_code(rng: np.random.Generator, n_args: int, *, chains: bool,
                   signature: bool = False) -> dict:
    """Steps over ``n_args - 1`` inputs and a closed-over constant (the last argument), some of
    which no output needs; with ``chains``, dead values feed other dead ones.

    With ``signature`` (``n_args >= 3``), the outputs always leave one input (drawn) unused and
    always need the constant, so that a pass that drops or keeps binders by use shows it: an
    equation reading another input and the constant comes first, and the outputs are drawn among
    the values that do not depend on the unused input, one of them on the constant (through a
    last step reading another kept one, so that kept equations depend on each other). Without it,
    which arguments the outputs need is left to chance.

    Every step reads an input or a value computed from one: an operation on the constant alone
    is computed while tracing by the course's core (not staged), while JAX stages it.
    """
    steps: list = []
    n = n_args
    const = [n_args - 1]
    inputs = [k for k in range(n_args) if k not in const]
    if signature:
        unused = int(rng.choice(inputs))
        live = [k for k in inputs if k != unused]
        steps.append([BINARY[int(rng.integers(len(BINARY)))], int(rng.choice(live)), const[0]])
        n += 1
    for _ in range(int(rng.integers(3, 7)) - len(steps)):
        steps.append(_step(rng, n, pool=[k for k in range(n) if k not in const], second=const))
        n += 1
    if chains:
        # A dead chain: each step reads the one before, and no output reads the last.
        start = n
        steps.append(_step(rng, n, pool=[k for k in range(n) if k not in const], second=const))
        n += 1
        for _ in range(int(rng.integers(2, 4))):
            steps.append([["sin", "cos", "neg", "scale"][int(rng.integers(4))], n - 1])
            n += 1
        candidates = [k for k in range(n_args, start)]
    else:
        candidates = list(range(n_args, n))
    if signature:
        needs = [{k} for k in range(n_args)]  # the arguments each value depends on
        for _, *idx in steps:
            needs.append(set().union(*(needs[i] for i in idx)))
        free = [k for k in candidates if unused not in needs[k]]
        first = int(rng.choice([k for k in free if const[0] in needs[k]]))
        rest = [k for k in free if k != first]
        # The output needing the constant goes through one more step, so that at least two
        # kept equations depend on each other (their order matters).
        steps.append([("sin", "cos", "neg")[int(rng.integers(3))], first])
        first = n
        more = rng.choice(rest, size=int(rng.integers(0, min(2, len(rest)) + 1)), replace=False)
        return {"steps": steps, "outs": sorted([first, *(int(k) for k in more)])}
    n_outs = int(rng.integers(1, min(3, len(candidates)) + 1))
    outs = sorted(int(k) for k in rng.choice(candidates, size=n_outs, replace=False))
    return {"steps": steps, "outs": outs}


def draw_foldable(rng: np.random.Generator, n_consts: int, *, literals: bool,
                  folded_out: bool | None = None, ops=UNARY + BINARY) -> dict:
    """Steps over constants (the first ``n_consts`` arguments) and one input (the last), so that
    some steps depend only on constants; with ``literals``, constants also meet the literal 2.0
    (at least once). With ``folded_out``, a constant-only value is also an output; with False,
    only the last (kept) value is; with None, chance decides. ``ops``: what a random step
    applies (without ``scale`` and ``literals``, the program has no literal)."""
    n_args = n_consts + 1
    steps: list = []
    n = n_args
    n_const_steps = int(rng.integers(2, 5))
    with_literal = int(rng.integers(n_const_steps))
    with_params = (with_literal + 1) % n_const_steps  # always one equation with params, folded
    for k in range(n_const_steps):  # constant-only steps first, then mixed ones
        step = _step(rng, n, pool=[k for k in range(n) if k != n_consts], ops=ops)
        if k == with_params:
            step = ["sum_back", step[1]]
        elif literals and (k == with_literal or rng.random() < 0.5):
            step = ["scale", step[1]]
        steps.append(step)
        n += 1
    for _ in range(int(rng.integers(2, 5))):
        steps.append(_step(rng, n, ops=ops))
        n += 1
    steps.append(["mul", n_consts, int(rng.integers(n_args, n))])  # at least one kept equation
    n += 1
    const_outs = [k for k in range(n_args, n_args + 2)]
    if folded_out is None:
        folded_out = bool(rng.random() < 0.5)
    outs = [n - 1] + [int(rng.choice(const_outs))] * int(folded_out)
    return {"steps": steps, "outs": outs}
