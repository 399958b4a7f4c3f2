"""Claims the chapters make in their folded exercise answers, checked against the pinned JAX.

A cell would give the answer away, so these are tested here instead (issue 56: each statement
about what JAX prints, compiles or raises that a reader takes on faith). The claims the chapters'
prose makes are shown, and asserted, by the chapters' own cells.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax


def _loop(n, x):
    return lax.fori_loop(0, n, lambda i, carry: carry * 1.5, x)


def test_fori_loop_with_a_traced_trip_count_is_a_while_that_grad_refuses():
    # faq/compile_time, exercise 2: a scan for a static count, a while for a traced one.
    static = jax.make_jaxpr(lambda x: _loop(3, x))(1.0)
    traced = jax.make_jaxpr(_loop)(3, 1.0)
    assert [e.primitive.name for e in static.eqns] == ["scan"]
    assert [e.primitive.name for e in traced.eqns] == ["while"]
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work"):
        jax.jit(jax.grad(_loop, argnums=1))(3, 1.0)
    forward = jax.jit(lambda n, x: jax.jvp(lambda y: _loop(n, y), (x,), (1.0,))[1])(3, 1.0)
    assert float(forward) == pytest.approx(1.5**3)


def test_transposing_sin_raises_not_implemented():
    # core/linearize_grad, exercise 1: sin has no transpose rule.
    with pytest.raises(NotImplementedError, match="Transpose rule .* for 'sin' not implemented"):
        jax.linear_transpose(jnp.sin, 1.0)(1.0)


def test_a_jax_array_as_a_static_argument_is_a_non_hashable_value_error():
    # faq/tracers, exercise 1.
    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        jax.jit(lambda x, y: x / y, static_argnums=1)(3.0, jnp.array(2.0))


def test_python_if_fails_under_jit_of_grad():
    # faq/tracers, exercise 2: the gradient tracer's primal is a jit tracer.
    def divide(x, y):
        return x / y if y >= 1.0 else x

    assert float(jax.grad(divide, argnums=1)(3.0, 2.0)) == pytest.approx(-0.75)
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(jax.grad(divide, argnums=1))(3.0, 2.0)


def test_python_if_on_a_staged_boolean_fails_while_tracing():
    # core/control_flow, exercise 1: JAX's staging tracer refuses bool().
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.make_jaxpr(lambda p, x: x if p else -x)(True, 1.0)


def test_lax_add_refuses_mixed_dtypes_where_jnp_add_promotes():
    # primitives/watching_jax, exercise 1.
    with pytest.raises(TypeError, match="lax.add requires arguments to have the same dtypes"):
        lax.add(jnp.float32(2.0), jnp.int32(3))
    promoted = jax.make_jaxpr(jnp.add)(jnp.float32(2.0), jnp.int32(3))
    assert [e.primitive.name for e in promoted.eqns] == ["convert_element_type", "add"]


def test_a_tracer_used_after_its_trace_ended_raises_unexpected_tracer_error():
    # core/today, exercise: the trace is invalid once its transformation ends.
    leaked = []
    jax.jit(lambda x: leaked.append(x) or x)(1.0)
    with pytest.raises(jax.errors.UnexpectedTracerError):
        jnp.sin(leaked[0])


def test_sequential_pure_callback_is_called_once_per_element():
    # faq/tracer_to_numpy, exercise 3: eight calls for eight elements; one with expand_dims.
    calls = []

    def host(v):
        calls.append(np.shape(v))
        return np.asarray(v) * 2

    for method, expected in (("sequential", [()] * 8), ("expand_dims", [(8,)])):
        calls.clear()
        call = jax.vmap(lambda x, method=method: jax.pure_callback(
            host, jax.ShapeDtypeStruct((), jnp.float32), x, vmap_method=method))
        assert jax.block_until_ready(call(jnp.arange(8.0))).tolist() == [2.0 * i for i in range(8)]
        assert calls == expected, method


def test_an_unregistered_class_is_one_leaf_that_jvp_rejects():
    # autodidax/pytrees, exercise 2.
    class Unregistered:
        def __init__(self, x):
            self.x = x

    with pytest.raises(TypeError, match="is not a valid JAX type"):
        jax.jvp(lambda p: p.x, (Unregistered(1.0),), (Unregistered(1.0),))


def test_donating_an_input_no_output_can_reuse_warns_and_keeps_it():
    # faq/donation, exercise 1: a scalar output cannot take a (3, 3) buffer.
    import warnings

    params = jnp.ones((3, 3))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        jax.jit(lambda p: p.sum(), donate_argnums=0)(params)
    assert any("Some donated buffers were not usable" in str(w.message) for w in caught)
    assert not params.is_deleted()


def test_find_top_trace_ignores_its_argument_and_returns_the_current_trace():
    # autodidax/interpreters: what is left of find_top_trace on the pinned JAX.
    import inspect

    from jax.extend.core import find_top_trace

    (parameter,) = inspect.signature(find_top_trace).parameters
    assert parameter == "_"
    seen = []
    jax.jit(lambda x: seen.append(type(find_top_trace(None)).__name__) or x)(1.0)
    assert seen == ["DynamicJaxprTrace"]
