"""The built book, read in a real browser: every page of the table of contents, as a reader sees it.

Needs `_build/html` (the Makefile's `make test` builds the book first) and Debian's chromium and
chromedriver (scripts/install_browser.sh). Full-height screenshots of every page, at each width in
WIDTHS, land in _build/screenshots/ as <part>__<page>@<width>.png.
"""

from __future__ import annotations

import urllib.parse
from pathlib import Path

import nbformat
import pytest
from browser_site import EXECUTED, ROOT, SCREENSHOTS, WIDTHS, broken_links, toc_docnames

PAGES = toc_docnames()
SEARCH_TERM = "transpose"


def _executed_notebook(docname: str) -> nbformat.NotebookNode | None:
    path = EXECUTED / f"{docname}.ipynb"
    return nbformat.read(path, as_version=4) if path.is_file() else None


def _shown_code_cells(nb: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    return [
        cell
        for cell in nb.cells
        if cell.cell_type == "code" and "remove-cell" not in cell.metadata.get("tags", [])
    ]


@pytest.mark.parametrize("docname", PAGES)
def test_page_loads_without_console_errors(site, docname):
    report = site.page(docname)
    assert not report.console_errors, f"{report.url}: console errors: {report.console_errors}"
    # The book serves everything it needs itself (MathJax included), so it reads the same offline.
    assert not report.external_failures, (
        f"{report.url} needs resources from other hosts: {report.external_failures}"
    )


@pytest.mark.parametrize("docname", PAGES)
def test_math_is_typeset(site, docname):
    report = site.page(docname)
    assert not report.untypeset, (
        f"{docname}: {len(report.untypeset)} of {report.math_count} formulas left as raw TeX, "
        f"e.g. {report.untypeset[0][:80]!r}"
    )


def _shown_outputs(cell: nbformat.NotebookNode) -> list:
    """The outputs of an executed cell that its tags let the page show."""
    tags = cell.metadata.get("tags", [])
    if "remove-output" in tags:
        return []
    hidden_streams = {name for name in ("stdout", "stderr") if f"remove-{name}" in tags}
    return [
        out
        for out in cell.outputs
        if not (out.output_type == "stream" and out.name in hidden_streams)
    ]


@pytest.mark.parametrize("docname", PAGES)
def test_code_cells_show_their_outputs(site, docname):
    """The page shows each code cell's output exactly when the build produced one.

    Both ways: an output the build produced is on the page, and an output on the page comes from
    the executed notebook (so a stale notebook without outputs fails instead of passing).
    """
    report = site.page(docname)
    nb = _executed_notebook(docname)
    if nb is None:
        assert not report.cells, f"{docname}: cells on the page, but no executed notebook"
        return
    cells = _shown_code_cells(nb)
    assert len(report.cells) == len(cells), (
        f"{docname}: {len(report.cells)} cells on the page, {len(cells)} in the notebook"
    )
    for number, (cell, seen) in enumerate(zip(cells, report.cells), start=1):
        shown = bool((seen["output_text"] or "").strip() or seen["output_media"])
        produced = bool(_shown_outputs(cell))
        assert shown or not produced, f"{docname}: code cell {number}'s output is not on the page"
        assert produced or not shown, (
            f"{docname}: code cell {number} shows an output its executed notebook lacks"
        )


@pytest.mark.parametrize("docname", PAGES)
def test_no_unexpected_tracebacks(site, docname):
    for number, cell in enumerate(site.page(docname).cells, start=1):
        text = cell["output_text"] or ""
        assert "DeprecationWarning" not in text, f"{docname}: cell {number} warns of a deprecation"
        if "raises-exception" in cell["tags"]:
            continue
        assert not cell["traceback"] and "Traceback" not in text, (
            f"{docname}: code cell {number} shows a traceback but is not tagged raises-exception"
        )


@pytest.mark.parametrize("docname", PAGES)
def test_images_load_and_have_alt_text(site, docname):
    for image in site.page(docname).images:
        assert image["complete"] and image["natural_width"] > 0, f"{docname}: broken {image}"
        if not image["in_content"]:
            continue
        filename = Path(urllib.parse.urlparse(image["src"]).path).name
        alt = (image["alt"] or "").strip()
        # Sphinx writes the file's path as alt when the author gave none.
        assert alt and filename not in alt, f"{docname}: figure {filename} has no alt text"


@pytest.mark.parametrize("docname", PAGES)
def test_internal_links_resolve(site, fetcher, docname):
    broken = broken_links(site, fetcher, docname)
    assert not broken, f"{docname}: broken links: {broken}"


def _all_downloads(site) -> dict[str, list[str]]:
    """Every {download} link of the book -> the pages that carry it."""
    found: dict[str, list[str]] = {}
    for docname in PAGES:
        for href in site.page(docname).downloads:
            found.setdefault(href, []).append(docname)
    return found


def test_assignment_downloads_are_notebooks(site, fetcher):
    """Each notebook download is a valid notebook, the same bytes as the released assignment."""
    for href, pages in _all_downloads(site).items():
        status, body = fetcher.get(href)
        assert status == 200, f"{href} (on {pages}): HTTP {status}"
        name = Path(urllib.parse.urlparse(href).path).name
        if not name.endswith(".ipynb"):
            continue
        nb = nbformat.reads(body.decode("utf-8"), as_version=4)
        nbformat.validate(nb)
        released = ROOT / "assignments" / Path(name).stem / name
        if released.is_file():
            assert body == released.read_bytes(), f"{href} differs from {released}"


def test_every_released_assignment_is_downloadable(site):
    linked = {Path(urllib.parse.urlparse(href).path).name for href in _all_downloads(site)}
    released = sorted(
        nb.name
        for nb in (ROOT / "assignments").glob("*/*.ipynb")
        if nb.stem == nb.parent.name
    )
    missing = [name for name in released if name not in linked]
    assert not missing, f"no page of the book links these assignments for download: {missing}"


def test_search_finds_transpose(site):
    count, summary = site.search(SEARCH_TERM)
    assert count > 0, f"search for {SEARCH_TERM!r} found nothing: {summary!r}"
    own, _ = site.console_errors()
    assert not own, f"the search page logged console errors: {own}"


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("docname", PAGES)
def test_nothing_in_the_article_is_cut_off(site, docname, width):
    """No block of the article hides its end behind a scroll bar or spills out of the column.

    Also saves a full-height screenshot of the page at this width (for a person to look at).
    """
    layout = site.layout(docname, width)
    assert layout.viewport_width == width, f"{docname}: laid out at {layout.viewport_width} px"
    # Not vacuous: every page has prose, and a page with code cells has <pre> blocks.
    assert layout.checked > 0, f"{docname}: no blocks found in the article"
    if site.page(docname).cells:
        assert layout.checked_code > 0, f"{docname}: code cells, but no <pre> blocks checked"
    shown = "\n  ".join(
        f"{w['block']}: scrollWidth {w['scroll_width']} > clientWidth {w['client_width']} "
        f"(right edge {w['right']}): {w['text'][:60]!r}"
        for w in layout.wide[:8]
    )
    assert not layout.wide, (
        f"{docname} at {width} px: {layout.wide_innermost} blocks wider than the article "
        f"({layout.article_width} px):\n  {shown}"
    )
    assert layout.page_width <= width, f"{docname} at {width} px scrolls sideways"
    png = layout.screenshot.read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 10_000, f"{layout.screenshot} looks empty"


@pytest.mark.parametrize("docname", PAGES)
def test_each_cell_prints_into_one_box(site, docname):
    """A cell's stdout and stderr, however they were flushed, are one output box."""
    layout = site.layout(docname, WIDTHS[0])
    split = [n for n, boxes in enumerate(layout.stream_boxes, start=1) if boxes > 1]
    assert not split, f"{docname}: code cells {split} print into several boxes"


# The checks above, on pages broken on purpose in the browser: each must catch its fault.
BROKEN_PAGE = "book/primitives/watching_jax"
_WIDE_PRE = """
const out = document.querySelector('article div.cell_output');
const pre = document.createElement('pre');
pre.style.whiteSpace = 'pre';
pre.style.overflowX = 'auto';
pre.textContent = 'call multiply_add(' + 'JVPTracer<float32[3]>, '.repeat(12) + ')';
out.appendChild(pre);
"""
_WIDE_TABLE = """
const table = document.querySelector('article table');
table.querySelector('td').style.whiteSpace = 'nowrap';
table.querySelector('td').textContent = 'x'.repeat(400);
"""
_WIDE_IMAGE = """
const img = document.querySelector('article img');
img.style.maxWidth = 'none';
img.style.width = '3000px';
"""
_SPLIT_STREAM = """
const box = document.querySelector('article div.cell_output > div.output.stream');
box.parentNode.insertBefore(box.cloneNode(true), box.nextSibling);
"""
_NO_BOOK_CSS = "document.querySelector('link[href*=\"book_site.css\"]').remove();"


@pytest.mark.parametrize(
    ("docname", "width", "script"),
    [
        (BROKEN_PAGE, 1280, _WIDE_PRE),
        (BROKEN_PAGE, 420, _WIDE_PRE),
        ("book/primitives/composition", 420, _WIDE_TABLE),
        ("book/faq/compile_time", 1280, _WIDE_IMAGE),
        # The book as it was before its stylesheet wrapped long lines.
        (BROKEN_PAGE, 1280, _NO_BOOK_CSS),
        (BROKEN_PAGE, 420, _NO_BOOK_CSS),
    ],
    ids=["wide-pre@1280", "wide-pre@420", "wide-table@420", "wide-image", "no-css@1280",
         "no-css@420"],
)
def test_the_layout_check_catches_a_wide_block(site, docname, width, script):
    site.set_width(width)
    try:
        site.load(site.url(docname))
        assert not site.measure_layout()["wide"], f"{docname} is already broken at {width} px"
        site.driver.execute_script(script)
        seen = site.measure_layout()
    finally:
        site.set_width(WIDTHS[0])
    assert seen["wide"], f"the check missed a block made too wide on {docname} at {width} px"


def test_the_stream_check_catches_a_split_output(site):
    site.load(site.url(BROKEN_PAGE))
    assert max(site.measure_layout()["stream_boxes"]) == 1
    site.driver.execute_script(_SPLIT_STREAM)
    assert max(site.measure_layout()["stream_boxes"]) == 2


def test_search_page_screenshot(site):
    site.search(SEARCH_TERM)
    png = site.screenshot(SCREENSHOTS / "search.png").read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 10_000, "search.png looks empty"


# ---------------------------------------------------------------------------------------------
# Each chapter that is a notebook, downloadable as one (jaxcourse/notebook_downloads.py).

def _source_is_notebook(docname: str) -> bool:
    from myst_nb.core.read import is_myst_markdown_notebook

    return is_myst_markdown_notebook((ROOT / f"{docname}.md").read_text(encoding="utf-8"))


def _notebook_links(page) -> list[str]:
    return [
        href
        for href in page.links
        if "/_notebooks/" in urllib.parse.urlparse(href).path and href.endswith(".ipynb")
    ]


def _code_sources(nb: nbformat.NotebookNode) -> list[str]:
    return [cell.source for cell in nb.cells if cell.cell_type == "code"]


def test_every_notebook_chapter_links_its_notebook(site, fetcher, base_url):
    """Each page whose source is a notebook (jupytext header) links exactly one .ipynb: served,
    valid, with the source's code cells; a page that is plain markdown links none."""
    import jupytext

    notebooks = [docname for docname in PAGES if _source_is_notebook(docname)]
    assert notebooks, "no page of the book is a notebook"
    for docname in PAGES:
        links = _notebook_links(site.page(docname))
        if docname not in notebooks:
            assert not links, f"{docname} is not a notebook but links {links}"
            continue
        assert len(links) == 1, f"{docname}: {len(links)} notebook links: {links}"
        href = links[0]
        assert href == urllib.parse.urljoin(base_url, f"_notebooks/{docname}.ipynb"), href
        status, body = fetcher.get(href)
        assert status == 200, f"{docname}: {href}: HTTP {status}"
        nb = nbformat.reads(body.decode("utf-8"), as_version=4)
        nbformat.validate(nb)
        source = jupytext.read(ROOT / f"{docname}.md")
        assert _code_sources(nb) == _code_sources(source), f"{href}: not the code of {docname}"
        assert _code_sources(nb), f"{href} has no code cells"
        # The kernel a reader's Jupyter starts for it is the one the book build ran the chapter
        # on; the build ran the same code in an empty temporary folder (_config.yml's
        # `run_in_temp`, tests/book/test_executed_chapters.py), as the reader's download runs.
        assert nb.metadata.get("kernelspec") == source.metadata.get("kernelspec"), href
        assert nb.metadata["kernelspec"]["name"] == "python3", nb.metadata["kernelspec"]


