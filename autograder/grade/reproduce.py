"""Reproducers: a few lines a student pastes after their own cells to see a failed check fail.

An assignment's ``reproduce.py`` (grader side, like ``checks.py``; its place in the contract:
autograder/README.md) defines ``reproducer(check_id) -> str | None``, Python source that, run
in a fresh kernel after the student's cells:

- builds small concrete inputs as literals, drawn with :func:`public_rng` (seeded by the check's
  id alone: they are never the grading inputs, which depend on the course secret and the check);
- applies the transformation the check applies, through the student's own rules;
- prints what the student's rules returned and what a correct rule returns on those inputs (the
  latter a literal computed by the grader with real JAX, never the code that computes it);
- raises (``AssertionError``, or the student's own error) when they differ, and runs quietly to
  the end once the reference rule replaces the student's.

The source passes the assignment's cell policy; it applies JAX's own transformations, which the
assignment bans from every student cell (autograder.worker.banned), so a snippet left in a handed-in
notebook is not run there (a note says so) and costs nothing. Reproducers depend on the check id only, so they are computed once per run and the
feedback of a re-graded file stays byte-identical.
"""

from __future__ import annotations

import importlib
import re
import zlib
from functools import cache
from typing import Any

import numpy as np

from autograder.results import NOT_PASSED, CheckResult

_NON_FINITE = re.compile(r"(?<![\w.])(inf|nan)\b")
# Digits that round-trip float32 exactly (and are plenty for bfloat16); float64 gets 17.
_DIGITS = {np.dtype(np.float64): 17}


def public_rng(check_id: str) -> np.random.Generator:
    """The generator of a reproducer's inputs: the check id only, no secret."""
    return np.random.default_rng(zlib.crc32(f"reproduce:{check_id}".encode()))


def _dtype_name(dtype: Any) -> str:
    return np.dtype(dtype).name  # 'float32', 'bfloat16' (ml_dtypes registers it), 'int32', ...


def literal(value: Any) -> str:
    """Python source that rebuilds ``value`` in a cell that did ``import numpy as np`` and
    ``import jax.numpy as jnp``: arrays keep their shape and dtype; lists, tuples, dicts,
    numbers, strings, None and bools are written as themselves."""
    if isinstance(value, (np.ndarray, np.generic)) or type(value).__module__.startswith("jax"):
        array = np.asarray(value)
        name = _dtype_name(array.dtype)
        if array.dtype.kind == "f" or name == "bfloat16":
            digits = _DIGITS.get(array.dtype, 9)
            data = np.array2string(array.astype(np.float64), separator=", ", threshold=10**6,
                                   max_line_width=90, precision=digits, floatmode="unique")
            data = _NON_FINITE.sub(r"np.\1", data)  # inf, -inf and nan as Python reads them
        else:
            data = np.array2string(array, separator=", ", threshold=10**6, max_line_width=90)
        if array.size == 0:
            return f"np.zeros({tuple(int(n) for n in array.shape)}, dtype=jnp.{name})"
        if name == "bfloat16":
            return f"jnp.asarray(np.array({data}), dtype=jnp.bfloat16)"
        return f"np.array({data}, dtype=np.{name})"
    if isinstance(value, float):
        return repr(value) if np.isfinite(value) else f"float({repr(value)!r})"
    if isinstance(value, (list, tuple)):
        items = ", ".join(literal(v) for v in value)
        return f"({items},)" if isinstance(value, tuple) and len(value) == 1 else (
            f"({items})" if isinstance(value, tuple) else f"[{items}]")
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {literal(v)}" for k, v in value.items()) + "}"
    return repr(value)


def module(assignment: str, package: str = "autograder.assignments") -> Any | None:
    try:
        return importlib.import_module(f"{package}.{assignment}.reproduce")
    except ModuleNotFoundError as err:
        if err.name != f"{package}.{assignment}.reproduce":
            raise
        return None


@cache
def reproducer(assignment: str, check_id: str,
               package: str = "autograder.assignments") -> str | None:
    """The reproducer of one check, or None where the assignment has none for it. A grader bug
    here costs the student a snippet, never a grade."""
    found = module(assignment, package)
    if found is None:
        return None
    try:
        return found.reproducer(check_id)
    except Exception:  # noqa: BLE001 - the page is still written without it
        return None


def for_failed_checks(spec: Any, assignment: str, tests: dict[str, CheckResult],
                      package: str = "autograder.assignments") -> dict[str, str]:
    """check id -> the snippet of each check in ``tests`` (check id -> its results entry) that
    failed or was an error, where the assignment has one; GPU checks have none. What the
    feedback page shows and Gradescope's ``results.json`` carries."""
    return {c.id: code for c in spec.checks
            if tests.get(c.id, {}).get("status") in NOT_PASSED and not c.needs_gpu
            and (code := reproducer(assignment, c.id, package)) is not None}
