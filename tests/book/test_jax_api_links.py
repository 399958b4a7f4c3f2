"""API names link to JAX's own reference (jaxcourse/jax_api_links.py, intersphinx).

Without the built book: every name the table links exists in the installed JAX (so a pin that
drops or moves one fails here), the inventory the build writes is one Sphinx reads back with every
name, and every JAX name the chapters write as inline code is either linked or one the table
leaves out on purpose (JAX's docs do not document it). With the built book: both editions link a
chapter's names, and code blocks stay unlinked.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sphinx.util.inventory import InventoryFile

from jaxcourse.jax_api_links import BASE, api_pages, canonical, resolve, target, write_inventory

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
# Names the chapters write that JAX's docs have no page or anchor for (docs/*.rst of jax-ml/jax,
# read 2026-12-01): internal or deprecated modules, primitives, a helper only its tutorial shows.
UNDOCUMENTED = {
    "jax.core.Primitive", "jax.core.ShapedArray", "jax.interpreters.xla.apply_primitive",
    "jax.interpreters.partial_eval.DynamicJaxprTracer", "jax.interpreters.mlir.register_lowering",
    "jax.interpreters.ad.UndefinedPrimal", "jax.ffi.include_dir",
    "jax.extend.mlir.dialects.stablehlo", "jax.lax.zeros_like_array", "jax.lax.add_p",
    "jax._src", "jax._src.interpreters.partial_eval",
    # Left out of the docs' jax.experimental toctree since its deprecation; jax.interpreters is not
    # documented at all.
    "jax.experimental.pjit.pjit", "jax.interpreters.ad.Zero",
}
INLINE = re.compile(r"(?<!`)`((?:jax|jnp|lax)\.[A-Za-z_][A-Za-z0-9_.]*(?:\(\))?)`(?!`)")


def test_every_linked_name_exists_in_the_installed_jax():
    missing = []
    for name in api_pages():
        try:
            resolve(name)
        except (ImportError, AttributeError):
            missing.append(name)
    assert missing == []


def test_every_page_is_a_module_page_or_the_name_s_own_autosummary_page():
    for name, page in api_pages().items():
        assert page in (f"{name}.html#module-{name}", f"_autosummary/{name}.html#{name}"), name


def test_the_inventory_reads_back_with_every_name(tmp_path):
    path = tmp_path / "objects.inv"
    write_inventory(path)
    with path.open("rb") as f:
        inventory = InventoryFile.load(f, BASE, lambda base, uri: base + uri)
    found = {name: entry[2] for entries in inventory.values() for name, entry in entries.items()}
    assert found == {name: BASE + page for name, page in api_pages().items()}
    assert set(inventory["py:module"]) == {n for n, p in api_pages().items() if "#module-" in p}


@pytest.mark.parametrize("text, name", [
    ("jax.jit", "jax.jit"), ("jnp.where()", "jax.numpy.where"), ("lax.scan", "jax.lax.scan"),
    (" jax.numpy ", "jax.numpy"), ("jax.core.Primitive", None), ("jax.jit(f)", None),
    ("jnp", None), ("x.jax.jit", None),
])
def test_target_reads_aliases_and_calls(text, name):
    assert target(text, api_pages()) == name


def test_every_jax_name_in_the_chapters_is_linked_or_undocumented():
    written = set()
    for md in (ROOT / "book").rglob("*.md"):
        written |= {canonical(literal) for literal in INLINE.findall(md.read_text("utf-8"))}
    assert written - set(api_pages()) - UNDOCUMENTED == set()
    assert UNDOCUMENTED & set(api_pages()) == set()


# The link's tooltip is Sphinx's "(in JAX)", translated in the Chinese edition.
LINK = re.compile(r'<a class="reference external" href="([^"]+)" title="[^"]*">'
                  r'<code[^>]*><span class="pre">([^<]+)</span></code></a>')


@pytest.mark.parametrize("edition", ["", "zh/"])
def test_built_chapters_link_jax_names_to_the_reference(edition):
    page = HTML / edition / "book" / "primitives" / "watching_jax.html"
    if not page.is_file():
        pytest.skip("the book has not been built (make book)")
    html = page.read_text(encoding="utf-8")
    links = {text: href for href, text in LINK.findall(html)}
    assert links.get("jax.make_jaxpr") == BASE + "_autosummary/jax.make_jaxpr.html#jax.make_jaxpr"
    # Inline code only: a code cell that calls jax.make_jaxpr is not a link.
    blocks = re.findall(r'<div class="highlight[^"]*"><pre>.*?</pre>', html, re.DOTALL)
    assert blocks and not any("docs.jax.dev" in block for block in blocks)


def test_built_book_links_most_chapters():
    pages = sorted((HTML / "book").rglob("*.html"))
    if not pages:
        pytest.skip("the book has not been built (make book)")
    linked = [p for p in pages if 'title="(in JAX)"' in p.read_text(encoding="utf-8")]
    assert len(linked) >= len(pages) // 2, [str(p.relative_to(HTML)) for p in linked]
