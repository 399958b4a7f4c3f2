"""The facts the chapters state, checked against the pinned JAX, and the apparatus every chapter has.

The chapters assert these facts in their own cells at build time as well; these tests keep them
checked when the book is not built, and fail if a chapter loses its summary, exercises, further
reading or figure captions.
"""

from __future__ import annotations

import re
from pathlib import Path

import jax
import jax.numpy as jnp
import jupytext
import numpy as np
import pytest
import yaml
from jax import lax
from jax.experimental import io_callback
from jax.extend.core import Primitive

from jaxcourse.faq_tools import describe_machine

ROOT = Path(__file__).resolve().parents[2]
TOC = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))


def _toc_entries(node) -> list[str]:
    found = []
    if isinstance(node, dict):
        if isinstance(node.get("file"), str):
            found.append(node["file"])
        for value in node.values():
            if isinstance(value, (list, dict)):
                found.extend(_toc_entries(value))
    elif isinstance(node, list):
        for item in node:
            found.extend(_toc_entries(item))
    return found


# Every teaching chapter of Parts I-III and V and the jaxpr appendix; not the part overview, the
# glossary or the course guides, which are reference pages.
CHAPTERS = [
    entry for entry in _toc_entries(TOC)
    if entry.startswith(("book/primitives/", "book/autodidax/", "book/faq/", "book/core/",
                          "book/kernels/"))
    and not entry.endswith("/index")
] + ["book/appendix/reading_jaxprs"]


def _text(entry: str) -> str:
    return (ROOT / f"{entry}.md").read_text(encoding="utf-8")


# --- The accuracy pass: each fact a chapter states ---------------------------------------------


def test_grad_at_a_kink_is_the_rule_s_convention_not_a_one_sided_derivative():
    at_zero = {
        "maximum": (lambda x: jnp.maximum(x, 0.0), 0.5),
        "where >=": (lambda x: jnp.where(x >= 0.0, x, 0.0), 1.0),
        "where >": (lambda x: jnp.where(x > 0.0, x, 0.0), 0.0),
        "abs": (jnp.abs, 1.0),
        "relu": (jax.nn.relu, 0.0),
    }
    for name, (fn, expected) in at_zero.items():
        assert float(jax.grad(fn)(0.0)) == expected, name


def test_step_gradient_is_the_literal_zero():
    jaxpr = jax.make_jaxpr(jax.grad(lambda x: (x > 0.0).astype(jnp.float32)))(1.0)
    (out,) = jaxpr.jaxpr.outvars
    assert float(out.val) == 0.0  # a literal: nothing depends on x


def test_sigmoid_gradient_is_exactly_zero_far_from_the_transition_in_float32():
    def smooth_step(x, temperature=0.5):
        return jax.nn.sigmoid(x / temperature)

    grads = jax.vmap(jax.grad(smooth_step))(jnp.array([-50.0, -2.0, 0.0, 2.0, 50.0]))
    assert float(grads[0]) == 0.0 and float(grads[-1]) == 0.0
    assert bool(jnp.all(grads[1:-1] > 0.0))


def test_lax_add_is_a_function_that_binds_add_p():
    assert not isinstance(lax.add, Primitive)
    assert isinstance(lax.add_p, Primitive) and lax.add_p.name == "add"
    (eqn,) = jax.make_jaxpr(lax.add)(1.0, 2.0).jaxpr.eqns
    assert eqn.primitive is lax.add_p


def _names(closed):
    return [eqn.primitive.name for eqn in closed.jaxpr.eqns]


def test_cond_becomes_select_under_vmap_only_when_the_predicate_is_batched():
    def divide_cond(x, y):
        return lax.cond(y >= 1.0, lambda: x / y, lambda: jnp.zeros_like(x))

    xs, ys = jnp.array([3.0, 4.0, 5.0]), jnp.array([0.5, 1.0, 2.0])
    shared = _names(jax.make_jaxpr(jax.vmap(divide_cond, in_axes=(0, None)))(xs, 2.0))
    batched = _names(jax.make_jaxpr(jax.vmap(divide_cond, in_axes=(0, 0)))(xs, ys))
    assert "cond" in shared and "select_n" not in shared
    assert "cond" not in batched and "select_n" in batched


