"""Probes for ps1_primitives. They run in the student's process, after the student's cells.

Every probe binds ``weighted_sum_p`` itself, with the class's own ``bind`` captured at import
time, so neither a rewritten ``weighted_sum`` nor a patched ``bind`` changes what is measured.
Probes return plain data and compare nothing: the grader judges.

Each task's points must come from its own rule, so the probes keep the other rules out of the way
where JAX allows it:

- A check of the JVP, transpose or batching rule runs its transformation twice, eagerly (the
  primitive then evaluates through the impl rule) and under ``jit`` (through the abstract
  evaluation and lowering rules); ``{"eager": attempt, "jit": attempt}`` lets the grader accept
  the rule under test when either way of evaluating it is right.
- Where the probe knows every signature the primitive is bound with (the lowering checks, and the
  tracing of a JVP), it pins the result's abstract value to one the grader computed, instead of
  asking the student's abstract evaluation rule.
- Checks of the transpose and batching rules count the calls of the registered rule, so reverse
  mode or ``vmap`` that JAX carried out by other means earns nothing.

An attempt is ``{"value": ..., "error": None}`` or ``{"value": None, "error": "Type: message"}``.
"""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
from jax._src.interpreters.partial_eval import _cached_abstract_eval
from jax.core import ShapedArray
from jax.extend.core import Literal, Primitive
from jax.interpreters import ad, batching

# Captured before any student code runs.
_BIND = Primitive.bind
_DEF_ABSTRACT_EVAL = Primitive.def_abstract_eval
# JAX's tracer caches abstract values per (primitive, operand avals, params): emptied when a pin
# starts and ends, so neither the student's rule nor the pin answers for the other.
_CLEAR_ABSTRACT_EVAL_CACHE = _cached_abstract_eval.cache_clear
_PRIMITIVE = Primitive
_LITERAL = Literal
_SHAPED = ShapedArray
_jit, _jvp, _vmap = jax.jit, jax.jvp, jax.vmap
_linear_transpose, _eval_shape, _make_jaxpr = jax.linear_transpose, jax.eval_shape, jax.make_jaxpr
_asarray, _dtype, _tensordot = np.asarray, jnp.dtype, jnp.tensordot
_TRANSPOSES = ad.primitive_transposes
_BATCHERS = batching.fancy_primitive_batchers
# What def_impl and def_abstract_eval set on a Primitive; anything else shadows its methods.
_RULE_ATTRS = {"name", "impl", "abstract_eval"}
_MISSING = object()
ERROR_CHARS = 300
NAME = "weighted_sum"


class PrimitiveRefused(RuntimeError):
    """weighted_sum_p is not a plain Primitive the probes can trust."""


def _primitive(ns: dict) -> Primitive:
    p = ns.get("weighted_sum_p")
    if type(p) is not _PRIMITIVE:
        raise PrimitiveRefused("weighted_sum_p is not a jax.extend.core.Primitive")
    if p.name != NAME:
        raise PrimitiveRefused(f"weighted_sum_p is not the primitive named {NAME!r}")
    shadowed = sorted(set(vars(p)) - _RULE_ATTRS)
    if shadowed:
        raise PrimitiveRefused(f"weighted_sum_p has attributes a Primitive never sets: {shadowed}")
    return p


def _op(p: Primitive):
    return lambda x, w, axis: _BIND(p, x, w, axis=axis)


def _attempt(fn) -> dict:
    try:
        return {"value": fn(), "error": None}
    except Exception as err:  # noqa: BLE001 - the student's rules may raise anything
        message = str(err)[:ERROR_CHARS]
        name = type(err).__name__
        return {"value": None, "error": f"{name}: {message}" if message else name}


def _arrays(case: dict, *keys: str) -> list[np.ndarray]:
    return [_asarray(case[k]) for k in keys]


