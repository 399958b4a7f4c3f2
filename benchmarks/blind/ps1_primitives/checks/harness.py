"""Self-check of one ps1_primitives notebook against real JAX.

usage: python checks/harness.py NOTEBOOK.ipynb [--x64] [--json OUT] [--tasks impl,batch]

Runs the notebook's setup cell and its six solution cells (not the test cells) in one namespace,
captures the rules they registered, then checks each rule ON ITS OWN: for the checks of task T the
student's rule T is registered and the reference rules (below) for the other five, so a failure
is charged to the rule that caused it. Every value is compared with the same transformation of
`jnp.tensordot(x, w, axes=([axis], [0]))` computed by JAX itself.

Without --x64: float32 and bfloat16 (and a few float16). With --x64: float64 and float32.
"""

import argparse
import json
import sys
import traceback

import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument("notebook")
ap.add_argument("--x64", action="store_true")
ap.add_argument("--json")
ap.add_argument("--tasks", default="impl,abstract_eval,lowering,jvp,transpose,batch")
ap.add_argument("--verbose", action="store_true")
args = ap.parse_args()

import jax

if args.x64:
    jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
from jax._src.interpreters import mlir as _mlir_src
from jax.core import ShapedArray
import jax.extend.core as jex_core
import time
from jax.extend.mlir.dialects import stablehlo as hlo
from jax.interpreters import ad, batching, mlir

