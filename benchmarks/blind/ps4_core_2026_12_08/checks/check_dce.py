"""Self-check of ps4.dce against JAX's own dead-code elimination.  usage: check_dce.py NB..."""
import sys, warnings
import numpy as np
from common import load
from snap import snap_jaxpr

import jax, jax.numpy as jnp
from jax import lax
from jax._src.interpreters import partial_eval as pe   # the checker may use JAX internals
jax.config.update("jax_enable_x64", True)
warnings.filterwarnings("ignore")

NAMES = {"xla_call": "jit", "pjit": "jit", "broadcast_in_dim": "broadcast", "gt": "greater", "lt": "less"}
# JAX turns cond's bool predicate into an index with convert_element_type; this core does not.
SKIP = {"convert_element_type"}


def programs(ns):
    from jaxcourse.core.jit import jit
    from jaxcourse.core.control_flow import cond
    sin, cos, neg, mul, add = ns["sin"], ns["cos"], ns["neg"], ns["mul"], ns["add"]
    rs, bc = ns["reduce_sum"], ns["broadcast"]
    from jaxcourse.autodidax.core import greater, transpose
    C = np.array([0.5, -1.0, 2.0]); D = np.array([3.0, 1.0, -2.0])
    x3, m23 = np.linspace(0.1, 0.9, 3), np.linspace(-1, 1, 6).reshape(2, 3)
    P = []
    P.append(("visible", lambda x: (cos(sin(x)), mul(neg(x), 2.0))[1],
              lambda x: (lax.cos(lax.sin(x)), lax.mul(lax.neg(x), 2.0))[1], (x3,)))
    P.append(("dead chain, unused input", lambda x, y: (neg(cos(sin(y))), mul(x, x))[1],
              lambda x, y: (lax.neg(lax.cos(lax.sin(y))), lax.mul(x, x))[1], (x3, x3)))
    P.append(("input returned", lambda x, y: (sin(x), (y, neg(x)))[1],
              lambda x, y: (lax.sin(x), (y, lax.neg(x)))[1], (x3, x3)))
    P.append(("input returned only", lambda x, y: (cos(sin(x)), y)[1],
              lambda x, y: (lax.cos(lax.sin(x)), y)[1], (x3, x3)))
    P.append(("closed consts", lambda x: (mul(x, D), add(x, C))[1],
              lambda x: (lax.mul(x, D), lax.add(x, C))[1], (x3,)))
    P.append(("closed const in chain", lambda x: (sin(mul(x, D)), mul(cos(add(x, C)), C))[1],
              lambda x: (lax.sin(lax.mul(x, D)), lax.mul(lax.cos(lax.add(x, C)), C))[1], (x3,)))
    P.append(("jit, first read", lambda x: mul(jit(lambda y: (sin(y), cos(neg(y))))(x)[0], 2.0),
              lambda x: lax.mul(jax.jit(lambda y: (lax.sin(y), lax.cos(lax.neg(y))))(x)[0], 2.0), (x3,)))
    P.append(("jit, second read", lambda x: add(jit(lambda y: (sin(neg(y)), cos(y)))(x)[1], x),
              lambda x: lax.add(jax.jit(lambda y: (lax.sin(lax.neg(y)), lax.cos(y)))(x)[1], x), (x3,)))
    P.append(("jit, none read", lambda x: (jit(lambda y: (sin(y), cos(y)))(x), neg(x))[1],
              lambda x: (jax.jit(lambda y: (lax.sin(y), lax.cos(y)))(x), lax.neg(x))[1], (x3,)))
    P.append(("jit feeding dead chain", lambda x: (neg(jit(lambda y: (sin(y), cos(y)))(sin(x))[1]), cos(x))[1],
              lambda x: (lax.neg(jax.jit(lambda y: (lax.sin(y), lax.cos(y)))(lax.sin(x))[1]), lax.cos(x))[1], (x3,)))
    P.append(("cond, second read",
              lambda p, x: cond(p, lambda y: (sin(y), neg(cos(y))), lambda y: (cos(y), y), x)[1],
              lambda p, x: lax.cond(p, lambda y: (lax.sin(y), lax.neg(lax.cos(y))), lambda y: (lax.cos(y), y), x)[1],
              (True, x3)))
    P.append(("cond, first read, pred computed",
              lambda s, x: mul(cond(greater(s, 0.0), lambda y: (sin(y), neg(y)), lambda y: (cos(y), y), x)[0], x),
              lambda s, x: lax.mul(lax.cond(lax.gt(s, 0.0), lambda y: (lax.sin(y), lax.neg(y)), lambda y: (lax.cos(y), y), x)[0], x),
              (0.5, x3)))
    P.append(("cond, none read",
              lambda p, x: (cond(p, lambda y: (sin(y), neg(y)), lambda y: (cos(y), y), x), sin(x))[1],
              lambda p, x: (lax.cond(p, lambda y: (lax.sin(y), lax.neg(y)), lambda y: (lax.cos(y), y), x), lax.sin(x))[1],
              (False, x3)))
    P.append(("params, var read twice",
              lambda m: (transpose(m, (1, 0)), rs(mul(bc(rs(m, 0), (2, 3), (0,)), bc(rs(m, 0), (2, 3), (0,))), (1,)),
                         mul(sin(m), sin(m)))[2],
              lambda m: (lax.transpose(m, (1, 0)), lax.reduce_sum(lax.mul(lax.broadcast_in_dim(lax.reduce_sum(m, (0,)), (2, 3), (1,)), lax.broadcast_in_dim(lax.reduce_sum(m, (0,)), (2, 3), (1,))), (1,)),
                         lax.mul(lax.sin(m), lax.sin(m)))[2], (m23,)))
    P.append(("two outputs, literal out", lambda x, y: (add(sin(x), y), 1.0, neg(neg(y)))[0:2],
              lambda x, y: (lax.add(lax.sin(x), y), 1.0, lax.neg(lax.neg(y)))[0:2], (x3, x3)))
    P.append(("jit of three computed inputs",
              lambda x: jit(lambda a, b, c: (mul(a, b), neg(c)))(sin(x), cos(x), neg(x)),
              lambda x: jax.jit(lambda a, b, c: (lax.mul(a, b), lax.neg(c)))(lax.sin(x), lax.cos(x), lax.neg(x)), (x3,)))
    P.append(("no dead code", lambda x: mul(sin(x), cos(x)), lambda x: lax.mul(lax.sin(x), lax.cos(x)), (x3,)))
    P.append(("all dead", lambda x: (sin(cos(x)), x)[1], lambda x: (lax.sin(lax.cos(x)), x)[1], (x3,)))
    return P


