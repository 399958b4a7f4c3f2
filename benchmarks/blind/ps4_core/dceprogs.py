import numpy as np, jax, jax.numpy as jnp
from jax import lax
from jax._src.interpreters import partial_eval as pe
from harness import *

NAME = {'broadcast_in_dim': 'broadcast', 'gt': 'greater', 'lt': 'less', 'pjit': 'xla_call', 'jit': 'xla_call',
        'reduce_sum': 'reduce_sum'}
def jax_dce_names(f, *args):
    cj = jax.make_jaxpr(f)(*args)
    j, _ = pe.dce_jaxpr(cj.jaxpr, [True] * len(cj.jaxpr.outvars))
    return [NAME.get(e.primitive.name, e.primitive.name) for e in j.eqns]

def bsum(x):
    return lambda_sum(x)

# (name, ours, theirs, args)
def jsum(x): return jnp.sum(x)
def progs():
    x3 = np.linspace(0.1, 1.0, 3)
    P = []
    P.append(("visible", lambda x: (cos(sin(x)), neg(x) * 2.0)[1], lambda x: (lax.cos(lax.sin(x)), lax.neg(x) * 2.0)[1], (x3,)))
    P.append(("first_live", lambda x: add(sin(x), cos(x) * 0.0 + x) if False else mul(sin(x), x), lambda x: lax.sin(x) * x, (x3,)))
    P.append(("first_live_dead_mid", lambda x: (lambda a: (cos(x), a * 3.0)[1])(sin(x)), lambda x: (lambda a: (lax.cos(x), a * 3.0)[1])(lax.sin(x)), (x3,)))
    P.append(("lit_out", lambda x: (sin(x), 1.0), lambda x: (lax.sin(x), 1.0), (x3,)))
    P.append(("dead_chain_long", lambda x: (reduce_sum(cos(sin(neg(x)))), neg(x))[1], lambda x: (jnp.sum(lax.cos(lax.sin(-x))), -x)[1], (x3,)))
    P.append(("all_dead", lambda x: (sin(x), x)[1], lambda x: (lax.sin(x), x)[1], (x3,)))
    P.append(("multi_out_ref_order", lambda x: add(cos(x), sin(x)), lambda x: lax.cos(x) + lax.sin(x), (x3,)))
    P.append(("swap_order", lambda x: (lambda a, b: add(b, a))(sin(x), cos(x)), lambda x: (lambda a, b: b + a)(lax.sin(x), lax.cos(x)), (x3,)))
    P.append(("two_outs", lambda x: (sin(x), (cos(x), neg(x))[1]), lambda x: (lax.sin(x), (lax.cos(x), -x)[1]), (x3,)))
    P.append(("bcast", lambda x: (broadcast(sin(x), (2, 3), (0,)), reduce_sum(x))[0], lambda x: (lax.broadcast_in_dim(lax.sin(x), (2, 3), (1,)), jnp.sum(x))[0], (x3,)))
    return P

def jit_progs():
    x3 = np.linspace(0.1, 1.0, 3)
    P = []
    # multi-output call, only 2nd output used
    def ours(x):
        a, b = jit(lambda y: (sin(y), cos(y)))(x)
        return neg(b)
    def theirs(x):
        a, b = jax.jit(lambda y: (lax.sin(y), lax.cos(y)))(x)
        return -b
    P.append(("jit_2nd_out", ours, theirs, (x3,)))
    def ours2(x):
        a, b = jit(lambda y: (sin(y), cos(y)))(x)
        return neg(x)
    def theirs2(x):
        a, b = jax.jit(lambda y: (lax.sin(y), lax.cos(y)))(x)
        return -x
    def ours4(x):
        return neg(jit(lambda y: (sin(y), neg(y))[1])(x))
    def theirs4(x):
        return -jax.jit(lambda y: (lax.sin(y), -y)[1])(x)
    P.append(("jit_inner_dead", ours4, theirs4, (x3,)))
    P.append(("jit_dead", ours2, theirs2, (x3,)))
    def ours3(x):
        r = cond(True, lambda y: (sin(y), neg(y)), lambda y: (cos(y), y * 2.0), x) if False else None
        p = greater(reduce_sum(x), 0.0)
        a, b = cond(p, lambda y: (sin(y), neg(y)), lambda y: (cos(y), mul(y, 2.0)), x)
        return b
    def theirs3(x):
        p = jnp.sum(x) > 0.0
        a, b = lax.cond(p, lambda y: (lax.sin(y), -y), lambda y: (lax.cos(y), y * 2.0), x)
        return b
    P.append(("cond_2nd_out", ours3, theirs3, (x3,)))
    return P
