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
        # A dead equation in every body: a pass that prunes the nested jaxpr of the argument in
        # place (instead of into a new one) changes it, and the probes compare it deeply.
        lib["neg"](b)
        return lib["mul"](lib["sin"](a), b), lib["add"](a, lib["cos"](b))

    return pair


def _other_pair(lib):
    def pair(a, b):
        return lib["mul"](a, b), lib["add"](a, b)

    return pair


_ELEMENTARY = {"sin": core.sin, "cos": core.cos, "neg": core.neg, "add": core.add,
               "mul": core.mul}
_ours_pair = _pair(_ELEMENTARY)


def _ours_cond(a, b):
    pred = core.greater(core.reduce_sum(a), 0.0)
    return cond(pred, _other_pair(_ELEMENTARY), _ours_pair, a, b)


def ours() -> dict:
    """The course core's operations. A fresh ``jit`` each time: the core's jit keeps the jaxpr it
    staged, so a pass that rewrote that jaxpr in place would otherwise hand its change on to the
    next case (and, in the tests' in-process grading, to the next notebook)."""
    return {**_ELEMENTARY, "scale": lambda x: x * 2.0, "sum_back": _sum_back,
            "jit2": jit(_ours_pair), "cond2": _ours_cond, "greater": core.greater,
            "less": core.less, "select": select}


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
                   signature: bool = False, dead_const: bool = False) -> dict:
    """Steps over ``n_args - 1`` inputs and a closed-over constant (the last argument), some of
    which no output needs; with ``chains``, dead values feed other dead ones.

    With ``signature`` (``n_args >= 3``), the outputs always leave one input (drawn) unused and
    always need the constant, so that a pass that drops or keeps binders by use shows it: an
    equation reading another input and the constant comes first, and the outputs are drawn among
    the values that do not depend on the unused input, one of them on the constant (through a
    last step reading another kept one, so that kept equations depend on each other). Without it,
    which arguments the outputs need is left to chance.

    With ``dead_const`` (and ``chains``, not ``signature``), the constant is read by the dead
    chain's first step alone: after the pass no equation reads it, and it stays a constvar.

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
    live_const = None if dead_const else const
    for _ in range(int(rng.integers(3, 7)) - len(steps)):
        steps.append(_step(rng, n, pool=[k for k in range(n) if k not in const],
                           second=live_const))
        n += 1
    if chains:
        # A dead chain: each step reads the one before, and no output reads the last.
        start = n
        steps.append([BINARY[int(rng.integers(2))],
                      int(rng.choice([k for k in range(n) if k not in const])), const[0]]
                     if dead_const else
                     _step(rng, n, pool=[k for k in range(n) if k not in const], second=const))
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
                  folded_out: bool | None = None, ops=UNARY + BINARY, literal_only=False,
                  scalar=False, both_kinds=False, const_out=False, repeated=False) -> dict:
    """Steps over constants (the first ``n_consts`` arguments), one input (the next) and, with
    ``literal_only``, two scalar literals (the last two: the probe writes them into the jaxpr as
    ``Lit``s, the grader's JAX closes over them as NumPy scalars, which it stages as literals),
    so that some steps depend only on constants. ``ops``: what a random step applies (without
    ``scale`` and ``literals``, the program has no literal). Every feature asked for is always
    drawn, so a class of program is never left to chance:

    - ``literals``: constants meet the literal 2.0 (``scale``, at least once);
    - ``literal_only``: an equation whose inputs are all literals (both the same, half the time),
      its rank-0 result read by a kept equation;
    - ``scalar``: the first constant has rank 0 (``"const_ranks"``), and a rank-0 value folded
      from it is read by a kept equation;
    - ``both_kinds``: a kept equation reads an original constant as it is and another a folded
      result, so that both kinds of constvars survive at once;
    - ``folded_out``: a folded value is also an output (None: chance decides); ``const_out``: an
      original constant is an output as it is;
    - ``repeated``: a folded equation and a kept one each read one variable twice.

    Always: transitive folding, an equation with params (``sum_back``) folded, a kept equation.
    ``"const_ranks"`` and ``"n_lits"`` tell the grader what to draw.
    """
    x = n_consts
    lits = [n_consts + 1, n_consts + 2] if literal_only else []
    n = n_consts + 1 + len(lits)
    ranks = [0 if scalar and k == 0 else 1 for k in range(n_consts)] + [1] + [0] * len(lits)
    steps: list = []

    def add(step):
        nonlocal n
        steps.append(step)
        ranks.append(max(ranks[i] for i in step[1:]))
        n += 1
        return n - 1

    constant = list(range(n_consts))
    lit_value = None
    if literal_only:  # never scale: NumPy would compute 2.0 * a NumPy scalar, JAX stage nothing
        if rng.random() < 0.5:
            lit_value = add([("sin", "cos", "neg")[int(rng.integers(3))], lits[0]])
        else:
            lit_value = add([BINARY[int(rng.integers(2))], lits[0], lits[int(rng.integers(2))]])
        constant.append(lit_value)
    scalar_value = add([("sin", "cos", "neg")[int(rng.integers(3))], 0]) if scalar else None
    if scalar_value is not None:
        constant.append(scalar_value)
    n_const_steps = int(rng.integers(3 if repeated else 2, 5))  # three places, if repeated
    with_literal = int(rng.integers(n_const_steps))
    with_params = (with_literal + 1) % n_const_steps  # always one equation with params, folded
    with_repeat = (with_literal + 2) % n_const_steps if repeated else None
    for k in range(n_const_steps):  # constant-only steps first, then mixed ones
        step = _step(rng, n, pool=constant, ops=ops)
        vectors = [i for i in constant if ranks[i] == 1]
        if k == with_params and vectors:
            step = ["sum_back", int(rng.choice(vectors))]
        elif k == with_repeat:
            step = [BINARY[int(rng.integers(2))], step[1], step[1]]
        elif literals and (k == with_literal or rng.random() < 0.5):
            step = ["scale", step[1]]
        constant.append(add(step))
    folded = [k for k in constant if k >= n_consts]
    for _ in range(int(rng.integers(2, 5))):
        add(_step(rng, n, pool=[k for k in range(n) if k not in lits], ops=ops))
    last = add(["mul", x, int(rng.integers(n_consts + 1 + len(lits), n))])  # a kept equation
    for reads in ([lit_value] if literal_only else []) + ([scalar_value] if scalar else []):
        last = add([BINARY[int(rng.integers(2))], reads, last])
    if both_kinds:
        last = add([BINARY[int(rng.integers(2))], int(rng.integers(n_consts)), last])
        last = add([BINARY[int(rng.integers(2))], last, int(rng.choice(folded))])
    if repeated:
        last = add([BINARY[int(rng.integers(2))], last, last])
    if folded_out is None:
        folded_out = bool(rng.random() < 0.5)
    outs = ([last] + [int(rng.choice(folded))] * int(folded_out)
            + [int(rng.integers(n_consts))] * int(const_out))
    return {"steps": steps, "outs": outs, "const_ranks": ranks[:n_consts],
            "n_lits": len(lits)}
