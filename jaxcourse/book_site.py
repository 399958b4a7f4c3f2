"""A Sphinx extension with the fixes the book's HTML needs on the pinned jupyter-book stack.

Loaded from _config.yml (``sphinx: extra_extensions: [jaxcourse.book_site]``). Most fixes remove
a console error a reader's browser would log on every page (tests/browser checks there are none);
book_site.css tidies the page header and makes code, outputs and tables fit the article column
(book_site.js gives wrapped lines a hanging indent); MathJax is served by the book itself, not
from a CDN. Each chapter's kernel starts with jaxcourse/book_kernel.py, which makes every
exception show the same way in every chapter (jaxcourse/error_display.py).
"""

from __future__ import annotations

import os
from pathlib import Path

STATIC = Path(__file__).with_name("_static")
FAVICON = STATIC / "favicon.svg"
# Served from the book's own _static (see _static/mathjax/README.md), relative to it.
MATHJAX = "mathjax/tex-svg.js"
SPHINX_MATHJAX_CDN = "https://cdn.jsdelivr.net/npm/mathjax@"
KERNEL_STARTUP = Path(__file__).with_name("book_kernel.py")


def _config_inited(app, config) -> None:
    # IPython runs the file named by PYTHONSTARTUP when a kernel starts; the kernels that execute
    # the chapters inherit this process's environment.
    os.environ["PYTHONSTARTUP"] = str(KERNEL_STARTUP)
    # Without a default mode, pydata-sphinx-theme logs "Got invalid theme mode" on a first visit.
    # Light, because the book's matplotlib figures are drawn on white.
    config.html_context.setdefault("default_mode", "light")
    # Without an icon of its own, every browser asks for /favicon.ico and logs a 404.
    if not config.html_favicon:
        config.html_favicon = str(FAVICON)
    config.html_static_path.append(str(STATIC))
    # Sphinx loads MathJax from a CDN by default; without a network the math stays raw TeX.
    if str(config.mathjax_path).startswith(SPHINX_MATHJAX_CDN):
        config.mathjax_path = MATHJAX


def _script_key(script) -> tuple:
    # The copies differ only in an inline script's filename, None in one and "" in the other.
    attributes = getattr(script, "attributes", {})
    filename = getattr(script, "filename", script) or ""
    return (str(filename), tuple(sorted((k, str(v)) for k, v in attributes.items())))


def _drop_duplicate_scripts(app, pagename, templatename, context, doctree) -> None:
    # Inline scripts that extensions register after the builder has started (the settings of
    # sphinx-thebe and sphinx-togglebutton) reach each page twice; the second
    # `const THEBE_JS_URL = ...` is a SyntaxError in the browser.
    scripts = context.get("script_files")
    if not scripts:
        return
    seen: set[tuple] = set()
    unique = []
    for script in scripts:
        key = _script_key(script)
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"] = unique


def _keep_cached_outputs_in_executed_notebooks() -> None:
    """Make _build/jupyter_execute/<doc>.ipynb carry its outputs after a cache hit too.

    myst-nb 1.4 writes that file from the notebook it parsed. When it executes the notebook, the
    outputs land in that object; when it takes them from jupyter-cache instead, they land in a
    merged copy, and the file is written without any. Tests read those files, so after a cached
    rebuild they would find no outputs and no errors to check. The merged cells and metadata
    are put back into the parsed notebook.
    """
    from myst_nb.core.execute.cache import NotebookClientCache

    start_client = NotebookClientCache.start_client
    if getattr(start_client, "keeps_cached_outputs", False):
        return

    def start_client_keeping_outputs(self):
        parsed = self._notebook
        start_client(self)
        if self._notebook is not parsed:
            parsed.cells = self._notebook.cells
            parsed.metadata = self._notebook.metadata
            self._notebook = parsed

    start_client_keeping_outputs.keeps_cached_outputs = True
    NotebookClientCache.start_client = start_client_keeping_outputs


def setup(app):
    _keep_cached_outputs_in_executed_notebooks()
    app.connect("config-inited", _config_inited)
    app.add_css_file("book_site.css")
    app.add_css_file("figures.css")
    app.add_js_file("book_site.js", loading_method="defer")
    # Late, after the theme has added its own scripts to the page's context.
    app.connect("html-page-context", _drop_duplicate_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
