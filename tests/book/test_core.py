"""The Part IV core (jaxcourse.core) agrees with real JAX on the same programs.

Programs are random compositions of the core's primitives, written once against a small "library"
so that the same program runs on our core and on jax.numpy, as in test_autodidax_core.py. Real JAX
runs in float64 here, like the NumPy-based core.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax import lax

from jaxcourse.autodidax import core
from jaxcourse.autodidax.core import ShapedArray
from jaxcourse.autodidax.jvp import jvp
from jaxcourse.autodidax.vmap import vmap
from jaxcourse.core import stackless
from jaxcourse.core.control_flow import cond
from jaxcourse.core.jaxprs import JaxprTypeError, make_jaxpr, typecheck_jaxpr
from jaxcourse.core.jit import compile_log, jit
from jaxcourse.core.partial_eval import linearize
from jaxcourse.core.transpose import grad, vjp

OURS = {"sin": core.sin, "cos": core.cos, "neg": core.neg, "add": core.add, "mul": core.mul}
THEIRS = {"sin": jnp.sin, "cos": jnp.cos, "neg": jnp.negative, "add": jnp.add,
          "mul": jnp.multiply}
UNARY = ("sin", "cos", "neg")
BINARY = ("add", "mul")

step = st.one_of(
    st.tuples(st.sampled_from(UNARY), st.integers(0, 50)),
    st.tuples(st.sampled_from(BINARY), st.integers(0, 50), st.integers(0, 50)),
)
programs = st.lists(step, min_size=1, max_size=7)
points = st.lists(st.floats(-2.0, 2.0), min_size=3, max_size=3).map(np.array)


def run(program, lib, x, y):
    vals = [x, y]
    for op, *args in program:
        vals.append(lib[op](*[vals[i % len(vals)] for i in args]))
    return vals[-1]


def ours(program, reduce=False):
    def f(x, y):
        out = run(program, OURS, x, y)
        return core.reduce_sum(out, 0) if reduce else out
    return f


def theirs(program, reduce=False):
    def f(x, y):
        out = run(program, THEIRS, x, y)
        return jnp.sum(out, 0) if reduce else out
    return f


@pytest.fixture(autouse=True, scope="module")
def x64():
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", previous)


def close(a, b):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-9, atol=1e-12)


@settings(max_examples=15, deadline=None)
@given(programs, points, points)
def test_printout_equals_make_jaxpr(program, x, y):
    mine = make_jaxpr(ours(program))(x, y)
    assert str(mine) == str(jax.make_jaxpr(theirs(program))(x, y))
    typecheck_jaxpr(mine.jaxpr)


def test_type_checker_rejects_a_wrong_binder():
    jaxpr = make_jaxpr(lambda x: core.reduce_sum(core.sin(x), 0))(np.ones(3)).jaxpr
    jaxpr.eqns[-1].out_binders[0].aval = ShapedArray((3,), np.float64)
    with pytest.raises(JaxprTypeError):
        typecheck_jaxpr(jaxpr)


@settings(max_examples=8, deadline=None)
@given(programs, points, points)
def test_jit_jvp_vmap_of_jit(program, x, y):
    f, f_jax = ours(program), theirs(program)
    close(jit(f)(x, y), f_jax(x, y))
    close(jvp(jit(f), (x, y), (y, x))[1], jax.jvp(f_jax, (x, y), (y, x))[1])
    batch = np.stack([x, y])
    close(vmap(jit(f), (0, None))(batch, y), jax.vmap(f_jax, (0, None))(batch, y))


def test_jit_compiles_once_per_signature_and_static_value():
    f = jit(lambda x, n: x * float(n), static_argnums=(1,))
    compile_log.clear()
    f(np.ones(3), 2)
    f(np.zeros(3), 2)
    assert len(compile_log) == 1
    f(np.ones(4), 2)
    f(np.ones(3), 5)
    assert len(compile_log) == 3


@settings(max_examples=8, deadline=None)
@given(programs, points, points)
def test_linearize_vjp_grad(program, x, y):
    f, f_jax = ours(program, reduce=True), theirs(program, reduce=True)
    close(linearize(f, x, y)[1](y, x), jax.linearize(f_jax, x, y)[1](y, x))
    close(grad(f)(x, y), jax.grad(f_jax)(x, y))
    for mine, expected in zip(vjp(f, x, y)[1](1.5), jax.vjp(f_jax, x, y)[1](1.5)):
        close(mine, expected)
    close(grad(jit(f))(x, y), jax.grad(f_jax)(x, y))


@pytest.mark.parametrize("pred", [True, False])
def test_cond_against_lax_cond(pred):
    scale = np.array([1.0, 2.0, 3.0])
    x = np.linspace(-1.0, 1.0, 3)

    def f(p, x):
        return cond(p, lambda x: core.sin(x) * scale, lambda x: core.cos(x) + 1.0, x)

    def f_jax(p, x):
        return lax.cond(p, lambda x: jnp.sin(x) * scale, lambda x: jnp.cos(x) + 1.0, x)

    close(f(pred, x), f_jax(pred, x))
    close(jit(f)(pred, x), f_jax(pred, x))
    close(jvp(lambda x: f(pred, x), (x,), (scale,))[1],
          jax.jvp(lambda x: f_jax(pred, x), (x,), (scale,))[1])
    close(grad(lambda x: core.reduce_sum(f(pred, x), 0))(x),
          jax.grad(lambda x: jnp.sum(f_jax(pred, x)))(x))
    preds, xs = np.array([pred, not pred, pred]), np.stack([x, 2 * x, 3 * x])
    close(vmap(f, (0, 0))(preds, xs), jax.vmap(f_jax)(preds, xs))
    close(vmap(f, (None, 0))(pred, xs), jax.vmap(f_jax, (None, 0))(pred, xs))
    batched = make_jaxpr(vmap(f, (0, 0)))(preds, xs).jaxpr
    assert {e.primitive.name for e in batched.eqns} >= {"select"}
    assert "cond" not in {e.primitive.name for e in batched.eqns}
    unbatched = make_jaxpr(vmap(f, (None, 0)))(pred, xs).jaxpr
    assert [e.primitive.name for e in unbatched.eqns] == ["cond"]


def test_stackless_model_avoids_perturbation_confusion_only_with_tags():
    def nested(deriv):
        return lambda x: x * deriv(lambda y: x + y)(1.0)

    assert stackless.deriv(nested(stackless.deriv))(2.0) == 1.0

    class Tagless(stackless.JVPTrace):
        def to_primal_tangent_pair(self, val):
            if isinstance(val, stackless.JVPTracer):
                return val.primal, val.tangent
            return val, stackless.zeros_like(val)

    def confused(f):
        return lambda x: stackless.jvp(f, (x,), (1.0,), trace_type=Tagless)[1]

    assert confused(nested(confused))(2.0) == 2.0
    close(stackless.deriv(stackless.deriv(stackless.sin))(0.7), -np.sin(0.7))
