"""Probes for ps1_primitives. They run in the student's process, after the student's cells.

Every probe calls the student's rules through ``multiply_add_p`` itself, bound with the class's
own ``bind`` captured at import time, so neither a rewritten ``multiply_add_prim`` nor a patched
``bind`` changes what is measured. Probes return plain data and compare nothing: the grader
judges. Composite probes return ``{"main": attempt, "diag": {name: attempt}}`` where an attempt
is ``{"value": ..., "error": None}`` or ``{"value": None, "error": "TypeName: message"}``; the
diagnostics let the grader say which rule a failing composition points at.
"""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import Primitive
from jax.test_util import check_grads

# Captured before any student code runs.
_BIND = Primitive.bind
_PRIMITIVE = Primitive
_jit, _jvp, _grad, _vmap = jax.jit, jax.jvp, jax.grad, jax.vmap
_value_and_grad, _linear_transpose = jax.value_and_grad, jax.linear_transpose
_jacfwd, _jacrev, _hessian = jax.jacfwd, jax.jacrev, jax.hessian
_eval_shape, _make_jaxpr = jax.eval_shape, jax.make_jaxpr
_check_grads = check_grads
_sum, _sin, _asarray = jnp.sum, jnp.sin, np.asarray
# What def_impl and def_abstract_eval set on a Primitive; anything else shadows its methods.
_RULE_ATTRS = {"name", "impl", "abstract_eval"}
ERROR_CHARS = 300


class PrimitiveRefused(RuntimeError):
    """multiply_add_p is not a plain Primitive the probes can trust."""


def _primitive(ns: dict) -> Primitive:
    p = ns.get("multiply_add_p")
    if type(p) is not _PRIMITIVE:
        raise PrimitiveRefused("multiply_add_p is not a jax.extend.core.Primitive")
    if p.name != "multiply_add":
        raise PrimitiveRefused("multiply_add_p is not the primitive named 'multiply_add'")
    shadowed = sorted(set(vars(p)) - _RULE_ATTRS)
    if shadowed:
        raise PrimitiveRefused(f"multiply_add_p has attributes a Primitive never sets: {shadowed}")
    return p


def _op(ns: dict):
    p = _primitive(ns)
    return lambda x, y, z: _BIND(p, x, y, z)


def _xyz(inputs: dict, keys: str = "xyz") -> list[np.ndarray]:
    return [_asarray(inputs[k]) for k in keys]


def _attempt(fn) -> dict:
    try:
        return {"value": fn(), "error": None}
    except Exception as err:  # noqa: BLE001 - the student's rules may raise anything
        message = str(err)[:ERROR_CHARS]
        name = type(err).__name__
        return {"value": None, "error": f"{name}: {message}" if message else name}


def _abstract(f, args) -> str:
    out = _eval_shape(f, *args)
    return f"{out.dtype}{list(out.shape)}"


def _composite(main, f, args, **diag) -> dict:
    """Run ``main`` and the diagnostics; ``eval`` and ``abstract`` always come first."""
    basics = {"eval": lambda: f(*args), "abstract": lambda: _abstract(f, args)}
    return {"main": _attempt(main),
            "diag": {k: _attempt(fn) for k, fn in {**basics, **diag}.items()}}


def _struct(shape, dtype) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(tuple(shape), jnp.dtype(dtype))


# ps1.impl ---------------------------------------------------------------------------------------

def probe_eval(ns: dict, inputs: dict):
    return _op(ns)(*_xyz(inputs))


def probe_square_add(ns: dict, inputs: dict):
    a, b = _xyz(inputs, "ab")
    return _op(ns)(a, a, b)


# ps1.abstract_eval ------------------------------------------------------------------------------

def probe_abstract_eval(ns: dict, inputs: dict) -> dict:
    f = _op(ns)
    structs = [_struct(s, d) for s, d in zip(inputs["shapes"], inputs["dtypes"])]
    out = _eval_shape(f, *structs)
    jaxpr = _make_jaxpr(f)(*structs)
    return {
        "shape": [int(n) for n in out.shape],
        "dtype": str(out.dtype),
        "primitives": [str(eqn.primitive.name) for eqn in jaxpr.eqns],
    }


def probe_abstract_eval_rejects(ns: dict, inputs: dict) -> dict:
    """The error for mismatched operands, next to the result for well-formed ones (a rule that
    always raises TypeError must not pass)."""
    f = _op(ns)
    good = _struct(inputs["good_shape"], inputs["good_dtype"])
    matched = _abstract(f, [good, good, good])
    try:
        _eval_shape(f, *(_struct(s, d) for s, d in zip(inputs["shapes"], inputs["dtypes"])))
    except Exception as err:  # noqa: BLE001 - which exception it is, is the answer
        return {"matched": matched, "error": type(err).__name__}
    return {"matched": matched, "error": None}


