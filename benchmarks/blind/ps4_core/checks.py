import sys
sys.path.insert(0, '/work/blind_ps4/src')
import numpy as np
from harness import *
import harness
from dceprogs import progs as dce_progs, jit_progs as dce_jit_progs, jax_dce_names
from foldprogs import fold_check_all
from variants import V

C_ARR = np.array([1.0, 2.0, 3.0])
def extra_dce_progs():
    x3 = np.linspace(0.1, 1.0, 3)
    # closes over an array used only in dead code: a constvar nothing live reads
    return [("unused_constvar", lambda x: (sin(mul(x, C_ARR)), neg(x))[1],
             lambda x: (jnp.sin(x * jnp.asarray(C_ARR)), -x)[1], (x3,))]

def dce_check(ns, verbose=True):
    ok = True
    for name, o, t, args in dce_progs() + dce_jit_progs() + extra_dce_progs():
        problems = []
        try:
            cj = make_jaxpr(o)(*args)
            before = snapshot(cj.jaxpr)
            d = ns['dce_jaxpr'](cj.jaxpr)
            if snapshot(cj.jaxpr) != before: problems.append("input mutated")
            want = [n for n in jax_dce_names(t, *args) if n != 'convert_element_type']
            if names(d) != want: problems.append(f"eqns {names(d)} != jax {want}")
            if d is cj.jaxpr: problems.append("returned the argument itself")
            if d.constvars != cj.jaxpr.constvars or d.in_binders != cj.jaxpr.in_binders or d.outs != cj.jaxpr.outs:
                problems.append("constvars/in_binders/outs changed")
            typecheck_jaxpr(d)
            v0 = eval_jaxpr(cj.jaxpr, cj.consts, list(args)); v1 = eval_jaxpr(d, cj.consts, list(args))
            if not all(np.allclose(a, b) for a, b in zip(v0, v1)): problems.append("values differ")
        except Exception as e:
            problems.append(f"raised {type(e).__name__}: {str(e)[:100]}")
        ok &= not problems
        if verbose: print('  DCE', name, 'OK' if not problems else 'DIFF ' + '; '.join(problems))
    return ok

def check_variant(vid, verbose=True):
    task, bodies, desc = V[vid]
    ns = harness.load(**bodies)
    res = {'bt': bt_check(ns, BT_CASES, verbose and task == 'bt') if task == 'bt' else None,
           'dce': dce_check(ns, verbose and task == 'dce') if task == 'dce' else None,
           'fold': fold_check_all(ns, verbose and task == 'fold') if task == 'fold' else None}
    return task, res[task]

if __name__ == '__main__':
    for vid in sys.argv[1:]:
        task, ok = check_variant(vid)
        print(f"RESULT {vid} task={task} matches_reference={ok}")
