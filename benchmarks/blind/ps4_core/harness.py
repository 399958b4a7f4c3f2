"""Load task bodies into a namespace like the notebook's, plus reference checks."""
import sys, copy
sys.path.insert(0, '/work/blind_ps4/src')
import numpy as np
import jax, jax.numpy as jnp
from jax import lax
import nbformat
_allclose, _array_equal = np.allclose, np.array_equal
import correct

NB = '/work/main/assignments/ps4_core/ps4_core.ipynb'
_nb = nbformat.read(NB, 4)
SETUP = _nb.cells[1].source

def load(bt=None, dce=None, fold=None):
    ns = {}
    exec(SETUP, ns)
    for body in (bt or correct.BT, dce or correct.DCE, fold or correct.FOLD):
        exec(body, ns)
    return ns

from jaxcourse.core.jit import jit
from jaxcourse.core.control_flow import cond
from jaxcourse.autodidax.core import ShapedArray, broadcast, reduce_sum, sin, cos, mul, add, neg, greater
from jaxcourse.core.jaxprs import Jaxpr, JaxprEqn, Lit, Var, eval_jaxpr, make_jaxpr, typecheck_jaxpr

# ---------- broadcast transpose vs real JAX ----------
def bt_case(ns, in_shape, shape, axes, dtype=np.float64, use_jit=False, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(in_shape).astype(dtype)
    w = rng.standard_normal(shape).astype(dtype)
    kept = [i for i in range(len(shape)) if i not in axes]
    def f_ours(x):
        return reduce_sum(mul(sin(broadcast(x, shape, axes)), w))
    if use_jit:
        f_ours = jit(f_ours)
    g = ns['grad'](f_ours)(x)
    g_jax = jax.grad(lambda x: jnp.sum(jnp.sin(lax.broadcast_in_dim(x, shape, tuple(kept))) * w))(x)
    return np.asarray(g), np.asarray(g_jax)

def bt_check(ns, cases, verbose=True):
    ok = True
    for c in cases:
        try:
            g, gj = bt_case(ns, *c)
            good = g.shape == gj.shape and g.dtype == gj.dtype and _allclose(g, gj, rtol=1e-5, atol=1e-6)
            msg = f"shape {g.shape} vs {gj.shape} dtype {g.dtype} vs {gj.dtype} close={g.shape==gj.shape and _allclose(g,gj,rtol=1e-5, atol=1e-6)}"
        except Exception as e:
            good, msg = False, f"raised {type(e).__name__}: {str(e)[:100]}"
        ok &= good
        if verbose: print('  BT', c, 'OK' if good else 'DIFF', msg)
    return ok

BT_CASES = [
    ((3,), (2, 3), (0,)),
    ((2,), (4, 2), (0,)),
    ((3,), (3, 4), (1,)),
    ((1, 3), (2, 4, 3), (0,)),
    ((3, 1), (3, 5), ()),
    ((1,), (4,), ()),
    ((), (2, 3), (0, 1)),
    ((2, 1, 3), (5, 2, 4, 3), (0,)),
    ((1, 2), (3, 1, 2), (1,)),
    ((2, 1), (2, 6, 1, 4), (1, 3)),
    ((1,), (1, 1), (0,)),
    ((3, 1), (5, 3, 2, 4), (0, 2)),
    ((3,), (4, 3), [0]),
    ((3,), (2, 3), (0,), np.float32),
    ((1, 3), (2, 4, 3), (0,), np.float32),
    ((2, 1, 3), (5, 2, 4, 3), (0,), np.float64, True),
    ((3,), (3, 4), (1,), np.float64, True),
    ((1, 3), (2, 4, 3), (0,), np.float32, True),
]

# ---------- jaxpr comparison ----------
def names(j):
    return [e.primitive.name for e in j.eqns]

def snapshot(j):
    """A structural snapshot of a jaxpr (identity of vars and eqns), to detect mutation."""
    def s(j):
        return (tuple(map(id, j.constvars)), tuple(map(id, j.in_binders)),
                tuple((id(e), e.primitive.name, tuple(map(id, e.inputs)), tuple(map(id, e.out_binders)),
                       tuple((k, s(v) if isinstance(v, Jaxpr) else tuple(s(b) for b in v) if isinstance(v, tuple) and v and isinstance(v[0], Jaxpr) else None) for k, v in e.params.items()))
                      for e in j.eqns),
                tuple(map(id, j.outs)))
    return s(j)

def same_jaxpr(a, b):
    """Same constvars/in_binders/outs identity and same eqn objects (by identity) in order."""
    return (a.constvars == b.constvars and a.in_binders == b.in_binders and a.outs == b.outs
            and len(a.eqns) == len(b.eqns) and all(x is y or x == y for x, y in zip(a.eqns, b.eqns)))