nb = json.load(open(args.notebook))
ns = {"__name__": "__main__"}
cells = {c.get("id"): "".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"}
SOLUTION_IDS = ["impl", "abstract_eval", "lowering", "jvp", "transpose", "batch"]
exec(compile(cells["setup"], "setup", "exec"), ns)
cell_errors = {}
for cid in SOLUTION_IDS:
    try:
        exec(compile(cells[cid], cid, "exec"), ns)
    except Exception as e:  # a cell that raises: its task fails, the rest go on
        cell_errors[cid] = f"{type(e).__name__}: {e}"

p = ns["weighted_sum_p"]
weighted_sum = ns["weighted_sum"]
PLATS = ("cpu", "cuda")


def snapshot():
    return {
        "impl": p.impl if hasattr(p, "impl") else None,
        "abstract_eval": p.abstract_eval,
        "lowering": ({k: _mlir_src._platform_specific_lowerings[k].get(p) for k in PLATS},
                     _mlir_src._lowerings.get(p)),
        "jvp": ad.primitive_jvps.get(p),
        "transpose": ad.primitive_transposes.get(p),
        "batch": batching.fancy_primitive_batchers.get(p),
    }


def restore(task, snap):
    value = snap[task]
    if task == "impl":
        p.impl = value
    elif task == "abstract_eval":
        p.abstract_eval = value
    elif task == "lowering":
        per, common = value
        for k in PLATS:
            if per[k] is None:
                _mlir_src._platform_specific_lowerings[k].pop(p, None)
            else:
                _mlir_src._platform_specific_lowerings[k][p] = per[k]
        if common is None:
            _mlir_src._lowerings.pop(p, None)
        else:
            _mlir_src._lowerings[p] = common
    else:
        table = {"jvp": ad.primitive_jvps, "transpose": ad.primitive_transposes,
                 "batch": batching.fancy_primitive_batchers}[task]
        if value is None:
            table.pop(p, None)
        else:
            table[p] = value


student = snapshot()


# ---------------------------------------------------------------- reference rules
def ref_impl(x, w, *, axis):
    x = jnp.asarray(x)
    return jnp.tensordot(x, jnp.asarray(w), axes=([axis], [0])).astype(x.dtype)


def ref_abstract_eval(x, w, *, axis):
    if not -x.ndim <= axis < x.ndim:
        raise TypeError("axis")
    a = axis % x.ndim
    if w.ndim != 1 or w.shape[0] != x.shape[a]:
        raise TypeError("w")
    if x.dtype != w.dtype:
        raise TypeError("dtype")
    return ShapedArray(x.shape[:a] + x.shape[a + 1:], x.dtype, weak_type=x.weak_type and w.weak_type)


def ref_lowering(ctx, x, w, *, axis):
    xa = ctx.avals_in[0]
    dims = hlo.DotDimensionNumbers.get(lhs_batching_dimensions=[], rhs_batching_dimensions=[],
                                       lhs_contracting_dimensions=[axis % xa.ndim],
                                       rhs_contracting_dimensions=[0])
    return [hlo.dot_general(mlir.aval_to_ir_type(ctx.module_context, ctx.avals_out[0]), x, w, dims)]


def ref_jvp(primals, tangents, *, axis):
    x, w = primals
    xt, wt = tangents
    out = weighted_sum(x, w, axis=axis)
    t = None
    if type(xt) is not ad.Zero:
        t = weighted_sum(xt, w, axis=axis)
    if type(wt) is not ad.Zero:
        u = weighted_sum(x, wt, axis=axis)
        t = u if t is None else t + u
    if t is None:
        t = ad.Zero(jax.typeof(out).to_tangent_aval())
    return out, t


def ref_transpose(ct, x, w, *, axis):
    if ad.is_undefined_primal(x):
        a = axis % x.aval.ndim
        if type(ct) is ad.Zero:
            return ad.Zero(x.aval), None
        shape = [1] * x.aval.ndim
        shape[a] = -1
        return (jnp.expand_dims(ct, a) * jnp.reshape(w, shape)).astype(x.aval.dtype), None
    if type(ct) is ad.Zero:
        return None, ad.Zero(w.aval)
    a = axis % jnp.ndim(x)
    others = [i for i in range(jnp.ndim(x)) if i != a]
    return None, jnp.tensordot(x, ct, axes=(others, list(range(jnp.ndim(ct))))).astype(w.aval.dtype)


def ref_batch(args_, dims, *, axis):
    x, w = args_
    bx, bw = dims
    if bw is None:
        x = jnp.moveaxis(x, bx, 0)
        return weighted_sum(x, w, axis=axis % (x.ndim - 1) + 1), 0
    w = jnp.moveaxis(w, bw, 0)
    if bx is None:
        return jnp.tensordot(w, x, axes=([1], [axis % x.ndim])), 0
    x = jnp.moveaxis(x, bx, 0)
    return jax.lax.dot_general(x, w, (([axis % (x.ndim - 1) + 1], [1]), ([0], [0]))), 0


def register_reference():
    p.def_impl(ref_impl)
    p.def_abstract_eval(ref_abstract_eval)
    _mlir_src._lowerings.pop(p, None)
    for k in PLATS:
        mlir.register_lowering(p, ref_lowering, platform=k)
    ad.primitive_jvps[p] = ref_jvp
    ad.primitive_transposes[p] = ref_transpose
    batching.primitive_batchers[p] = ref_batch


# ---------------------------------------------------------------- helpers
def ref(x, w, axis):
    return jnp.tensordot(x, w, axes=([axis], [0]))


TOL = {"float64": 1e-9, "float32": 2e-4, "bfloat16": 6e-2, "float16": 6e-3}


class Mismatch(Exception):
    pass


def _unzero(t):
    return jax.tree.map(lambda z: np.zeros(z.aval.shape, z.aval.dtype) if type(z) is ad.Zero else z,
                        t, is_leaf=lambda z: type(z) is ad.Zero)


def close(got, want, what=""):
    got_l = jax.tree.leaves(_unzero(got))
    want_l = jax.tree.leaves(want)
    if len(got_l) != len(want_l):
        raise Mismatch(f"{what}: {len(got_l)} leaves, want {len(want_l)}")
    for g, wv in zip(got_l, want_l):
        if type(g) is ad.Zero:
            g = np.zeros(g.aval.shape, g.aval.dtype)
        gs, ws = np.shape(g), np.shape(wv)
        if gs != ws:
            raise Mismatch(f"{what}: shape {gs}, want {ws}")
        gd, wd = np.asarray(g).dtype, np.asarray(wv).dtype
        if gd != wd:
            raise Mismatch(f"{what}: dtype {gd}, want {wd}")
        g64 = np.asarray(g).astype(np.float64)
        w64 = np.asarray(wv).astype(np.float64)
        tol = TOL.get(str(wd), 1e-6)
        scale = max(1.0, float(np.max(np.abs(w64)))) if w64.size else 1.0
        if not np.allclose(g64, w64, rtol=tol, atol=tol * scale, equal_nan=False):
            err = float(np.max(np.abs(g64 - w64)))
            raise Mismatch(f"{what}: values differ (max abs err {err:.3g})")


rng = np.random.default_rng(0)


def arr(shape, dtype):
    return jnp.asarray(rng.standard_normal(shape).astype(np.float32)).astype(dtype)


SHAPES = [(3,), (1,), (0,), (2, 3), (1, 4), (3, 1), (0, 3), (2, 0), (2, 3, 4), (1, 1, 1),
          (2, 1, 3, 2), (3, 0, 2), (1, 2, 1, 3)]
if args.x64:
    DTYPES = [jnp.float64, jnp.float32]
else:
    DTYPES = [jnp.float32, jnp.bfloat16]


def cases(shapes=SHAPES, dtypes=DTYPES, every_axis=True):
    for shape in shapes:
        nd = len(shape)
        for i, dtype in enumerate(dtypes):
            axes = range(-nd, nd) if every_axis and i == 0 else sorted({nd - 1, -nd})
            for axis in axes:
                yield shape, dtype, axis


results = {}  # task -> list of (case, ok, message)


TIMES = {}


def run_check(task, name, fn):
    import re as _re
    key = task + ":" + _re.sub(r"^.*axis=-?\d+ ?", "", name)
    key = _re.sub(r"\(.*?\)", "", key)
    t0 = time.time()
    try:
        _run_check(task, name, fn)
    finally:
        TIMES[key] = TIMES.get(key, 0) + time.time() - t0


def _run_check(task, name, fn):
    try:
        fn()
        results[task].append((name, True, ""))
    except Mismatch as e:
        results[task].append((name, False, str(e)))
    except Exception as e:
        msg = f"{type(e).__name__}: {str(e)[:200]}"
        if args.verbose:
            msg += "\n" + traceback.format_exc()[-1500:]
        results[task].append((name, False, msg))


def primitives_in(jaxpr):
    out = []
    for eqn in jaxpr.eqns:
        out.append(eqn.primitive.name)
        for v in eqn.params.values():
            for u in (v if isinstance(v, (tuple, list)) else [v]):
                if isinstance(u, jex_core.ClosedJaxpr):
                    out += primitives_in(u.jaxpr)
                elif isinstance(u, jex_core.Jaxpr):
                    out += primitives_in(u)
    return out


def sname(shape, dtype, axis, extra=""):
    return f"x{tuple(shape)} {jnp.dtype(dtype).name} axis={axis}{extra}"


# ---------------------------------------------------------------- checks
def check_impl():
    for shape, dtype, axis in cases():
        nd = len(shape)
        k = shape[axis]
        x, w = arr(shape, dtype), arr((k,), dtype)
        for kind, (xa, wa) in {"jax": (x, w), "numpy": (np.asarray(x), np.asarray(w))}.items():
            def f(xa=xa, wa=wa, x=x, w=w, axis=axis):
                x_before = np.array(xa, copy=True)
                got = weighted_sum(xa, wa, axis=axis)
                if not np.array_equal(np.asarray(xa), x_before):
                    raise Mismatch("x was modified in place")
                close(got, ref(x, w, axis), "eager")
            run_check("impl", sname(shape, dtype, axis, f" {kind}"), f)
    # the rule called directly, as the text states impl(x, w, axis=...)
    for shape, dtype, axis in cases(shapes=[(2, 3), (4,), (2, 1, 3)], every_axis=True):
        x, w = arr(shape, dtype), arr((shape[axis],), dtype)
        run_check("impl", sname(shape, dtype, axis, " direct"),
                  lambda x=x, w=w, axis=axis: close(student["impl"](x, w, axis=axis),
                                                    ref(x, w, axis), "impl(x, w, axis=...)"))


def check_abstract_eval():
    S = jax.ShapeDtypeStruct
    for shape, dtype, axis in cases():
        k = shape[axis]
        for wx, ww in ((False, False), (True, True), (True, False)) if dtype == DTYPES[0] else ((False, False),):
            def f(shape=shape, dtype=dtype, axis=axis, k=k, wx=wx, ww=ww):
                xs, ws = S(shape, dtype, weak_type=wx), S((k,), dtype, weak_type=ww)
                got = jax.eval_shape(lambda a, b: weighted_sum(a, b, axis=axis), xs, ws)
                want = jax.eval_shape(lambda a, b: ref(a, b, axis), xs, ws)
                if (got.shape, got.dtype) != (want.shape, want.dtype):
                    raise Mismatch(f"got {got.shape} {got.dtype}, want {want.shape} {want.dtype}")
                if got.weak_type != want.weak_type:
                    raise Mismatch(f"weak_type {got.weak_type}, want {want.weak_type}")
            run_check("abstract_eval", sname(shape, dtype, axis, f" weak={wx},{ww}"), f)
        # make_jaxpr of the jit-ed function shows the same aval
        def g(shape=shape, dtype=dtype, axis=axis, k=k):
            jx = jax.make_jaxpr(lambda a, b: weighted_sum(a, b, axis=axis))(
                S(shape, dtype), S((k,), dtype))
            aval = jx.out_avals[0]
            if aval.shape != tuple(s for i, s in enumerate(shape) if i != axis % len(shape)):
                raise Mismatch(f"make_jaxpr aval {aval}")
        run_check("abstract_eval", sname(shape, dtype, axis, " make_jaxpr"), g)
    other = {jnp.float32: jnp.bfloat16, jnp.bfloat16: jnp.float32, jnp.float64: jnp.float32}
    bad = []
    for shape in SHAPES + [()]:
        nd = len(shape)
        for dtype in DTYPES:
            for axis in (nd, nd + 2, -nd - 1, -nd - 3):
                bad.append((f"axis={axis} out of range", shape, (3,), dtype, dtype, axis))
            if nd:
                k = shape[-1]
                bad.append(("w too long", shape, (k + 1,), dtype, dtype, -1))
                if k > 0:
                    bad.append(("w too short", shape, (k - 1,), dtype, dtype, 0 if nd == 1 else -1))
                bad.append(("w 2-D", shape, (k, 1), dtype, dtype, -1))
                bad.append(("w 2-D (1,k)", shape, (1, k), dtype, dtype, -1))
                if k == 1:
                    bad.append(("w 0-D", shape, (), dtype, dtype, -1))
                bad.append(("dtypes differ", shape, (k,), dtype, other[dtype], -1))
                bad.append(("dtypes differ (int)", shape, (k,), dtype, jnp.int32, nd - 1))
                # the length check must use the axis, not the last axis
                if nd >= 2 and shape[0] != shape[-1]:
                    bad.append(("w fits another axis", shape, (shape[-1],), dtype, dtype, 0))
    for why, xshape, wshape, xd, wd, axis in bad:
        def h(xshape=xshape, wshape=wshape, xd=xd, wd=wd, axis=axis):
            try:
                jax.eval_shape(lambda a, b: weighted_sum(a, b, axis=axis), S(xshape, xd), S(wshape, wd))
            except TypeError:
                return
            raise Mismatch("no TypeError")
        run_check("abstract_eval", f"{why}: x{xshape} {jnp.dtype(xd).name} w{wshape} "
                                   f"{jnp.dtype(wd).name} axis={axis}", h)


def check_lowering():
    for shape, dtype, axis in cases():
        x, w = arr(shape, dtype), arr((shape[axis],), dtype)
        def f(x=x, w=w, axis=axis):
            got = jax.jit(lambda a, b: weighted_sum(a, b, axis=axis))(x, w)
            close(got, ref(x, w, axis), "jit")
        run_check("lowering", sname(shape, dtype, axis, " jit"), f)
    for shape, dtype, axis in cases(every_axis=False):
        x, w = arr(shape, dtype), arr((shape[axis],), dtype)
        def g(x=x, w=w, axis=axis):
            fn = jax.jit(lambda a, b: weighted_sum(a, b, axis=axis))
            texts = {}
            for plat in PLATS:
                text = fn.trace(x, w).lower(lowering_platforms=(plat,)).as_text()
                if "custom_call" in text or "callback" in text:
                    raise Mismatch(f"{plat}: custom_call/callback in StableHLO")
                if "stablehlo.dot_general" not in text and "stablehlo.reduce" not in text:
                    raise Mismatch(f"{plat}: no contraction in StableHLO")
                texts[plat] = [l.strip() for l in text.splitlines() if "stablehlo." in l]
            if texts["cpu"] != texts["cuda"]:
                raise Mismatch("cuda lowering differs from cpu lowering")
        run_check("lowering", sname(shape, dtype, axis, " cpu+cuda text"), g)
    # inside a bigger jitted program, and with a jnp operation in front of it
    x, w = arr((2, 3, 4), DTYPES[0]), arr((3,), DTYPES[0])
    run_check("lowering", "jit composed", lambda: close(
        jax.jit(lambda a, b: jnp.sin(weighted_sum(a * 2, b, axis=-2)) + 1)(x, w),
        jnp.sin(ref(x * 2, w, -2)) + 1, "jit composed"))


def rand_like(a):
    return arr(np.shape(a), a.dtype)


def check_jvp():
    for shape, dtype, axis in cases():
        x, w = arr(shape, dtype), arr((shape[axis],), dtype)
        xt, wt = rand_like(x), rand_like(w)
        f = lambda a, b, axis=axis: weighted_sum(a, b, axis=axis)
        r = lambda a, b, axis=axis: ref(a, b, axis)
        def both(x=x, w=w, xt=xt, wt=wt, f=f, r=r):
            close(jax.jvp(f, (x, w), (xt, wt)), jax.jvp(r, (x, w), (xt, wt)), "jvp")
        def jitted(x=x, w=w, xt=xt, wt=wt, f=f, r=r):
            close(jax.jit(lambda *a: jax.jvp(f, a[:2], a[2:]))(x, w, xt, wt),
                  jax.jvp(r, (x, w), (xt, wt)), "jit(jvp)")
        def only_x(x=x, w=w, xt=xt, axis=axis):
            close(jax.jvp(lambda a: weighted_sum(a, w, axis=axis), (x,), (xt,)),
                  jax.jvp(lambda a: ref(a, w, axis), (x,), (xt,)), "jvp in x")
        def only_w(x=x, w=w, wt=wt, axis=axis):
            close(jax.jvp(lambda b: weighted_sum(x, b, axis=axis), (w,), (wt,)),
                  jax.jvp(lambda b: ref(x, b, axis), (w,), (wt,)), "jvp in w")
        for nm, fn in (("both", both), ("jit", jitted), ("x only", only_x), ("w only", only_w)):
            run_check("jvp", sname(shape, dtype, axis, " " + nm), fn)
    # second order: jvp of jvp, and the tangent program is made of weighted_sum
    for shape, dtype, axis in cases(shapes=[(2, 3), (3,), (2, 1, 3)], every_axis=False):
        x, w = arr(shape, dtype), arr((shape[axis],), dtype)
        xt, wt, xt2, wt2 = rand_like(x), rand_like(w), rand_like(x), rand_like(w)
        def second(x=x, w=w, xt=xt, wt=wt, xt2=xt2, wt2=wt2, axis=axis):
            def inner(fun):
                return lambda a, b: jax.jvp(fun, (a, b), (xt, wt))[1]
            got = jax.jvp(inner(lambda a, b: weighted_sum(a, b, axis=axis)), (x, w), (xt2, wt2))
            want = jax.jvp(inner(lambda a, b: ref(a, b, axis)), (x, w), (xt2, wt2))
            close(got, want, "jvp of jvp")
        run_check("jvp", sname(shape, dtype, axis, " jvp-of-jvp"), second)
        def structure(x=x, w=w, xt=xt, wt=wt, axis=axis):
            jx = jax.make_jaxpr(lambda *a: jax.jvp(lambda p_, q: weighted_sum(p_, q, axis=axis),
                                                   a[:2], a[2:]))(x, w, xt, wt)
            names = primitives_in(jx.jaxpr)
            if names.count("weighted_sum") < 3 or "dot_general" in names:
                raise Mismatch(f"jvp program is {names}: the tangent must use weighted_sum")
        run_check("jvp", sname(shape, dtype, axis, " tangent uses weighted_sum"), structure)
    # the rule itself with symbolic zeros
    x, w = arr((2, 3), DTYPES[0]), arr((3,), DTYPES[0])
    def zeros_direct():
        rule = student["jvp"]
        out, t = rule((x, w), (ad.Zero(jax.typeof(x)), rand_like(w)), axis=1)
        close(out, ref(x, w, 1), "primal")
        out, t = rule((x, w), (rand_like(x), ad.Zero(jax.typeof(w))), axis=-1)
        close(out, ref(x, w, 1), "primal")
    run_check("jvp", "rule with one Zero tangent", zeros_direct)


def check_transpose():
    for shape, dtype, axis in cases():
        x, w = arr(shape, dtype), arr((shape[axis],), dtype)
        ct = rand_like(ref(x, w, axis))
        def tx(x=x, w=w, ct=ct, axis=axis):
            close(jax.linear_transpose(lambda a: weighted_sum(a, w, axis=axis), x)(ct),
                  jax.linear_transpose(lambda a: ref(a, w, axis), x)(ct), "linear_transpose in x")
        def tw(x=x, w=w, ct=ct, axis=axis):
            close(jax.linear_transpose(lambda b: weighted_sum(x, b, axis=axis), w)(ct),
                  jax.linear_transpose(lambda b: ref(x, b, axis), w)(ct), "linear_transpose in w")
        def gr(x=x, w=w, axis=axis):
            g = lambda fn: (lambda a, b: jnp.sum(jnp.sin(fn(a, b)).astype(jnp.float32)))
            close(jax.grad(g(lambda a, b: weighted_sum(a, b, axis=axis)), argnums=(0, 1))(x, w),
                  jax.grad(g(lambda a, b: ref(a, b, axis)), argnums=(0, 1))(x, w), "grad")
        def jgr(x=x, w=w, ct=ct, axis=axis):
            vjp = lambda fn: jax.jit(lambda a, b, c: jax.vjp(fn, a, b)[1](c))
            close(vjp(lambda a, b: weighted_sum(a, b, axis=axis))(x, w, ct),
                  vjp(lambda a, b: ref(a, b, axis))(x, w, ct), "jit(vjp)")
        todo = [("transpose x", tx), ("transpose w", tw)]
        if axis in (len(shape) - 1, -len(shape)):
            todo += [("grad", gr), ("jit vjp", jgr)]
        for nm, fn in todo:
            run_check("transpose", sname(shape, dtype, axis, " " + nm), fn)
    # second order reverse: grad of grad
    for shape, dtype, axis in cases(shapes=[(2, 3), (3,), (2, 1, 3)], every_axis=False):
        x, w = arr(shape, dtype), arr((shape[axis],), dtype)
        def gg(x=x, w=w, axis=axis):
            def outer(fn):
                inner = jax.grad(lambda a, b: jnp.sum(fn(a, b) ** 3).astype(jnp.float32), argnums=(0, 1))
                return jax.grad(lambda a, b: sum(jnp.sum(jnp.cos(t)).astype(jnp.float32)
                                                 for t in inner(a, b)), argnums=(0, 1))
            close(outer(lambda a, b: weighted_sum(a, b, axis=axis))(x, w),
                  outer(lambda a, b: ref(a, b, axis))(x, w), "grad of grad")
        run_check("transpose", sname(shape, dtype, axis, " grad-of-grad"), gg)
    # the rule itself with a symbolic zero cotangent
    for shape, axis in (((2, 3), 1), ((4,), 0), ((2, 3, 2), -2)):
        x, w = arr(shape, DTYPES[0]), arr((shape[axis],), DTYPES[0])
        out_aval = jax.typeof(ref(x, w, axis))
        def z(x=x, w=w, axis=axis, out_aval=out_aval):
            rule = student["transpose"]
            cx, cw = rule(ad.Zero(out_aval), ad.UndefinedPrimal(jax.typeof(x)), w, axis=axis)
            if cw is not None:
                raise Mismatch("cotangent of the constant w is not None")
            close(cx, jnp.zeros_like(x), "Zero ct, x linear")
            cx, cw = rule(ad.Zero(out_aval), x, ad.UndefinedPrimal(jax.typeof(w)), axis=axis)
            if cx is not None:
                raise Mismatch("cotangent of the constant x is not None")
            close(cw, jnp.zeros_like(w), "Zero ct, w linear")
        run_check("transpose", f"Zero cotangent x{shape} axis={axis}", z)


def check_batch():
    B = 3
    for shape, dtype, axis in cases(shapes=[(3,), (1,), (2, 3), (3, 1), (2, 0), (2, 3, 4),
                                            (1, 2, 1, 3)]):
        nd = len(shape)
        k = shape[axis]
        f = lambda a, b, axis=axis: weighted_sum(a, b, axis=axis)
        r = lambda a, b, axis=axis: ref(a, b, axis)
        layouts = [(bx, None) for bx in range(-nd - 1, nd + 1)]
        layouts += [(None, bw) for bw in (0, 1, -1, -2)]
        layouts += [(bx, bw) for bx in sorted({0, -1, min(1, nd)}) for bw in (0, 1)]
        for bx, bw in layouts:
            xs = arr(tuple(np.insert(np.array(shape, int), bx % (nd + 1), B)) if bx is not None else shape, dtype)
            ws = arr((B, k) if bw in (0, -2) else (k, B), dtype) if bw is not None else arr((k,), dtype)
            for size_note in ("",):
                def v(xs=xs, ws=ws, bx=bx, bw=bw, f=f, r=r):
                    close(jax.vmap(f, in_axes=(bx, bw))(xs, ws), jax.vmap(r, in_axes=(bx, bw))(xs, ws),
                          f"vmap in_axes=({bx}, {bw})")
                run_check("batch", sname(shape, dtype, axis, f" vmap({bx},{bw})"), v)
        # jit of vmap, out_axes, batch of size 1 and 0, nested vmap
        xs, ws = arr((1, *shape), dtype), arr((1, k), dtype)
        run_check("batch", sname(shape, dtype, axis, " jit vmap size1 (0,0)"), lambda xs=xs, ws=ws, f=f, r=r: close(
            jax.jit(jax.vmap(f))(xs, ws), jax.vmap(r)(xs, ws), "jit(vmap) batch 1"))
        xs, ws, w1 = arr((0, *shape), dtype), arr((0, k), dtype), arr((k,), dtype)
        run_check("batch", sname(shape, dtype, axis, " vmap size0"), lambda xs=xs, ws=ws, w1=w1, f=f, r=r: close(
            (jax.vmap(f)(xs, ws), jax.vmap(f, (0, None))(xs, w1), jax.vmap(f, (None, 0))(xs[0:1].sum(0) if False else arr(shape, dtype), ws)),
            (jax.vmap(r)(xs, ws), jax.vmap(r, (0, None))(xs, w1), jax.vmap(r, (None, 0))(arr(shape, dtype), ws)), "vmap batch 0"))
        xs2 = arr((2, B, *shape), dtype)
        ws2 = arr((k, 2), dtype)
        run_check("batch", sname(shape, dtype, axis, " nested vmap"), lambda xs2=xs2, ws2=ws2, f=f, r=r: close(
            jax.vmap(jax.vmap(f, in_axes=(0, None)), in_axes=(0, 1))(xs2, ws2),
            jax.vmap(jax.vmap(r, in_axes=(0, None)), in_axes=(0, 1))(xs2, ws2), "nested vmap"))
        xs3 = arr((B, 2, *shape), dtype)
        run_check("batch", sname(shape, dtype, axis, " nested vmap x only"), lambda xs3=xs3, f=f, r=r: close(
            jax.vmap(jax.vmap(f, in_axes=(-1 if nd == 0 else 0, None)), in_axes=(1, None))(xs3, arr((k,), dtype) * 0 + 1),
            jax.vmap(jax.vmap(r, in_axes=(-1 if nd == 0 else 0, None)), in_axes=(1, None))(xs3, arr((k,), dtype) * 0 + 1),
            "nested vmap x only"))
    # the x-only batched program still applies weighted_sum
    for shape, axis, bx in (((2, 3), 1, 0), ((2, 3), -1, 2), ((2, 3, 4), -2, 1), ((3,), 0, 1)):
        xs = arr(tuple(np.insert(np.array(shape, int), bx, 4)), DTYPES[0])
        w = arr((shape[axis],), DTYPES[0])
        def structure(xs=xs, w=w, bx=bx, axis=axis):
            jx = jax.make_jaxpr(jax.vmap(lambda a, b: weighted_sum(a, b, axis=axis), in_axes=(bx, None)))(xs, w)
            if "weighted_sum" not in primitives_in(jx.jaxpr):
                raise Mismatch("x-only batched program does not apply weighted_sum")
        run_check("batch", f"x{shape} axis={axis} bx={bx} uses weighted_sum", structure)
    # jacfwd and hessian
    for shape, dtype, axis in cases(shapes=[(2, 3), (3,), (1,), (2, 1, 3), (3, 2, 2)]):
        x, w = arr(shape, dtype), arr((shape[axis],), dtype)
        f = lambda a, b, axis=axis: weighted_sum(a, b, axis=axis)
        r = lambda a, b, axis=axis: ref(a, b, axis)
        run_check("batch", sname(shape, dtype, axis, " jacfwd"), lambda x=x, w=w, f=f, r=r: close(
            jax.jacfwd(f, argnums=(0, 1))(x, w), jax.jacfwd(r, argnums=(0, 1))(x, w), "jacfwd"))
        s = lambda fn: (lambda a, b: jnp.sum(jnp.sin(fn(a, b))))
        run_check("batch", sname(shape, dtype, axis, " hessian"), lambda x=x, w=w, f=f, r=r: close(
            jax.hessian(s(f), argnums=(0, 1))(x, w), jax.hessian(s(r), argnums=(0, 1))(x, w), "hessian"))
        run_check("batch", sname(shape, dtype, axis, " jit jacrev"), lambda x=x, w=w, f=f, r=r: close(
            jax.jit(jax.jacrev(f, argnums=(0, 1)))(x, w), jax.jacrev(r, argnums=(0, 1))(x, w), "jit(jacrev)"))


CHECKS = {"impl": check_impl, "abstract_eval": check_abstract_eval, "lowering": check_lowering,
          "jvp": check_jvp, "transpose": check_transpose, "batch": check_batch}

summary = {}
for task in args.tasks.split(","):
    results[task] = []
    t0 = time.time()
    register_reference()
    restore(task, student)
    if task in cell_errors:
        results[task].append(("cell ran", False, cell_errors[task]))
    try:
        CHECKS[task]()
    except Exception as e:
        results[task].append(("harness", False, f"{type(e).__name__}: {e}"))
    fails = [(n, m) for n, ok, m in results[task] if not ok]
    summary[task] = {"seconds": round(time.time() - t0, 1), "cases": len(results[task]), "failed": len(fails), "first_failures": fails[:6]}

mode = "x64" if args.x64 else "x32"
print(f"== {args.notebook} [{mode}]")
for task, s in summary.items():
    flag = "ok " if not s["failed"] else "BAD"
    print(f"{flag} {task:14s} {s['cases'] - s['failed']}/{s['cases']}  ({s['seconds']}s)")
    for n, m in s["first_failures"]:
        print(f"      - {n}: {m[:300]}")
if args.verbose:
    for k, v in sorted(TIMES.items(), key=lambda kv: -kv[1])[:25]:
        print(f"   {v:6.1f}s {k}")
if args.json:
    json.dump({"notebook": args.notebook, "mode": mode, "summary": summary}, open(args.json, "w"), indent=1)
