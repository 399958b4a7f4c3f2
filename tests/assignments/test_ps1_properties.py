"""Property tests of the ps1 reference rules: batching over every layout of batch axes, and
abstract evaluation over shapes and dtypes, against jax.numpy."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from grade_inprocess import ROOT
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import FLOAT_DTYPES, batched_shape, shapes, vmap_layouts

from autograder.classroom import make_submission, solution_sources

NAME = "ps1_primitives"


@pytest.fixture(scope="module")
def multiply_add():
    """The reference solution's primitive, bound directly (one primitive for this module)."""
    nb = make_submission(NAME, solution_sources(NAME, root=ROOT), root=ROOT)
    ns: dict = {}
    for cell in nb.cells:
        if cell.cell_type == "code" and not cell.metadata.get("nbgrader", {}).get("grade"):
            exec(compile(cell.source, "<ps1 reference>", "exec"), ns)
    primitive = ns["multiply_add_p"]
    return lambda x, y, z: primitive.bind(x, y, z)


@settings(max_examples=25, deadline=None)
@given(layout=vmap_layouts(), seed=st.integers(0, 2**32 - 1))
def test_batching_matches_jax_numpy(multiply_add, layout, seed):
    example, size, in_axes = layout
    rng = np.random.default_rng(seed)
    args = [rng.standard_normal(batched_shape(example, size, a)).astype(np.float32)
            for a in in_axes]
    got = jax.vmap(multiply_add, in_axes=in_axes)(*args)
    want = jax.vmap(lambda x, y, z: x * y + z, in_axes=in_axes)(*args)
    np.testing.assert_allclose(got, want, rtol=1e-6)


@settings(max_examples=25, deadline=None)
@given(shape=shapes(), dtype=st.sampled_from(FLOAT_DTYPES))
def test_abstract_eval_keeps_shape_and_dtype(multiply_add, shape, dtype):
    arg = jax.ShapeDtypeStruct(shape, jnp.dtype(dtype))
    out = jax.eval_shape(multiply_add, arg, arg, arg)
    assert (out.shape, out.dtype) == (shape, jnp.dtype(dtype))


@settings(max_examples=15, deadline=None)
@given(shape=shapes(min_ndim=1), other=shapes(min_ndim=1), position=st.integers(0, 2))
def test_abstract_eval_rejects_mismatched_shapes(multiply_add, shape, other, position):
    if shape == other:
        return
    args = [jax.ShapeDtypeStruct(shape, jnp.float32)] * 3
    args[position] = jax.ShapeDtypeStruct(other, jnp.float32)
    with pytest.raises(TypeError):
        jax.eval_shape(multiply_add, *args)