def test_unordered_io_callback_is_kept_but_only_ordered_ones_promise_order():
    calls = []

    def note(x):
        calls.append(float(x))
        return np.int32(0)

    @jax.jit
    def f(x):
        io_callback(note, jax.ShapeDtypeStruct((), jnp.int32), x)  # result unused
        return x + 1

    for v in (1.0, 2.0):
        f(jnp.float32(v)).block_until_ready()
    assert calls == [1.0, 2.0]
    (eqn,) = [e for e in jax.make_jaxpr(f)(1.0).jaxpr.eqns[0].params["jaxpr"].eqns
              if e.primitive.name == "io_callback"]
    assert eqn.params["ordered"] is False

    def ordered(x):
        return io_callback(note, jax.ShapeDtypeStruct((), jnp.int32), x, ordered=True)

    with pytest.raises(ValueError, match="ordered"):
        jax.vmap(ordered)(jnp.ones(2))


def test_broadcast_of_an_unbatched_operand_is_fused_under_jit():
    from jaxcourse.multiply_add import multiply_add, register_rules

    register_rules()
    x, y, z = jnp.arange(6.0).reshape(3, 2), jnp.array([10.0, 100.0]), jnp.ones((2, 3))
    text = jax.jit(jax.vmap(multiply_add, in_axes=(0, None, 1))).lower(x, y, z).compile().as_text()
    entry = text[text.index("ENTRY"):]
    assert entry.count(" fusion(") == 1 and " broadcast(" not in entry
    assert " broadcast(" in text[:text.index("ENTRY")]


def test_python_if_on_a_value_works_under_grad_and_jvp_but_not_jit_or_vmap():
    # watching_jax: grad's tracer holds the primal value, so a Python branch on it works.
    def relu_by_branch(a):
        if a > 0:
            return a
        return 0.0 * a

    assert float(jax.grad(relu_by_branch)(2.0)) == 1.0
    assert float(jax.grad(relu_by_branch)(-2.0)) == 0.0
    assert float(jax.jvp(relu_by_branch, (2.0,), (1.0,))[1]) == 1.0
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(relu_by_branch)(2.0)
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.vmap(relu_by_branch)(jnp.array([2.0]))


def test_batched_cond_stops_the_gradient_of_the_branch_not_taken_where_does_not():
    # tracers: a batched lax.cond does not share where's nan pitfall.
    def divide_where(x, y):
        return jnp.where(y != 0.0, x / y, 0.0)

    def divide_cond_nonzero(x, y):
        return lax.cond(y != 0.0, lambda: x / y, lambda: jnp.zeros_like(x))

    with_zero = jnp.array([0.0, -2.0])
    by_cond = jax.vmap(jax.grad(divide_cond_nonzero, argnums=1), (None, 0))(4.0, with_zero)
    by_where = jax.vmap(jax.grad(divide_where, argnums=1), (None, 0))(4.0, with_zero)
    assert by_cond.tolist() == [0.0, -1.0]
    assert bool(jnp.isnan(by_where[0])) and float(by_where[1]) == -1.0
    batched = _names(jax.make_jaxpr(jax.vmap(divide_cond_nonzero, (None, 0)))(4.0, with_zero))
    assert "cond" not in batched and "select_n" in batched  # both branches run: still no nan


def test_batched_cond_gives_taken_identity_branch_gradient_one_in_jax_and_the_core():
    # core/control_flow exercise 3: examples whose predicate is true get 1, not 0.
    from jaxcourse.autodidax.core import reduce_sum, sin
    from jaxcourse.autodidax.vmap import vmap
    from jaxcourse.core.control_flow import cond
    from jaxcourse.core.transpose import grad

    ps, xs = np.array([True, False]), np.array([0.5, 1.0])
    ours = grad(lambda v: reduce_sum(vmap(lambda p, x: cond(p, lambda x: x, sin, x), (0, 0))(
        ps, v), 0))(xs)
    theirs = jax.grad(lambda v: jnp.sum(jax.vmap(
        lambda p, x: lax.cond(p, lambda x: x, jnp.sin, x))(ps, v)))(jnp.asarray(xs))
    np.testing.assert_allclose(ours, [1.0, np.cos(1.0)], rtol=1e-12)
    np.testing.assert_allclose(theirs, [1.0, np.cos(1.0)], rtol=1e-6)
    # JAX's rule stops the gradient through log at 0 in the branch not taken; where does not.
    ps, xs = jnp.array([True, False]), jnp.array([0.0, 1.0])
    by_cond = jax.grad(lambda v: jnp.sum(jax.vmap(
        lambda p, x: lax.cond(p, lambda x: x, jnp.log, x))(ps, v)))(xs)
    by_where = jax.grad(lambda v: jnp.sum(jnp.where(ps, v, jnp.log(v))))(xs)
    assert by_cond.tolist() == [1.0, 1.0]
    assert bool(jnp.isnan(by_where[0])) and float(by_where[1]) == 1.0


