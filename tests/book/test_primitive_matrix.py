"""The multiply_add primitive of Part I, as the chapters register and show it (one module,
``jaxcourse.multiply_add``), against ``x * y + z`` under every transformation of the composition
matrix, in float32 and float64, plus its abstract eval errors and its CUDA lowering."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxcourse.multiply_add as rules_module
from jaxcourse import composition
from jaxcourse.multiply_add import multiply_add, register_rules, square_add

CHAPTERS = Path(__file__).resolve().parents[2] / "book" / "primitives"

pytestmark = pytest.mark.filterwarnings("error::DeprecationWarning")


@pytest.fixture(scope="module", autouse=True)
def all_rules():
    register_rules()


@pytest.fixture
def x64():
    jax.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        jax.config.update("jax_enable_x64", False)


def assert_matrix_passes(dtype):
    rows = composition.composition_matrix(multiply_add, dtype)
    assert len(rows) == len(composition.CASES)
    failures = [f"{row.case}: {row.message}" for row in rows if not row.passed]
    assert not failures, failures
    unexercised = [row.case for row in rows if row.primitive_count == 0]
    assert not unexercised, f"the primitive is absent from the jaxprs of {unexercised}"
    assert {row.dtype for row in rows} == {np.dtype(dtype).name}


def test_matrix_float32():
    assert_matrix_passes(np.float32)


def test_matrix_float64(x64):
    assert_matrix_passes(np.float64)


def test_check_grads_order_2_float32():
    composition.check_grads_order_2(multiply_add, np.float32)


def test_check_grads_order_2_float64(x64):
    composition.check_grads_order_2(multiply_add, np.float64)


def test_matrix_covers_the_transformations_the_issue_names():
    names = " ".join(case.name for case in composition.CASES)
    for transform in ("jit", "grad", "vmap", "jacfwd", "jacrev", "hessian"):
        assert transform in names
    assert any("(" in case.name for case in composition.CASES), "no composition of transforms"
    assert any("None" in case.name for case in composition.CASES), "no unmapped operand"


@jax.custom_jvp
def wrong_derivative(x, y, z):
    return x * y + z


@wrong_derivative.defjvp
def _wrong_derivative_jvp(primals, tangents):
    (x, y, z), (xt, yt, _) = primals, tangents
    return x * y + z, xt * y + x * yt  # forgets z's tangent


@pytest.mark.parametrize(
    "implementation, should_fail",
    [
        (lambda x, y, z: x * y - z, "eager"),  # wrong values
        (wrong_derivative, "grad"),  # right values, wrong derivative
    ],
)
def test_matrix_detects_a_wrong_implementation(implementation, should_fail):
    rows = {row.case: row for row in composition.composition_matrix(implementation, np.float32)}
    assert not rows[should_fail].passed


def test_check_grads_detects_a_wrong_derivative():
    with pytest.raises(AssertionError):
        composition.check_grads_order_2(wrong_derivative, np.float32)


def lowered(fun, *args, platform: str) -> str:
    return jax.jit(fun).trace(*args).lower(lowering_platforms=(platform,)).as_text()


def calls_back_to_host(module_text: str) -> bool:
    """A host (Python) callback lowers to a custom_call; our rule must emit none at all."""
    return "custom_call" in module_text or "callback" in module_text


@pytest.mark.parametrize("platform", ["cpu", "cuda"])
def test_lowering_is_plain_stablehlo(platform):
    text = lowered(square_add, jnp.arange(4.0), jnp.ones(4), platform=platform)
    assert "stablehlo.multiply" in text
    assert "stablehlo.add" in text
    assert not calls_back_to_host(text), text


def test_cuda_lowering_of_every_derivative_has_no_host_callback():
    args = composition.case_arguments(composition.CASES[0], np.float32)
    hessian = jax.hessian(composition.objective(multiply_add), argnums=composition.ALL)
    text = lowered(hessian, *args, platform="cuda")
    assert "stablehlo.multiply" in text
    assert not calls_back_to_host(text)


def test_host_callback_detector_is_not_vacuous():
    def via_python(x):
        shape = jax.ShapeDtypeStruct(x.shape, x.dtype)
        return jax.pure_callback(np.sin, shape, x)

    assert calls_back_to_host(lowered(via_python, jnp.ones(3), platform="cpu"))


@pytest.mark.parametrize(
    "shapes_and_dtypes",
    [
        (((2, 3), "float32"), ((3,), "float32"), ((2, 3), "float32")),
        (((3,), "float32"), ((3,), "int32"), ((3,), "float32")),
    ],
)
def test_abstract_eval_rejects_mismatched_operands(shapes_and_dtypes):
    operands = [jax.ShapeDtypeStruct(shape, dtype) for shape, dtype in shapes_and_dtypes]
    with pytest.raises(TypeError, match="one shape and one dtype"):
        jax.eval_shape(multiply_add, *operands)


def test_abstract_eval_result_is_weak_only_if_every_operand_is():
    weak = jax.eval_shape(multiply_add, 1.0, 2.0, 3.0)
    strong = jax.eval_shape(multiply_add, jnp.float32(1.0), 2.0, 3.0)
    assert weak.weak_type and not strong.weak_type


def test_chapters_show_the_module_rules_instead_of_copying_them():
    """The book and the tests share one copy of the rules: no chapter redefines one."""
    rules = {
        name
        for name, obj in vars(rules_module).items()
        if inspect.isfunction(obj) and obj.__module__ == rules_module.__name__
    }
    chapters = sorted(CHAPTERS.glob("*.md"))
    assert chapters
    for chapter in chapters:
        text = chapter.read_text(encoding="utf-8")
        defined = set(re.findall(r"^def (\w+)\(", text, re.MULTILINE))
        assert not defined & rules, f"{chapter.name} redefines {sorted(defined & rules)}"
    shown = "".join(chapter.read_text(encoding="utf-8") for chapter in chapters)
    for rule in ("impl", "abstract_eval", "lowering", "jvp", "transpose", "batch"):
        assert f":pyobject: multiply_add_{rule}" in shown, f"no chapter shows multiply_add_{rule}"
