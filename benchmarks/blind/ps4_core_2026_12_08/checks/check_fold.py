"""Self-check of ps4.fold_constants against the task text and the unfolded program.
usage: check_fold.py NB..."""
import sys, warnings
import numpy as np
from common import load
from snap import snap_jaxpr, snap_consts, same_consts
warnings.filterwarnings("ignore")


def programs(ns):
    """(name, jaxpr, consts, args, typecheck?) with the leading inputs turned into constvars."""
    from jaxcourse.core.jit import jit
    from jaxcourse.core.control_flow import cond
    from jaxcourse.autodidax.core import greater, less, add_p, mul_p, sin_p
    sin, cos, neg, mul, add = ns["sin"], ns["cos"], ns["neg"], ns["mul"], ns["add"]
    rs, bc, make_jaxpr = ns["reduce_sum"], ns["broadcast"], ns["make_jaxpr"]
    Jaxpr, JaxprEqn, Lit, Var, SA = ns["Jaxpr"], ns["JaxprEqn"], ns["Lit"], ns["Var"], ns["ShapedArray"]
    out = []

    def staged(name, f, consts, args, tc=True):
        cl = make_jaxpr(f)(*consts, *args)
        j, k = cl.jaxpr, len(consts)
        out.append((name, Jaxpr(j.constvars + j.in_binders[:k], j.in_binders[k:], j.eqns, j.outs),
                    list(cl.consts) + list(consts), list(args), tc))

    for dt in (np.float64, np.float32):
        f64 = dt == np.float64
        c1, c0 = np.array([0.3, -1.2, 2.0], dt), np.array(0.7, dt)
        x1, x0 = np.array([1.5, -0.5, 0.25], dt), np.array(-1.1, dt)
        t = np.dtype(dt).name
        staged(f"visible {t}", lambda c, x: sin(c) * 2.0 * x, [c1], [x1], tc=f64)
        staged(f"chain with params {t}", lambda c, x: mul(rs(bc(sin(c), (2, 3), (0,)), (0,)), x), [c1], [x1])
        staged(f"rank-0 folded {t}", lambda c, x: mul(cos(neg(c)), x), [c0], [x1])
        staged(f"rank-0 folded, rank-0 x {t}", lambda c, x: add(sin(c), x), [c0], [x0])
        staged(f"bool compare + cond {t}",
               lambda c, x: cond(greater(c, 0.0), lambda y: (sin(y), neg(y)), lambda y: (cos(y), y), x),
               [c0], [x1])
        staged(f"jit over consts {t}", lambda c, x: (lambda ab: (mul(ab[0], x), ab[1]))(jit(lambda u: (sin(u), cos(u)))(c)),
               [c1], [x1])
        staged(f"cond over consts {t}",
               lambda c, d, x: (lambda ab: add(mul(ab[0], x), ab[1]))(
                   cond(less(c, d), lambda u: (sin(u), neg(u)), lambda u: (cos(u), u), c)), [c0, c0 + 1], [x0])
        staged(f"jit reads folded twice {t}",
               lambda c, x: jit(lambda a, b, y: (mul(a, y), mul(b, neg(y))))(sin(c), sin(c), x)[1], [c1], [x1])
        staged(f"jit reads one folded var twice {t}",
               lambda c, x: (lambda s: jit(lambda a, b, y: (mul(a, y), add(b, y)))(s, s, x))(sin(c)), [c1], [x1])
        staged(f"const and folded read at once {t}",
               lambda c, x: (lambda s: cond(greater(x, x), lambda a, b, y: (mul(a, y), b), lambda a, b, y: (mul(b, y), a), c, s, x))(cos(c)),
               [c0], [x0])
        staged(f"mul reads folded twice {t}", lambda c, x: mul(mul(sin(c), sin(c)), x), [c1], [x1])
        staged(f"const returned {t}", lambda c, x: (c, mul(x, c)), [c1], [x1])
        staged(f"folded returned {t}", lambda c, x: (sin(c), mul(x, neg(c))), [c1], [x1])
        staged(f"folded rank-0 returned {t}", lambda c, x: (neg(sin(c)), x), [c0], [x0])
        staged(f"two consts, one dead {t}", lambda c, d, x: (neg(d), mul(sin(c), x))[1], [c1, c1 * 2], [x1])
        staged(f"two consts, both used {t}", lambda c, d, x: add(mul(sin(c), x), mul(d, x)), [c1, c1 * 2], [x1])
        staged(f"nothing foldable {t}", lambda c, x: mul(sin(x), c), [c1], [x1])
        staged(f"everything folded {t}", lambda c, x: sin(cos(c)), [c0], [x0])
    # Closed-over constants: real constvars of make_jaxpr.
    C = np.array([1.0, 2.0, -0.5])
    cl = make_jaxpr(lambda x: mul(sin(C), x))(np.ones(3))
    out.append(("closed-over const", cl.jaxpr, list(cl.consts), [np.array([0.1, 0.2, 0.3])], True))
    # Equations whose inputs are all literals (written by hand: tracing computes them eagerly).
    xv = Var(SA((3,), np.float64)); a = Var(SA((), np.float64)); b = Var(SA((), np.float64))
    o = Var(SA((3,), np.float64))
    j = Jaxpr([], [xv], [JaxprEqn(add_p, [Lit(1.0), Lit(2.0)], {}, [a]),
                         JaxprEqn(sin_p, [a], {}, [b]),
                         JaxprEqn(mul_p, [b, xv], {}, [o])], [o])
    out.append(("all-literal inputs", j, [], [np.array([0.5, 1.0, 2.0])], True))
    cv = Var(SA((), np.float64)); a2 = Var(SA((), np.float64)); o2 = Var(SA((3,), np.float64))
    j = Jaxpr([cv], [xv], [JaxprEqn(mul_p, [Lit(3.0), Lit(2.0)], {}, [a2]),
                           JaxprEqn(add_p, [xv, a2], {}, [o2])], [o2, a2, cv])
    out.append(("all-literal, returned, const returned", j, [np.array(0.5)], [np.array([0.5, 1.0, 2.0])], True))
    j = Jaxpr([], [xv], [JaxprEqn(mul_p, [xv, Lit(2.0)], {}, [o])], [o])
    out.append(("program literal stays", j, [], [np.array([0.5, 1.0, 2.0])], True))
    return out