@pytest.fixture
def cpu_kernel():
    import subprocess

    from jaxcourse import kernels

    subprocess.run(["make", "--no-print-directory", "kernels"], cwd=kernels.ROOT, check=True,
                   capture_output=True)
    assert kernels.CPU_LIBRARY.exists()
    with jax.default_device(jax.devices("cpu")[0]):
        yield kernels


def test_closed_over_scale_is_still_an_unbatched_ffi_operand(cpu_kernel):
    # kernels/first_class exercise 1: closing over scale does not make the vectorized methods
    # correct; the constant is still an operand of ffi_call, given a leading axis.
    x = jax.random.normal(jax.random.key(0), (4, 3, 5), jnp.float32)
    scale = jnp.linspace(0.5, 1.5, 5, dtype=jnp.float32)
    for method in ("expand_dims", "broadcast_all"):
        closed = jax.vmap(lambda a, m=method: cpu_kernel.rms_norm_ffi(a, scale, vmap_method=m))
        (eqn,) = [e for e in jax.make_jaxpr(closed)(x).jaxpr.eqns if e.primitive.name == "ffi_call"]
        assert len(eqn.invars) == 2 and eqn.invars[1].aval.shape[0] in (1, 4), method
        with pytest.raises(jax.errors.JaxRuntimeError, match="scale must have shape"):
            closed(x).block_until_ready()
    for method in ("sequential", "legacy_vectorized"):
        got = jax.vmap(lambda a, m=method: cpu_kernel.rms_norm_ffi(a, scale, vmap_method=m))(x)
        want = jax.vmap(lambda a: cpu_kernel.rms_norm_reference(a, scale))(x)
        assert float(jnp.max(jnp.abs(got - want))) < 1e-5, method