class _Pinned:
    """While active, the primitive's abstract value for each signature the grader listed
    (``[x shape, w shape, axis, dtype, result shape]``) is the grader's; any other signature still
    goes to the student's rule."""

    def __init__(self, p: Primitive, pins):
        self.p = p
        self.table = {(tuple(xs), tuple(ws), int(axis), str(dtype)): (tuple(out), str(dtype))
                      for xs, ws, axis, dtype, out in pins}

    def __enter__(self):
        self.saved = vars(self.p).get("abstract_eval", _MISSING)
        student = self.p.abstract_eval
        table = self.table

        def pinned(x, w, *, axis):
            key = (tuple(x.shape), tuple(w.shape), axis, str(x.dtype))
            if key in table and str(w.dtype) == key[3]:
                shape, dtype = table[key]
                return _SHAPED(shape, _dtype(dtype))
            return student(x, w, axis=axis)[0]

        _DEF_ABSTRACT_EVAL(self.p, pinned)
        _CLEAR_ABSTRACT_EVAL_CACHE()
        return self

    def __exit__(self, *exc):
        if self.saved is _MISSING:
            vars(self.p).pop("abstract_eval", None)
        else:
            vars(self.p)["abstract_eval"] = self.saved
        _CLEAR_ABSTRACT_EVAL_CACHE()
        return False


class _Counted:
    """Counts the calls of the rule registered for ``p`` in ``table`` while active."""

    def __init__(self, table: dict, p: Primitive):
        self.table, self.p, self.calls = table, p, 0

    def __enter__(self):
        self.rule = self.table.get(self.p, _MISSING)
        if self.rule is not _MISSING:
            rule = self.rule

            def counted(*args, **params):
                self.calls += 1
                return rule(*args, **params)

            self.table[self.p] = counted
        return self

    def __exit__(self, *exc):
        if self.rule is not _MISSING:
            self.table[self.p] = self.rule
        return False


def _both_ways(p: Primitive, run, per_case: list[list], pins, eager: bool = False) -> dict:
    """``run(per_case)`` under jit with every case's arrays as arguments; with ``eager``, the
    grader's second request when that was wrong, eagerly instead (each operation compiled on
    its own: most of a probe's time, spent only where it can change the verdict)."""
    flat = [[_asarray(v) for v in arrays] for arrays in per_case]

    def jitted():
        def staged(*args):
            it = iter(args)
            return run([[next(it) for _ in arrays] for arrays in flat])
        with _Pinned(p, pins):
            return _jit(staged)(*[a for arrays in flat for a in arrays])

    if eager:
        return {"eager": _attempt(lambda: run(flat))}
    return {"jit": _attempt(jitted)}


# ps1.impl ---------------------------------------------------------------------------------------

def probe_eval(ns: dict, inputs: dict) -> list:
    op = _op(_primitive(ns))
    return [op(*_arrays(c, "x", "w"), c["axis"]) for c in inputs["cases"]]


# ps1.abstract_eval ------------------------------------------------------------------------------

def _struct(shape, dtype) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(tuple(shape), _dtype(dtype))


def _eqns(jaxpr):
    """Every equation of a jaxpr, those of the jaxprs nested in its parameters included."""
    for eqn in jaxpr.eqns:
        yield eqn
        for value in eqn.params.values():
            inner = getattr(value, "jaxpr", value)
            if hasattr(inner, "eqns"):
                yield from _eqns(inner)


def probe_abstract_eval(ns: dict, inputs: dict) -> list:
    op = _op(_primitive(ns))
    found = []
    for c in inputs["cases"]:
        structs = [_struct(c["x_shape"], c["dtype"]), _struct(c["w_shape"], c["dtype"])]

        def f(x, w, axis=c["axis"]):
            return op(x, w, axis)

        out = _eval_shape(f, *structs)
        jaxpr = _make_jaxpr(f)(*structs)
        found.append({
            "result": f"{out.dtype}{[int(n) for n in out.shape]}",
            "primitives": [str(e.primitive.name) for e in jaxpr.eqns],
        })
    return found