def oracle(ns, j):
    Var = ns["Var"]
    dep = set(j.in_binders)
    kept = []
    for e in j.eqns:
        if any(isinstance(x, Var) and x in dep for x in e.inputs):
            kept.append(e); dep.update(e.out_binders)
    read = []
    for x in [x for e in kept for x in e.inputs] + list(j.outs):
        if isinstance(x, Var) and x not in dep and x not in read:
            read.append(x)
    return kept, read


def run(nb):
    ns, _ = load(nb)
    fold, eval_jaxpr, Lit, Var = ns["fold_constants"], ns["eval_jaxpr"], ns["Lit"], ns["Var"]
    from jaxcourse.core.jaxprs import typecheck_jaxpr as real_tc
    fails, n = [], 0
    for name, j, consts, args, tc in programs(ns):
        n += 1
        kept, read = oracle(ns, j)
        want_vals = eval_jaxpr(j, consts, args)
        before, cbefore = snap_jaxpr(j, ns), snap_consts(consts)
        msgs = []
        try:
            got, values = fold(j, consts)
            if snap_jaxpr(j, ns) != before:
                msgs.append("argument jaxpr changed in place")
            if not same_consts(cbefore, snap_consts(consts)):
                msgs.append("consts changed in place")
            names = [e.primitive.name for e in got.eqns]
            if names != [e.primitive.name for e in kept]:
                msgs.append(f"eqns {names} != {[e.primitive.name for e in kept]}")
            if [id(v) for v in got.in_binders] != [id(v) for v in j.in_binders]:
                msgs.append("in_binders changed")
            if len(got.constvars) != len(values):
                msgs.append(f"{len(got.constvars)} constvars but {len(values)} values")
            if len(values) != len(read):
                msgs.append(f"{len(values)} constants, the text asks for {len(read)}")
            for v, val in zip(got.constvars, values):
                if not isinstance(v, Var) or v.aval.shape != np.shape(val) or v.aval.dtype != np.result_type(val):
                    msgs.append(f"constvar {getattr(v, 'aval', v)} vs value {np.result_type(val)}{np.shape(val)}")
                    break
            # Only the program's own literals stay literals.
            lits_want = [[isinstance(x, Lit) for x in e.inputs] for e in kept]
            lits_got = [[isinstance(x, Lit) for x in e.inputs] for e in got.eqns]
            outs_lit = [isinstance(o, Lit) for o in got.outs] != [isinstance(o, Lit) for o in j.outs]
            if (names == [e.primitive.name for e in kept] and lits_got != lits_want) or outs_lit:
                msgs.append("a folded result became a literal")
            if tc:
                try:
                    real_tc(got)
                except Exception as e:
                    msgs.append(f"typecheck: {str(e)[:60]}")
            try:
                res = eval_jaxpr(got, values, args)
                if len(res) != len(want_vals) or not all(
                        np.shape(a) == np.shape(b) and np.result_type(a) == np.result_type(b)
                        and np.allclose(a, b) for a, b in zip(res, want_vals)):
                    msgs.append("values/dtypes differ from the unfolded program")
            except Exception as e:
                msgs.append(f"eval raised {type(e).__name__}: {str(e)[:60]}")
        except Exception as e:
            msgs.append(f"raised {type(e).__name__}: {str(e)[:100]}")
        if msgs:
            fails.append(f"{name}: " + "; ".join(msgs))
    return n, fails


if __name__ == "__main__":
    for nb in sys.argv[1:]:
        n, fails = run(nb)
        print(f"== {nb}: {n - len(fails)}/{n} programs right")
        for f in fails[:6]:
            print("   ", f)
        if len(fails) > 6:
            print(f"    ... {len(fails) - 6} more")
