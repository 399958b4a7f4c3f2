"""The Autodidax core of Part II agrees with real JAX on the same functions.

Functions are random compositions of the core's primitives, written once against a small
"library" so that the same program runs on our core and on jax.numpy.
"""

from __future__ import annotations

import warnings

import hypothesis.extra.numpy as hnp
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxcourse.autodidax import core
from jaxcourse.autodidax.batching import vmap_rules
from jaxcourse.autodidax.core import LevelError, full_raise, new_main, sin
from jaxcourse.autodidax.jvp import JVPTrace, deriv, jvp, jvp_v1
from jaxcourse.autodidax.pytree import register_pytree_node, tree_flatten, tree_unflatten
from jaxcourse.autodidax.vmap import jacfwd, vmap

OURS = {"sin": core.sin, "cos": core.cos, "neg": core.neg, "add": core.add, "mul": core.mul,
        "sum": lambda x: core.reduce_sum(x, 0)}
THEIRS = {"sin": jnp.sin, "cos": jnp.cos, "neg": jnp.negative, "add": jnp.add,
          "mul": jnp.multiply, "sum": lambda x: jnp.sum(x, 0)}

UNARY = ("sin", "cos", "neg")
BINARY = ("add", "mul")

# A program is a list of steps; each appends one value computed from earlier values.
step = st.one_of(
    st.tuples(st.sampled_from(UNARY), st.integers(0, 50)),
    st.tuples(st.sampled_from(BINARY), st.integers(0, 50), st.integers(0, 50)),
)
programs = st.lists(step, min_size=1, max_size=8)


def run(program, lib, x, y):
    vals = [x, y]
    for op, *args in program:
        vals.append(lib[op](*(vals[a % len(vals)] for a in args)))
    # Mix in an input, so the output always depends on x (and is an array op, not a constant).
    return lib["add"](lib["mul"](vals[-1], vals[-2]), x)


floats = st.floats(-3.0, 3.0, allow_nan=False)
vectors = hnp.arrays(np.float64, st.integers(1, 4), elements=floats)


@pytest.fixture(autouse=True, scope="module")
def _x64():
    # The core computes in float64, like NumPy; restored so other test modules see the default.
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", previous)


@pytest.fixture(autouse=True)
def _no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield
    assert core.trace_stack == [core.trace_stack[0]], "a transformation left its interpreter"


@settings(max_examples=40, deadline=None)
@given(programs, floats, floats, floats, floats)
def test_eval_and_jvp_match_jax(program, x, y, dx, dy):
    f_ours = lambda a, b: run(program, OURS, a, b)
    f_jax = lambda a, b: run(program, THEIRS, a, b)
    np.testing.assert_allclose(f_ours(x, y), f_jax(x, y), rtol=1e-10, atol=1e-12)
    ours = jvp(f_ours, (x, y), (dx, dy))
    theirs = jax.jvp(f_jax, (x, y), (dx, dy))
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-10)


@settings(max_examples=20, deadline=None)
@given(programs, floats, st.integers(1, 3))
def test_nested_derivatives_match_jax_grad(program, x, order):
    f_ours = lambda a: run(program, OURS, a, 0.5)
    f_jax = lambda a: run(program, THEIRS, a, 0.5)
    for _ in range(order):
        f_ours, f_jax = deriv(f_ours), jax.grad(f_jax)
    np.testing.assert_allclose(f_ours(x), f_jax(x), rtol=1e-8, atol=1e-8)


def test_derivatives_of_sin_to_fourth_order():
    f_ours, f_jax = sin, jnp.sin
    for _ in range(4):
        f_ours, f_jax = deriv(f_ours), jax.grad(f_jax)
        np.testing.assert_allclose(f_ours(3.0), f_jax(3.0), rtol=1e-12)


def test_python_control_flow_under_jvp():
    def f(x):
        return 2.0 * x if x > 0.0 else x

    assert deriv(f)(3.0) == 2.0 and deriv(f)(-3.0) == 1.0