def as_list(o):
    return list(o) if isinstance(o, (tuple, list)) else [o]


def run(nb):
    ns, _ = load(nb)
    dce, make_jaxpr, eval_jaxpr, tc = ns["dce_jaxpr"], ns["make_jaxpr"], ns["eval_jaxpr"], ns["typecheck_jaxpr"]
    from jaxcourse.core.jaxprs import typecheck_jaxpr as real_tc
    fails, n = [], 0
    for name, ours, theirs, args in programs(ns):
        n += 1
        closed = make_jaxpr(ours)(*args)
        j = closed.jaxpr
        before = snap_jaxpr(j, ns)
        want_jaxpr = jax.make_jaxpr(theirs)(*args)
        nout = len(want_jaxpr.jaxpr.outvars)
        dced, _ = pe.dce_jaxpr(want_jaxpr.jaxpr, [True] * nout, instantiate=True)
        want = [NAMES.get(e.primitive.name, e.primitive.name) for e in dced.eqns if e.primitive.name not in SKIP]
        try:
            got = dce(j)
            names = [NAMES.get(e.primitive.name, e.primitive.name) for e in got.eqns]
            msgs = []
            if snap_jaxpr(j, ns) != before:
                msgs.append("argument changed in place")
            if got is j:
                msgs.append("returned the argument itself")
            if names != want:
                msgs.append(f"eqns {names} != JAX dce {want}")
            if [id(v) for v in got.constvars] != [id(v) for v in j.constvars]:
                msgs.append("constvars changed")
            if [id(v) for v in got.in_binders] != [id(v) for v in j.in_binders]:
                msgs.append("in_binders changed")
            if [id(v) for v in got.outs] != [id(v) for v in j.outs]:
                msgs.append("outs changed")
            try:
                real_tc(got)
            except Exception as e:
                msgs.append(f"typecheck: {e}")
            if not msgs:
                a = eval_jaxpr(j, closed.consts, list(args))
                b = eval_jaxpr(got, closed.consts, list(args))
                if not all(np.allclose(u, v) for u, v in zip(a, b)):
                    msgs.append("values differ")
            if msgs:
                fails.append(f"{name}: " + "; ".join(msgs))
        except Exception as e:
            fails.append(f"{name}: raised {type(e).__name__}: {str(e)[:100]}")
    return n, fails


if __name__ == "__main__":
    for nb in sys.argv[1:]:
        n, fails = run(nb)
        print(f"== {nb}: {n - len(fails)}/{n} programs right")
        for f in fails[:6]:
            print("   ", f)
        if len(fails) > 6:
            print(f"    ... {len(fails) - 6} more")
