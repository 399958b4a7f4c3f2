"""The book's apparatus: the glossary as Sphinx glossary terms, the chapters' links to it, the
general index, and the PDF.

Needs `make book` (_build/html, _build/html/zh and _build/pdf/book.pdf; jaxcourse/glossary_links.py
makes the terms, links and index entries, jaxcourse/book_pdf.py the PDF) and, for the checks of
what a reader sees, Debian's chromium and chromedriver (scripts/install_browser.sh).
"""

from __future__ import annotations

import re
import unicodedata
import urllib.parse
from html.parser import HTMLParser

import pytest
from browser_site import HTML, ROOT, WIDTHS, toc_docnames

from jaxcourse.book_pdf import PDF, page_count, pdf_text
from jaxcourse.glossary_links import GLOSSARY, names, terms
from jaxcourse.i18n_site import ZH_SUBDIR

PAGES = toc_docnames()
CHAPTERS = [d for d in PAGES if d != GLOSSARY]
GLOSSARY_HTML = f"{GLOSSARY}.html"
# A chapter of each part, and the glossary anchor of a term that chapter uses in its prose.
SAMPLE = {
    "book/primitives/watching_jax": "term-primitive",
    "book/autodidax/interpreters": "term-interpreter",
    # "donating": a form of donation, whose entry is the row of buffer donation
    "book/faq/donation": "term-buffer-donation",
    "book/kernels/ffi_cpu": "term-lowering",
}


class _Links(HTMLParser):
    """Every <a href> of a page with its text and the tags it sits in; every id."""

    def __init__(self):
        super().__init__()
        self.links: list[dict] = []
        self.ids: set[str] = set()
        self._stack: list[tuple[str, str]] = []
        self._open: list[dict] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag in ("br", "img", "meta", "link", "input", "hr", "col", "source", "wbr"):
            return
        self._stack.append((tag, attrs.get("class") or ""))
        if tag == "a" and attrs.get("href"):
            link = {"href": attrs["href"], "text": "", "classes": attrs.get("class") or "",
                    "inside": list(self._stack[:-1])}
            self.links.append(link)
            self._open.append(link)

    def handle_endtag(self, tag):
        while self._stack:
            open_tag, _ = self._stack.pop()
            if open_tag == "a" and self._open:
                self._open.pop()
            if open_tag == tag:
                break

    def handle_data(self, data):
        for link in self._open:
            link["text"] += data


def _parse(path) -> _Links:
    if not path.is_file():
        pytest.fail(f"{path} not built: run `make book`")
    parser = _Links()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def _glossary_links(docname: str, edition: str = "") -> list[dict]:
    """The page's links to glossary terms: href ending in <glossary>.html#term-..."""
    page = _parse(HTML / edition / f"{docname}.html")
    links = []
    for link in page.links:
        # Relative to the page: ../appendix/glossary.html#term-primitive.
        href = urllib.parse.urljoin(f"{docname}.html", link["href"])
        url = urllib.parse.urlparse(href)
        if url.path == GLOSSARY_HTML and url.fragment.startswith("term-"):
            links.append({**link, "href": href})
    return links


def _anchor(href: str) -> str:
    return urllib.parse.unquote(urllib.parse.urlparse(href).fragment)


# --- the glossary's terms ---------------------------------------------------------------------


def test_every_term_is_a_sphinx_glossary_term():
    """Each name of the term list is in Sphinx's inventory as a glossary term (std:term), at an
    anchor of the glossary page that exists."""
    from sphinx.util.inventory import InventoryFile

    with (HTML / "objects.inv").open("rb") as f:
        inventory = InventoryFile.load(f, "", lambda base, uri: uri)
    registered = inventory.get("std:term", {})
    ids = _parse(HTML / GLOSSARY_HTML).ids
    missing, dangling = [], []
    for term in terms():
        for name in names(term):
            entry = registered.get(name) or registered.get(name.lower())
            if entry is None:
                missing.append(name)
                continue
            uri = entry[2]
            if not uri.startswith(GLOSSARY_HTML) or _anchor(uri) not in ids:
                dangling.append(f"{name} -> {uri}")
    assert not missing, f"not glossary terms: {missing}"
    assert not dangling, f"glossary terms whose anchor the glossary page lacks: {dangling}"