def test_perturbation_confusion_is_prevented():
    # d/dx [x * d/dy (x + y)] = d/dx [x * 1] = 1
    ours = deriv(lambda x: x * deriv(lambda y: x + y)(0.0))(2.0)
    theirs = jax.grad(lambda x: x * jax.grad(lambda y: x + y)(0.0))(2.0)
    assert ours == theirs == 1.0
    # The inner function returns the outer tracer itself: its inner derivative is zero.
    assert deriv(lambda x: x * deriv(lambda y: x)(0.0))(2.0) == 0.0


def test_full_raise_refuses_to_lower_a_tracer():
    with new_main(JVPTrace) as outer_main:
        outer = full_raise(JVPTrace(outer_main), 1.0)
        with new_main(JVPTrace) as inner_main:
            inner = full_raise(JVPTrace(inner_main), outer)
            assert inner._trace.main is inner_main and inner.primal is outer
            with pytest.raises(LevelError):
                full_raise(JVPTrace(outer_main), inner)


class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y


register_pytree_node(Point, lambda p: (None, (p.x, p.y)), lambda _, xy: Point(*xy))


pytrees = st.recursive(
    floats,
    lambda kids: st.one_of(
        st.lists(kids, max_size=3),
        st.lists(kids, max_size=3).map(tuple),
        st.dictionaries(st.sampled_from("dcba"), kids, max_size=3),
        st.tuples(kids, kids).map(lambda xy: Point(*xy)),
    ),
    max_leaves=8,
)


def _plain(tree):
    # Point -> dict, so that jax (which does not know our registration) can flatten it too.
    if isinstance(tree, Point):
        return {"x": _plain(tree.x), "y": _plain(tree.y)}
    if isinstance(tree, (list, tuple)):
        return type(tree)(_plain(t) for t in tree)
    if isinstance(tree, dict):
        return {k: _plain(v) for k, v in tree.items()}
    return tree


@settings(max_examples=60, deadline=None)
@given(pytrees)
def test_tree_flatten_matches_jax_and_round_trips(tree):
    leaves, treedef = tree_flatten(tree)
    assert leaves == jax.tree_util.tree_leaves(_plain(tree))
    rebuilt = tree_unflatten(treedef, leaves)
    assert _plain(rebuilt) == _plain(tree) and tree_flatten(rebuilt)[1] == treedef


@settings(max_examples=30, deadline=None)
@given(pytrees)
def test_jvp_of_pytree_function_matches_jax(tree):
    def f(t):
        return {"sq": [v * v for v in tree_flatten(t)[0]], "same": t}

    def f_jax(t):
        return {"sq": [v * v for v in jax.tree_util.tree_leaves(t)], "same": t}

    ones = tree_unflatten(tree_flatten(tree)[1], [1.0] * len(tree_flatten(tree)[0]))
    out, dout = jvp(f, (tree,), (ones,))
    out_j, dout_j = jax.jvp(f_jax, (_plain(tree),), (_plain(ones),))
    for ours, theirs in ((out, out_j), (dout, dout_j)):
        got, want = jax.tree_util.tree_leaves(_plain(ours)), jax.tree_util.tree_leaves(theirs)
        np.testing.assert_allclose(np.array(got, float), np.array(want, float),
                                   rtol=1e-12, atol=1e-300)


axes = st.sampled_from([0, 1, None])


