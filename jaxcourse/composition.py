"""The composition matrix: a ``multiply_add`` implementation against ``x * y + z`` under transforms.

Each :class:`Case` is one transformation, or a composition of them, applied to the same program
built from the implementation under test. :func:`composition_matrix` runs every case on the
implementation and on the reference written with ``jax.numpy``, and compares the results leaf by
leaf: same structure, shape and dtype, and values equal to a tolerance fitting the dtype. The book
shows the matrix as a table; the tests assert that every row passes.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
from jax.test_util import check_grads

MultiplyAdd = Callable[..., jax.Array]

BATCH, SIZE = 3, 4
# Loose enough for reassociated float arithmetic, tight enough to catch a wrong derivative.
TOLERANCE = {np.dtype("float32"): 1e-5, np.dtype("float64"): 1e-12}


def reference(x, y, z):
    """What every implementation must agree with."""
    return x * y + z


def chain(multiply_add: MultiplyAdd) -> Callable[..., jax.Array]:
    """Uses ``multiply_add`` twice, one feeding the other, so second derivatives are not zero."""
    return lambda x, y, z: multiply_add(multiply_add(x, y, z), y, jnp.sin(z))


def objective(multiply_add: MultiplyAdd) -> Callable[..., jax.Array]:
    """A scalar built on :func:`chain`, for ``grad`` and ``hessian``."""
    return lambda x, y, z: jnp.sum(chain(multiply_add)(x, y, z))


ALL = (0, 1, 2)


@dataclass(frozen=True)
class Case:
    name: str
    # Takes the implementation, returns the function to call on the case's arguments.
    build: Callable[[MultiplyAdd], Callable[..., object]]
    # Shapes of x, y, z; a batch axis, where there is one, is where in_axes says.
    shapes: tuple[tuple[int, ...], ...] = ((SIZE,), (SIZE,), (SIZE,))


def _grad_of_grad(ma: MultiplyAdd):
    inner = jax.grad(objective(ma), argnums=0)
    return jax.grad(lambda x, y, z: jnp.sum(inner(x, y, z)), argnums=ALL)


BATCHED = ((BATCH, SIZE),) * 3

CASES: tuple[Case, ...] = (
    Case("eager", lambda ma: ma),
    Case("jit", lambda ma: jax.jit(ma)),
    Case("grad", lambda ma: jax.grad(objective(ma), argnums=ALL)),
    Case("jit(grad)", lambda ma: jax.jit(jax.grad(objective(ma), argnums=ALL))),
    Case("grad(grad)", _grad_of_grad),
    Case("vmap", lambda ma: jax.vmap(ma), BATCHED),
    Case("jit(vmap)", lambda ma: jax.jit(jax.vmap(ma)), BATCHED),
    Case(
        "vmap, in_axes=(0, None, 1)",
        lambda ma: jax.vmap(ma, in_axes=(0, None, 1)),
        ((BATCH, SIZE), (SIZE,), (SIZE, BATCH)),
    ),
    Case(
        "vmap(vmap), in_axes=(1, None, 0)",
        lambda ma: jax.vmap(jax.vmap(ma, in_axes=(0, None, 0)), in_axes=(1, None, 0)),
        ((2, BATCH, SIZE), (SIZE,), (BATCH, 2, SIZE)),
    ),
    Case("vmap(grad)", lambda ma: jax.vmap(jax.grad(objective(ma), argnums=ALL)), BATCHED),
    Case("grad(vmap)", lambda ma: jax.grad(objective(jax.vmap(ma)), argnums=ALL), BATCHED),
    Case("jacfwd", lambda ma: jax.jacfwd(chain(ma), argnums=ALL)),
    Case("jacrev", lambda ma: jax.jacrev(chain(ma), argnums=ALL)),
    Case("jit(jacrev)", lambda ma: jax.jit(jax.jacrev(chain(ma), argnums=ALL))),
    Case("vmap(jacrev)", lambda ma: jax.vmap(jax.jacrev(chain(ma), argnums=ALL)), BATCHED),
    Case("hessian", lambda ma: jax.hessian(objective(ma), argnums=ALL)),
    Case("jit(hessian)", lambda ma: jax.jit(jax.hessian(objective(ma), argnums=ALL))),
    Case("jacrev(jacfwd)", lambda ma: jax.jacrev(jax.jacfwd(objective(ma), argnums=ALL))),
    Case("vmap(hessian)", lambda ma: jax.vmap(jax.hessian(objective(ma), argnums=ALL)), BATCHED),
)


@dataclass(frozen=True)
class Row:
    case: str
    dtype: str
    passed: bool
    max_abs_error: float | None  # None when the implementation raised or the structure differs
    message: str = ""
    # How many times the traced program applies the primitive: proof the case exercised it.
    primitive_count: int = 0


def case_arguments(case: Case, dtype, seed: int = 0) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    return tuple(rng.uniform(-1.0, 1.0, shape).astype(dtype) for shape in case.shapes)


def compare(actual, expected, dtype) -> tuple[bool, float | None, str]:
    """Structure, shapes, dtypes, then values; returns (passed, max abs error, message)."""
    actual_leaves, actual_tree = jax.tree.flatten(actual)
    expected_leaves, expected_tree = jax.tree.flatten(expected)
    if actual_tree != expected_tree:
        return False, None, f"structure {actual_tree} != {expected_tree}"
    worst = 0.0
    tol = TOLERANCE[np.dtype(dtype)]
    for got, want in zip(actual_leaves, expected_leaves, strict=True):
        got, want = np.asarray(got), np.asarray(want)
        if got.shape != want.shape or got.dtype != want.dtype:
            return False, None, f"{got.dtype}{list(got.shape)} != {want.dtype}{list(want.shape)}"
        worst = max(worst, float(np.max(np.abs(got - want), initial=0.0)))
        if not np.allclose(got, want, rtol=tol, atol=tol):
            return False, worst, "values differ"
    return True, worst, ""


def primitive_count(fun: Callable[..., object], args, primitive: str) -> int:
    """How many equations of ``fun``'s jaxpr (nested ones included) apply ``primitive``."""
    return len(re.findall(rf"= {re.escape(primitive)} ", str(jax.make_jaxpr(fun)(*args))))


