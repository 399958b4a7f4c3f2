"""The built book, read in a real browser: every page of the table of contents, as a reader sees it.

Needs `_build/html` (the Makefile's `make test` builds the book first) and Debian's chromium and
chromedriver (scripts/install_browser.sh). Screenshots of a few pages land in _build/screenshots/.
"""

from __future__ import annotations

import urllib.parse
from pathlib import Path

import nbformat
import pytest
from browser_site import EXECUTED, ROOT, SCREENSHOTS, toc_docnames, toc_parts

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
    base = urllib.parse.urlparse(site.base_url)
    broken = []
    for href in site.page(docname).links:
        url = urllib.parse.urlparse(href)
        if url.scheme not in ("http", "https") or url.netloc != base.netloc:
            continue
        target = url._replace(fragment="").geturl()
        status, _ = fetcher.get(target)
        if status != 200:
            broken.append(f"{href} (HTTP {status})")
        elif url.fragment and urllib.parse.unquote(url.fragment) not in fetcher.ids(target):
            broken.append(f"{href} (no such anchor)")
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


def _screenshot_pages() -> list[str]:
    """The front page, the first page of each part, and the last page of the book."""
    chosen = [PAGES[0]] + [docs[0] for docs in toc_parts().values()] + [PAGES[-1]]
    return list(dict.fromkeys(chosen))


def test_screenshots(site):
    """Saves screenshots (test artefacts, for a person to look at) of a few pages."""
    saved = []
    for docname in _screenshot_pages():
        site.load(site.url(docname))
        saved.append(site.screenshot(SCREENSHOTS / f"{docname.replace('/', '__')}.png"))
    site.search(SEARCH_TERM)
    saved.append(site.screenshot(SCREENSHOTS / "search.png"))
    for png in saved:
        data = png.read_bytes()
        assert data.startswith(b"\x89PNG") and len(data) > 10_000, f"{png} looks empty"
