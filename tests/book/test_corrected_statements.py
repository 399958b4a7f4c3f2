"""Issue 56's nine corrected statements (and the two promises, and `pjit`), one test each.

Each test checks the installed JAX's behaviour that the corrected text states, and that the page
no longer states the old claim, so that it fails if either the text or the JAX under it goes back.
The chapters show the same behaviour in their own cells at build time.
"""

from __future__ import annotations

import ctypes
import importlib
import inspect
import json
import re
import threading
import warnings
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.extend.core import Primitive

ROOT = Path(__file__).resolve().parents[2]


def _page(name: str) -> str:
    """A page's text with its line breaks folded, so that a phrase split over lines still matches."""
    return " ".join((ROOT / "book" / f"{name}.md").read_text(encoding="utf-8").split())


def test_linearize_partially_evaluates_each_jvp_rule_without_a_linearization_rule():
    # core/linearize_grad: most primitives are linearized from their JVP rule under a JaxprTrace.
    from jax._src.interpreters import ad

    assert len(ad.primitive_linearizations) < 20 and len(ad.primitive_jvps) > 200
    seen = []
    prim = Primitive("corrected_statements_triple")
    prim.def_impl(lambda x: 3 * x)
    prim.def_abstract_eval(lambda x: x)

    def jvp(primals, tangents):
        seen.append(type(tangents[0]).__name__)
        return prim.bind(primals[0]), 3 * tangents[0]

    ad.primitive_jvps[prim] = jvp
    primal, linear = jax.linearize(prim.bind, 2.0)
    assert float(primal) == 6.0 and float(linear(1.0)) == 3.0
    assert seen == ["JaxprTracer"]
    page = _page("core/linearize_grad")
    assert "no separate partial evaluator" not in page
    assert "fallback_linearize_rule" in page and "JaxprTracer" in page


def test_the_numpy_impl_rule_drops_the_weak_type_a_compiled_call_keeps():
    # primitives/new_primitive: the impl rule owes more than shape and dtype.
    from jaxcourse.multiply_add import register_rules, square_add

    register_rules()
    half = jnp.bfloat16(1.0)
    eager = square_add(2.0, 10.0)
    assert type(eager) is np.ndarray and str(jax.typeof(eager)) == "float32[]"
    assert str(jax.typeof(jax.jit(square_add)(2.0, 10.0))) == "~float32[]"
    assert (eager + half).dtype == jnp.float32
    assert jax.jit(lambda: square_add(2.0, 10.0) + half)().dtype == jnp.bfloat16
    page = _page("primitives/new_primitive")
    assert "The one obligation is" not in page and "weak type" in page


def test_the_promises_say_what_is_a_dated_gpu_record():
    # intro and faq/index: computed at build time, except the GPU records, named with their JAX.
    requirements = (ROOT / "requirements.txt").read_text()
    pinned = re.search(r"^jax==(\S+)", requirements, re.MULTILINE).group(1)
    figures = json.loads((ROOT / "book/kernels/gpu_figures.json").read_text())
    report = (ROOT / "benchmarks/gpu_report.md").read_text()
    assert f"JAX {figures['jax']} and jaxlib" in report
    assert re.search(r"report of (\S+)", report).group(1) == figures["date"]
    assert figures["jax"] != pinned
    for name, quoted in (("intro", ("gpu_report.md", "gpu_figures.json")),
                         ("faq/index", ("gpu_report.md",))):
        page = _page(name)
        # The build's JAX is named as the pin (tests/test_repository.py: the version is written
        # in requirements.txt alone); the GPU record's own JAX, date and machine are written out.
        assert "pin" in page and "requirements.txt" in page and pinned not in page, name
        for fact in (figures["jax"], figures["date"], figures["device"], *quoted):
            assert fact in page, (name, fact)
    assert "on the JAX version the course pins;" not in _page("intro")
    assert "on the pinned JAX running on a CPU;" not in _page("faq/index")


def test_an_eager_vmap_tracer_holds_the_batch_but_no_single_value():
    # faq/tracers and primitives/watching_jax: vmap's tracers are not value-less.
    held, refused = [], []

    def branch(x):
        held.append(x.val)
        try:
            bool(x > 2.5)
        except jax.errors.TracerBoolConversionError:
            refused.append(type(x).__name__)
        return x

    jax.vmap(branch)(jnp.array([2.0, 3.0]))
    assert isinstance(held[0], jax.Array) and held[0].tolist() == [2.0, 3.0]
    assert refused == ["BatchTracer"]
    tracers = _page("faq/tracers")
    assert "`jit`, `vmap`, `make_jaxpr` and the bodies" not in tracers
    assert "Inside an outer `jit` or `vmap`" not in tracers
    assert "`vmap`, `pmap`, `make_jaxpr`" not in tracers
    assert "the tracers of `jit` and `vmap`, met below, have no value" not in _page(
        "primitives/watching_jax")


