"""The ``multiply_add`` primitive of Part I: ``multiply_add(x, y, z) = x * y + z``, one rule each.

This module is the one copy of the primitive's code. The chapters of Part I show each rule from
here and register it on the page, one at a time, so the reader sees the error JAX raises before a
rule exists. Importing this module registers nothing; :func:`register_rules` registers the rules
for code that wants the finished primitive (later chapters, tests, the composition matrix).

Every rule is wrapped in :func:`jaxcourse.tracing.traced`, which is silent unless a chapter asks
to see the calls.
"""

from __future__ import annotations

from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import Primitive
from jax.extend.mlir.dialects import stablehlo as hlo
from jax.interpreters import ad, batching, mlir

from jaxcourse.tracing import note, traced

multiply_add_p = Primitive("multiply_add")


@traced()
def multiply_add(x, y, z):
    """The user-facing function: bind the primitive to its (positional) operands."""
    return multiply_add_p.bind(x, y, z)


@traced()
def square_add(a, b):
    """``a * a + b``: the running example of Part I, with a repeated operand."""
    return multiply_add(a, a, b)


@traced()
def multiply_add_impl(x, y, z):
    """Impl rule: computes the result from concrete values. Need not be traceable by JAX."""
    # Plain NumPy is allowed here because JAX only ever hands this rule concrete values; the
    # result dtype must still agree with the abstract eval rule, so ask JAX for it.
    dtype = jnp.result_type(x, y, z)
    return np.asarray(np.multiply(x, y) + np.asarray(z), dtype=dtype)


@traced()
def multiply_add_abstract_eval(x, y, z):
    """Abstract eval rule: the shape and dtype of the result, from those of the operands."""
    shapes = {x.shape, y.shape, z.shape}
    dtypes = {x.dtype, y.dtype, z.dtype}
    if len(shapes) != 1 or len(dtypes) != 1:
        # The primitive is elementwise without broadcasting or promotion, like most of lax.
        raise TypeError(
            "multiply_add requires operands of one shape and one dtype, got "
            f"{x.str_short()}, {y.str_short()}, {z.str_short()}"
        )
    # The result is weakly typed only when every operand is (a Python scalar), as in lax.
    weak_type = x.weak_type and y.weak_type and z.weak_type
    return jax.core.ShapedArray(x.shape, x.dtype, weak_type=weak_type)


@traced()
def multiply_add_lowering(ctx, x, y, z):
    """Lowering rule: emit StableHLO for the operands' IR values; one result, so a list of one."""
    return [hlo.add(hlo.multiply(x, y), z)]


def _instantiate(tangent):
    """A symbolic ``ad.Zero`` tangent as a real array of zeros; other tangents unchanged."""
    return ad.instantiate_zeros(tangent)


@traced()
def multiply_add_jvp(primals, tangents):
    """JVP rule: the primal result and the tangent ``xt * y + x * yt + zt``."""
    x, y, z = primals
    xt, yt, zt = tangents
    note("primal:")
    primal_out = multiply_add(x, y, z)
    note("tangent:")
    # The tangent is written with multiply_add itself, so reverse mode will need its transpose.
    # A Zero tangent is skipped rather than multiplied: that saves work and keeps the tangent
    # program linear in the tangents that are really there.
    tangent_out = _instantiate(zt)
    if type(yt) is not ad.Zero:
        tangent_out = multiply_add(x, yt, tangent_out)
    if type(xt) is not ad.Zero:
        tangent_out = multiply_add(xt, y, tangent_out)
    return primal_out, tangent_out


@traced()
def multiply_add_transpose(ct, x, y, z):
    """Transpose rule, for the uses of multiply_add that are linear in its undefined operands.

    The JVP rule uses ``multiply_add(a, b, c)`` with exactly one of ``a``, ``b`` a known
    constant; the other, and maybe ``c``, are ``ad.UndefinedPrimal`` (the linear inputs). The
    result has a cotangent for each operand: ``None`` for the constants.
    """
    if ad.is_undefined_primal(x) and ad.is_undefined_primal(y):
        raise NotImplementedError("multiply_add is not linear in x and y together")
    z_ct = None
    if ad.is_undefined_primal(z):
        # out = x * y + z, so z's cotangent is the output's, unchanged.
        z_ct = ad.Zero(z.aval) if type(ct) is ad.Zero else ct
    if ad.is_undefined_primal(x):
        # out = x * y + z with y known, so x's cotangent is ct * y.
        x_ct = ad.Zero(x.aval) if type(ct) is ad.Zero else multiply_add(ct, y, jnp.zeros_like(ct))
        return x_ct, None, z_ct
    if ad.is_undefined_primal(y):
        y_ct = ad.Zero(y.aval) if type(ct) is ad.Zero else multiply_add(x, ct, jnp.zeros_like(ct))
        return None, y_ct, z_ct
    return None, None, z_ct


@traced()
def multiply_add_batch(args, batch_axes):
    """Batching rule: any mix of mapped and unmapped operands, mapped along any axes.

    ``batch_axes[i]`` is the axis of ``args[i]`` that ``vmap`` maps over, or ``None`` when
    that operand is the same for the whole batch. Returns the result and its batch axis.
    """
    mapped = [d for d in batch_axes if d is not None]
    if len(mapped) == len(args) and len(set(mapped)) == 1:
        # Every operand is batched along the same axis: the elementwise op needs no change.
        return multiply_add(*args), mapped[0]
    size = next(a.shape[d] for a, d in zip(args, batch_axes, strict=True) if d is not None)
    moved = [_batch_first(a, d, size) for a, d in zip(args, batch_axes, strict=True)]
    return multiply_add(*moved), 0


def _batch_first(operand, axis, size):
    """The operand with its batch axis first; an unmapped operand repeated ``size`` times."""
    if axis is None:
        return jnp.broadcast_to(operand, (size, *np.shape(operand)))
    return jnp.moveaxis(operand, axis, 0)


RULES = ("impl", "abstract_eval", "lowering", "jvp", "transpose", "batch")


def register_rules(rules: Sequence[str] = RULES) -> None:
    """Register the named rules of ``multiply_add_p`` (all by default). Idempotent."""
    for rule in rules:
        if rule == "impl":
            multiply_add_p.def_impl(multiply_add_impl)
        elif rule == "abstract_eval":
            multiply_add_p.def_abstract_eval(multiply_add_abstract_eval)
        elif rule == "lowering":
            # The rule emits only portable StableHLO ops, so it is registered once with no
            # platform (platform=None), which serves every platform JAX lowers for.
            mlir.register_lowering(multiply_add_p, multiply_add_lowering)
        elif rule == "jvp":
            ad.primitive_jvps[multiply_add_p] = multiply_add_jvp
        elif rule == "transpose":
            ad.primitive_transposes[multiply_add_p] = multiply_add_transpose
        elif rule == "batch":
            batching.primitive_batchers[multiply_add_p] = multiply_add_batch
        else:
            raise ValueError(f"unknown rule {rule!r}; choose from {RULES}")
