"""Random functions and pytrees as plain data, built the same way on both sides.

A *program* is a list of steps ``[op, i]`` or ``[op, i, j]``; step ``k`` appends
``op(vals[i], vals[j])`` to ``vals``, which starts as the function's arguments. The grader draws
programs (``draw_program``), the probe runs them on the student's core (``build(program, OURS)``)
and the expectation on real JAX (``build(program, theirs())``).

A *tree spec* is plain data standing for a pytree with float leaves: lists, tuples and str-keyed
dicts as themselves, and ``{"__pair__": [a, b]}`` for a ``Pair``, a custom node registered with
both our core and JAX.
"""

from __future__ import annotations

import numpy as np

from jaxcourse.autodidax import core
from jaxcourse.autodidax.pytree import register_pytree_node

UNARY = ("sin", "cos", "neg")
BINARY = ("add", "mul")

OURS = {"sin": core.sin, "cos": core.cos, "neg": core.neg, "add": core.add, "mul": core.mul,
        "sum": lambda x: core.reduce_sum(x, 0)}


def theirs() -> dict:
    import jax.numpy as jnp  # grader side (and the probes' JAX comparisons), never at import

    return {"sin": jnp.sin, "cos": jnp.cos, "neg": jnp.negative, "add": jnp.add,
            "mul": jnp.multiply, "sum": lambda x: jnp.sum(x, 0)}


def draw_program(rng: np.random.Generator, n_args: int, steps: int, *, sums: bool,
                 focus: list | None = None, partners: list | None = None) -> list:
    """Random steps over ``n_args`` vector arguments; ``sums`` allows reduce_sum steps, which
    take a vector to a scalar (never a scalar, which has no axis 0).

    Every primitive allowed appears at least once (in a random order), so that a wrong rule for
    any of them shows; ``steps`` more random steps follow. The covering steps apply to the
    arguments in ``focus`` when given (say, the ones mapped along axis 1), binary ones with a
    second operand from ``partners`` when given (say, the unmapped arguments).
    """
    cover = list(UNARY + BINARY) + (["sum"] if sums else [])
    cover = [cover[i] for i in rng.permutation(len(cover))]
    extra = [None] * steps
    program, ranks = [], [1] * n_args
    for k, op in enumerate(cover + extra):
        covering = focus and k < len(cover)
        if op is None:
            kinds = UNARY + BINARY + (("sum",) if sums else ())
            op = kinds[rng.integers(len(kinds))]
        n = len(ranks)
        if op in UNARY:
            i = int(rng.choice(focus)) if covering else int(rng.integers(n))
            program.append([op, i])
            ranks.append(ranks[i])
        elif op in BINARY:
            i = int(rng.choice(focus)) if covering else int(rng.integers(n))
            j = int(rng.choice(partners)) if covering and partners else int(rng.integers(n))
            program.append([op, i, j])
            ranks.append(max(ranks[i], ranks[j]))
        else:
            vectors = [i for i, r in enumerate(ranks) if r == 1]
            program.append(["sum", vectors[int(rng.integers(len(vectors)))]])
            ranks.append(0)
    return program


def build(program: list, lib: dict):
    """The program as a function of its arguments. The output adds up every value the program
    computed (and the first argument), so that each step, and each primitive, counts."""

    def f(*args):
        vals = list(args)
        for op, *operands in program:
            vals.append(lib[op](*(vals[i] for i in operands)))
        out = lib["add"](lib["mul"](vals[-1], vals[-2]), args[0])
        for val in vals[len(args):-2]:
            out = lib["add"](out, val)
        return out

    return f


class Pair:
    """A custom pytree node: two children, no metadata."""

    def __init__(self, first, second):
        self.first, self.second = first, second


register_pytree_node(Pair, lambda p: (None, (p.first, p.second)), lambda _, kids: Pair(*kids))


def register_pair_with_jax() -> None:
    import jax

    try:
        jax.tree_util.register_pytree_node(
            Pair, lambda p: ((p.first, p.second), None), lambda _, kids: Pair(*kids))
    except ValueError:  # already registered in this process
        pass


def draw_tree(rng: np.random.Generator, depth: int = 3):
    """A random tree spec with float leaves; dict keys in a random (unsorted) insertion order."""
    if depth == 0 or rng.random() < 0.25:
        return float(np.round(rng.normal(), 3))
    kind = rng.integers(4)
    size = int(rng.integers(1, 4))
    kids = [draw_tree(rng, depth - 1) for _ in range(size)]
    if kind == 0:
        return kids
    if kind == 1:
        return tuple(kids)
    if kind == 2:
        keys = [str(k) for k in rng.choice(list("pqrstuvw"), size=size, replace=False)]
        return dict(zip(keys, kids))
    return {"__pair__": [draw_tree(rng, depth - 1), draw_tree(rng, depth - 1)]}


def decode(spec):
    """The pytree a spec stands for."""
    if isinstance(spec, dict) and set(spec) == {"__pair__"}:
        return Pair(*(decode(s) for s in spec["__pair__"]))
    if isinstance(spec, dict):
        return {k: decode(v) for k, v in spec.items()}
    if isinstance(spec, (list, tuple)):
        return type(spec)(decode(s) for s in spec)
    return spec


def encode(tree):
    """Plain data for a pytree; leaves become float64 arrays. Refuses what it does not know."""
    if isinstance(tree, Pair):
        return {"__pair__": [encode(tree.first), encode(tree.second)]}
    if type(tree) is dict:
        return {str(k): encode(v) for k, v in tree.items()}
    if type(tree) in (list, tuple):
        return type(tree)(encode(t) for t in tree)
    return np.asarray(tree, dtype=np.float64)


def canonical_leaves(tree) -> list:
    """The leaves in a fixed order (dicts by sorted key), whoever flattened the tree."""
    if isinstance(tree, Pair):
        return canonical_leaves(tree.first) + canonical_leaves(tree.second)
    if type(tree) is dict:
        return [v for k in sorted(tree) for v in canonical_leaves(tree[k])]
    if type(tree) in (list, tuple):
        return [v for t in tree for v in canonical_leaves(t)]
    return [tree]


def describe(tree) -> str:
    """The container structure of a pytree as a string: what `encode` leaves to the judge."""
    if isinstance(tree, Pair):
        return f"Pair({describe(tree.first)},{describe(tree.second)})"
    if type(tree) is dict:
        return "{" + ",".join(f"{k}:{describe(tree[k])}" for k in sorted(tree)) + "}"
    if type(tree) is list:
        return "[" + ",".join(describe(t) for t in tree) + "]"
    if type(tree) is tuple:
        return "(" + ",".join(describe(t) for t in tree) + ")"
    return "*"


def tree_function(program, lib):
    """A function of a pytree {"a": x, "b": [y, Pair(z, w)]} to a pytree with all node kinds."""
    body = build(program, lib)

    def f(tree):
        x, (y, pair) = tree["a"], tree["b"]
        out = body(x, y, pair.first, pair.second)
        pair_out = Pair(lib["sin"](x), pair.second)
        return {"out": [out, (lib["mul"](x, y),)], "pair": pair_out}

    return f