def test_the_current_trace_is_a_thread_local_configuration_value():
    # autodidax/interpreters: its objectives and summary said "a context variable".
    from jax._src import core as jax_core

    seen = {}

    def name():
        return type(jax_core.trace_ctx.trace).__name__

    def look(x):
        seen["tracing"] = name()
        other = threading.Thread(target=lambda: seen.update(other=name()))
        other.start()
        other.join()
        return x

    jax.jit(look)(1.0)
    assert seen == {"tracing": "DynamicJaxprTrace", "other": "EvalTrace"}
    assert "ContextVar" not in inspect.getsource(jax_core)
    assert "context variable" not in _page("autodidax/interpreters")


def test_add_any_never_receives_a_symbolic_zero():
    # core/linearize_grad and core/jit: add_tangents drops a Zero; add_any refuses one.
    from jax._src import ad_util
    from jax.interpreters import ad

    zero = ad.Zero(jax.core.ShapedArray((), jnp.float32))
    assert ad.add_tangents(zero, 1.0) == 1.0 and ad.add_tangents(2.0, zero) == 2.0
    with pytest.raises(TypeError, match="add_any"):
        ad_util.add_jaxvals_p.bind(zero, 1.0)
    for name in ("core/linearize_grad", "core/jit"):
        assert "also accepts its symbolic zeros" not in _page(name), name


def test_ffi_call_has_a_jvp_rule_and_it_raises():
    # kernels/first_class: the rule exists; it raises ValueError naming the fix.
    from jax._src import ffi as jax_ffi
    from jax._src.interpreters import ad

    assert ad.primitive_jvps[jax_ffi.ffi_call_p] is jax_ffi.ffi_call_jvp
    call = jax.ffi.ffi_call("corrected_statements_never_registered",
                            jax.ShapeDtypeStruct((3,), jnp.float32))
    with pytest.raises(ValueError, match="cannot be differentiated"):
        jax.jvp(call, (jnp.ones(3),), (jnp.ones(3),))
    assert "`ffi_call` has no JVP rule" not in _page("kernels/first_class")


@pytest.mark.parametrize("platform", ["cpu", "cuda", "rocm", "tpu"])
def test_register_rules_lowers_multiply_add_for_every_platform(platform):
    # primitives/composition's table: one portable rule, registered with no platform.
    from jaxcourse.multiply_add import register_rules, square_add

    register_rules()
    text = jax.jit(square_add).trace(2.0, 10.0).lower(lowering_platforms=(platform,)).as_text()
    assert "stablehlo.multiply" in text and "stablehlo.add" in text
    source = (ROOT / "jaxcourse/multiply_add.py").read_text(encoding="utf-8")
    assert '("cpu", "cuda")' not in source and "platform=platform" not in source
    assert '"tpu")' in _page("primitives/composition")


def test_registering_for_cuda_without_a_cuda_backend_queues_and_returns():
    # kernels/cuda: register_ffi_target(platform="CUDA") needs no CUDA backend.
    from jax._src.lib import xla_client

    try:
        has_cuda = bool(jax.devices("cuda"))
    except RuntimeError:
        has_cuda = False
    handler = jax.ffi.pycapsule(ctypes.CDLL(None).abs)  # never called: only registered
    name = "corrected_statements_cuda_queue"
    assert jax.ffi.register_ffi_target(name, handler, platform="CUDA") is None
    waiting = [entry[0] for entry in xla_client._custom_callback.get("CUDA", [])]
    assert (name in waiting) is not has_cuda
    assert "which needs a CUDA backend" not in _page("kernels/cuda")


def test_pjit_is_gone_from_jax_and_deprecated_in_experimental():
    # faq/donation: the seed's third entry point, on the pinned JAX.
    assert not hasattr(jax, "pjit")
    module = importlib.import_module("jax.experimental.pjit")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pjit = module.pjit
    assert [w.category for w in caught] == [DeprecationWarning]
    assert "use `jax.jit`" in str(caught[0].message)
    old = jnp.ones(3)
    assert pjit(lambda a: 2 * a, donate_argnums=0)(old).tolist() == [2.0] * 3
    assert old.is_deleted()
    page = _page("faq/donation")
    assert "`pjit`" in page and "deprecated" in page
