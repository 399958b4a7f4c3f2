"""Reproducers of ps3_pitfalls (grader side): for each check, a cell the student pastes after their
own cells to see the failed check fail (contract: autograder/grade/reproduce.py).

Each snippet builds small inputs drawn with ``public_rng(check_id)`` (never the grading inputs),
covering the edge classes of its check (zero, tiny and threshold rows, p <= 0, far logits,
float64, vmap, 0 steps, a new clip, ...); it calls the student's function under the check's
transformation, prints what it returned and what a correct solution returns (a literal computed
here with real JAX, through the check's own ``expect``), and raises when they differ.

Checks about how a value is computed check it with public means a notebook has: a Python counter
in a traced function (traces), ``jax.monitoring`` (compilations of ``Normaliser.apply``),
``jax.checking_leaks``, ``is_deleted`` and buffer pointers (donation), a counting stand-in for
``host_histogram`` (callbacks), the jaxpr (where ``jax.debug.print`` sits; a cell cannot capture
what is printed), a stand-in device whose compile, copy and compute take known sleeps (the
benchmark), and ``jax.clear_caches()`` where a second run must compile again. A notebook has one
CPU device where the grader has two: the placement snippets say so, and also ask for the
device's pinned host memory, so that a ``put_batch`` that ignores its ``device`` still fails.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable

import numpy as np

from autograder.assignments.ps3_pitfalls import checks
from autograder.grade.reproduce import literal, public_rng
from jaxcourse.versions import scan_counts

CHECKS = {check.id: check for check in checks.ASSIGNMENT.checks}
IMPORTS = ("import numpy as np", "import jax", "import jax.numpy as jnp")
CLOSE = "rtol=1e-5, atol=1e-6, strict=True"  # judge.close's tolerance; strict: shapes, dtypes
HALF = "rtol=2e-2, atol=2e-2"  # checks._judge_typed's, for float16 and bfloat16 (and float32 too)
X64 = "rtol=1e-11, atol=1e-13, strict=True"
SOFT = "rtol=2e-3, atol=1e-4, strict=True"


def reproducer(check_id: str) -> str | None:
    check = CHECKS.get(check_id)
    if check is None or check.needs_gpu or check_id not in BUILDERS:
        return None
    return BUILDERS[check_id](public_rng(check_id))


def _snippet(check_id: str, what: str, *body: str, imports: tuple[str, ...] = IMPORTS) -> str:
    gap = ("", "") if body[0].startswith(("def ", "class ")) else ("",)
    return "\n".join((f"# {check_id}: {what}", *imports, *gap, *body)) + "\n"


def _expect(check_id: str, inputs: dict):
    return CHECKS[check_id].expect(inputs)


def _uniform(rng, shape, low, high, dtype="float32") -> np.ndarray:
    """Random multiples of 1/64 (exact in binary, so the literals stay short)."""
    return (np.round(rng.uniform(low, high, shape) * 64) / 64).astype(dtype)


def _with_edges(rng, shape, edges, low, high, dtype="float32") -> np.ndarray:
    """Random values with every edge value at a random position."""
    flat = _uniform(rng, int(np.prod(shape)), low, high, dtype)
    flat[rng.permutation(flat.size)[:len(edges)]] = np.asarray(edges, dtype)
    return flat.reshape(shape)


# ps3.pure ---------------------------------------------------------------------------------------


def _pure_inputs(rng, dtype="float32") -> dict:
    x = _with_edges(rng, (2, 3), [0.0, -1.0, 2.0], -3, 3)
    # One slope of each class the text names: in (0, 1), above 1, negative, 0 and 1.
    slopes = [float(rng.choice([0.25, 0.5, 0.75])), float(rng.choice([1.5, 2.5])),
              float(rng.choice([-0.5, -2.0])), 0.0, 1.0]
    return {"x": x.tolist(), "slopes": [slopes[k] for k in rng.permutation(5)], "dtype": dtype}


def _pure_values(check_id: str, what: str, make: str, dtypes=("float16",)) -> Callable:
    def build(rng) -> str:
        # float32 x, and float16 x (the result keeps x's dtype) where the check draws it.
        cases = [_pure_inputs(rng), *(_pure_inputs(rng, dtype) for dtype in dtypes)]
        wants = [_expect(check_id, inputs) for inputs in cases]
        tests = [literal(np.asarray(inputs["x"], inputs["dtype"])) for inputs in cases]
        return _snippet(
            check_id, what,
            make,
            f"for x_test, slopes, want in zip([{', '.join(tests)}],",
            f"                                {[inputs['slopes'] for inputs in cases]},",
            f"                                {literal(wants)}):",
            "    got = [np.asarray(f(x_test, slope)) for slope in slopes]",
            '    print("your code:", got)',
            '    print("a correct solution:", want)',
            "    for got_one, want_one in zip(got, want, strict=True):",
            f"        np.testing.assert_allclose(got_one, want_one, {HALF}, strict=True)")
    return build


def _pure_compiles(rng) -> str:
    inputs = _pure_inputs(rng)
    return _snippet(
        "ps3.pure.compiles", "jax.jit(leaky_relu) traces once for slopes of one type",
        f"x_test = {literal(np.asarray(inputs['x'], np.float32))}",
        "traces = []",
        "",
        "",
        "def counted(x, s):",
        "    traces.append(1)  # runs while jit traces, never when it reuses a compiled version",
        "    return leaky_relu(x, s)",
        "",
        "",
        "counted_jit = jax.jit(counted)",
        "got = []",
        f"for slope in {inputs['slopes']}:",
        "    got.append(np.asarray(counted_jit(x_test, slope)))",
        'print("your code: traced", len(traces), "times; values", got)',
        f"want = {literal(_expect('ps3.pure.compiles', inputs))}",
        'print("a correct solution: traced 1 time; values", want)',
        'assert len(traces) == 1, "jit traced leaky_relu once per slope: the slope must be a '
        'traced argument (not static, not converted with float)"',
        f"np.testing.assert_allclose(got, want, {CLOSE})")


def _pure_leaks(rng) -> str:
    inputs = _pure_inputs(rng)
    return _snippet(
        "ps3.pure.leaks", "jax.jit(leaky_relu) leaves no tracer in a global",
        # A cell cannot list its globals (the cell policy refuses globals()): this one looks
        # in the given cell's inputs_seen, where the given code kept its tracers.
        f"x_test = {literal(np.asarray(inputs['x'], np.float32))}",
        "kept = len(inputs_seen)",
        f"got = jax.jit(lambda x, s: leaky_relu(x, s))(x_test, {inputs['slopes'][0]})",
        "jax.block_until_ready(got)",
        "left = [v for v in inputs_seen[kept:] if isinstance(v, jax.core.Tracer)]",
        'print("your code:", got, "and", len(left), "new tracers kept in inputs_seen")',
        'assert not left, "a tracer escaped the jitted function into a global"',
        f"want = {literal(_expect('ps3.pure.jit', inputs)[0])}",
        'print("a correct solution:", want)',
        f"np.testing.assert_allclose(got, want, {CLOSE})")


# ps3.loop ---------------------------------------------------------------------------------------

# Every ps3.loop check asks first that the jaxpr does not grow with steps (nested jaxprs counted):
# an unrolled loop's values are the given code's.
_NOT_UNROLLED = (
    "def count_equations(jaxpr):  # its equations and those of the jaxprs inside (loop bodies)",
    "    return len(jaxpr.eqns) + sum(count_equations(sub) for sub in subjaxprs(jaxpr))",
    "",
    "",
    "sizes = [count_equations(jax.make_jaxpr(integrate, static_argnums=2)(x_test, v_test, n, "
    "0.1).jaxpr)",
    "         for n in (5, 200)]",
    'print("your code: equations for 5 and for 200 steps:", sizes)',
    'assert sizes[1] <= sizes[0], "the jaxpr grows with steps: Python still unrolls the loop '
    'while tracing (use lax.fori_loop, lax.scan or lax.while_loop)"',
)
_LOOP_IMPORTS = (*IMPORTS, "from jax.extend.core import subjaxprs")


def _loop_values(rng) -> str:
    inputs = {"x": _uniform(rng, (2, 2), -1, 1).tolist(),
              "v": _uniform(rng, (2, 2), -1, 1).tolist(),
              "xb": _uniform(rng, (3,), -1, 1).tolist(), "vb": _uniform(rng, (3,), -1, 1).tolist(),
              "steps": 7, "dt": 0.1}
    want = _expect("ps3.loop.values", inputs)
    return _snippet(
        "ps3.loop.values", "jit(integrate) and jit(vmap(integrate)) match integrate_unrolled",
        f"x_test, v_test = {literal(np.float32(inputs['x']))}, {literal(np.float32(inputs['v']))}",
        f"xb, vb = {literal(np.float32(inputs['xb']))}, {literal(np.float32(inputs['vb']))}",
        "direct = jax.jit(integrate, static_argnums=2)(x_test, v_test, 7, 0.1)",
        "batched = jax.jit(jax.vmap(lambda a, b: integrate(a, b, 7, 0.1)))(xb, vb)",
        'print("your code:", direct, batched)',
        f"want_direct = {literal(want['direct'])}",
        f"want_batched = {literal(want['batched'])}",
        'print("a correct solution:", want_direct, want_batched)',
        f"np.testing.assert_allclose(direct, want_direct, {CLOSE})",
        f"np.testing.assert_allclose(batched, want_batched, {CLOSE})",
        *_NOT_UNROLLED, imports=_LOOP_IMPORTS)


def _loop_zero(rng) -> str:
    inputs = {"x": _uniform(rng, (3,), -1, 1).tolist(), "v": _uniform(rng, (3,), -1, 1).tolist(),
              "dt": 0.2}
    return _snippet(
        "ps3.loop.zero", "integrate with 0 steps (x and v unchanged) and with 1 step",
        f"x_test, v_test = {literal(np.float32(inputs['x']))}, {literal(np.float32(inputs['v']))}",
        "integrate_jit = jax.jit(integrate, static_argnums=2)",
        "got = [integrate_jit(x_test, v_test, 0, 0.2), integrate_jit(x_test, v_test, 1, 0.2)]",
        'print("your code:", got)',
        f"want = {literal(_expect('ps3.loop.zero', inputs))}",
        'print("a correct solution:", want)',
        f"np.testing.assert_allclose(got, want, {CLOSE})",
        *_NOT_UNROLLED, imports=_LOOP_IMPORTS)


def _loop_size(rng) -> str:
    x, v = _uniform(rng, (2,), -1, 1), _uniform(rng, (2,), -1, 1)
    expected = _expect("ps3.loop.size", {"x": x.tolist(), "v": v.tolist(), "step_counts": [5, 200],
                                          "dt": 0.1})
    limit = expected["max"]
    return _snippet(
        "ps3.loop.size", "the jaxpr of integrate does not grow with the number of steps",
        f"x_test, v_test = {literal(x)}, {literal(v)}",
        "",
        "",
        *_NOT_UNROLLED,
        f'print("a correct solution: the same number for both, at most {limit}")',
        f'assert sizes[1] <= {limit}, "more equations than a loop body needs"',
        "got = jax.jit(integrate, static_argnums=2)(x_test, v_test, 5, 0.1)",
        f"want = {literal(list(expected['values']))}",
        'print("your code, 5 steps:", got, "a correct solution:", want)',
        "for got_part, want_part in zip(got, want, strict=True):",
        f"    np.testing.assert_allclose(got_part, want_part, {CLOSE})",
        imports=_LOOP_IMPORTS)


def _loop_x64(rng) -> str:
    inputs = {"x": _uniform(rng, (2, 3), -1, 1, "float64").tolist(),
              "v": _uniform(rng, (2, 3), -1, 1, "float64").tolist(), "steps": 9, "dt": 0.1}
    return _snippet(
        "ps3.loop.x64", "integrate on float64 inputs computes in float64",
        "with jax.enable_x64(True):  # for this block only",
        f"    x_test = {literal(np.float64(inputs['x']))}",
        f"    v_test = {literal(np.float64(inputs['v']))}",
        "    got = [np.asarray(a) for a in jax.jit(integrate, static_argnums=2)(x_test, v_test, "
        "9, 0.1)]",
        'print("your code:", got)',
        f"want = {literal(list(_expect('ps3.loop.x64', inputs)))}",
        'print("a correct solution:", want)',
        f"np.testing.assert_allclose(got, want, {X64})",
        *_NOT_UNROLLED, imports=_LOOP_IMPORTS)


# ps3.method -------------------------------------------------------------------------------------


def _method_arrays(rng, n: int, count: int = 2) -> tuple[list, list]:
    return ([_uniform(rng, (n,), -1, 1) for _ in range(count)],
            [_uniform(rng, (n,), 0.5, 2.0) for _ in range(count)])


def _clips(rng) -> tuple[float, float]:
    c1, c2 = (float(c) for c in rng.choice([0.5, 0.75, 1.0, 1.5], 2, replace=False))
    return c1, c2


def _method_mutation(rng) -> str:
    n = 4
    x = _uniform(rng, (2, n), -4, 4)
    means, scales = _method_arrays(rng, n)
    c1, c2 = _clips(rng)
    changes = [(1, None), (0, c1), (1, c1), (0, c2), (1, None), (0, 0.0)]  # 0.0 clips to 0
    specs = [[means[k], scales[k], clip] for k, clip in [(0, None), *changes]]
    return _snippet(
        "ps3.method.mutation", "Normaliser.apply after every field of the object changed",
        f"x_test = {literal(x)}",
        f"means = {literal(means)}",
        f"scales = {literal(scales)}",
        "norm_test = Normaliser(jnp.asarray(means[0]), jnp.asarray(scales[0]), None)",
        "got = [norm_test.apply(x_test)]",
        f"for k, clip in {changes}:",
        "    norm_test.mean, norm_test.scale = jnp.asarray(means[k]), jnp.asarray(scales[k])",
        "    norm_test.clip = clip",
        "    got.append(norm_test.apply(x_test))",
        'print("your code:", got)',
        f"want = {literal(_expect('ps3.method.mutation', {'x': x.tolist(), 'specs': specs}))}",
        'print("a correct solution:", want)',
        f"np.testing.assert_allclose(got, want, {CLOSE})")


def _method_compiles(rng) -> str:
    n = 3
    x = _uniform(rng, (1, 2, n), -4, 4)  # a shape no other method snippet uses
    means, scales = _method_arrays(rng, n)
    c1, c2 = _clips(rng)
    calls = [(0, None), (1, None), (0, c1), (1, c1), (0, c2), (1, None), (1, 0.0)]
    expected = _expect("ps3.method.compiles", {
        "x": x[0].tolist(), "specs": [[means[k], scales[k], clip] for k, clip in calls]})
    return _snippet(
        "ps3.method.compiles", "apply is jitted; new arrays reuse its compiled code, a new clip "
        "compiles a new version",
        'assert hasattr(Normaliser.apply, "lower"), "Normaliser.apply is not jitted (decorate it '
        'with @jax.jit)"',
        f"x_test = {literal(x)}",
        f"means = {literal(means)}",
        f"scales = {literal(scales)}",
        "compiles = []",
        "",
        "",
        "def count(event, seconds, **info):  # JAX calls this after each step of each compilation",
        '    function = info.get("fun_name", "")',
        '    if event.endswith("backend_compile_duration") and "apply" in function:',
        "        compiles.append(1)",
        "",
        "",
        "jax.clear_caches()  # so that the first call compiles, however often this cell runs",
        "jax.monitoring.register_event_duration_secs_listener(count)",
        "added, got = [], []",
        "try:",
        f"    for k, clip in {calls}:",
        "        before = len(compiles)",
        "        got.append(Normaliser(jnp.asarray(means[k]), jnp.asarray(scales[k]), clip)"
        ".apply(x_test))",
        "        added.append(len(compiles) - before)",
        "finally:",
        "    jax.monitoring.unregister_event_duration_listener(count)",
        'print("your code: compilations per call", added, "values", got)',
        f"want = {literal(expected['values'])}",
        f'print("a correct solution: compilations per call", {expected["added"]}, "values", '
        "want)",
        f'assert added == {expected["added"]}, "new mean and scale arrays must reuse the '
        'compiled apply (children: dynamic) and a new clip must compile a new one (auxiliary '
        'data: static)"',
        f"np.testing.assert_allclose(got, want, {CLOSE})")


def _method_pytree(rng) -> str:
    n = 5
    x = _uniform(rng, (2, n), -4, 4)
    means, scales = _method_arrays(rng, n)
    calls = [(0, None), (1, _clips(rng)[0]), (0, 0.0)]
    expected = _expect("ps3.method.pytree", {
        "x": x.tolist(), "specs": [[means[k], scales[k], c] for k, c in calls],
        "pytree_specs": [0, 1, 2]})
    return _snippet(
        "ps3.method.pytree", "jax.tree.leaves and jax.tree.map on a Normaliser",
        f"x_test = {literal(x)}",
        f"means = {literal(means)}",
        f"scales = {literal(scales)}",
        "leaves, described, got = [], [], []",
        f"for k, clip in {calls}:",
        "    norm_test = Normaliser(jnp.asarray(means[k]), jnp.asarray(scales[k]), clip)",
        "    leaves.append([np.asarray(a) for a in jax.tree.leaves(norm_test)])",
        "    # a map whose function returns no array: unflatten must take what it gets",
        "    shapes = jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype), norm_test)",
        "    described.append([[list(a.shape), str(a.dtype)] for a in jax.tree.leaves(shapes)])",
        "    got.append(jax.tree.map(lambda a: a * 2.0, norm_test).apply(x_test))",
        'print("your code: leaves", leaves, "mapped to shapes", described)',
        f"want_leaves = {literal(expected['leaves'])}",
        'print("a correct solution: leaves", want_leaves, "mapped to shapes", '
        f"{expected['described']})",
        "for got_leaves, want_one in zip(leaves, want_leaves, strict=True):",
        f"    np.testing.assert_allclose(got_leaves, want_one, {CLOSE})  # mean, then scale",
        f"assert described == {expected['described']}, \"jax.tree.map to non-arrays must give a "
        'Normaliser of those results"',
        'print("your code: values of the doubled Normalisers", got)',
        f"want = {literal(expected['values'])}",
        'print("a correct solution:", want)',
        f"np.testing.assert_allclose(got, want, {CLOSE})")


def _method_vmap(rng) -> str:
    n, batch = 3, 2
    inputs = {"batched": [_uniform(rng, (batch, n), -1, 1).tolist(),
                          _uniform(rng, (batch, n), 0.5, 2.0).tolist(), _clips(rng)[0]],
              "xb": _uniform(rng, (batch, n), -4, 4).tolist()}
    mean, scale, clip = inputs["batched"]
    return _snippet(
        "ps3.method.vmap", "jit(vmap) over a batch of Normalisers (batched mean and scale)",
        f"batch_norm = Normaliser(jnp.asarray({literal(np.float32(mean))}),",
        f"                        jnp.asarray({literal(np.float32(scale))}), {clip})",
        f"xb = {literal(np.float32(inputs['xb']))}",
        "got = jax.jit(jax.vmap(lambda n, x: n.apply(x)))(batch_norm, xb)",
        'print("your code:", got)',
        f"want = {literal(_expect('ps3.method.vmap', inputs))}",
        'print("a correct solution:", want)',
        f"np.testing.assert_allclose(got, want, {CLOSE})")


# ps3.placement ----------------------------------------------------------------------------------

_PLACEMENT_CHECK = (
    "device = jax.devices()[-1]",
    "targets = [(device, device.default_memory().kind)]",
    "if len(jax.devices()) == 1:",
    '    print("This kernel has one device; the grader has two and asks for the second",',
    '          "(jax_num_cpu_devices set to 2 before JAX starts does the same). So that a",',
    '          "put_batch that ignores its device argument fails here too, this cell also asks",',
    '          "for the pinned host memory of the device: a sharding, which jax.device_put",',
    '          "takes like a device.")',
    "    targets.append((jax.sharding.make_single_device_sharding(device,",
    '                                                            memory_kind="pinned_host"),',
    '                    "pinned_host"))',
    "",
    "",
    "def placement(leaf):  # (on the device?, memory kind, committed?) of a JAX array",
    "    if not isinstance(leaf, jax.Array):",
    '        return "not a JAX array"',
    "    return (leaf.devices() == {device}, leaf.sharding.memory_kind, leaf.committed)",
    "",
    "",
    "for target, kind in targets:",
    "    placed = put_batch(batch, target)",
    '    print("your code:", jax.tree.map(placement, placed))',
    "    want = jax.tree.map(lambda leaf: (True, kind, True), batch)",
    '    print("a correct solution:", want)',
    ('    assert jax.tree.map(placement, placed) == want, "every leaf must be a JAX array on '
     'the requested device and memory, committed, in a pytree shaped like the batch"'),
    "    for got_leaf, want_leaf in zip(jax.tree.leaves(placed), jax.tree.leaves(batch)):",
    f"        np.testing.assert_allclose(got_leaf, want_leaf, {CLOSE})",
)


def _placement_leaves(rng) -> list[np.ndarray]:
    return [_uniform(rng, shape, -5, 5) for shape in ((2, 2), (3,), (), (1, 2))]


def _placement_host(rng) -> str:
    images, label0, label1, w = (literal(a) for a in _placement_leaves(rng))
    return _snippet(
        "ps3.placement.host", "put_batch(a pytree of NumPy arrays, device) commits every leaf",
        f"batch = {{\"images\": {images}, \"labels\": [{label0}, {label1}],",
        f'         "mask": None, "empty": {{}}, "nested": {{"w": {w}}}}}',
        *_PLACEMENT_CHECK)


def _placement_moved(rng) -> str:
    images, label0, label1, w = (literal(a) for a in _placement_leaves(rng))
    return _snippet(
        "ps3.placement.moved", "put_batch(JAX arrays, committed to the first device or "
        "uncommitted, device) moves them all",
        "first_device = jax.devices()[0]",
        f"batch = {{\"images\": jax.device_put({images}, first_device),",
        f'         "labels": [jnp.asarray({label0}), jax.device_put({label1}, first_device)],',
        f'         "mask": None, "empty": {{}}, "nested": {{"w": jnp.asarray({w})}}}}',
        *_PLACEMENT_CHECK)


# ps3.divide -------------------------------------------------------------------------------------


def _divide_inputs(rng) -> dict:
    n = 3
    v = _uniform(rng, (2, 3, n), -2, 2)
    rows = v.reshape(-1, n)
    edges = [np.zeros(n), np.eye(n)[0] * 2.0**-10,  # sum of squares exactly TOL: zeros
             np.eye(n)[1] * 2.0**-9, np.full(n, 1e-20)]
    for row, edge in zip(rng.permutation(len(rows))[:len(edges)], edges):
        rows[row] = edge
    return {"v": rows.reshape(v.shape).tolist(), "w": _uniform(rng, v.shape, -3, 3).tolist()}


def _divide(check_id: str, what: str, call: str) -> Callable:
    def build(rng) -> str:
        inputs = _divide_inputs(rng)
        return _snippet(
            check_id, what,
            f"v_test = {literal(np.float32(inputs['v']))}  # zero, tiny and threshold rows",
            *([f"w = {literal(np.float32(inputs['w']))}"] if "grad" in call else []),
            f"got = {call}",
            'print("your code:", got)',
            f"want = {literal(_expect(check_id, inputs))}",
            'print("a correct solution:", want)',
            f"np.testing.assert_allclose(got, want, {CLOSE})")
    return build


# ps3.safe_log -----------------------------------------------------------------------------------


def _plogp_inputs(rng, dtype="float32") -> np.ndarray:
    tiny = [1e-30, 1e-20] if dtype == "float32" else [1e-300, 1e-200]
    return _with_edges(rng, (3, 3), [0.0, -1.0, -0.0, *tiny, 1.0], -0.5, 2.0, dtype)


def _safe_log(check_id: str, what: str, call: str) -> Callable:
    def build(rng) -> str:
        p = _plogp_inputs(rng)
        if "vmap" in call:
            p = p.reshape(-1)
        return _snippet(
            check_id, what,
            f"p_test = {literal(p)}  # p <= 0, -0.0 and tiny p included",
            f"got = {call}",
            'print("your code:", got)',
            f"want = {literal(_expect(check_id, {'p': p.tolist()}))}",
            'print("a correct solution:", want)',
            f"np.testing.assert_allclose(got, want, {CLOSE})")
    return build


def _safe_log_x64(rng) -> str:
    p = _plogp_inputs(rng, "float64")
    want = _expect("ps3.safe_log.x64", {"p": p.tolist()})
    return _snippet(
        "ps3.safe_log.x64", "plogp and its gradient on float64 p compute in float64",
        "with jax.enable_x64(True):  # for this block only",
        f"    p_test = {literal(p)}",
        "    values = np.asarray(jax.jit(plogp)(p_test))",
        "    grads = np.asarray(jax.jit(jax.vmap(jax.grad(plogp)))(p_test.ravel()))",
        'print("your code:", values, grads)',
        f"want_values = {literal(want['values'])}",
        f"want_grads = {literal(want['grads'])}",
        'print("a correct solution:", want_values, want_grads)',
        f"np.testing.assert_allclose(values, want_values, {X64})",
        f"np.testing.assert_allclose(grads, want_grads, {X64})")


# ps3.log_or_y -----------------------------------------------------------------------------------


def _log_or_y(check_id: str, what: str, *calls: str) -> Callable:
    def build(rng) -> str:
        inputs = {"x": _with_edges(rng, (2, 3), [0.0, -1.0, 1e-14, 1.0, -0.0], -1, 3).tolist(),
                  "fallback": _uniform(rng, (3,), -5, 5).tolist(),
                  "w": _uniform(rng, (2, 3), -3, 3).tolist(), "vmap": True}
        return _snippet(
            check_id, what,
            f"x_test = {literal(np.float32(inputs['x']))}  # x <= 0, -0.0 and tiny x included",
            f"fallback = {literal(np.float32(inputs['fallback']))}",
            *([f"w = {literal(np.float32(inputs['w']))}"] if "grad" in check_id else []),
            *calls,
            'print("your code:", got)',
            f"want = {literal(_expect(check_id, inputs))}",
            'print("a correct solution:", want)',
            "for got_part, want_part in zip(got, want, strict=True):",
            f"    np.testing.assert_allclose(got_part, want_part, {CLOSE})")
    return build


# ps3.smooth_step --------------------------------------------------------------------------------


def _want_soft(check_id: str, inputs: dict):
    want = _expect(check_id, inputs)
    return (want["logits"], want["temperature"]) if isinstance(want, dict) else want


def _soft_grad_tol(check_id: str, inputs: dict) -> str:
    # The temperature's gradient sums large terms that cancel (checks._judge_soft_grad): the
    # grader's absolute tolerance for it, which still tells a zero or wrong gradient apart.
    atol = _expect(check_id, inputs)["atol"] if "grad" in check_id else 1e-4
    return f"rtol=2e-3, atol={atol:.3g}, strict=True"


def _smooth_step(check_id: str, what: str, call: str) -> Callable:
    def build(rng) -> str:
        temperature = float(np.float32(rng.uniform(0.1, 2.0)))
        logits = _uniform(rng, (2, 2, 4), -3, 3)
        rows = logits.reshape(-1, 4)  # rows hundreds of temperatures from zero
        rows[0] = rows[0] * 0.1 + 800.0 * temperature
        rows[-1] = rows[-1] * 0.1 - 800.0 * temperature
        inputs = {"logits": logits.tolist(), "temperature": temperature,
                  "w": _uniform(rng, logits.shape, -3, 3).tolist()}
        return _snippet(
            check_id, what,
            f"logits = {literal(logits)}  # rows far from zero included",
            f"temperature = {temperature!r}",
            *([f"w = {literal(np.float32(inputs['w']))}"] if "grad" in call else []),
            f"got = {call}",
            'print("your code:", got)',
            f"want = {literal(_want_soft(check_id, inputs))}",
            'print("a correct solution:", want)',
            *(("for got_part, want_part in zip(got, want, strict=True):",
               ("    np.testing.assert_allclose(got_part, want_part, "
                f"{_soft_grad_tol(check_id, inputs)})"))
              if "grad" in call else (f"np.testing.assert_allclose(got, want, {SOFT})",)))
    return build


# ps3.benchmark ----------------------------------------------------------------------------------


def _benchmark(rng) -> str:
    compile_s = float(rng.choice([0.6, 0.7, 0.8]))
    # Calls of different lengths (the mean is not the median), the third steady one the longest.
    compute_s = [0.3, 0.2, 0.2, 0.8]
    expected = _expect("ps3.benchmark.simulated", {
        "compile_s": compile_s, "compute_s": compute_s, "dispatch_s": 0.0, "repeats": 3})
    first, steady = round(expected["first"], 6), round(expected["steady"], 6)
    return _snippet(
        "ps3.benchmark.simulated", "benchmark on a stand-in for a jitted function whose "
        "compilation, copies of NumPy arguments and computation take known times",
        "class Pending:",
        '    """A result that is ready at a given time, as a JAX array computed asynchronously."""',
        "",
        "    def __init__(self, ready_at):",
        "        self.ready_at = ready_at",
        "",
        "    def block_until_ready(self):",
        "        time.sleep(max(0.0, self.ready_at - time.perf_counter()))",
        "        return self",
        "",
        "",
        "class StandIn:",
        '    """Compiles on its first call, copies NumPy arguments to the device (JAX arrays are',
        '    already there), then queues its computation (the k-th call takes compute_s[k]) and',
        '    returns a pair of pending results: leaf slow_leaf ready when the computation ends,',
        '    the other a quarter of the way in."""',
        "",
        "    def __init__(self, compile_s, copy_s, compute_s, slow_leaf):",
        "        self.compile_s, self.copy_s, self.compute_s = compile_s, copy_s, compute_s",
        "        self.slow_leaf, self.calls, self.busy_until = slow_leaf, 0, 0.0",
        "",
        "    def __call__(self, *args):",
        "        self.calls += 1",
        "        time.sleep(self.compile_s if self.calls == 1 else 0.0)",
        "        time.sleep(self.copy_s * sum(isinstance(a, np.ndarray) for a in args))",
        "        compute = self.compute_s[(self.calls - 1) % len(self.compute_s)]",
        "        begins = max(time.perf_counter(), self.busy_until)",
        "        self.busy_until = begins + compute",
        "        ready = [begins + compute / 4, begins + compute / 4]",
        "        ready[self.slow_leaf] = self.busy_until",
        "        return tuple(Pending(at) for at in ready)",
        "",
        "",
        "for slow_leaf in (0, 1):",
        f"    f = StandIn({compile_s}, 0.3, {compute_s}, slow_leaf)",
        "    first, steady = benchmark(f, np.ones((3, 3), np.float32), np.ones(3, np.float32), "
        "repeats=3)",
        '    print("slow leaf", slow_leaf, "your code: first", first, "steady", steady)',
        f'    print("a correct solution: first {first}, steady {steady} (the mean; give or take '
        'the machine\'s delays)")',
        f"    np.testing.assert_allclose([first, steady], [{first}, {steady}], rtol=0.2)",
        '    print("your code called f", f.calls, "times, a correct solution 4 (1 + repeats)")',
        '    assert f.calls == 4, "call f once, then repeats more times"',
        "g = StandIn(0.0, 0.0, [0.0], 1)",
        "benchmark(g, np.ones(3, np.float32))  # repeats left to its default",
        'print("with the default repeats: your code called f", g.calls, "times, a correct '
        'solution 6")',
        'assert g.calls == 6, "repeats defaults to 5"',
        "h = StandIn(0.0, 0.0, [0.0], 1)",
        "benchmark(h, np.ones(3, np.float32), repeats=7)  # more than the default",
        'print("with repeats=7: your code called f", h.calls, "times, a correct solution 8")',
        'assert h.calls == 8, "call f once, then repeats more times, whatever repeats is"',
        imports=("import time", "import numpy as np", "import jax"))


