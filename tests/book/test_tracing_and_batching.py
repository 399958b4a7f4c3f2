"""The tracing helper the chapters print with, and the batching rule of Part I on random shapes
and batch axes (property tests: every mix of mapped and unmapped operands must agree with
``x * y + z``)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax._src.literals import TypedFloat  # what JAX passes a rule for a Python float
from jax.interpreters import ad

from jaxcourse import tracing
from jaxcourse.multiply_add import multiply_add, register_rules

pytestmark = pytest.mark.filterwarnings("error::DeprecationWarning")


@pytest.fixture(scope="module", autouse=True)
def all_rules():
    register_rules()


def test_traced_functions_are_silent_outside_show_calls(capsys):
    @tracing.traced()
    def double(x):
        return 2 * x

    assert double(3) == 6
    assert capsys.readouterr().out == ""


def test_show_calls_prints_nested_calls_with_the_kind_of_each_value(capsys):
    @tracing.traced()
    def inner(x):
        return x + 1

    @tracing.traced(name="outer_name")
    def outer(x):
        return inner(x)

    with tracing.show_calls():
        jax.jit(outer)(jnp.float32(1.0))
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "call outer_name(DynamicJaxprTracer<float32[]>)"
    assert lines[1] == "  call inner(DynamicJaxprTracer<float32[]>)"
    assert lines[-1] == "|<- outer_name = DynamicJaxprTracer<float32[]>"


def test_show_calls_resets_the_indentation_after_an_error(capsys):
    @tracing.traced()
    def fails():
        raise ValueError("boom")

    with pytest.raises(ValueError), tracing.show_calls():
        fails()
    with tracing.show_calls():
        tracing.note("after")
    assert capsys.readouterr().out.splitlines()[-1] == "after"


@pytest.mark.parametrize(
    "value, expected",
    [
        (np.array([[1.0, 2.0], [3.0, 4.0]]), "[[1., 2.], [3., 4.]]"),
        (ad.Zero(jax.core.ShapedArray((3,), jnp.float32)), "Zero<float32[3]>"),
        (ad.UndefinedPrimal(jax.core.ShapedArray((), jnp.float32)), "UndefinedPrimal<float32[]>"),
        (jax.core.ShapedArray((2,), jnp.int32), "ShapedArray<int32[2]>"),
        ((1, None), "(1, None)"),
        (np.float64(2.5), "2.5"),
        (TypedFloat(2.0, np.dtype(np.float32)), "TypedFloat(2.0)"),
    ],
)
def test_describe(value, expected):
    assert tracing.describe(value) == expected


@st.composite
def batched_operands(draw):
    """Three operands of one element shape, each unmapped or mapped along any of its axes."""
    shape = draw(st.lists(st.integers(1, 3), min_size=0, max_size=2))
    size = draw(st.integers(1, 3))
    axes = draw(
        st.lists(st.one_of(st.none(), st.integers(0, len(shape))), min_size=3, max_size=3).filter(
            lambda axes: any(axis is not None for axis in axes)
        )
    )
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    operands = []
    for axis in axes:
        full = list(shape) if axis is None else [*shape[:axis], size, *shape[axis:]]
        operands.append(rng.uniform(-1, 1, full).astype(np.float32))
    return operands, tuple(axes)


@settings(max_examples=40, deadline=None)
@given(batched_operands())
def test_batching_rule_agrees_with_the_reference_for_any_in_axes(case):
    operands, in_axes = case
    reference = jax.vmap(lambda x, y, z: x * y + z, in_axes=in_axes)(*operands)
    batched = jax.vmap(multiply_add, in_axes=in_axes)(*operands)
    assert batched.shape == reference.shape
    np.testing.assert_allclose(batched, reference, rtol=1e-6, atol=1e-6)
