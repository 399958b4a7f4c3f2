import numpy as np
from harness import *
import harness

def as_const(f, args, k):
    """Stage f(*args) and treat the first k inputs as constvars (the visible test's trick)."""
    cj = make_jaxpr(f)(*args)
    j = cj.jaxpr
    assert not cj.consts
    return Jaxpr(j.in_binders[:k], j.in_binders[k:], j.eqns, j.outs), list(args[:k]), list(args[k:])

def hand_all_lit():
    # c = sin 2.0 ; d = mul c x
    x = Var(ShapedArray((3,), np.float64))
    c = Var(ShapedArray((), np.float64))
    d = Var(ShapedArray((3,), np.float64))
    from jaxcourse.autodidax.core import sin_p, mul_p
    j = Jaxpr([], [x], [JaxprEqn(sin_p, [Lit(2.0)], {}, [c]), JaxprEqn(mul_p, [c, x], {}, [d])], [d])
    return j, [], [np.linspace(0, 1, 3)]

def fold_progs():
    x3 = np.linspace(0.1, 1.0, 3); c3 = np.array([0.5, -1.0, 2.0])
    P = []
    P.append(("visible", *as_const(lambda c, x: sin(c) * 2.0 * x, (np.zeros(3), x3), 1)))
    P.append(("chain", *as_const(lambda c, x: mul(cos(neg(sin(c))), x), (c3, x3), 1)))
    P.append(("folded_out", *as_const(lambda c, x: (sin(c), mul(c, x)), (c3, x3), 1)))
    P.append(("const_out", *as_const(lambda c, x: (c, mul(x, 2.0)), (c3, x3), 1)))
    P.append(("unused_const", *as_const(lambda c, d, x: mul(sin(c), x), (c3, c3 + 1, x3), 2)))
    P.append(("unused_folded", *as_const(lambda c, x: (lambda u: mul(c, x))(cos(c)), (c3, x3), 1)))
    P.append(("dead_live_eqn", *as_const(lambda c, x: (lambda u: mul(sin(c), x))(cos(x)), (c3, x3), 1)))
    P.append(("two_consts_order", *as_const(lambda a, b, x: add(mul(cos(b), x), mul(sin(a), x)), (c3, c3 * 2, x3), 2)))
    P.append(("orig_and_folded", *as_const(lambda a, x: add(mul(a, x), mul(sin(a), x)), (c3, x3), 1)))
    P.append(("f32", *as_const(lambda c, x: mul(sin(c), x), (c3.astype(np.float32), x3.astype(np.float32)), 1)))
    P.append(("bcast_reduce", *as_const(lambda c, x: mul(broadcast(reduce_sum(c), (3,), (0,)), x), (c3, x3), 1)))
    P.append(("nothing_const", *as_const(lambda c, x: mul(sin(x), 2.0), (c3, x3), 1)))
    P.append(("all_lit", *hand_all_lit()))
    P.append(("scalar_const", *as_const(lambda c, x: mul(x, cos(c)), (np.float64(0.3), x3), 1)))
    return P

def jit_fold_progs():
    x3 = np.linspace(0.1, 1.0, 3); c3 = np.array([0.5, -1.0, 2.0])
    P = []
    P.append(("multi_out_call", *as_const(lambda c, x: (lambda ab: add(mul(ab[0], x), mul(ab[1], x)))(jit(lambda y: (sin(y), cos(y)))(c)), (c3, x3), 1)))
    P.append(("cond_const", *as_const(lambda c, x: mul(cond(greater(reduce_sum(c), 0.0), lambda y: sin(y), lambda y: cos(y), c), x), (c3, x3), 1)))
    P.append(("call_mixed", *as_const(lambda c, x: jit(lambda a, b: mul(sin(a), b))(c, x), (c3, x3), 1)))
    return P

def fold_check(ns, prog, verbose=True):
    name, j, consts, args = prog
    ref = harness.load()
    exp_j, exp_vals = ref['fold_constants'](j, consts)
    before = snapshot(j)
    problems = []
    try:
        got_j, got_vals = ns['fold_constants'](j, consts)
        got_vals = list(got_vals)
        if snapshot(j) != before: problems.append("input mutated")
        try: typecheck_jaxpr(got_j)
        except Exception as e: problems.append(f"typecheck: {e}")
        if names(got_j) != names(exp_j): problems.append(f"eqns {names(got_j)} != {names(exp_j)}")
        if len(got_j.constvars) != len(exp_j.constvars) or len(got_vals) != len(exp_vals):
            problems.append(f"#consts {len(got_j.constvars)}/{len(got_vals)} != {len(exp_j.constvars)}")
        if got_j.in_binders != j.in_binders: problems.append("in_binders changed")
        for v, val in zip(got_j.constvars, got_vals):
            if tuple(v.aval.shape) != np.shape(val) or v.aval.dtype != np.result_type(val):
                problems.append(f"constvar aval {v.aval} vs value {np.shape(val)} {np.result_type(val)}")
        e0 = eval_jaxpr(j, consts, args)
        e1 = eval_jaxpr(got_j, got_vals, args)
        if len(e0) != len(e1) or not all(np.shape(a) == np.shape(b) and np.allclose(a, b) for a, b in zip(e0, e1)):
            problems.append("values differ")
        if not all(np.result_type(a) == np.result_type(b) for a, b in zip(e0, e1)):
            problems.append("dtypes differ")
    except Exception as e:
        problems.append(f"raised {type(e).__name__}: {str(e)[:120]}")
    if verbose: print('  FOLD', name, 'OK' if not problems else 'DIFF ' + '; '.join(problems))
    return not problems

def fold_check_all(ns, verbose=True):
    return all([fold_check(ns, p, verbose) for p in fold_progs() + jit_fold_progs()])
