"""Random programs as plain data, run the same way on both sides.

A *program* is ``{"steps": [[op, i] or [op, i, j], ...], "outs": [k, ...]}``: step ``n`` appends
``op(vals[i], vals[j])`` to ``vals``, which starts as the function's arguments, and the function
returns ``[vals[k] for k in outs]``. ``scale`` multiplies by the Python float 2.0, which both
systems stage as a literal. The grader draws programs and runs them on real JAX; the probe runs
them on the course's core. Nothing here knows an answer of the assignment.
"""

from __future__ import annotations

import numpy as np

from jaxcourse.autodidax import core

UNARY = ("sin", "cos", "neg", "scale")
BINARY = ("add", "mul")

def _sum_back(x):
    # Equations with params (reduce_sum's axis, broadcast's shape and axes): a folding rule that
    # drops an equation's params when it binds it again breaks here.
    return core.broadcast(core.reduce_sum(x, 0), np.shape(x), (0,))


OURS = {"sin": core.sin, "cos": core.cos, "neg": core.neg, "add": core.add, "mul": core.mul,
        "scale": lambda x: x * 2.0, "sum_back": _sum_back}


def theirs() -> dict:
    import jax.numpy as jnp  # grader side only, never at import

    return {"sin": jnp.sin, "cos": jnp.cos, "neg": jnp.negative, "add": jnp.add,
            "mul": jnp.multiply, "scale": lambda x: x * 2.0,
            "sum_back": lambda x: jnp.broadcast_to(jnp.sum(x, axis=0), jnp.shape(x))}


def build(program: dict, lib: dict):
    def f(*args):
        vals = list(args)
        for op, *idx in program["steps"]:
            vals.append(lib[op](*[vals[i] for i in idx]))
        return [vals[k] for k in program["outs"]]

    return f


def _step(rng, n_vals, pool=None, second=None):
    """A random step reading values in ``pool``; a binary step's second operand may also come
    from ``second``."""
    pool = list(range(n_vals)) if pool is None else pool
    op = (UNARY + BINARY)[int(rng.integers(len(UNARY + BINARY)))]
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
                  folded_out: bool | None = None) -> dict:
    """Steps over constants (the first ``n_consts`` arguments) and one input (the last), so that
    some steps depend only on constants; with ``literals``, constants also meet the literal 2.0
    (at least once). With ``folded_out``, a constant-only value is also an output; with False,
    only the last (kept) value is; with None, chance decides."""
    n_args = n_consts + 1
    steps: list = []
    n = n_args
    n_const_steps = int(rng.integers(2, 5))
    with_literal = int(rng.integers(n_const_steps))
    with_params = (with_literal + 1) % n_const_steps  # always one equation with params, folded
    for k in range(n_const_steps):  # constant-only steps first, then mixed ones
        step = _step(rng, n, pool=[k for k in range(n) if k != n_consts])
        if k == with_params:
            step = ["sum_back", step[1]]
        elif literals and (k == with_literal or rng.random() < 0.5):
            step = ["scale", step[1]]
        steps.append(step)
        n += 1
    for _ in range(int(rng.integers(2, 5))):
        steps.append(_step(rng, n))
        n += 1
    steps.append(["mul", n_consts, int(rng.integers(n_args, n))])  # at least one kept equation
    n += 1
    const_outs = [k for k in range(n_args, n_args + 2)]
    if folded_out is None:
        folded_out = bool(rng.random() < 0.5)
    outs = [n - 1] + [int(rng.choice(const_outs))] * int(folded_out)
    return {"steps": steps, "outs": outs}
