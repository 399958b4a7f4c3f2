"""Primitives beyond Part II, for problem set 2: each comes with its evaluation rule only.

The chapters' core knows ``sin``, ``cos``, ``add``, ``mul`` and a few more. These five are new:
``exp``, ``log``, ``div``, ``maximum`` and ``matmul``. Importing this module teaches the
evaluation interpreter to apply them; their JVP and batching rules are the problem set's work,
and live nowhere in this package.
"""

from __future__ import annotations

import numpy as np

from jaxcourse.autodidax.core import Primitive, bind1, impl_rules

exp_p = Primitive("exp")
log_p = Primitive("log")
div_p = Primitive("div")
max_p = Primitive("max")
matmul_p = Primitive("matmul")


def exp(x):
    """e to the x, elementwise."""
    return bind1(exp_p, x)


def log(x):
    """The natural logarithm, elementwise."""
    return bind1(log_p, x)


def div(x, y):
    """x / y, elementwise (NumPy broadcasting)."""
    return bind1(div_p, x, y)


def maximum(x, y):
    """The larger of x and y, elementwise (NumPy broadcasting)."""
    return bind1(max_p, x, y)


def matmul(x, y):
    """Matrix products of stacks: ``x[..., n, k] @ y[..., k, m]`` -> ``[..., n, m]``.

    Both operands have rank 2 or more and the *same* leading (stack) axes: unlike NumPy's
    ``matmul``, this primitive never broadcasts, so a batching rule must line operands up itself.
    """
    return bind1(matmul_p, x, y)


def matmul_impl(x, y):
    x_shape, y_shape = np.shape(x), np.shape(y)
    if len(x_shape) < 2 or len(y_shape) < 2:
        raise TypeError(f"matmul needs operands of rank 2 or more, got {x_shape} and {y_shape}")
    if x_shape[:-2] != y_shape[:-2] or x_shape[-1] != y_shape[-2]:
        raise TypeError(f"matmul cannot multiply shapes {x_shape} and {y_shape}")
    return [np.matmul(x, y)]


impl_rules[exp_p] = lambda x: [np.exp(x)]
impl_rules[log_p] = lambda x: [np.log(x)]
impl_rules[div_p] = lambda x, y: [np.divide(x, y)]
impl_rules[max_p] = lambda x, y: [np.maximum(x, y)]
impl_rules[matmul_p] = matmul_impl
