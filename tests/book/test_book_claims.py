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


def test_describe_machine_names_the_cores_and_the_backend():
    description = describe_machine()
    assert "CPU cores" in description and jax.default_backend() in description


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
    (row,) = [line for line in intro.splitlines() if "faq/placement.md" in line]
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