# ps3.donate -------------------------------------------------------------------------------------


def _donate(check_id: str, selective: bool) -> Callable:
    def build(rng) -> str:
        rows = 2 if selective else 3  # own shapes: JAX warns of unusable donations when lowering

        def tree() -> dict:
            return {"w": _uniform(rng, (rows, 2), -3, 3), "b": _uniform(rng, (2,), -3, 3),
                    "layers": [_uniform(rng, (), -3, 3), _uniform(rng, (2, 1, 2), -3, 3)],
                    "frozen": None}

        def leaf_dict(t: dict) -> dict:  # the checks' format: {"array": values} leaves
            return {"w": {"array": t["w"].tolist()}, "b": {"array": t["b"].tolist()},
                    "layers": [{"array": a.tolist()} for a in t["layers"]], "frozen": None}

        trees = {name: tree() for name in ("params", "velocity", "grads")}
        lr, beta = float(rng.choice([0.1, 0.05, 0.25])), float(rng.choice([0.9, 0.5]))  # never equal
        expected = _expect(check_id, {**{k: leaf_dict(t) for k, t in trees.items()},
                                      "lr": lr, "beta": beta})

        def source(t: dict) -> str:
            layers = ", ".join(f"jnp.asarray({literal(a)})" for a in t["layers"])
            return (f'{{"w": jnp.asarray({literal(t["w"])}), "b": jnp.asarray({literal(t["b"])}),'
                    f'\n    "layers": [{layers}], "frozen": None}}')

        call = f"momentum_step(params, velocity, grads, {lr}, {beta})"
        body = [f"{name} = {source(t)}" for name, t in trees.items()]
        body += ["donors = {\"params\": params, \"velocity\": velocity}",
                 "pointers = {name: [a.unsafe_buffer_pointer() for a in jax.tree.leaves(tree)]",
                 "            for name, tree in donors.items()}"]
        if selective:
            body += ["jax.clear_caches()  # JAX warns of unusable donations when it compiles",
                     "with np.testing.assert_no_warnings():  # such as grads donated too",
                     f"    new_params, new_velocity = {call}"]
        else:
            body += [f"new_params, new_velocity = {call}"]
        body += [
            "new = jax.tree.leaves((new_params, new_velocity))",
            "outputs = {a.unsafe_buffer_pointer() for a in new}",
            "donated = {name: ([a.is_deleted() for a in jax.tree.leaves(tree)],",
            "                  [p in outputs for p in pointers[name]])",
            "           for name, tree in donors.items()}",
            "got = [np.asarray(a) for a in new]",
            'print("your code: new params and velocity", got)',
            'print("  (deleted?, reused by an output?) per leaf", donated)',
            *(['print("  grads deleted?", [a.is_deleted() for a in jax.tree.leaves(grads)])']
              if selective else []),
            f"want = {literal([*expected['params'], *expected['velocity']])}",
            'print("a correct solution: new params and velocity", want)',
            'print("  params and velocity all deleted, some of their buffers reused by the '
            'outputs' + (', grads kept")' if selective else '")'),
            "for got_leaf, want_leaf in zip(got, want, strict=True):",
            f"    np.testing.assert_allclose(got_leaf, want_leaf, {CLOSE})",
            "for name, (deleted, reused) in donated.items():",
            ('    assert all(deleted) and any(reused), f"the {name} buffers were not donated: '
             'XLA did not reuse them for the outputs (deleting them by hand is not donation)"'),
        ]
        if selective:
            body += [('assert not any(a.is_deleted() for a in jax.tree.leaves(grads)), "grads '
                      'was donated too; the caller still needs it"')]
        lr2, beta2 = float(rng.choice([0.15, 0.2])), float(rng.choice([0.8, 0.6]))
        body += [
            "# lr and beta traced: new values compile nothing new, as Python floats or 0-d arrays",
            "compiles = []",
            "",
            "",
            "def count(event, seconds, **info):  # JAX calls this after each step of each "
            "compilation",
            '    if event.endswith("backend_compile_duration") and "momentum" in '
            'info.get("fun_name", ""):',
            "        compiles.append(1)",
            "",
            "",
            "jax.clear_caches()",
            "jax.monitoring.register_event_duration_secs_listener(count)",
            "try:",
            f"    for lr_next, beta_next in [({lr}, {beta}), ({lr2}, {beta2}),",
            f"                               (jnp.float32({lr}), jnp.float32({beta})),",
            f"                               (jnp.float32({lr2}), jnp.float32({beta2}))]:",
            "        new_params, new_velocity = momentum_step(new_params, new_velocity, grads, "
            "lr_next, beta_next)",
            "finally:",
            "    jax.monitoring.unregister_event_duration_listener(count)",
            'print("your code: compilations for two float and two array values of lr and beta:", '
            "len(compiles))",
            'print("a correct solution: 2 (one for floats, one for arrays)")',
            'assert len(compiles) == 2, "lr and beta must be traced arguments, not static ones"',
        ]
        what = ("params and velocity donated, grads kept" if selective
                else "params and velocity donated to XLA, which reuses their buffers")
        return _snippet(check_id, what, *body)
    return build