# ps1.lowering -----------------------------------------------------------------------------------

def probe_jit(ns: dict, inputs: dict) -> dict:
    f, args = _op(ns), _xyz(inputs)
    return _composite(lambda: _jit(f)(*args), f, args)


def probe_jit_static(ns: dict, inputs: dict) -> dict:
    f = _op(ns)
    a, b = np.float32(inputs["a"]), float(inputs["b"])
    static = _jit(lambda a, b: f(a, a, b), static_argnums=1)
    return _composite(lambda: static(a, b), f, [a, a, np.float32(b)])


def probe_lowered_ops(ns: dict, inputs: dict) -> dict:
    traced = _jit(_op(ns)).trace(*_xyz(inputs))
    text = traced.lower(lowering_platforms=(inputs["platform"],)).as_text()
    return {
        "ops": sorted(set(re.findall(r"stablehlo\.([a-z_]+)", text))),
        "callback": "callback" in text,
    }


def probe_gpu(ns: dict, inputs: dict) -> dict:
    gpu = jax.devices("gpu")[0]
    out = _jit(_op(ns))(*(jax.device_put(a, gpu) for a in _xyz(inputs)))
    return {"value": out, "platform": str(next(iter(out.devices())).platform)}


# ps1.jvp ----------------------------------------------------------------------------------------

def probe_jvp(ns: dict, inputs: dict) -> dict:
    f, args = _op(ns), _xyz(inputs)
    tangents = tuple(_xyz(inputs, ("tx", "ty", "tz")))
    return _composite(lambda: list(_jvp(f, tuple(args), tangents)), f, args)


def probe_jvp_symbolic_zeros(ns: dict, inputs: dict) -> dict:
    f, args = _op(ns), _xyz(inputs)
    x, y, z = args
    tx, ty, tz = _xyz(inputs, ("tx", "ty", "tz"))
    # Closed-over operands get symbolic zero tangents (ad.Zero) in the rule.
    return _composite(lambda: [
        list(_jvp(lambda a: f(a, y, z), (x,), (tx,))),
        list(_jvp(lambda b: f(x, b, z), (y,), (ty,))),
        list(_jvp(lambda c: f(x, y, c), (z,), (tz,))),
    ], f, args)


def probe_jit_jvp(ns: dict, inputs: dict) -> dict:
    f = _op(ns)
    primals = tuple(_xyz(inputs))
    tangents = tuple(_xyz(inputs, ("tx", "ty", "tz")))
    return _composite(
        lambda: list(_jit(lambda p, t: _jvp(f, p, t))(primals, tangents)), f, primals,
        jvp=lambda: list(_jvp(f, primals, tangents)),
        jit=lambda: _jit(f)(*primals),
    )


# ps1.transpose ----------------------------------------------------------------------------------

def probe_linear_transpose(ns: dict, inputs: dict):
    f = _op(ns)
    x, y, z = _xyz(inputs)
    ct = _asarray(inputs["ct"])
    # multiply_add is linear in (y, z) for a constant x, and in (x, z) for a constant y.
    along_yz = _linear_transpose(lambda t, u: f(x, t, u), y, z)(ct)
    along_xz = _linear_transpose(lambda t, u: f(t, y, u), x, z)(ct)
    return [list(along_yz), list(along_xz)]


def _staged(fn, *args) -> str:
    """Trace ``fn`` to a jaxpr (abstract values, nothing compiled): "ok" when that works."""
    _make_jaxpr(fn)(*args)
    return "ok"


def _reverse_diag(f, inputs: dict) -> dict:
    x, y, z = _xyz(inputs)
    tangents = tuple(_xyz(inputs, ("tx", "ty", "tz")))
    ct = _asarray(inputs["ct"])
    return {
        "jvp": lambda: list(_jvp(f, (x, y, z), tangents)),
        "jvp_zeros": lambda: list(_jvp(lambda a: f(a, y, z), (x,), tangents[:1])),
        "jvp_traced": lambda: _staged(lambda p, t: _jvp(f, p, t), (x, y, z), tangents),
        "transpose": lambda: list(_linear_transpose(lambda t, u: f(x, t, u), y, z)(ct))
        + list(_linear_transpose(lambda t, u: f(t, y, u), x, z)(ct)),
    }


def _weighted(f, w):
    return lambda x, y, z: _sum(f(x, y, z) * w)


