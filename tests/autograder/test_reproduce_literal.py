"""autograder.grade.reproduce.literal writes Python that rebuilds the value, non-finite floats included
(a row of no element has log-sum-exp -inf)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

from autograder.grade.reproduce import literal


@pytest.mark.parametrize("value", [
    np.array([-np.inf, 1.5, np.nan], np.float32),
    np.array([[0.25, np.inf], [-np.inf, -0.0]]),
    np.zeros((2, 0)),
    np.array([3, -1], np.int32),
])
def test_arrays_round_trip_with_shape_dtype_and_non_finite_values(value):
    rebuilt = eval(literal(value), {"np": np, "jnp": jnp})
    assert rebuilt.dtype == value.dtype and rebuilt.shape == value.shape
    np.testing.assert_array_equal(rebuilt, value)


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), 0.1, [1.0, float("nan")]])
def test_floats_round_trip(value):
    rebuilt = eval(literal(value), {"np": np})
    np.testing.assert_array_equal(np.asarray(rebuilt), np.asarray(value))
