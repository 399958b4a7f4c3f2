"""Hidden checks of ps1_primitives (grader side only; never imported in the student's process).

Inputs are drawn at grading time from the generator the engine passes; expectations come from
real JAX on ``x * y + z`` written with ``jax.numpy``. Checks are grouped by the test cell whose
nbgrader points they make up, and each names the rule (task) it grades.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from autograder import judge
from autograder.spec import Assignment, Check, Outcome, Task, Verdict

NAME = "ps1_primitives"
X64 = (("jax_enable_x64", True),)
# float32 results of the same arithmetic in another order (XLA may fuse into an FMA).
F32 = {"rtol": 1e-4, "atol": 1e-5}
BF16 = {"rtol": 2e-2, "atol": 2e-2}

TASKS = (
    Task("ps1.impl", "multiply_add_impl, the impl rule"),
    Task("ps1.abstract_eval", "multiply_add_abstract_eval, the abstract evaluation rule"),
    Task("ps1.lowering", "multiply_add_lowering, the lowering rule (cpu and cuda)"),
    Task("ps1.jvp", "multiply_add_value_and_jvp, the JVP rule"),
    Task("ps1.transpose", "multiply_add_transpose, the transpose rule"),
    Task("ps1.batch", "multiply_add_batch, the batching rule"),
)


def multiply_add(x, y, z):
    return jnp.asarray(x) * jnp.asarray(y) + jnp.asarray(z)


def _np(tree):
    return jax.tree.map(np.asarray, tree)


# Inputs ------------------------------------------------------------------------------------------

# Shapes come from a small fixed set while values stay random per student: a grader worker then
# reuses the expectations it compiled for earlier students, and a student's process reuses what
# one check compiled in the next. No dimension equals BATCH_SIZE or another dimension's size,
# so a rule that mixes up axes cannot pass by coincidence.
SHAPES = ((3,), (2, 3), (3, 2))
BATCH_SIZE = 4  # the mapped axis' size under vmap
DIAG_N = 3  # length of the vectors the transformation diagnostics use


def _shape(rng: np.random.Generator) -> list[int]:
    return list(SHAPES[int(rng.integers(len(SHAPES)))])


def _normal(rng: np.random.Generator, shape, dtype=np.float32) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


def xyz(dtype=np.float32, *, tangents: bool = False, cotangent: bool = False):
    def make(rng: np.random.Generator) -> dict:
        shape = _shape(rng)
        names = ["x", "y", "z"] + (["tx", "ty", "tz"] if tangents else [])
        names += ["ct", "w"] if cotangent else []
        return {name: _normal(rng, shape, dtype) for name in names}
    return make


def scalars(rng: np.random.Generator) -> dict:
    # 0-d arrays rather than NumPy scalars: plain data is arrays and Python scalars.
    a, b = _normal(rng, (2,))
    return {"a": np.asarray(a), "b": np.asarray(b)}


def static_scalars(rng: np.random.Generator) -> dict:
    a, b = _normal(rng, (2,))
    return {"a": float(a), "b": float(b)}


def structs(dtype: str):
    def make(rng: np.random.Generator) -> dict:
        shape = _shape(rng)
        return {"shapes": [shape] * 3, "dtypes": [dtype] * 3}
    return make


def mismatched_shapes(rng: np.random.Generator) -> dict:
    shape = _shape(rng)
    other = shape + [BATCH_SIZE]
    shapes = [shape, shape, shape]
    shapes[int(rng.integers(3))] = other
    return {"shapes": shapes, "dtypes": ["float32"] * 3,
            "good_shape": shape, "good_dtype": "float32"}


def mismatched_dtypes(rng: np.random.Generator) -> dict:
    dtypes = ["float32"] * 3
    dtypes[int(rng.integers(3))] = str(rng.choice(["bfloat16", "float16", "int32"]))
    shape = _shape(rng)
    return {"shapes": [shape] * 3, "dtypes": dtypes, "good_shape": shape,
            "good_dtype": "float32"}


def lowering_inputs(platform: str):
    def make(rng: np.random.Generator) -> dict:
        return {**xyz()(rng), "platform": platform}
    return make


def _batch_diag_inputs(rng: np.random.Generator) -> dict:
    n, size = DIAG_N, BATCH_SIZE
    xs = _normal(rng, (size, n))
    return {"xs": xs, "xsT": np.ascontiguousarray(_normal(rng, (size, n)).T),
            "c": _normal(rng, (n,)), "v": _normal(rng, (n,))}


def vmapped(patterns, *, jit: bool = False):
    """Operands laid out for vmap with in_axes drawn from ``patterns``."""
    def make(rng: np.random.Generator) -> dict:
        in_axes = list(patterns[int(rng.integers(len(patterns)))])
        example, size = _shape(rng), BATCH_SIZE
        arrays = {}
        for name, axis in zip("xyz", in_axes):
            shape = list(example)
            if axis is not None:
                shape.insert(axis, size)
            arrays[name] = _normal(rng, shape)
        return {**arrays, **_batch_diag_inputs(rng), "in_axes": in_axes, "jit": jit}
    return make


def transform_inputs(rng: np.random.Generator) -> dict:
    diag = _batch_diag_inputs(rng)
    size, n = diag["xs"].shape
    return {**diag, "ys": _normal(rng, (size, n)), "zs": _normal(rng, (size, n))}


# Expectations ------------------------------------------------------------------------------------

def expect_eval(inputs: dict):
    return _np(multiply_add(inputs["x"], inputs["y"], inputs["z"]))


def _basics(args) -> dict:
    """What the probes' ``eval`` and ``abstract`` diagnostics should have found."""
    out = multiply_add(*args)
    return {"eval": _np(out), "abstract": f"{out.dtype}{list(out.shape)}"}


