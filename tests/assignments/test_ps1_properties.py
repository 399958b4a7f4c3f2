"""Property tests of the ps1 reference rules: batching over every layout of batch axes and every
axis, and abstract evaluation over shapes, axes and dtypes, against jax.numpy."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from grade_inprocess import ROOT
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import FLOAT_DTYPES, batched_shape, shapes

from autograder.instructor.classroom import make_submission, solution_sources

NAME = "ps1_primitives"


@pytest.fixture(scope="module")
def weighted_sum():
    """The reference solution's primitive, bound directly (one primitive for this module)."""
    nb = make_submission(NAME, solution_sources(NAME, root=ROOT), root=ROOT)
    ns: dict = {}
    for cell in nb.cells:
        if cell.cell_type == "code" and not cell.metadata.get("nbgrader", {}).get("grade"):
            exec(compile(cell.source, "<ps1 reference>", "exec"), ns)  # noqa: S102 - ours
    primitive = ns["weighted_sum_p"]
    return lambda x, w, axis: primitive.bind(x, w, axis=axis)


@st.composite
def layouts(draw):
    """(x's per-example shape, axis, batch size, in_axes) with at least one operand batched."""
    example = draw(shapes(min_ndim=1, max_ndim=3))
    axis = draw(st.integers(-len(example), len(example) - 1))
    size = draw(st.integers(1, 4))
    x_axis = st.none() | st.integers(0, len(example))
    w_axis = st.none() | st.integers(0, 1)
    in_axes = draw(st.tuples(x_axis, w_axis).filter(lambda a: a != (None, None)))
    return example, axis, size, in_axes


@settings(max_examples=25, deadline=None)
@given(layout=layouts(), seed=st.integers(0, 2**32 - 1))
def test_batching_matches_jax_numpy(weighted_sum, layout, seed):
    example, axis, size, (x_axis, w_axis) = layout
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(batched_shape(example, size, x_axis)).astype(np.float32)
    w = rng.standard_normal(batched_shape((example[axis],), size, w_axis)).astype(np.float32)
    got = jax.vmap(lambda a, b: weighted_sum(a, b, axis), in_axes=(x_axis, w_axis))(x, w)
    want = jax.vmap(lambda a, b: jnp.tensordot(a, b, axes=([axis], [0])),
                    in_axes=(x_axis, w_axis))(x, w)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@settings(max_examples=25, deadline=None)
@given(shape=shapes(min_ndim=1, max_ndim=4), data=st.data(),
       dtype=st.sampled_from(FLOAT_DTYPES))
def test_abstract_eval_drops_the_axis_and_keeps_the_dtype(weighted_sum, shape, data, dtype):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = jax.ShapeDtypeStruct(shape, jnp.dtype(dtype))
    w = jax.ShapeDtypeStruct((shape[axis],), jnp.dtype(dtype))
    out = jax.eval_shape(lambda a, b: weighted_sum(a, b, axis), x, w)
    want = jax.eval_shape(lambda a, b: jnp.tensordot(a, b, axes=([axis], [0])), x, w)
    assert (out.shape, out.dtype) == (want.shape, want.dtype)


@settings(max_examples=15, deadline=None)
@given(shape=shapes(min_ndim=1), length=st.integers(1, 5), data=st.data())
def test_abstract_eval_rejects_a_w_that_does_not_fit(weighted_sum, shape, length, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    if length == shape[axis]:
        return
    x = jax.ShapeDtypeStruct(shape, jnp.float32)
    w = jax.ShapeDtypeStruct((length,), jnp.float32)
    with pytest.raises(TypeError):
        jax.eval_shape(lambda a, b: weighted_sum(a, b, axis), x, w)
