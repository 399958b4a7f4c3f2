"""Links from the JAX API names in the chapters' inline code to JAX's own API reference, through
Sphinx's intersphinx.

A chapter writes ``jax.jit``, ``jnp.where()`` or ``lax.scan`` as inline code; this extension
turns each such literal whose name (``jnp.`` read as ``jax.numpy.``, ``lax.`` as ``jax.lax.``,
a trailing ``()`` dropped) is in ``jaxcourse/jax_api.yml`` into a cross-reference, and
intersphinx resolves it to ``https://docs.jax.dev/en/latest/...``. Code blocks, cell outputs,
titles and literals already inside a link are left alone, so no source or translation changes:
both editions get the links.

intersphinx normally downloads the target project's ``objects.inv``; the build has no network
(CI reaches only the package registries), so the inventory is written at the start of every
build from the table, which names each page as JAX's docs sources lay it out.
tests/book/test_jax_api_links.py checks that every name in the table exists in the installed JAX
and that the built pages link them.
"""

from __future__ import annotations

import importlib
import inspect
import zlib
from functools import cache
from pathlib import Path

import yaml
from docutils import nodes
from sphinx import addnodes
from sphinx.transforms import SphinxTransform

BASE = "https://docs.jax.dev/en/latest/"
TABLE = Path(__file__).with_name("jax_api.yml")
ALIASES = {"jnp.": "jax.numpy.", "lax.": "jax.lax."}


@cache
def api_pages() -> dict[str, str]:
    """Fully qualified name -> its page under BASE (with the anchor)."""
    return dict(yaml.safe_load(TABLE.read_text(encoding="utf-8")))


def canonical(text: str) -> str:
    """The fully qualified name an inline literal writes: ``jnp.where()`` -> ``jax.numpy.where``."""
    name = text.strip().removesuffix("()")
    for short, full in ALIASES.items():
        if name.startswith(short):
            return full + name[len(short):]
    return name


def target(text: str, names) -> str | None:
    """The API name an inline literal names, if it is one the table links."""
    name = canonical(text)
    return name if name in names else None


def resolve(name: str):
    """The installed JAX's object of that name (ImportError/AttributeError when it has none)."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for part in parts[i:]:
            obj = getattr(obj, part)
        return obj
    raise ImportError(name)


def _role(name: str) -> str:
    obj = resolve(name)
    if inspect.ismodule(obj):
        return "py:module"
    return "py:class" if inspect.isclass(obj) else "py:function"


def write_inventory(path: Path) -> None:
    """A Sphinx inventory (version 2) of the table, as intersphinx reads one. No version in its
    header: the pages are those of JAX's latest docs (a link's tooltip says "(in JAX)")."""
    lines = [f"{name} {_role(name)} 1 {page} -" for name, page in sorted(api_pages().items())]
    header = ("# Sphinx inventory version 2\n# Project: JAX\n# Version: \n"
              "# The remainder of this file is compressed using zlib.\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(header.encode() + zlib.compress(("\n".join(lines) + "\n").encode()))


class LinkApiNames(SphinxTransform):
    """Inline literals that name a linked JAX API become cross-references (after translation)."""

    default_priority = 500

    def apply(self, **kwargs) -> None:
        names = api_pages()
        for literal in list(self.document.findall(nodes.literal)):
            if any(isinstance(a, (nodes.reference, addnodes.pending_xref, nodes.title,
                                  nodes.literal_block))
                   for a in _ancestors(literal)):
                continue
            name = target(literal.astext(), names)
            if name is None:
                continue
            xref = addnodes.pending_xref("", refdomain="py", reftype="obj", reftarget=name,
                                         refexplicit=True, refwarn=False)
            literal.replace_self(xref)
            xref += literal


def _ancestors(node):
    node = node.parent
    while node is not None:
        yield node
        node = node.parent


def _config_inited(app, config) -> None:
    inventory = Path(app.doctreedir) / "jax_objects.inv"
    write_inventory(inventory)
    mapping = dict(config.intersphinx_mapping or {})
    mapping["jax"] = (BASE, str(inventory))
    config.intersphinx_mapping = mapping


def setup(app):
    app.setup_extension("sphinx.ext.intersphinx")
    # Before intersphinx normalises the mapping (its own config-inited handler, priority 800).
    app.connect("config-inited", _config_inited, priority=400)
    app.add_transform(LinkApiNames)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