def _xyz_basics(inputs: dict) -> dict:
    return _basics([inputs[k] for k in "xyz"])


def _vc_basics(inputs: dict) -> dict:
    return _basics([inputs["v"], inputs["c"], inputs["v"]])


def expect_jit(inputs: dict) -> dict:
    return {"main": expect_eval(inputs), "diag": _xyz_basics(inputs)}


def expect_square_add(inputs: dict):
    return _np(multiply_add(inputs["a"], inputs["a"], inputs["b"]))


def expect_static(inputs: dict) -> dict:
    a, b = np.float32(inputs["a"]), float(inputs["b"])
    out = jax.jit(lambda a, b: a * a + b, static_argnums=1)(a, b)
    return {"main": _np(out), "diag": _basics([a, a, np.float32(b)])}


def expect_abstract_eval(inputs: dict) -> dict:
    args = [jax.ShapeDtypeStruct(tuple(s), jnp.dtype(d))
            for s, d in zip(inputs["shapes"], inputs["dtypes"])]
    out = jax.eval_shape(multiply_add, *args)
    return {"shape": [int(n) for n in out.shape], "dtype": str(out.dtype),
            "primitives": ["multiply_add"]}


def expect_lowered_ops(inputs: dict) -> dict:
    args = [inputs[k] for k in "xyz"]
    text = jax.jit(multiply_add).trace(*args).lower(
        lowering_platforms=(inputs["platform"],)).as_text()
    return {"ops": [op for op in ("multiply", "add") if f"stablehlo.{op}" in text],
            "callback": False}


def expect_gpu(inputs: dict) -> dict:
    return {"value": expect_eval(inputs), "platform": "gpu"}


def _primals_tangents(inputs: dict):
    return (tuple(inputs[k] for k in "xyz"), tuple(inputs[k] for k in ("tx", "ty", "tz")))


def _jvp_values(inputs: dict):
    return _np(list(jax.jvp(multiply_add, *_primals_tangents(inputs))))


def expect_jvp(inputs: dict) -> dict:
    return {"main": _jvp_values(inputs), "diag": _xyz_basics(inputs)}