def probe_abstract_eval_rejects(ns: dict, inputs: dict) -> dict:
    """The error for each ill-formed call, next to the result of a well-formed one (a rule that
    always raises TypeError must not pass)."""
    op = _op(_primitive(ns))
    good = inputs["good"]
    matched = _eval_shape(lambda x, w: op(x, w, good["axis"]),
                          _struct(good["x_shape"], good["dtype"]),
                          _struct(good["w_shape"], good["dtype"]))
    errors = []
    for c in inputs["cases"]:
        try:
            _eval_shape(lambda x, w, axis=c["axis"]: op(x, w, axis),
                        _struct(c["x_shape"], c["x_dtype"]), _struct(c["w_shape"], c["w_dtype"]))
        except Exception as err:  # noqa: BLE001 - which exception it is, is the answer
            errors.append(type(err).__name__)
        else:
            errors.append(None)
    return {"matched": f"{matched.dtype}{[int(n) for n in matched.shape]}", "errors": errors}


# ps1.lowering -----------------------------------------------------------------------------------

def probe_jit(ns: dict, inputs: dict) -> list:
    op = _op(_primitive(ns))
    cases = inputs["cases"]
    args = [a for c in cases for a in _arrays(c, "x", "w")]

    def every_case(*flat):  # one compilation for all the cases
        return [op(flat[2 * i], flat[2 * i + 1], c["axis"]) for i, c in enumerate(cases)]

    with _Pinned(_primitive(ns), inputs["pins"]):
        return _jit(every_case)(*args)


def probe_lowered_ops(ns: dict, inputs: dict) -> dict:
    op = _op(_primitive(ns))
    ops, callback = set(), False
    with _Pinned(_primitive(ns), inputs["pins"]):
        for c in inputs["cases"]:
            traced = _jit(lambda x, w, axis=c["axis"]: op(x, w, axis)).trace(
                *_arrays(c, "x", "w"))
            text = traced.lower(lowering_platforms=(inputs["platform"],)).as_text()
            ops |= set(re.findall(r"stablehlo\.([a-z_]+)", text))
            callback = callback or "callback" in text
    return {"ops": sorted(ops), "callback": callback}


def probe_gpu(ns: dict, inputs: dict) -> dict:
    op = _op(_primitive(ns))
    gpu = jax.devices("gpu")[0]
    values, platforms = [], []
    with _Pinned(_primitive(ns), inputs["pins"]):
        for c in inputs["cases"]:
            args = [jax.device_put(a, gpu) for a in _arrays(c, "x", "w")]
            out = _jit(lambda x, w, axis=c["axis"]: op(x, w, axis))(*args)
            values.append(out)
            platforms.append(str(next(iter(out.devices())).platform))
    return {"values": values, "platforms": platforms}


# ps1.jvp ----------------------------------------------------------------------------------------

def _jvp_case(op, arrays: list, axis: int, wrt: str):
    """jax.jvp with respect to x and w, or to one of them (the other one closed over, so its
    tangent reaches the rule as ad.Zero)."""
    x, w, xt, wt = arrays
    if wrt == "x":
        return list(_jvp(lambda a: op(a, w, axis), (x,), (xt,)))
    if wrt == "w":
        return list(_jvp(lambda b: op(x, b, axis), (w,), (wt,)))
    return list(_jvp(lambda a, b: op(a, b, axis), (x, w), (xt, wt)))


def probe_jvp(ns: dict, inputs: dict) -> dict:
    p = _primitive(ns)
    op = _op(p)
    cases = inputs["cases"]
    return _both_ways(
        p, lambda arrays: [_jvp_case(op, a, c["axis"], c["wrt"]) for a, c in zip(arrays, cases)],
        [[c[k] for k in ("x", "w", "xt", "wt")] for c in cases], inputs["pins"],
        inputs.get("eager", False))


def _count(jaxpr) -> int:
    return sum(str(e.primitive.name) == NAME for e in _eqns(jaxpr))