@pytest.mark.parametrize("edition", ["", ZH_SUBDIR])
def test_chapters_link_terms_to_the_glossary(edition):
    """The chapters link terms to anchors the glossary page has, each term once a page, never from
    code, a heading or a cell's output; the English text of a link is the term (one of its forms),
    the Chinese the term's Chinese word."""
    ids = _parse(HTML / edition / GLOSSARY_HTML).ids
    # The words a link may show -> its term.
    if edition:
        owner = {t["zh"].lower(): t["en"] for t in terms()}
    else:
        owner = {" ".join(f.lower().split()): t["en"] for t in terms() for f in t["forms"]}
    total, bad = 0, []
    pages_with_links = 0
    for docname in CHAPTERS:
        links = _glossary_links(docname, edition)
        pages_with_links += bool(links)
        total += len(links)
        linked = []
        for link in links:
            anchor = _anchor(link["href"])
            text = " ".join(link["text"].lower().split())
            where = f"{edition or 'en'} {docname}: {link['text']!r} -> #{anchor}"
            if anchor not in ids:
                bad.append(f"{where}: no such anchor")
            if text not in owner:
                bad.append(f"{where}: the link's text is not the term")
            linked.append(owner.get(text))
            tags = {tag for tag, _ in link["inside"]}
            classes = " ".join(cls for _, cls in link["inside"])
            if tags & {"pre", "code", "h1", "h2", "h3", "h4", "h5", "h6"} or "cell_output" in classes:
                bad.append(f"{where}: inside {sorted(tags)}")
        twice = {t for t in linked if t and linked.count(t) > 1}
        if twice:
            bad.append(f"{edition or 'en'} {docname}: terms linked more than once: {sorted(twice)}")
    assert not bad, "\n".join(bad[:30])
    # Not vacuous: most chapters use some term.
    assert pages_with_links >= 0.8 * len(CHAPTERS), f"{pages_with_links} of {len(CHAPTERS)}"
    assert total >= 5 * len(CHAPTERS), total


@pytest.mark.parametrize("docname,anchor", SAMPLE.items())
def test_a_chapter_links_its_term(docname, anchor):
    anchors = {_anchor(link["href"]) for link in _glossary_links(docname)}
    assert anchor in anchors, f"{docname} does not link to #{anchor}: {sorted(anchors)}"


def test_a_chinese_chapter_links_the_chinese_term():
    links = _glossary_links("book/primitives/watching_jax", ZH_SUBDIR)
    texts = {_anchor(link["href"]): link["text"].strip() for link in links}
    assert texts.get("term-primitive") == "原语", texts


# --- the index --------------------------------------------------------------------------------