def expect_jvp_symbolic_zeros(inputs: dict) -> dict:
    x, y, z = (inputs[k] for k in "xyz")
    tx, ty, tz = (inputs[k] for k in ("tx", "ty", "tz"))
    return {"main": _np([
        list(jax.jvp(lambda a: multiply_add(a, y, z), (x,), (tx,))),
        list(jax.jvp(lambda b: multiply_add(x, b, z), (y,), (ty,))),
        list(jax.jvp(lambda c: multiply_add(x, y, c), (z,), (tz,))),
    ]), "diag": _xyz_basics(inputs)}


def expect_jit_jvp(inputs: dict) -> dict:
    jvp = _jvp_values(inputs)
    return {"main": jvp,
            "diag": {**_xyz_basics(inputs), "jvp": jvp, "jit": expect_eval(inputs)}}


def _transposes(inputs: dict) -> list:
    x, y, z, ct = (inputs[k] for k in ("x", "y", "z", "ct"))
    along_yz = jax.linear_transpose(lambda t, u: multiply_add(x, t, u), y, z)(ct)
    along_xz = jax.linear_transpose(lambda t, u: multiply_add(t, y, u), x, z)(ct)
    return _np([list(along_yz), list(along_xz)])


def expect_linear_transpose(inputs: dict) -> list:
    return _transposes(inputs)


def _reverse_diag(inputs: dict) -> dict:
    x, y, z, tx = (inputs[k] for k in ("x", "y", "z", "tx"))
    along_yz, along_xz = _transposes(inputs)
    return {
        **_xyz_basics(inputs),
        "jvp": _jvp_values(inputs),
        "jvp_zeros": _np(list(jax.jvp(lambda a: multiply_add(a, y, z), (x,), (tx,)))),
        "jvp_traced": "ok",
        "transpose": along_yz + along_xz,
    }


def _weighted(inputs: dict):
    w = jnp.asarray(inputs["w"])
    return lambda x, y, z: jnp.sum(multiply_add(x, y, z) * w)


def expect_grad(inputs: dict) -> dict:
    grads = jax.grad(_weighted(inputs), argnums=(0, 1, 2))(*(inputs[k] for k in "xyz"))
    return {"main": _np(list(grads)), "diag": _reverse_diag(inputs)}


def expect_jit_grad(inputs: dict) -> dict:
    expected = expect_grad(inputs)
    expected["diag"]["jit"] = expect_eval(inputs)
    return expected


def expect_value_and_grad(inputs: dict) -> dict:
    value, grads = jax.value_and_grad(_weighted(inputs), argnums=(0, 1, 2))(
        *(inputs[k] for k in "xyz"))
    return {"main": _np([value, list(grads)]), "diag": _reverse_diag(inputs)}


def expect_check_grads(inputs: dict) -> dict:
    return {"main": "ok", "diag": _reverse_diag(inputs)}


def _batch_diag(inputs: dict) -> dict:
    xs, c, xs_t = inputs["xs"], inputs["c"], inputs["xsT"]
    return _vc_basics(inputs) | _np({
        "vmap_equal": jax.vmap(multiply_add)(xs, xs, xs),
        "vmap_unmapped": jax.vmap(multiply_add, in_axes=(0, None, 0))(xs, c, xs),
        "vmap_mixed": jax.vmap(multiply_add, in_axes=(0, None, 1))(xs, c, xs_t),
    })


def expect_vmap(inputs: dict) -> dict:
    out = jax.vmap(multiply_add, in_axes=tuple(inputs["in_axes"]))(*(inputs[k] for k in "xyz"))
    diag = _batch_diag(inputs)
    if inputs["jit"]:
        diag["jit"] = diag["eval"]
    return {"main": _np(out), "diag": diag}


