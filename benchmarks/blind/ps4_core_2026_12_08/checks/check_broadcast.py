"""Self-check of ps4.broadcast_transpose against real JAX.  usage: check_broadcast.py NB [NB...]"""
import sys, itertools, warnings
import numpy as np
from common import load

import jax, jax.numpy as jnp
from jax import lax
jax.config.update("jax_enable_x64", True)
warnings.filterwarnings("ignore")


def gen_cases(seed=0, n=44):
    rng = np.random.default_rng(seed)
    cases = [((3,), (2, 3), (0,)), ((2,), (4, 2), (0,)), ((), (), ()), ((), (3,), (0,)),
             ((), (0,), (0,)), ((1,), (4,), ()), ((1,), (0,), ()), ((1,), (1,), ()),
             ((0,), (0,), ()), ((0,), (2, 0), (0,)), ((2, 1), (2, 5), ()), ((1, 3), (2, 4, 3), (1,)),
             ((3, 1), (3, 2, 4), (1,)), ((1, 1, 1), (2, 1, 3), ()), ((2, 1, 3), (2, 4, 1, 5, 3), (1, 2)),
             ((1, 2, 1), (3, 1, 2, 0), (0,)), ((), (2, 1, 3), (0, 1, 2)), ((2,), (2, 3), (1,)),
             ((3,), (2, 3, 4), (0, 2)), ((1,), (3, 1), (1,)), ((2, 3), (2, 3), ()),
             ((1,), (2, 3), (0,)), ((1, 2), (1, 4, 2), (1,))]
    while len(cases) < n:
        r = int(rng.integers(0, 4))
        xs = [int(rng.choice([0, 1, 1, 2, 3])) for _ in range(r)]
        outs = [int(rng.choice([1, 2, 3, 0])) if d == 1 else d for d in xs]
        k = int(rng.integers(0, 3))
        if r + k > 5 or r + k == 0:
            continue
        pos = sorted(rng.choice(r + k, size=k, replace=False).tolist())
        shape, it = [], iter(outs)
        for i in range(r + k):
            shape.append(int(rng.choice([0, 1, 2, 3])) if i in pos else next(it))
        cases.append((tuple(xs), tuple(shape), tuple(pos)))
    return cases


def kept_of(shape, axes):
    return tuple(i for i in range(len(shape)) if i not in axes)


def jax_transpose(xshape, dtype, shape, axes, ct):
    f = lambda x: lax.broadcast_in_dim(x, shape, kept_of(shape, axes))
    (r,) = jax.linear_transpose(f, jax.ShapeDtypeStruct(xshape, dtype))(jnp.asarray(ct))
    return np.asarray(r)


def run(nb):
    ns, _ = load(nb)
    rule, UP, SA = ns["broadcast_transpose"], ns["UndefinedPrimal"], ns["ShapedArray"]
    bc, rs, sin, mul, grad = ns["broadcast"], ns["reduce_sum"], ns["sin"], ns["mul"], ns["grad"]
    from jaxcourse.core.jit import jit
    rng = np.random.default_rng(1)
    fails, n = [], 0

    import os
    maxfail = int(os.environ.get("MAXFAIL", "0"))  # >0: stop after that many failures (for wrongs)

    class Enough(Exception):
        pass

    not_array = []

    def record(kind, case, dt, msg):
        line = f"{kind} x{case[0]} shape={case[1]} axes={case[2]} {np.dtype(dt).name}: {msg}"
        if "not an ndarray" in msg:
            # listed once (first case); the rest only counted
            not_array.append(line)
            if len(not_array) > 1:
                fails.append(None)
                return
        fails.append(line)
        if maxfail and len([f for f in fails if f and "not an ndarray" not in f]) >= maxfail:
            raise Enough

    def compare(got, want, strict_array=True):
        if strict_array and not isinstance(got, np.ndarray):
            return f"returned {type(got).__name__}, not an ndarray"
        if np.shape(got) != np.shape(want):
            return f"shape {np.shape(got)} != JAX {np.shape(want)}"
        if np.result_type(got) != want.dtype:
            return f"dtype {np.result_type(got)} != JAX {want.dtype}"
        if not np.allclose(np.asarray(got, np.float64), want, rtol=1e-5, atol=1e-5):
            return f"value {np.asarray(got).ravel()[:4]} != JAX {want.ravel()[:4]}"
        return None

    try:
        n = cases_loop(rule, UP, SA, bc, rs, sin, mul, grad, jit, rng, fails, record, compare, n)
    except Enough:
        fails.append(f"(stopped after {maxfail} failures, MAXFAIL)")
        return n, fails
    return second_order(grad, bc, rs, sin, fails, n)


def cases_loop(rule, UP, SA, bc, rs, sin, mul, grad, jit, rng, fails, record, compare, n):
    for case in gen_cases():
        xshape, shape, axes = case
        for dt in (np.float32, np.float64):
            ct = rng.normal(size=shape).astype(dt)
            want = jax_transpose(xshape, dt, shape, axes, ct)
            # 1. the rule called directly
            n += 1
            try:
                (got,) = rule([ct], UP(SA(xshape, dt)), shape=shape, axes=axes)
                m = compare(got, want)
            except Exception as e:
                m = f"raised {type(e).__name__}: {str(e)[:80]}"
            if m: record("direct", case, dt, m)
            # 2. the rule traced under jit (the cotangent a tracer)
            n += 1
            try:
                got = jit(lambda c: rule([c], UP(SA(xshape, dt)), shape=shape, axes=axes)[0])(ct)
                m = compare(got, want)
            except Exception as e:
                m = f"raised {type(e).__name__}: {str(e)[:80]}"
            if m: record("jit(rule)", case, dt, m)
            # 3. grad and grad(jit) through broadcast
            x = rng.normal(size=xshape).astype(dt)
            w = rng.normal(size=shape).astype(dt)
            f = lambda x: rs(mul(sin(bc(x, shape, axes)), w))
            fj = lambda x: jnp.sum(jnp.sin(lax.broadcast_in_dim(x, shape, kept_of(shape, axes))) * w)
            gwant = np.asarray(jax.grad(fj)(x))
            for name, g in (("grad", grad(f)), ("grad(jit)", grad(jit(f)))):
                n += 1
                try:
                    m = compare(g(x), gwant, strict_array=False)
                except Exception as e:
                    m = f"raised {type(e).__name__}: {str(e)[:80]}"
                if m: record(name, case, dt, m)
    return n


def second_order(grad, bc, rs, sin, fails, n):
    # 4. second derivative through broadcast, rank-0 x
    for shape, axes in (((3,), (0,)), ((2, 3), (0, 1))):
        n += 1
        f = lambda x: rs(sin(bc(x, shape, axes)))
        fj = lambda x: jnp.sum(jnp.sin(lax.broadcast_in_dim(x, shape, ())))
        try:
            got = grad(grad(f))(0.7)
            want = float(jax.grad(jax.grad(fj))(0.7))
            if not np.allclose(got, want):
                fails.append(f"grad(grad) shape={shape}: {got} != JAX {want}")
        except Exception as e:
            fails.append(f"grad(grad) shape={shape}: raised {type(e).__name__}: {str(e)[:80]}")
    return n, fails


if __name__ == "__main__":
    for nb in sys.argv[1:]:
        n, fails = run(nb)
        print(f"== {nb}: {n - len(fails)}/{n} cases right")
        fails = [f for f in fails if f]
        for f in fails[:6]:
            print("   ", f)
        if len(fails) > 6:
            print(f"    ... {len(fails) - 6} more")