@pytest.mark.parametrize("edition", ["", ZH_SUBDIR])
def test_the_index_lists_the_glossary_terms(edition):
    """genindex.html has an entry for every term of the term list, leading to its glossary row,
    and entries leading to the chapters that use the terms (the links back)."""
    page = _parse(HTML / edition / "genindex.html")
    glossary = [link for link in page.links if link["href"].startswith(f"{GLOSSARY_HTML}#term-")]
    chapters = [link for link in page.links
                if any(link["href"].startswith(f"{d}.html#glossary-use-") for d in CHAPTERS)]
    assert len(glossary) >= len(terms()), f"{len(glossary)} index entries lead to the glossary"
    assert len(chapters) >= 2 * len(CHAPTERS), f"{len(chapters)} index entries lead to chapters"
    shown = {" ".join(link["text"].split()) for link in glossary}
    for term in terms():
        if edition:
            expected = names(term)[0] if term["zh"] == names(term)[0] \
                else f"{term['zh']}（{term['en']}）"
            assert expected in shown, f"the Chinese index lacks {expected!r}"
        else:
            assert set(names(term)) <= shown, f"the index lacks {names(term)}"
    # Each chapter entry's anchor exists on its chapter.
    for link in chapters[:: max(1, len(chapters) // 40)]:
        path = urllib.parse.urlparse(link["href"]).path
        ids = _parse(HTML / edition / path).ids
        assert _anchor(link["href"]) in ids, f"{link['href']}: no such anchor"
    if edition:
        # Grouped by the English initials, not one heading per Chinese character.
        headings = re.findall(r'<h2 id="([^"]+)"', (HTML / edition / "genindex.html")
                              .read_text(encoding="utf-8"))
        assert headings and all(re.fullmatch(r"[A-Z]", h) for h in headings), headings


@pytest.mark.parametrize("edition", ["", ZH_SUBDIR])
def test_every_page_links_the_index(edition):
    for docname in (PAGES[0], GLOSSARY, "book/faq/donation"):
        page = _parse(HTML / edition / f"{docname}.html")
        hrefs = {urllib.parse.urlparse(link["href"]).path.rsplit("/", 1)[-1] for link in page.links}
        assert "genindex.html" in hrefs, f"{edition or 'en'} {docname}: no link to the index"


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("pagename", ["genindex", f"{ZH_SUBDIR}/genindex"])
def test_the_index_fits_the_window(site, pagename, width):
    layout = site.layout(pagename, width)
    assert layout.viewport_width == width
    assert layout.checked > 0
    assert not layout.wide, f"{pagename} at {width} px: {layout.wide[:4]}"
    assert layout.page_width <= width, f"{pagename} at {width} px scrolls sideways"


def test_a_glossary_link_leads_to_its_row(site):
    """Clicked in a browser, a chapter's link lands on the glossary's row of the term."""
    from selenium.webdriver.common.by import By

    site.load(site.url("book/primitives/watching_jax"))
    link = site.driver.find_element(
        By.CSS_SELECTOR, 'article a[href$="glossary.html#term-primitive"]')
    assert link.text.strip() == "primitive"
    site.driver.execute_script("arguments[0].click()", link)
    row = site.driver.execute_script(
        "const t = document.querySelector(':target'); return t && [t.tagName, t.id, t.innerText]")
    assert row is not None, site.driver.current_url
    assert row[0] == "TR" and row[1] == "term-primitive", row
    assert row[2].strip().startswith("primitive"), row


# --- the PDF ----------------------------------------------------------------------------------


def _squeezed(text: str) -> str:
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


@pytest.fixture(scope="module")
def pdf_path():
    if not PDF.is_file():
        pytest.fail(f"{PDF.relative_to(ROOT)} missing: run `make pdf` (or `make book`)")
    return PDF


def test_the_pdf_is_a_pdf_of_many_pages(pdf_path):
    data = pdf_path.read_bytes()
    assert data.startswith(b"%PDF-"), data[:16]
    assert data.rstrip().endswith(b"%%EOF")
    # The chapters, one page each at the very least, and then some.
    assert page_count(pdf_path) >= 5 * len(PAGES), page_count(pdf_path)


def test_the_pdf_has_every_part_of_the_book(pdf_path):
    from jaxcourse.i18n_site import book_title

    text = _squeezed(pdf_text(pdf_path))
    title = re.compile(r"^#\s+(.+)$", re.MULTILINE)
    expected = [book_title()]
    for docname in [*SAMPLE, GLOSSARY, "book/guides/students"]:
        heading = title.search((ROOT / f"{docname}.md").read_text(encoding="utf-8")).group(1)
        expected.append(re.sub(r"[`*]", "", heading))
    # And prose from inside chapters, and an output printed by a cell.
    expected += ["Everything JAX does to a program, it does one primitive at a time",
                 "ArrayImpl [1. 2. 5.]",
                 # inside a folded answer (watching_jax, exercise 1): printed open
                 "requires operands of one dtype and raises a"]
    missing = [s for s in expected if _squeezed(s) not in text]
    assert not missing, f"the PDF lacks {missing}"
    # MathJax had typeset the math before the page was printed: no TeX is left.
    assert "\\frac" not in text and "$$" not in text