def _transform_diag(inputs: dict) -> dict:
    v, c = inputs["v"], inputs["c"]
    return {
        "jvp": _np(list(jax.jvp(multiply_add, (v, c, v), (c, v, v)))),
        "jvp_zeros": _np(list(jax.jvp(lambda u: multiply_add(u, c, u), (v,), (c,)))),
        "jvp_traced": "ok",
        "grad": _np(jax.grad(lambda u: jnp.sum(multiply_add(u, u, c) * u))(v)),
        **_batch_diag(inputs),
    }


def expect_vmap_grad(inputs: dict) -> dict:
    per_row = jax.vmap(jax.grad(lambda a, b, c: jnp.sum(multiply_add(a, b, c) * jnp.sin(a)),
                                argnums=(0, 1, 2)))
    out = per_row(inputs["xs"], inputs["ys"], inputs["zs"])
    return {"main": _np(list(out)), "diag": _transform_diag(inputs)}


def expect_jacobian(transform):
    def expect(inputs: dict) -> dict:
        c = inputs["c"]
        out = transform(lambda u: multiply_add(u, c, u))(inputs["v"])
        return {"main": _np(out), "diag": _transform_diag(inputs)}
    return expect


def expect_hessian(inputs: dict) -> dict:
    c = inputs["c"]
    out = jax.hessian(lambda u: jnp.sum(multiply_add(u, u, c) * u))(inputs["v"])
    return {"main": _np(out), "diag": _transform_diag(inputs)}


# Judges ------------------------------------------------------------------------------------------

def close(**tolerance):
    return lambda expected, outcome: judge.close(expected, outcome, **tolerance)


def _attempt_problem(expected, attempt, tolerance: dict) -> str | None:
    """What is wrong with one attempt of a composite probe, or None when it is right."""
    if type(attempt) is not dict or set(attempt) != {"value", "error"}:
        return "the probe's result is malformed"
    if attempt["error"] is not None:
        return f"raised {attempt['error']}"
    if isinstance(expected, str):
        value = attempt["value"]
        if type(value) is str and value == expected:
            return None
        return f"failed with {value}" if type(value) is str else "the probe's result is malformed"
    verdict = judge.close(expected, Outcome(value=attempt["value"]), **tolerance)
    return None if verdict.passed else verdict.message


def composite(hints: tuple[tuple[str, str], ...], default: str, **tolerance):
    """Judge the main attempt; on failure, the first failing diagnostic says which rule to blame."""
    tolerance = tolerance or F32

    def judge_composite(expected: dict, outcome: Outcome) -> Verdict:
        if failed := judge.raised(outcome):
            return failed
        got = outcome.value
        if type(got) is not dict or type(got.get("diag")) is not dict:
            return Verdict(False, "the probe's result is malformed")
        problem = _attempt_problem(expected["main"], got.get("main"), tolerance)
        if problem is None:
            return Verdict(True)
        for key, hint in (*BASIC_HINTS, *hints):
            if _attempt_problem(expected["diag"][key], got["diag"].get(key), tolerance):
                return Verdict(False, f"{problem}; {hint}")
        return Verdict(False, f"{problem}; {default.rstrip('.')}")

    return judge_composite


def judge_abstract_eval(expected: dict, outcome: Outcome) -> Verdict:
    if failed := judge.raised(outcome):
        return failed
    got = outcome.value
    if type(got) is not dict or set(got) != set(expected):
        return Verdict(False, "the probe's result is malformed")
    if got["primitives"] != expected["primitives"]:
        return Verdict(False, "the traced program is not one application of multiply_add")
    if got["shape"] != expected["shape"]:
        return Verdict(False, "the result's shape is not the operands' shape")
    if got["dtype"] != expected["dtype"]:
        return Verdict(False, f"the result's dtype is {got['dtype']}, not the operands' dtype")
    return Verdict(True)


def expect_rejects(inputs: dict) -> dict:
    good = jax.ShapeDtypeStruct(tuple(inputs["good_shape"]), jnp.dtype(inputs["good_dtype"]))
    out = jax.eval_shape(multiply_add, good, good, good)
    return {"matched": f"{out.dtype}{list(out.shape)}", "error": "TypeError"}