# ps3.debug_print --------------------------------------------------------------------------------

def _without_annotations(function: Callable) -> tuple[str, ...]:
    """A helper's source as lines a notebook can run: no annotations (their names are not
    imported there), no comments."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    (definition,) = tree.body
    definition.returns = None
    for arg in definition.args.args:
        arg.annotation = None
    return tuple(ast.unparse(tree).splitlines())


# scan's parameters differ between JAX releases (jaxcourse.versions.scan_counts): the snippet
# carries the helper that reads both, so it runs on the student's JAX, whichever it is.
_PRINTS_IN = (
    *_without_annotations(scan_counts),
    "",
    "",
    "def carried(eqn, sub):",
    '    """The inputs of a loop body that the loop carries from one iteration to the next."""',
    '    if eqn.primitive.name == "scan":  # consts, then the carry, then the scanned slices',
    "        consts, carry = scan_counts(eqn.params)",
    "        return sub.invars[consts:consts + carry]",
    '    if eqn.primitive.name == "while":  # consts, then the carry',
    '        return sub.invars[eqn.params["body_nconsts"]:]',
    "    return None",
    "",
    "",
    "def prints_in(jaxpr, carry=()):",
    '    """(operands, values carried by the loop around it) of each print in the jaxpr."""',
    "    found = []",
    "    for eqn in jaxpr.eqns:",
    '        if eqn.primitive.name in ("debug_print", "debug_callback"):',
    "            found.append((eqn.invars, carry))",
    "        for sub in jaxprs_in_params(eqn.params):",
    "            inner = carried(eqn, sub)",
    "            found += prints_in(sub, carry if inner is None else inner)",
    "    return found",
    "",
    "",
    "def shows_carried_x(operands, carry):  # the print shows a float the loop carries",
    "    return any(v in carry and jnp.issubdtype(v.aval.dtype, jnp.floating) for v in operands)",
    "",
    "",
)


def _newton(values, steps) -> tuple[np.ndarray, np.ndarray]:
    """x at the start of each iteration (steps, batch), and the results (batch,)."""
    expected = _expect("ps3.debug_print.vmap", {"a": values, "steps": steps})
    return np.asarray(expected["iterates"], np.float32), np.asarray(expected["value"])


def _debug_print_runtime(rng) -> str:
    a, steps = float(rng.choice(np.arange(2, 60))), int(rng.integers(3, 6))
    iterates, results = _newton([a], steps)
    return _snippet(
        "ps3.debug_print.runtime", "jit(newton_sqrt) prints x at the start of every iteration, "
        "on every call",
        *_PRINTS_IN,
        "newton_jit = jax.jit(newton_sqrt, static_argnums=1)",
        "for call in (1, 2):",
        '    print(f"call {call}: your code prints")',
        f"    got = newton_jit(np.float32({a}), {steps})",
        "    jax.effects_barrier()",
        'print("your code returned", got)',
        f'print("a correct solution prints, on every call, one line per iteration showing", '
        f"{literal(iterates[:, 0])}, \"and returns\", {literal(results[0])})",
        f"found = prints_in(jax.make_jaxpr(newton_sqrt, static_argnums=1)(np.float32({a}), "
        f"{steps}).jaxpr)",
        "in_loop = [ops for ops, carry in found if shows_carried_x(ops, carry)]",
        'print("your newton_sqrt:", len(found), "print(s) in its jaxpr,", len(in_loop), "in the '
        'loop showing the x it carries; a correct one: 1 and 1")',
        'assert len(found) == 1 and len(in_loop) == 1, "print x once per iteration, at run time, '
        'inside the loop body: jax.debug.print with a format string (not print, not an '
        'f-string), showing the x the iteration starts from"',
        f"np.testing.assert_allclose(got, {literal(results[0])}, {CLOSE})",
        imports=(*IMPORTS, "from jax.extend.core import jaxprs_in_params"))


def _debug_print_vmap(rng) -> str:
    values = [float(v) for v in rng.choice(np.arange(2, 60), 3, replace=False)]
    step_counts = [int(rng.integers(2, 4)), int(rng.integers(4, 6))]  # the check's two classes
    runs = [_newton(values, steps) for steps in step_counts]
    return _snippet(
        "ps3.debug_print.vmap", "jit(vmap(newton_sqrt)) prints the iterates of the whole batch",
        *_PRINTS_IN,
        f"a_batch = {literal(np.float32(values))}",
        "got = {}",
        f"for steps in {step_counts}:",
        '    print(f"{steps} steps: your code prints:")',
        "    got[steps] = jax.jit(jax.vmap(lambda a: newton_sqrt(a, steps)))(a_batch)",
        "    jax.effects_barrier()",
        '    print("your code returned", got[steps])',
        *(f'print("{steps} steps: a correct solution prints, for each iteration, lines showing '
          f'x =", {literal(iterates)}, "and returns", {literal(results)})'
          for steps, (iterates, results) in zip(step_counts, runs)),
        f"found = prints_in(jax.make_jaxpr(jax.vmap(lambda a: newton_sqrt(a, {step_counts[1]})))"
        "(a_batch).jaxpr)",
        "in_loop = [ops for ops, carry in found if shows_carried_x(ops, carry)]",
        "plain = prints_in(jax.make_jaxpr(newton_sqrt, static_argnums=1)(a_batch[0], "
        f"{step_counts[1]}).jaxpr)",
        "plain_in_loop = [ops for ops, carry in plain if shows_carried_x(ops, carry)]",
        'print("your newton_sqrt:", len(plain_in_loop), "print(s) in the loop showing the x it '
        'carries; a correct one: at least 1")',
        'assert found and plain_in_loop, "print x at run time inside the loop body '
        '(jax.debug.print with a format string, not print, not an f-string), showing the x the '
        'iteration starts from; under vmap JAX prints it for every element"',
        *(f"np.testing.assert_allclose(got[{steps}], {literal(results)}, {CLOSE})"
          for steps, (_, results) in zip(step_counts, runs)),
        imports=(*IMPORTS, "from jax.extend.core import jaxprs_in_params"))


# ps3.callback -----------------------------------------------------------------------------------


def _callback(check_id: str, what: str, calls: tuple[str, ...], min_calls: int) -> Callable:
    def build(rng) -> str:
        batches, nested, want = {}, {}, {}
        offset = int(rng.integers(1, 100))
        # The check's two classes, 2 or 3 bins and 4 or 5: a histogram that ignores bins is
        # wrong in one of them.
        for bins in (int(rng.integers(2, 4)), int(rng.integers(4, 6))):
            n = int(rng.integers(bins + 2, bins + 5))
            batch = _uniform(rng, (3, n), 0, 1)
            batch[0, 0] = 1.0  # numpy puts the right edge in the last bin
            batches[bins], nested[bins] = batch, _uniform(rng, (2, 2, n), 0, 1)
            want[bins] = _expect(check_id, {"batch": batch.tolist(), "bins": bins,
                                            "nested": nested[bins].tolist(),
                                            "offset": offset})["values"]
        return _snippet(
            check_id, what,
            "batches = {" + ", ".join(f"{b}: {literal(v)}" for b, v in batches.items()) + "}",
            "nested = {" + ", ".join(f"{b}: {literal(v)}" for b, v in nested.items()) + "}",
            "calls = []",
            "notebook_host_histogram = host_histogram",
            "",
            "",
            "def host_histogram(v, bins):  # the notebook's host_histogram, counting its calls",
            "    calls.append(bins)",
            f"    return notebook_host_histogram(v, bins) + {offset}  # counts your result must "
            "show",
            "",
            "",
            "results, counts = {}, {}",
            "try:",
            "    for bins, batch in batches.items():",
            "        calls.clear()",
            *(f"        {line}".replace("BINS", "bins") for line in calls),
            "        results[bins], counts[bins] = got, len(calls)",
            "finally:",
            "    host_histogram = notebook_host_histogram  # the notebook's own again",
            'print("your code, per bins:", results, "and host_histogram ran", counts, "times")',
            "want = {" + ", ".join(f"{b}: {literal(w)}" for b, w in want.items()) + "}",
            f'print("a correct solution, per bins:", want, "and host_histogram runs at least '
            f'{min_calls} times for each")',
            f'assert all(n >= {min_calls} for n in counts.values()), "host_histogram must run at '
            'run time, every time, through jax.pure_callback"',
            "for bins, counts_wanted in want.items():",
            "    for got_one, want_one in zip(results[bins], counts_wanted, strict=True):",
            f"        np.testing.assert_allclose(got_one, want_one, {CLOSE})")
    return build


BUILDERS: dict[str, Callable[[np.random.Generator], str]] = {
    "ps3.pure.jit": _pure_values(
        "ps3.pure.jit", "jax.jit(leaky_relu) follows a new slope on every call",
        "f = jax.jit(leaky_relu)"),
    "ps3.pure.grad": _pure_values(
        "ps3.pure.grad", "jit(grad(leaky_relu)) with respect to the slope",
        "f = jax.jit(jax.grad(lambda x, s: leaky_relu(x, s).sum(), argnums=1))", dtypes=()),
    "ps3.pure.compiles": _pure_compiles,
    "ps3.pure.leaks": _pure_leaks,
    "ps3.loop.values": _loop_values,
    "ps3.loop.zero": _loop_zero,
    "ps3.loop.size": _loop_size,
    "ps3.loop.x64": _loop_x64,
    "ps3.method.mutation": _method_mutation,
    "ps3.method.compiles": _method_compiles,
    "ps3.method.pytree": _method_pytree,
    "ps3.method.vmap": _method_vmap,
    "ps3.placement.host": _placement_host,
    "ps3.placement.moved": _placement_moved,
    "ps3.divide.jit": _divide(
        "ps3.divide.jit", "jit(unit) at rank 3, with zero, tiny and threshold rows",
        "jax.jit(unit)(v_test)"),
    "ps3.divide.vmap": _divide(
        "ps3.divide.vmap", "vmap(unit) over axis 0 and jit(vmap(unit)) over axis -2",
        "[jax.vmap(unit)(v_test), jax.jit(jax.vmap(unit, in_axes=-2, out_axes=-2))(v_test)]"),
    "ps3.divide.grad": _divide(
        "ps3.divide.grad", "jit(grad(unit)) is finite, zero and threshold rows included",
        "jax.jit(jax.grad(lambda v: (unit(v) * w).sum()))(v_test)"),
    "ps3.safe_log.values": _safe_log(
        "ps3.safe_log.values", "jit(plogp), p <= 0 and tiny p included",
        "jax.jit(plogp)(p_test)"),
    "ps3.safe_log.grad": _safe_log(
        "ps3.safe_log.grad", "jit(vmap(grad(plogp))) is log(p) + 1 where p > 0, else 0",
        "jax.jit(jax.vmap(jax.grad(plogp)))(p_test)"),
    "ps3.safe_log.x64": _safe_log_x64,
    "ps3.log_or_y.values": _log_or_y(
        "ps3.log_or_y.values", "jit(inv_sqrt_or) and jit(vmap(inv_sqrt_or)), a vector fallback",
        "got = [jax.jit(inv_sqrt_or)(x_test, fallback),",
        "       jax.jit(jax.vmap(inv_sqrt_or, in_axes=(0, None)))(x_test, fallback)]"),
    "ps3.log_or_y.grad": _log_or_y(
        "ps3.log_or_y.grad", "jit(grad(inv_sqrt_or)) in x and in the fallback is finite",
        "f = jax.jit(jax.grad(lambda x, fb: (inv_sqrt_or(x, fb) * w).sum(), argnums=(0, 1)))",
        "got = f(x_test, fallback)  # the gradients in x and in fallback"),
    "ps3.smooth_step.values": _smooth_step(
        "ps3.smooth_step.values", "jit(soft_argmax), rows of logits far from zero included",
        "jax.jit(soft_argmax)(logits, temperature)"),
    "ps3.smooth_step.grad": _smooth_step(
        "ps3.smooth_step.grad", "jit(grad(soft_argmax)) in the logits and the temperature",
        "jax.jit(jax.grad(lambda z, t: (soft_argmax(z, t) * w).sum(), argnums=(0, 1)))(logits, "
        "np.float32(temperature))"),
    "ps3.smooth_step.vmap": _smooth_step(
        "ps3.smooth_step.vmap", "jit(vmap(soft_argmax)) over axis -2 of rank-3 logits",
        "jax.jit(jax.vmap(soft_argmax, in_axes=(-2, None), out_axes=-2))(logits, temperature)"),
    "ps3.benchmark.simulated": _benchmark,
    "ps3.donate.xla": _donate("ps3.donate.xla", selective=False),
    "ps3.donate.only": _donate("ps3.donate.only", selective=True),
    "ps3.debug_print.runtime": _debug_print_runtime,
    "ps3.debug_print.vmap": _debug_print_vmap,
    "ps3.callback.jit": _callback(
        "ps3.callback.jit", "jit(histogram) calls host_histogram on every call",
        ("histogram_jit = jax.jit(histogram, static_argnums=1)",
         "got = [histogram_jit(row, BINS) for row in batch]"), 3),
    "ps3.callback.vmap": _callback(
        "ps3.callback.vmap", "vmap(histogram), jit(vmap(histogram)) and vmap of vmap",
        ("batched = jax.vmap(lambda v: histogram(v, BINS))",
         "twice = jax.vmap(jax.vmap(lambda v: histogram(v, BINS)))",
         "got = [batched(batch), jax.jit(batched)(batch), twice(nested[bins]), "
         "jax.jit(twice)(nested[bins])]"), 4),
}
