"""Each chapter that is a notebook, downloadable as one (.ipynb), next to the language switch.

A page whose source is a MyST notebook (a jupytext header, as myst-nb reads it) is converted by
jupytext into ``<outdir>/_notebooks/<docname>.ipynb`` when the HTML build finishes: the code
and prose of the source, no outputs (the reader runs it). The page gets a link to that file at
the top of the article (template ``notebook-download.html``), as a relative URL. Pages that are
plain markdown get neither. The Chinese edition (``python -m jaxcourse.i18n_site zh``) writes
its own copy into ``_build/html/zh/_notebooks``, its markdown translated with the page's own
catalogue (jaxcourse/notebook_translation.py); code cells are not translated, so both copies
hold the same code.
"""

from __future__ import annotations

from pathlib import Path

TEMPLATES = Path(__file__).with_name("_templates")
TEMPLATE = "notebook-download.html"
FOLDER = "_notebooks"
LABELS = {"en": "Notebook (.ipynb)", "zh_CN": "笔记本 (.ipynb)"}
TITLES = {
    "en": "Download this chapter as a Jupyter notebook",
    "zh_CN": "下载本章的 Jupyter 笔记本",
}


def is_notebook(app, docname: str) -> bool:
    """Whether the page's source is a notebook: an .ipynb, or MyST markdown that myst-nb reads
    as a notebook (a jupytext header)."""
    from myst_nb.core.read import is_myst_markdown_notebook

    path = Path(app.env.doc2path(docname))
    if not path.is_file():
        return False
    return path.suffix == ".ipynb" or (
        path.suffix == ".md" and is_myst_markdown_notebook(path.read_text(encoding="utf-8"))
    )


def source_notebook(app, docname: str):
    """The page's source as a notebook (nbformat v4, via jupytext), without outputs."""
    import jupytext

    nb = jupytext.read(Path(app.env.doc2path(docname)))
    for number, cell in enumerate(nb.cells):
        # The same ids at every build (jupytext draws random ones), so an unchanged chapter
        # gives the same file.
        cell.id = f"cell-{number}"
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    return nb


def page_messages(app, docname: str) -> list[tuple[str, str]]:
    """The (English, translation) pairs of the page's catalogue in the build's language, as
    Sphinx reads them for the page (fuzzy entries are not used there, nor here)."""
    from sphinx.util.i18n import docname_to_domain

    from jaxcourse.i18n_site import read_catalogue

    domain = docname_to_domain(docname, app.config.gettext_compact)
    pairs = []
    for folder in app.config.locale_dirs:
        path = Path(app.srcdir, folder, app.config.language, "LC_MESSAGES", f"{domain}.po")
        if path.is_file():
            pairs += [(m.id, m.string) for m in read_catalogue(path)
                      if m.id and isinstance(m.id, str) and m.string and not m.fuzzy]
    return pairs


def translated(nb, messages: list[tuple[str, str]]):
    """The notebook with its markdown cells translated; its code cells as they are."""
    from jaxcourse.notebook_translation import translate_markdown

    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = translate_markdown(cell.source, messages)
    return nb


def notebook_href(docname: str) -> str:
    """The page's notebook, relative to the page."""
    return "../" * docname.count("/") + f"{FOLDER}/{docname}.ipynb"


def _config_inited(app, config) -> None:
    if str(TEMPLATES) not in [str(p) for p in config.templates_path]:
        config.templates_path.append(str(TEMPLATES))
    end = config.html_theme_options.get("article_header_end") or ["article-header-buttons.html"]
    if isinstance(end, str):
        end = [item.strip() for item in end.split(",") if item.strip()]
    end = [item for item in end if item != TEMPLATE]
    # Right after the language switch (jaxcourse/i18n_site.py), before the theme's buttons.
    at = end.index("language-switch.html") + 1 if "language-switch.html" in end else 0
    config.html_theme_options["article_header_end"] = [*end[:at], TEMPLATE, *end[at:]]


def _add_notebook_link(app, pagename, templatename, context, doctree) -> None:
    if app.builder.format != "html" or pagename not in app.env.found_docs \
            or not is_notebook(app, pagename):
        context["notebook_download"] = None
        return
    language = app.config.language if app.config.language in LABELS else "en"
    context["notebook_download"] = {
        "href": notebook_href(pagename),
        "name": f"{Path(pagename).name}.ipynb",
        "label": LABELS[language],
        "title": TITLES[language],
    }


def _write_notebooks(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    import nbformat

    for docname in sorted(app.env.found_docs):
        if not is_notebook(app, docname):
            continue
        nb = source_notebook(app, docname)
        if app.config.language and app.config.language != "en":
            nb = translated(nb, page_messages(app, docname))
        dest = Path(app.outdir) / FOLDER / f"{docname}.ipynb"
        dest.parent.mkdir(parents=True, exist_ok=True)
        text = nbformat.writes(nb, version=4)
        if not dest.is_file() or dest.read_text(encoding="utf-8") != text:
            dest.write_text(text, encoding="utf-8")


def setup(app):
    # After jaxcourse.i18n_site has put the language switch into the article's header.
    app.connect("config-inited", _config_inited, priority=600)
    app.connect("html-page-context", _add_notebook_link)
    app.connect("build-finished", _write_notebooks)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