def judge_rejects(expected: dict, outcome: Outcome) -> Verdict:
    if failed := judge.raised(outcome):
        return failed
    got = outcome.value
    if type(got) is not dict or set(got) != set(expected):
        return Verdict(False, "the probe's result is malformed")
    if got["matched"] != expected["matched"]:
        return Verdict(False, "well-formed operands get the wrong shape or dtype, so the error "
                              "for mismatched ones cannot count")
    if got["error"] is None:
        return Verdict(False, "expected a TypeError, but nothing was raised")
    if got["error"] != expected["error"]:
        return Verdict(False, f"expected a TypeError, got {got['error']}")
    return Verdict(True)


def judge_lowered(expected: dict, outcome: Outcome) -> Verdict:
    if failed := judge.raised(outcome):
        return failed
    got = outcome.value
    if type(got) is not dict or type(got.get("ops")) is not list:
        return Verdict(False, "the probe's result is malformed")
    if "custom_call" in got["ops"] or got.get("callback") is not False:
        return Verdict(False, "the lowered module calls out of StableHLO (a custom_call or host "
                              "callback) instead of doing the arithmetic in StableHLO")
    missing = [op for op in expected["ops"] if op not in got["ops"]]
    if missing:
        return Verdict(False, f"the lowered module has no stablehlo.{missing[0]}, "
                              "so it does not compute x * y + z")
    return Verdict(True)


def judge_gpu(expected: dict, outcome: Outcome) -> Verdict:
    if failed := judge.raised(outcome):
        return failed
    got = outcome.value
    if type(got) is not dict or got.get("platform") != "gpu":
        return Verdict(False, "the result did not stay on the GPU")
    return judge.close(expected["value"], Outcome(value=got["value"]), **F32)


# Hints for composite checks, most basic rule first --------------------------------------------

BASIC_HINTS = (
    ("eval", "the eager result is wrong too, so fix the impl rule (ps1.impl) first"),
    ("abstract", ("jax.eval_shape gives the wrong shape or dtype, so fix the abstract "
                  "evaluation rule (ps1.abstract_eval) first")),
)

JVP_HINTS = (
    ("jvp", "jax.jvp is wrong too, so fix the JVP rule (ps1.jvp) first"),
    ("jvp_zeros", ("jax.jvp with a constant operand is wrong too, so fix how the JVP rule "
                   "(ps1.jvp) handles ad.Zero tangents first")),
    ("jvp_traced", ("the JVP rule fails on tracers (ps1.jvp): transformations call it with "
                    "abstract tangents, so it must use the primitive or jax.numpy, not NumPy")),
)
REVERSE_HINTS = (
    *JVP_HINTS,
    ("transpose", "the transpose rule is wrong on its own (see the ps1.transpose.linear check)"),
)
JIT_HINT = ("jit", ("jit of the primitive alone is wrong, so the lowering rule (ps1.lowering) "
                    "is at fault here"))
BATCH_HINTS = (
    ("vmap_equal", "vmap fails even with every operand batched along axis 0"),
    ("vmap_unmapped", "the batching rule mishandles unbatched operands (batch axis None)"),
    ("vmap_mixed", "the batching rule mishandles operands batched along different axes"),
)
TRANSFORM_HINTS = (
    *JVP_HINTS,
    ("grad", "jax.grad is wrong too, so fix reverse mode (ps1.transpose) first"),
    *BATCH_HINTS,
)
TRANSFORM_DEFAULT = ("jvp, grad and plain vmap pass, so the batching rule is at fault for the mix "
                     "of batch axes this transformation produces: it batches tangents or "
                     "cotangents along one axis while the primal operands are unbatched or "
                     "batched along another")


# The checks --------------------------------------------------------------------------------------