@settings(max_examples=40, deadline=None)
@given(programs, axes, axes, st.integers(1, 4), st.integers(1, 4), st.data())
def test_vmap_with_mixed_in_axes_matches_jax(program, ax, ay, batch, n, data):
    if ax is None and ay is None:
        ay = 0

    def arg(axis):
        shape = (n,) if axis is None else ((batch, n) if axis == 0 else (n, batch))
        return data.draw(hnp.arrays(np.float64, shape, elements=floats))

    x, y = arg(ax), arg(ay)
    ours = vmap(lambda a, b: OURS["sum"](run(program, OURS, a, b)), (ax, ay))(x, y)
    theirs = jax.vmap(lambda a, b: THEIRS["sum"](run(program, THEIRS, a, b)), (ax, ay))(x, y)
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(axes, axes, st.integers(1, 4), st.integers(1, 4), st.data())
def test_vmap_of_operands_with_different_ranks_matches_jax(ax, ay, batch, n, data):
    # A per-example scalar (a sum) meets per-example vectors: the batch axes must still line up.
    if ax is None and ay is None:
        ax = 1

    def arg(axis):
        shape = (n,) if axis is None else ((batch, n) if axis == 0 else (n, batch))
        return data.draw(hnp.arrays(np.float64, shape, elements=floats))

    x, y = arg(ax), arg(ay)
    ours = vmap(lambda a, b: a * core.reduce_sum(b, 0) + core.sin(b) * 2.0, (ax, ay))(x, y)
    theirs = jax.vmap(lambda a, b: a * jnp.sum(b, 0) + jnp.sin(b) * 2.0, (ax, ay))(x, y)
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
    ours = jvp(vmap(lambda a, b: a * core.reduce_sum(b, 0), (ax, ay)), (x, y), (y, x))[1] \
        if x.shape == y.shape else None
    if ours is not None:
        f = jax.vmap(lambda a, b: a * jnp.sum(b, 0), (ax, ay))
        np.testing.assert_allclose(ours, jax.jvp(f, (x, y), (y, x))[1], rtol=1e-10, atol=1e-12)


@settings(max_examples=20, deadline=None)
@given(programs, vectors, vectors)
def test_vmap_of_jvp_and_jvp_of_vmap_match_jax(program, xs, dxs):
    n = min(len(xs), len(dxs))
    xs, dxs = xs[:n], dxs[:n]
    f_ours = lambda a: run(program, OURS, a, 0.25)
    f_jax = lambda a: run(program, THEIRS, a, 0.25)
    ours = vmap(lambda x, dx: jvp(f_ours, (x,), (dx,)), (0, 0))(xs, dxs)
    theirs = jax.vmap(lambda x, dx: jax.jvp(f_jax, (x,), (dx,)))(xs, dxs)
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-10)
    ours = jvp(vmap(f_ours, (0,)), (xs,), (dxs,))
    theirs = jax.jvp(jax.vmap(f_jax), (xs,), (dxs,))
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-10)


@settings(max_examples=20, deadline=None)
@given(programs, vectors)
def test_jacfwd_matches_jax(program, x):
    f_ours = lambda a: run(program, OURS, a, a)
    f_jax = lambda a: run(program, THEIRS, a, a)
    np.testing.assert_allclose(jacfwd(f_ours, x), jax.jacfwd(f_jax)(x), rtol=1e-9, atol=1e-10)


@settings(max_examples=20, deadline=None)
@given(programs, vectors)
def test_jacfwd_of_a_mixing_function_is_not_transposed(program, x):
    # reduce_sum couples the entries, so the Jacobian is not symmetric in general.
    f_ours = lambda a: run(program, OURS, a, OURS["mul"](a, OURS["sum"](a)))
    f_jax = lambda a: run(program, THEIRS, a, THEIRS["mul"](a, THEIRS["sum"](a)))
    np.testing.assert_allclose(jacfwd(f_ours, x), jax.jacfwd(f_jax)(x), rtol=1e-9, atol=1e-10)


def test_jacobian_of_sin_on_arange():
    x = np.arange(3.0)
    np.testing.assert_allclose(jacfwd(sin, x), jax.jacfwd(jnp.sin)(x), rtol=1e-12)


def test_reduce_sum_batching_axes():
    x = np.arange(24.0).reshape(2, 3, 4)
    for in_axis in range(3):
        for axis in ((0,), (1,), (0, 1)):
            ours = vmap(lambda a, axis=axis: core.reduce_sum(a, axis), (in_axis,))(x)
            theirs = jax.vmap(lambda a, axis=axis: jnp.sum(a, axis), in_axes=in_axis)(x)
            np.testing.assert_allclose(ours, theirs)
    assert set(vmap_rules) >= {core.add_p, core.mul_p, core.neg_p, core.sin_p, core.cos_p}


def test_jvp_v1_and_jvp_agree():
    f = lambda x: -(sin(x) * 2.0) + x
    assert jvp_v1(f, (3.0,), (1.0,)) == tuple(jvp(f, (3.0,), (1.0,)))