def _scaled_eval(jaxpr, consts, args, hot_in, p: Primitive, scale: float) -> list:
    """Evaluate ``jaxpr`` with every application of ``p`` that an input marked in ``hot_in``
    reaches (the tangent's applications) multiplied by ``scale``; jit equations are entered.
    A tangent computed by ``p`` itself scales with them; a term computed another way, or an
    application of ``p`` multiplied by 0, does not. Each application of ``p`` is computed with
    ``jnp.tensordot``, so the student's impl and lowering rules (other tasks) play no part."""
    env: dict = {}
    hot: set = set()

    def read(v):
        return v.val if type(v) is _LITERAL else env[v]

    for v, a in zip(jaxpr.constvars, consts):
        env[v] = a
    for v, a, h in zip(jaxpr.invars, args, hot_in):
        env[v] = a
        if h:
            hot.add(v)
    for eqn in jaxpr.eqns:
        ins = [read(v) for v in eqn.invars]
        flags = [type(v) is not _LITERAL and v in hot for v in eqn.invars]
        inner = eqn.params.get("jaxpr") if str(eqn.primitive.name) in ("jit", "pjit") else None
        if inner is not None:
            outs = _scaled_eval(inner.jaxpr, inner.consts, ins, flags, p, scale)
        elif eqn.primitive is p:
            x, w = ins
            out = _tensordot(x, w, axes=([eqn.params["axis"]], [0])).astype(x.dtype)
            outs = [out * scale if any(flags) else out]
        else:
            outs = eqn.primitive.bind(*ins, **eqn.primitive.get_bind_params(eqn.params))
            outs = list(outs) if eqn.primitive.multiple_results else [outs]
        if any(flags):
            hot.update(eqn.outvars)
        for v, o in zip(eqn.outvars, outs):
            env[v] = o
    return [read(v) for v in jaxpr.outvars]


def probe_jvp_traced(ns: dict, inputs: dict) -> dict:
    """Trace jax.jvp: does the rule trace, how many applications of the primitive are there,
    and does the tangent flow through them (each case's tangent output with those applications
    doubled, next to the plain one, all cases in one jit)?"""
    p = _primitive(ns)
    op = _op(p)
    counts, traced, args = [], [], []
    with _Pinned(p, inputs["pins"]):
        for c in inputs["cases"]:
            arrays = _arrays(c, "x", "w", "xt", "wt")
            closed = _make_jaxpr(lambda *a, c=c: _jvp_case(op, list(a), c["axis"], c["wrt"]))(
                *arrays)
            counts.append(_count(closed.jaxpr))
            traced.append((closed, [False, False, c["wrt"] in ("x", "both"),
                                    c["wrt"] in ("w", "both")]))
            args.extend(arrays)

        def plain_and_doubled(*flat):
            out = []
            for i, (closed, hot) in enumerate(traced):
                a = flat[4 * i: 4 * i + 4]
                out.append([_scaled_eval(closed.jaxpr, closed.consts, a, hot, p, s)[-1]
                            for s in (1.0, 2.0)])
            return out

        flows = _attempt(lambda: _jit(plain_and_doubled)(*args))
    return {"counts": counts, "flows": flows}


# ps1.transpose ----------------------------------------------------------------------------------

def _zero_cotangent(p: Primitive, x, w, ct, axis: int, wrt: str) -> list:
    """The rule registered for ``p`` called directly with a symbolic-zero cotangent (the task
    text says ``ct`` may be one), x or w (``wrt``: "zero_x", "zero_w") the linear operand; its
    cotangent as an array, None and ad.Zero read as zero (as JAX's backward pass reads them)."""
    rule = _TRANSPOSES.get(p)
    if rule is None:
        raise NotImplementedError("no transpose rule is registered for weighted_sum_p")
    linear = x if wrt == "zero_x" else w
    undefined = ad.UndefinedPrimal(ShapedArray(np.shape(linear), linear.dtype))
    operands = (undefined, w) if wrt == "zero_x" else (x, undefined)
    try:
        cotangents = list(rule(ad.Zero(ShapedArray(np.shape(ct), ct.dtype)), *operands,
                               axis=axis))
    except Exception as err:  # noqa: BLE001 - the student's rule: say which call it was
        message = f"given ct = ad.Zero(...), a symbolic-zero cotangent ({wrt[-1]} linear): {err}"
        try:
            said = type(err)(message)
        except Exception:  # noqa: BLE001 - an exception type that takes other arguments
            said = RuntimeError(f"{type(err).__name__}: {message}")
        raise said from None
    got = cotangents[0 if wrt == "zero_x" else 1]
    if type(got) is ad.Zero and tuple(getattr(got.aval, "shape", ())) != np.shape(linear):
        # JAX's backward pass checks a symbolic zero's type as it checks an array's.
        raise ValueError(f"the symbolic-zero cotangent returned for {wrt[-1]} has the type "
                         f"{got.aval}, not {wrt[-1]}'s shape {tuple(np.shape(linear))}")
    if got is None or type(got) is ad.Zero:
        return [jnp.zeros(np.shape(linear), linear.dtype)]
    return [got]