def _check(check_id, task, cell, points, description, probe, make_inputs, expect, judge_fn,
           blame, **extra) -> Check:
    return Check(id=check_id, task=task, description=description, points=points,
                 grade_cell=cell, probe=probe, make_inputs=make_inputs, expect=expect,
                 judge=judge_fn, blame=blame, **extra)


IMPL = "the impl rule (multiply_add_impl) computes the eager result."
ABSTRACT = "the abstract evaluation rule (multiply_add_abstract_eval) is at fault."
LOWERING = "the lowering rule (multiply_add_lowering) is at fault."
JVP = "the JVP rule (multiply_add_value_and_jvp) is at fault."
TRANSPOSE = ("reverse mode runs the JVP rule, then the transpose rule (multiply_add_transpose) "
             "backwards.")
BATCH = "the batching rule (multiply_add_batch) is at fault."
COMPOSED = ("this transformation vmaps over tangents or cotangents, so it calls the batching rule "
            "(multiply_add_batch) with unbatched operands and differing batch axes.")

CHECKS = (
    # ps1.impl: 6 points in test_impl
    _check("ps1.impl.float32", "ps1.impl", "test_impl", 3,
           "eager multiply_add on float32 arrays", "probe_eval", xyz(), expect_eval,
           close(**F32), IMPL),
    _check("ps1.impl.bfloat16", "ps1.impl", "test_impl", 1,
           "eager multiply_add on bfloat16 arrays keeps the dtype", "probe_eval",
           xyz(jnp.bfloat16), expect_eval, close(**BF16), IMPL),
    _check("ps1.impl.float64", "ps1.impl", "test_impl", 1,
           "eager multiply_add on float64 arrays (x64 enabled)", "probe_eval", xyz(np.float64),
           expect_eval, close(), IMPL, jax_config=X64),
    _check("ps1.impl.square_add", "ps1.impl", "test_impl", 1,
           "eager square_add on scalars", "probe_square_add", scalars, expect_square_add,
           close(**F32), IMPL),
    # ps1.abstract_eval: 8 points in test_abstract_eval
    _check("ps1.abstract_eval.float32", "ps1.abstract_eval", "test_abstract_eval", 2,
           "jax.eval_shape gives the operands' shape and dtype (float32)", "probe_abstract_eval",
           structs("float32"), expect_abstract_eval, judge_abstract_eval, ABSTRACT),
    _check("ps1.abstract_eval.float64", "ps1.abstract_eval", "test_abstract_eval", 1,
           "jax.eval_shape keeps float64 (x64 enabled)", "probe_abstract_eval",
           structs("float64"), expect_abstract_eval, judge_abstract_eval, ABSTRACT,
           jax_config=X64),
    _check("ps1.abstract_eval.bfloat16", "ps1.abstract_eval", "test_abstract_eval", 1,
           "jax.eval_shape keeps bfloat16", "probe_abstract_eval", structs("bfloat16"),
           expect_abstract_eval, judge_abstract_eval, ABSTRACT),
    _check("ps1.abstract_eval.shape_mismatch", "ps1.abstract_eval", "test_abstract_eval", 2,
           "operands of different shapes raise a TypeError", "probe_abstract_eval_rejects",
           mismatched_shapes, expect_rejects, judge_rejects,
           "the abstract evaluation rule must reject operands whose shapes differ."),
    _check("ps1.abstract_eval.dtype_mismatch", "ps1.abstract_eval", "test_abstract_eval", 2,
           "operands of different dtypes raise a TypeError", "probe_abstract_eval_rejects",
           mismatched_dtypes, expect_rejects, judge_rejects,
           "the abstract evaluation rule must reject operands whose dtypes differ."),
    # ps1.lowering: 10 points in test_lowering (2 of them only where a GPU exists)
    _check("ps1.lowering.jit", "ps1.lowering", "test_lowering", 2,
           "jax.jit of multiply_add on float32 arrays", "probe_jit", xyz(), expect_jit,
           composite((), LOWERING), ""),
    _check("ps1.lowering.float64", "ps1.lowering", "test_lowering", 1,
           "jax.jit of multiply_add on float64 arrays (x64 enabled)", "probe_jit",
           xyz(np.float64), expect_jit, composite((), LOWERING), "",
           jax_config=X64),
    _check("ps1.lowering.static_argnums", "ps1.lowering", "test_lowering", 1,
           "jax.jit of square_add with a static second argument", "probe_jit_static",
           static_scalars, expect_static, composite((), LOWERING), ""),
    _check("ps1.lowering.cpu", "ps1.lowering", "test_lowering", 2,
           "the CPU lowering is StableHLO multiply and add, with no host callback",
           "probe_lowered_ops", lowering_inputs("cpu"), expect_lowered_ops, judge_lowered,
           "the lowering rule registered for 'cpu' is at fault."),
    _check("ps1.lowering.cuda", "ps1.lowering", "test_lowering", 2,
           "the cuda lowering (cross-platform, lowering_platforms=('cuda',)) is StableHLO "
           "multiply and add", "probe_lowered_ops", lowering_inputs("cuda"), expect_lowered_ops,
           judge_lowered, "the lowering rule registered for 'cuda' is at fault: register it for "
           "'cuda' as well as 'cpu', built from StableHLO operations, which lower for any "
           "platform (a host callback does not)."),
    _check("ps1.lowering.gpu", "ps1.lowering", "test_lowering", 2,
           "jax.jit of multiply_add runs on a GPU", "probe_gpu", xyz(), expect_gpu, judge_gpu,
           "the lowering rule registered for 'cuda' is at fault.", needs_gpu=True),
    # ps1.jvp: 8 points in test_jvp
    _check("ps1.jvp.eager", "ps1.jvp", "test_jvp", 3,
           "jax.jvp with tangents for x, y and z", "probe_jvp", xyz(tangents=True),
           expect_jvp, composite((), JVP), ""),
    _check("ps1.jvp.symbolic_zeros", "ps1.jvp", "test_jvp", 2,
           "jax.jvp with respect to one operand at a time (the others get ad.Zero tangents)",
           "probe_jvp_symbolic_zeros", xyz(tangents=True), expect_jvp_symbolic_zeros,
           composite((), JVP + " Tangents of closed-over operands arrive as ad.Zero."), ""),
    _check("ps1.jvp.jit", "ps1.jvp", "test_jvp", 3,
           "jax.jit of jax.jvp", "probe_jit_jvp", xyz(tangents=True), expect_jit_jvp,
           composite((JIT_HINT, ("jvp", "jax.jvp is wrong without jit too")),
                     "the JVP rule works on concrete values but not under jit: it must be "
                     "traceable (the primitive or jax.numpy, not NumPy)"), JVP),
    # ps1.transpose: 10 points in test_transpose
    _check("ps1.transpose.linear", "ps1.transpose", "test_transpose", 3,
           "jax.linear_transpose of multiply_add with x constant, and with y constant",
           "probe_linear_transpose", xyz(cotangent=True), expect_linear_transpose, close(**F32),
           "the transpose rule (multiply_add_transpose) is at fault: either x or y may be the "
           "constant operand, and each cotangent belongs to its own operand."),
    _check("ps1.transpose.grad", "ps1.transpose", "test_transpose", 2,
           "jax.grad with respect to x, y and z", "probe_grad",
           xyz(tangents=True, cotangent=True), expect_grad,
           composite(REVERSE_HINTS, "look at the transpose rule"), TRANSPOSE),
    _check("ps1.transpose.jit_grad", "ps1.transpose", "test_transpose", 2,
           "jax.jit of jax.grad", "probe_jit_grad", xyz(tangents=True, cotangent=True),
           expect_jit_grad, composite((JIT_HINT, *REVERSE_HINTS), "look at the transpose rule"),
           TRANSPOSE),
    _check("ps1.transpose.value_and_grad", "ps1.transpose", "test_transpose", 1,
           "jax.value_and_grad", "probe_value_and_grad", xyz(tangents=True, cotangent=True),
           expect_value_and_grad, composite(REVERSE_HINTS, "look at the transpose rule"),
           TRANSPOSE),
    _check("ps1.transpose.check_grads", "ps1.transpose", "test_transpose", 2,
           "jax.test_util.check_grads to order 2, forward and reverse (float64)",
           "probe_check_grads", xyz(np.float64, tangents=True, cotangent=True),
           expect_check_grads, composite(REVERSE_HINTS, "look at the transpose rule"),
           TRANSPOSE, jax_config=X64),
    # ps1.batch: 12 points in test_batch
    _check("ps1.batch.axis0", "ps1.batch", "test_batch", 1,
           "jax.vmap with every operand batched along axis 0", "probe_vmap",
           vmapped([(0, 0, 0)]), expect_vmap, composite((), "look at the batching rule"), BATCH),
    _check("ps1.batch.axis1", "ps1.batch", "test_batch", 1,
           "jax.vmap with every operand batched along axis 1", "probe_vmap",
           vmapped([(1, 1, 1)]), expect_vmap,
           composite(BATCH_HINTS[:1], "is the batch axis you return the one your result is "
                                      "batched along?"), BATCH),
    _check("ps1.batch.unmapped", "ps1.batch", "test_batch", 2,
           "jax.vmap with some operands unbatched (in_axes None)", "probe_vmap",
           vmapped([(0, None, 0), (None, 0, None), (None, None, 0), (0, 0, None)]), expect_vmap,
           composite(BATCH_HINTS[:1], BATCH_HINTS[1][1]), BATCH),
    _check("ps1.batch.mixed", "ps1.batch", "test_batch", 2,
           "jax.vmap with operands batched along different axes", "probe_vmap",
           vmapped([(0, None, 1), (1, 0, None), (1, 0, 0)]), expect_vmap,
           composite(BATCH_HINTS[:2], BATCH_HINTS[2][1]), BATCH),
    _check("ps1.batch.jit_vmap", "ps1.batch", "test_batch", 1,
           "jax.jit of jax.vmap with mixed in_axes", "probe_vmap",
           vmapped([(0, None, 1), (1, 1, None)], jit=True), expect_vmap,
           composite((JIT_HINT, *BATCH_HINTS), "vmap works without jit, so the batching rule "
                                               "is not traceable"), BATCH),
    _check("ps1.batch.vmap_grad", "ps1.batch", "test_batch", 1,
           "jax.vmap of jax.grad (per-example gradients)", "probe_vmap_grad", transform_inputs,
           expect_vmap_grad, composite(TRANSFORM_HINTS, TRANSFORM_DEFAULT), COMPOSED),
    _check("ps1.batch.jacfwd", "ps1.batch", "test_batch", 1,
           "jax.jacfwd", "probe_jacfwd", transform_inputs, expect_jacobian(jax.jacfwd),
           composite(TRANSFORM_HINTS, TRANSFORM_DEFAULT), COMPOSED),
    _check("ps1.batch.jacrev", "ps1.batch", "test_batch", 1,
           "jax.jacrev", "probe_jacrev", transform_inputs, expect_jacobian(jax.jacrev),
           composite(TRANSFORM_HINTS, TRANSFORM_DEFAULT), COMPOSED),
    _check("ps1.batch.hessian", "ps1.batch", "test_batch", 2,
           "jax.hessian (jacfwd of jacrev)", "probe_hessian", transform_inputs, expect_hessian,
           composite(TRANSFORM_HINTS, TRANSFORM_DEFAULT), COMPOSED),
)

ASSIGNMENT = Assignment(
    name=NAME,
    notebook=f"{NAME}.ipynb",
    tasks=TASKS,
    checks=CHECKS,
    extra={"own_primitives": ("multiply_add",)},
)