def probe_grad(ns: dict, inputs: dict) -> dict:
    f = _op(ns)
    g = _grad(_weighted(f, _asarray(inputs["w"])), argnums=(0, 1, 2))
    args = _xyz(inputs)
    return _composite(lambda: list(g(*args)), f, args, **_reverse_diag(f, inputs))


def probe_jit_grad(ns: dict, inputs: dict) -> dict:
    f = _op(ns)
    g = _jit(_grad(_weighted(f, _asarray(inputs["w"])), argnums=(0, 1, 2)))
    args = _xyz(inputs)
    return _composite(lambda: list(g(*args)), f, args, **_reverse_diag(f, inputs),
                      jit=lambda: _jit(f)(*args))


def probe_value_and_grad(ns: dict, inputs: dict) -> dict:
    f = _op(ns)
    vg = _value_and_grad(_weighted(f, _asarray(inputs["w"])), argnums=(0, 1, 2))

    def main():
        value, grads = vg(*_xyz(inputs))
        return [value, list(grads)]

    return _composite(main, f, _xyz(inputs), **_reverse_diag(f, inputs))


def probe_check_grads(ns: dict, inputs: dict) -> dict:
    f = _op(ns)

    def main():
        # Only the exception's name: its message holds numbers the student need not see here.
        try:
            _check_grads(f, tuple(_xyz(inputs)), order=2, modes=("fwd", "rev"))
        except Exception as err:  # noqa: BLE001 - any failure is the answer
            return type(err).__name__
        return "ok"

    return _composite(main, f, _xyz(inputs), **_reverse_diag(f, inputs))


# ps1.batch --------------------------------------------------------------------------------------

def _batch_diag(f, inputs: dict) -> dict:
    xs, cs, ts = _xyz(inputs, ("xs", "c", "xsT"))
    return {
        "vmap_equal": lambda: _vmap(f)(xs, xs, xs),
        "vmap_unmapped": lambda: _vmap(f, in_axes=(0, None, 0))(xs, cs, xs),
        "vmap_mixed": lambda: _vmap(f, in_axes=(0, None, 1))(xs, cs, ts),
    }


def probe_vmap(ns: dict, inputs: dict) -> dict:
    f = _op(ns)
    batched = _vmap(f, in_axes=tuple(inputs["in_axes"]))
    if inputs.get("jit"):
        batched = _jit(batched)
    args = _xyz(inputs)

    def main():
        # Traced as well as run: eager NumPy broadcasting in the impl rule can hide a batching
        # rule that hands the primitive operands of different shapes.
        _eval_shape(batched, *args)
        return batched(*args)

    basics = _xyz(inputs, "vcv")
    diag = _batch_diag(f, inputs)
    if inputs.get("jit"):
        diag["jit"] = lambda: _jit(f)(*basics)
    return _composite(main, f, basics, **diag)


def _transform_diag(f, inputs: dict) -> dict:
    v, c = _xyz(inputs, "vc")
    return {
        "jvp": lambda: list(_jvp(f, (v, c, v), (c, v, v))),
        "jvp_zeros": lambda: list(_jvp(lambda u: f(u, c, u), (v,), (c,))),
        "jvp_traced": lambda: _staged(lambda p, t: _jvp(f, p, t), (v, c, v), (c, v, v)),
        "grad": lambda: _grad(lambda u: _sum(f(u, u, c) * u))(v),
        **_batch_diag(f, inputs),
    }


def probe_vmap_grad(ns: dict, inputs: dict) -> dict:
    f = _op(ns)
    xs, ys, zs = _xyz(inputs, ("xs", "ys", "zs"))
    per_row = _vmap(_grad(lambda a, b, c: _sum(f(a, b, c) * _sin(a)), argnums=(0, 1, 2)))
    return _composite(lambda: list(per_row(xs, ys, zs)), f, _xyz(inputs, "vcv"),
                      **_transform_diag(f, inputs))


def probe_jacfwd(ns: dict, inputs: dict) -> dict:
    f = _op(ns)
    v, c = _xyz(inputs, "vc")
    return _composite(lambda: _jacfwd(lambda u: f(u, c, u))(v), f, [v, c, v],
                      **_transform_diag(f, inputs))


def probe_jacrev(ns: dict, inputs: dict) -> dict:
    f = _op(ns)
    v, c = _xyz(inputs, "vc")
    return _composite(lambda: _jacrev(lambda u: f(u, c, u))(v), f, [v, c, v],
                      **_transform_diag(f, inputs))


def probe_hessian(ns: dict, inputs: dict) -> dict:
    f = _op(ns)
    v, c = _xyz(inputs, "vc")
    return _composite(lambda: _hessian(lambda u: _sum(f(u, u, c) * u))(v), f, [v, c, v],
                      **_transform_diag(f, inputs))