def _transpose_case(op, arrays: list, axis: int, wrt: str, p: Primitive | None = None):
    x, w, ct = arrays[:3]
    if wrt in ("zero_x", "zero_w"):
        return _zero_cotangent(p, x, w, ct, axis, wrt)
    if wrt == "x":
        return list(_linear_transpose(lambda a: op(a, w, axis), x)(ct))
    if wrt == "chain":  # x -> weighted_sum(weighted_sum(x, w, axis), v, 0): two transposes
        v = arrays[3]
        return list(_linear_transpose(lambda a: op(op(a, w, axis), v, 0), x)(ct))
    return list(_linear_transpose(lambda b: op(x, b, axis), w)(ct))


def probe_transpose(ns: dict, inputs: dict) -> dict:
    p = _primitive(ns)
    op = _op(p)
    cases = inputs["cases"]
    per_case = [[c["x"], c["w"], c["ct"]] + ([c["v"]] if "v" in c else []) for c in cases]
    with _Counted(_TRANSPOSES, p) as counted:
        result = _both_ways(
            p, lambda arrays: [_transpose_case(op, a, c["axis"], c["wrt"], p)
                               for a, c in zip(arrays, cases)],
            per_case, inputs["pins"], inputs.get("eager", False))
    return {**result, "calls": counted.calls}


def probe_transpose_traced(ns: dict, inputs: dict) -> dict:
    p = _primitive(ns)
    op = _op(p)
    with _Counted(_TRANSPOSES, p) as counted, _Pinned(p, inputs["pins"]):
        for c in inputs["cases"]:
            arrays = _arrays(c, "x", "w", "ct")
            _make_jaxpr(lambda *a, c=c: _transpose_case(op, list(a), c["axis"], c["wrt"]))(
                *arrays)
    return {"traced": "ok", "calls": counted.calls}


# ps1.batch --------------------------------------------------------------------------------------

def _vmapped(op, c: dict):
    f = lambda x, w, axis=c["axis"]: op(x, w, axis)
    for in_axes, out_axes in zip(c["in_axes"], c["out_axes"]):  # innermost first
        f = _vmap(f, in_axes=tuple(in_axes), out_axes=out_axes)
    return f


def probe_vmap(ns: dict, inputs: dict) -> dict:
    p = _primitive(ns)
    op = _op(p)
    cases = inputs["cases"]
    with _Counted(_BATCHERS, p) as counted:
        result = _both_ways(
            p, lambda arrays: [_vmapped(op, c)(*a) for a, c in zip(arrays, cases)],
            [[c["x"], c["w"]] for c in cases], [], inputs.get("eager", False))
    return {**result, "calls": counted.calls}


def probe_vmap_traced(ns: dict, inputs: dict) -> dict:
    """Trace each vmap: does the rule trace, and how often does the batched program still apply
    the primitive?"""
    p = _primitive(ns)
    op = _op(p)
    applies = []
    with _Counted(_BATCHERS, p) as counted:
        for c in inputs["cases"]:
            applies.append(_count(_make_jaxpr(_vmapped(op, c))(*_arrays(c, "x", "w")).jaxpr))
    return {"traced": "ok", "calls": counted.calls, "applies": applies}