def test_ffi_call_accepts_five_vmap_methods():
    # kernels/first_class: not three.
    with pytest.raises(ValueError) as info:
        jax.ffi.ffi_call("no_such_target", jax.ShapeDtypeStruct((1,), jnp.float32),
                         vmap_method="vectorized")
    listed = re.findall(r"'(\w+)'", str(info.value))
    assert listed == ["sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                      "legacy_vectorized"]


def _tree_reduction_sums(threads: int) -> list[set[int]]:
    """partial[] after the CUDA kernel's tree reduction, as sets of the threads each sums:
    stride from blockDim.x / 2, halved while positive; thread t < stride adds partial[t + stride]
    (every thread reads before any writes: __syncthreads() ends each step)."""
    partial = [{t} for t in range(threads)]
    stride = threads // 2
    while stride > 0:
        partial = [partial[t] | partial[t + stride] if t < stride else partial[t]
                   for t in range(threads)]
        stride //= 2
    return partial


def test_cuda_reduction_with_192_threads_loses_partial_2():
    # kernels/cuda exercise 1: not "the element at index 6"; partial[2] is never added.
    source = (Path(__file__).resolve().parents[2] / "jaxcourse" / "kernels" / "rms_norm.cu"
              ).read_text(encoding="utf-8")
    assert "for (int stride = blockDim.x / 2; stride > 0; stride /= 2)" in source
    assert "if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];" \
        in source
    assert _tree_reduction_sums(256)[0] == set(range(256))
    strides, stride = [], 96
    while stride > 0:
        strides.append(stride)
        stride //= 2
    assert strides == [96, 48, 24, 12, 6, 3, 1]
    partial = _tree_reduction_sums(192)
    lost = set(range(192)) - partial[0]
    assert lost == set(range(2, 192, 3)) == partial[2] and len(lost) == 64
    assert 6 in partial[0]


def test_gpu_memory_fraction_is_xla_client_mem_fraction_and_the_old_name_deprecated(monkeypatch):
    # faq/cuda: the pinned jaxlib's plugin options read XLA_CLIENT_MEM_FRACTION first.
    from jaxlib import xla_client

    for name in ("XLA_CLIENT_MEM_FRACTION", "XLA_PYTHON_CLIENT_MEM_FRACTION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XLA_CLIENT_MEM_FRACTION", ".5")
    assert xla_client.generate_pjrt_gpu_plugin_options()["memory_fraction"] == 0.5
    monkeypatch.setenv("XLA_PYTHON_CLIENT_MEM_FRACTION", ".25")
    with pytest.raises(ValueError, match="deprecated"):
        xla_client.generate_pjrt_gpu_plugin_options()
    monkeypatch.delenv("XLA_CLIENT_MEM_FRACTION")
    assert xla_client.generate_pjrt_gpu_plugin_options()["memory_fraction"] == 0.25


def test_dynamic_jaxpr_tracer_is_still_exported_without_a_warning():
    # faq/tracer_to_numpy
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from jax.interpreters.partial_eval import DynamicJaxprTracer
    seen = []
    jax.jit(lambda x: seen.append(type(x)) or x)(1.0)
    assert seen == [DynamicJaxprTracer]
    assert DynamicJaxprTracer.__module__ == "jax._src.interpreters.partial_eval"


def test_register_lowering_without_platform_serves_every_platform():
    # primitives/new_primitive and composition: no need to register once per platform.
    import inspect

    from jax.extend.mlir.dialects import stablehlo
    from jax.interpreters import mlir

    assert inspect.signature(mlir.register_lowering).parameters["platform"].default is None
    prim = Primitive("book_claims_double")
    prim.def_impl(lambda x: 2 * x)
    prim.def_abstract_eval(lambda x: x)
    mlir.register_lowering(prim, lambda ctx, x: [stablehlo.add(x, x)])
    double = jax.jit(prim.bind)
    for platform in ("cpu", "cuda", "rocm"):
        text = double.trace(1.0).lower(lowering_platforms=(platform,)).as_text()
        assert "stablehlo.add" in text, platform
    assert float(double(3.0)) == 6.0


def test_jitted_constant_function_stages_one_call_whose_inner_jaxpr_is_empty():
    # core/jit exercise 3
    from jaxcourse.core.jaxprs import make_jaxpr as our_make_jaxpr
    from jaxcourse.core.jit import jit as our_jit

    def constant(x):
        return 1.0

    (eqn,) = jax.make_jaxpr(jax.jit(constant))(2.0).jaxpr.eqns
    assert eqn.primitive.name == "jit" and eqn.params["jaxpr"].jaxpr.eqns == []
    assert jax.make_jaxpr(constant)(2.0).jaxpr.eqns == []
    (ours,) = our_make_jaxpr(our_jit(constant))(np.float64(2.0)).jaxpr.eqns
    assert ours.primitive.name == "xla_call" and ours.params["jaxpr"].eqns == []


def test_bfloat16_stores_seven_mantissa_bits():
    # kernels/ffi_cpu exercise 3
    assert jnp.finfo(jnp.bfloat16).nmant == 7 and jnp.finfo(jnp.float32).nmant == 23


def test_composition_matrix_has_no_jvp_row_and_jacfwd_catches_the_forgotten_z():
    # primitives/composition exercise 1
    from jax.interpreters import ad

    from jaxcourse import composition
    from jaxcourse.multiply_add import (
        multiply_add,
        multiply_add_jvp,
        multiply_add_p,
        register_rules,
    )

    register_rules()
    rows = composition.composition_matrix(multiply_add, np.float32)
    assert len(rows) == 19 and "jvp" not in [row.case for row in rows]

    def jvp_forgetting_z(primals, tangents):
        xt, yt, zt = tangents
        forgotten = zt if type(zt) is ad.Zero else ad.Zero(jax.typeof(zt))
        return multiply_add_jvp(primals, (xt, yt, forgotten))

    ad.primitive_jvps[multiply_add_p] = jvp_forgetting_z
    try:
        broken = {row.case: row.passed for row in
                  composition.composition_matrix(multiply_add, np.float32)}
    finally:
        register_rules(("jvp",))
    assert broken["jacfwd"] is False and broken["grad(grad)"] is True


def test_current_trace_is_a_thread_local_config_value_not_a_context_variable():
    # autodidax/interpreters
    import contextvars
    import threading

    from jax._src import core

    assert not isinstance(core.trace_state, contextvars.ContextVar)
    assert type(core.trace_state).__name__ == "Config"
    seen = {}

    def inside(x):
        seen["here"] = core.trace_ctx.trace
        other = threading.Thread(target=lambda: seen.setdefault("other", core.trace_ctx.trace))
        other.start()
        other.join()
        return x

    jax.jit(inside)(1.0)
    assert seen["here"] is not core.eval_trace and seen["other"] is core.eval_trace


def test_printer_hides_mul_s_default_parameter():
    # appendix/reading_jaxprs
    closed = jax.make_jaxpr(lambda x, y: x * y)(1.0, 2.0)
    (eqn,) = closed.jaxpr.eqns
    assert eqn.params == {"out_dtype": None}
    assert "mul a b" in str(closed) and "[" not in str(closed).split("=", 1)[1].split("in")[0]


def _graded_functions(name: str) -> set[str]:
    text = (ROOT / "solutions" / name / f"{name}.md").read_text(encoding="utf-8")
    return set(re.findall(r"^def (\w+)\(", text, re.MULTILINE))


def test_part_one_assignment_boxes_name_ps1_s_primitive():
    assert "weighted_sum_impl" in _graded_functions("ps1_primitives")
    for chapter in ("watching_jax", "new_primitive", "differentiation", "batching",
                    "composition"):
        text = _text(f"book/primitives/{chapter}")
        box = text[text.index(":::{admonition} Assignment"):]
        box = box[:box.index("\n:::")]
        assert "`weighted_sum`" in box and "rule of `multiply_add`" not in box, chapter


def test_chapters_name_ps3_s_graded_functions():
    graded = _graded_functions("ps3_pitfalls")
    assert {"soft_argmax", "unit", "plogp", "inv_sqrt_or"} <= graded
    for chapter, task, function in (("step_gradients", "ps3.smooth_step", "soft_argmax"),
                                    ("tracers", "ps3.divide", "unit"),
                                    ("where_nan", "ps3.safe_log", "plogp"),
                                    ("where_nan", "ps3.log_or_y", "inv_sqrt_or")):
        text = _text(f"book/faq/{chapter}")
        at = text.index(f"Task `{task}`") if f"Task `{task}`" in text else text.index(task)
        assert f"`{function}" in text[at:at + 400], (chapter, function)


def test_describe_machine_names_the_cores_and_the_backend():
    description = describe_machine()
    assert "CPU cores" in description and jax.default_backend() in description


# --- Claims the chapters show with a cell (issue 28, "true but not shown") ---------------------


def test_donate_argnums_covers_an_argument_passed_by_keyword():
    # faq/donation
    def accumulate(totals, batch):
        return {"sum": totals["sum"] + batch.sum(axis=0)}

    totals, batch = {"sum": jnp.zeros(4)}, jnp.ones((3, 4))
    jax.jit(accumulate, donate_argnums=0)(totals=totals, batch=batch)
    assert totals["sum"].is_deleted() and not batch.is_deleted()


def test_pmap_donates_its_donate_argnums_through_the_jit_it_wraps():
    # faq/donation: pmap is a jit of a shard_map on the pinned JAX.
    import inspect

    from jax._src import pmap as pmap_module

    stacked = jnp.ones((jax.device_count(), 3))
    doubled = jax.pmap(lambda a: 2 * a, donate_argnums=0)(stacked)
    assert stacked.is_deleted() and doubled.tolist() == [[2.0, 2.0, 2.0]] * jax.device_count()
    source = inspect.getsource(pmap_module)
    assert "shard_map(" in source and "api.jit(_pmapped, donate_argnums=donate_argnums)" in source


def test_a_bad_ffi_call_traces_and_compiles_and_fails_only_when_run(cpu_kernel):
    # kernels/ffi_cpu
    x, bad_scale = jnp.ones((2, 5), jnp.float32), jnp.ones(4, jnp.float32)
    traced = jax.jit(cpu_kernel.rms_norm_ffi).trace(x, bad_scale)
    assert [e.primitive.name for e in traced.jaxpr.eqns] == ["ffi_call"]
    compiled = traced.lower().compile()
    with pytest.raises(jax.errors.JaxRuntimeError, match="scale must have shape"):
        compiled(x, bad_scale).block_until_ready()


def test_both_vectorized_vmap_methods_give_scale_a_leading_axis_and_fail(cpu_kernel):
    # kernels/first_class: broadcast_all breaks the kernel as expand_dims does.
    x = jax.random.normal(jax.random.key(0), (4, 3, 5), jnp.float32)
    scale = jnp.linspace(0.5, 1.5, 5, dtype=jnp.float32)
    for method, scale_shape in (("expand_dims", (1, 5)), ("broadcast_all", (4, 5))):
        batched = jax.vmap(lambda a, s, m=method: cpu_kernel.rms_norm_ffi(a, s, vmap_method=m),
                           in_axes=(0, None))
        (eqn,) = [e for e in jax.make_jaxpr(batched)(x, scale).jaxpr.eqns
                  if e.primitive.name == "ffi_call"]
        assert eqn.invars[1].aval.shape == scale_shape, method
        with pytest.raises(jax.errors.JaxRuntimeError, match="scale must have shape"):
            batched(x, scale).block_until_ready()


def test_the_kernel_s_custom_vjp_gradient_works_under_jit(cpu_kernel):
    # kernels/first_class
    x = jax.random.normal(jax.random.key(0), (4, 3, 5), jnp.float32)
    scales = jax.random.uniform(jax.random.key(1), (4, 5), jnp.float32, 0.5, 1.5)

    def loss(f, a, s):
        return jnp.sum(jnp.sin(jax.vmap(f)(a, s)))

    grad_kernel = jax.jit(jax.grad(lambda a, s: loss(cpu_kernel.rms_norm, a, s), argnums=(0, 1)))
    want = jax.grad(lambda a, s: loss(cpu_kernel.rms_norm_reference, a, s), argnums=(0, 1))(
        x, scales)
    for got, expected in zip(grad_kernel(x, scales), want):
        assert float(jnp.max(jnp.abs(got - expected))) < 1e-4
    assert "custom_call_target=" in grad_kernel.lower(x, scales).compile().as_text()


def test_pure_callback_without_vmap_method_runs_under_jit_and_raises_under_vmap():
    # faq/tracer_to_numpy
    def median(x):
        return jax.pure_callback(lambda v: np.median(v, axis=-1).astype(v.dtype),
                                 jax.ShapeDtypeStruct(x.shape[:-1], x.dtype), x)

    batch = jnp.array([[3.0, 1.0, 2.0], [0.5, 0.25, 1.0]])
    assert float(jax.jit(median)(batch[0])) == 2.0
    with pytest.raises(NotImplementedError, match="vmap_method"):
        jax.vmap(median)(batch)


def test_jit_drops_an_unused_pure_callback():
    # faq/tracer_to_numpy: "may drop it when its result is unused", and the pinned JAX does.
    calls = []

    def count(v):
        calls.append(float(v))
        return v

    @jax.jit
    def plus_one(x):
        jax.pure_callback(count, jax.ShapeDtypeStruct((), jnp.float32), x)
        return x + 1

    assert float(plus_one(jnp.float32(1.0))) == 2.0 and calls == []
    assert "pure_callback" in str(jax.make_jaxpr(plus_one)(1.0))
    assert "callback" not in plus_one.lower(jnp.float32(1.0)).as_text()


def test_an_unordered_io_callback_batches_one_call_per_element():
    # faq/tracer_to_numpy (the ordered one refuses vmap: the io_callback test above)
    calls = []

    def note(x):
        calls.append(float(x))
        return np.int32(0)

    jax.vmap(lambda x: io_callback(note, jax.ShapeDtypeStruct((), jnp.int32), x))(
        jnp.arange(3.0)).block_until_ready()
    assert calls == [0.0, 1.0, 2.0]


def test_xla_common_subexpression_elimination_merges_the_two_sins():
    # core/jaxprs exercise 1
    def sin_squared_sum(x):
        return jnp.sum(jnp.sin(x) * jnp.sin(x))

    xs = jnp.arange(3.0)
    assert str(jax.make_jaxpr(sin_squared_sum)(xs)).count("= sin ") == 2
    assert jax.jit(sin_squared_sum).lower(xs).as_text().count("stablehlo.sine") == 2
    compiled = jax.jit(sin_squared_sum).lower(xs).compile().as_text()
    assert len([line for line in compiled.splitlines() if " sine(" in line]) == 1


GPU_REPORT = ROOT / "benchmarks" / "gpu_report.md"
# Where a chapter states a GPU fact, the words of the recorded run it prints (start, end).
GPU_FACTS = {
    "book/faq/numerics": ("on the GPU, `log(exp(100.0))`", "keeps the pair"),
    "book/faq/cuda": ("Every process would take 75%", "`XLA_PYTHON_CLIENT_PREALLOCATE=false`"),
    "book/faq/placement": None,  # the device row's CudaDevice(id=0)
}


def test_gpu_facts_are_shown_from_the_recorded_gpu_run_with_device_date_and_jax():
    report = " ".join(GPU_REPORT.read_text(encoding="utf-8").replace("**", "").split())
    assert re.search(r"report of \d{4}-\d\d-\d\d", report)
    assert "| device | NVIDIA H100 80GB HBM3" in report
    assert "JAX 0.11.2 and jaxlib 0.11.2 with CUDA 13 (`CudaDevice(id=0)`)" in report
    for entry, quote in GPU_FACTS.items():
        notebook = jupytext.read(ROOT / f"{entry}.md", fmt="md:myst")
        cells = [c.source for c in notebook.cells
                 if c.cell_type == "code" and "gpu_report.md" in c.source]
        assert len(cells) == 1, entry
        assert 'for field in ("device", "toolchain")' in cells[0], entry
        if quote is not None:
            start, end = quote
            assert f"recorded({start!r}, {end!r})" in " ".join(cells[0].split()), entry
            at = report.index(start)
            assert report.index(end, at) - at < 300, entry
        prose = _text(entry)
        assert "benchmarks/gpu_report.md" in prose.replace(cells[0], ""), entry


def test_pmap_traces_its_arguments_but_static_broadcasted_argnums_are_python_values():
    # faq/tracers
    def divide(x, y):
        return x / y if y >= 1.0 else 0.0

    rows = jnp.array([[3.0, 6.0]] * jax.device_count())
    out = jax.pmap(divide, static_broadcasted_argnums=1)(rows, 2.0)
    assert out.tolist() == [[1.5, 3.0]] * jax.device_count()
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.pmap(divide, in_axes=(0, None))(rows, 2.0)


def test_xla_computation_is_gone_and_jit_lower_replaces_it():
    # faq/tracers
    assert not hasattr(jax, "xla_computation")
    lowered = jax.jit(lambda x, y: x / y).lower(3.0, 2.0)
    assert "stablehlo.divide" in lowered.as_text()
    assert lowered.as_text(dialect="hlo").startswith("HloModule")
    assert float(lowered.compile()(3.0, 2.0)) == 1.5
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(lambda x, y: x / y if y >= 1.0 else 0.0).lower(3.0, 2.0)


def test_jit_device_argument_is_deprecated_in_favour_of_device_put():
    # faq/placement
    import warnings

    device = jax.devices()[0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old_style = jax.jit(jnp.sin, device=device)(jnp.ones(2))
    (warning,) = caught
    assert warning.category is DeprecationWarning
    assert "device argument on jit is deprecated" in str(warning.message)
    assert "jax.device_put" in str(warning.message)
    new_style = jax.jit(jnp.sin)(jax.device_put(jnp.ones(2), device))
    assert old_style.devices() == new_style.devices() == {device}
    assert old_style.committed and new_style.committed


# --- The apparatus (issue 28) -------------------------------------------------------------------


def _assignment_box(text: str) -> str:
    start = text.index(":::{admonition} Assignment")
    return text[start:text.index("\n:::", start) + 4]


def test_every_part_four_chapter_has_the_part_s_assignment_box_under_its_title():
    boxes = set()
    for chapter in ("jaxprs", "jit", "linearize_grad", "control_flow", "today"):
        text = _text(f"book/core/{chapter}")
        title = ("\n" + text).index("\n# ")
        box_at = text.index(":::{admonition} Assignment")
        assert text[title:box_at].count("\n") == 2, chapter  # the title line, a blank line
        boxes.add(_assignment_box(text))
    (box,) = boxes
    assert "ps4_core.ipynb" in box


@pytest.mark.parametrize("entry", CHAPTERS)
def test_literalinclude_blocks_are_captioned_with_the_file_they_show(entry):
    blocks = re.findall(r"```\{literalinclude\} (\S+)\n((?::[^\n]*\n)*)", _text(entry))
    for target, options in blocks:
        path = re.sub(r"^(\.\./)+", "", target)
        assert f":caption: `{path}`\n" in options, f"{entry}: {target}"
        assert (ROOT / path).is_file(), path


@pytest.mark.parametrize("entry", CHAPTERS)
def test_a_cell_printing_a_jaxpr_and_a_module_prints_a_separator_between_them(entry):
    notebook = jupytext.read(ROOT / f"{entry}.md", fmt="md:myst")
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        prints = [line for line in cell.source.splitlines() if line.startswith("print(")]
        # print(jax.make_jaxpr(f)(x)), print(traced.jaxpr); print(lowered.as_text()), print(module)
        jaxpr = [i for i, line in enumerate(prints)
                 if re.match(r"print\(((jax\.)?make_jaxpr\(|[\w.]+\.jaxpr\)$)", line)]
        module = [i for i, line in enumerate(prints)
                  if re.match(r"print\(.*\.as_text\([^()]*\)\)$|print\(module\w*\)$", line)]
        if jaxpr and module:
            between = prints[min(jaxpr[0], module[0]) + 1:max(jaxpr[0], module[0])]
            assert any('"-" *' in line for line in between), f"{entry}: {cell.source[:80]}"


# --- The apparatus: what every chapter has ------------------------------------------------------


def test_the_chapter_list_is_not_empty():
    assert len(CHAPTERS) >= 20


@pytest.mark.parametrize("entry", CHAPTERS)
def test_chapter_opens_with_what_you_will_learn(entry):
    text = _text(entry)
    title = ("\n" + text).index("\n# ")
    learn = text.find(":::{admonition} What you will learn")
    first_section = text.find("\n## ")
    assert title < learn < first_section, entry


@pytest.mark.parametrize("entry", CHAPTERS)
def test_chapter_ends_with_summary_exercises_and_further_reading(entry):
    text = _text(entry)
    summary, exercises = text.find("\n## Summary"), text.find("\n## Exercises")
    reading = text.find("\n## Further reading")
    assert -1 not in (summary, exercises, reading), entry
    assert summary < exercises < reading, f"{entry}: summary, exercises, further reading, in order"
    assert "\n## " not in text[reading + 1:], f"{entry}: further reading is the last section"
    answers = text[exercises:reading].count(":::{dropdown} Answer")
    assert 2 <= answers <= 3, f"{entry}: {answers} exercises"
    links = re.findall(r"\]\((https://[^)]+)\)", text[reading:])
    assert links, entry
    for link in links:
        # Upstream docs only: JAX's, the StableHLO specification JAX lowers to, and NVIDIA's
        # for Part V's CUDA tools.
        assert link.startswith(("https://docs.jax.dev/", "https://github.com/jax-ml/jax",
                                "https://openxla.org/", "https://docs.nvidia.com/")), link


@pytest.mark.parametrize("entry", CHAPTERS)
def test_plots_are_numbered_captioned_figures_with_folded_code(entry):
    notebook = jupytext.read(ROOT / f"{entry}.md", fmt="md:myst")
    for cell in notebook.cells:
        if cell.cell_type != "code" or "matplotlib" not in cell.source:
            continue
        mystnb = cell.metadata.get("mystnb", {})
        assert len(mystnb.get("image", {}).get("alt", "")) > 40, entry
        figure = mystnb.get("figure", {})
        assert figure.get("caption") and figure.get("name", "").startswith("fig-"), entry
        tags = cell.metadata.get("tags", [])
        assert "hide-input" in tags or "remove-input" in tags, entry
        assert f"{{numref}}`{figure['name']}`" in _text(entry), f"{entry}: figure never cited"


def test_glossary_gives_the_chinese_terms_the_sources_use():
    glossary = (ROOT / "book" / "appendix" / "glossary.md").read_text(encoding="utf-8")
    for term in ("原语", "基本運算單元", "跟踪器", "追踪器", "切线", "切線", "餘切", "降低", "雅可比",
                 "批处理", "批次處理", "抽象值", "解释器", "缓冲区捐赠"):
        assert term in glossary, term


def test_intro_grades_placement_and_lists_the_appendices():
    intro = (ROOT / "book" / "intro.md").read_text(encoding="utf-8")
    # The seed-coverage table's row (the promise above the table links the page too).
    (row,) = [line for line in intro.splitlines()
              if line.startswith("|") and "faq/placement.md" in line]
    assert "`ps3.placement`" in row and "discussion only" not in row
    assert "appendix/reading_jaxprs.md" in intro and "appendix/glossary.md" in intro


@pytest.mark.parametrize("entry", CHAPTERS)
def test_every_code_cell_is_at_the_top_level_of_the_page(entry):
    # A directive left open (say a dropdown whose closing ::: shares a line with text) swallows
    # the code cells after it; the book build then warns and drops their outputs.
    from myst_parser.config.main import MdParserConfig
    from myst_parser.mdit_to_docutils.base import DocutilsRenderer
    from myst_parser.parsers.mdit import create_md_parser

    config = MdParserConfig(enable_extensions={"colon_fence", "dollarmath", "amsmath", "deflist",
                                               "substitution"})
    text = _text(entry)
    tokens = create_md_parser(config, DocutilsRenderer).parse(text)
    top_level = [t for t in tokens
                 if t.type == "fence" and t.level == 0 and t.info.startswith("{code-cell}")]
    assert len(top_level) == text.count("```{code-cell}"), entry