def composition_matrix(
    multiply_add: MultiplyAdd, dtype, primitive: str = "multiply_add"
) -> list[Row]:
    """Every case on ``multiply_add`` and on :func:`reference`, compared. Never raises."""
    rows = []
    for case in CASES:
        args = case_arguments(case, dtype)
        expected = case.build(reference)(*args)
        try:
            fun = case.build(multiply_add)
            actual = fun(*args)
            count = primitive_count(fun, args, primitive)
        except Exception as err:  # noqa: BLE001 (a failing rule is a row of the table, not a crash)
            rows.append(Row(case.name, np.dtype(dtype).name, False, None, type(err).__name__))
            continue
        passed, worst, message = compare(actual, expected, dtype)
        rows.append(Row(case.name, np.dtype(dtype).name, passed, worst, message, count))
    return rows


def check_grads_order_2(multiply_add: MultiplyAdd, dtype, seed: int = 0) -> None:
    """``jax.test_util.check_grads`` to order 2, forward and reverse, at a random point.

    Raises ``AssertionError`` when automatic derivatives and finite differences disagree.
    """
    args = case_arguments(CASES[0], dtype, seed)
    for fun in (multiply_add, chain(multiply_add)):
        check_grads(fun, args, order=2, modes=("fwd", "rev"))


def html_table(rows: list[Row]) -> str:
    """The matrix as an HTML table, for the book (which renders HTML outputs as they are)."""
    head = ("transformation", "dtype", "primitive in jaxpr", "max abs error", "result")
    header = "".join(f"<th>{h}</th>" for h in head)
    # class="table" picks up the book theme's table style.
    lines = ['<table class="table">', f"<thead><tr>{header}</tr></thead>", "<tbody>"]
    for row in rows:
        error = "n/a" if row.max_abs_error is None else f"{row.max_abs_error:.1e}"
        verdict = "pass" if row.passed else f"<strong>FAIL</strong>: {html.escape(row.message)}"
        count = f"{row.primitive_count}×" if row.primitive_count else "n/a"
        cells = (f"<code>{html.escape(row.case)}</code>", row.dtype, count, error, verdict)
        lines.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    lines.append("</tbody></table>")
    return "\n".join(lines)
