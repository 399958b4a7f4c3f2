"""The Simplified Chinese edition (_build/html/zh), read in the browser, and the language switch.

Every page of the table of contents is opened in the Chinese edition: it loads without console
errors, says it is Chinese, shows its translated title, links only to pages that exist, and shows
the same cell outputs as the English page (the two editions share one jupyter-cache, so the
outputs are the very same). On every page the switch at the top leads to the same page in the
other edition, both ways, and does so from file:// too (its links are relative).
"""

from __future__ import annotations

import re
import urllib.parse

import pytest
from browser_site import HTML, PAGE_TIMEOUT_S, WIDTHS, WINDOW, broken_links, toc_docnames

from jaxcourse.i18n_site import (
    LABELS,
    LANGUAGE,
    ZH_SUBDIR,
    book_title,
    catalogue_path,
    read_catalogue,
    translated_book_title,
)

PAGES = toc_docnames()
SWITCH = "a.language-switch"

def zh(docname: str) -> str:
    return f"{ZH_SUBDIR}/{docname}"


def _rendered(markdown: str) -> str:
    """The text a reader sees of a one-line MyST title."""
    return re.sub(r"[`*]", "", markdown).strip()


def _switch(site):
    """(the link, its href as written, text, hreflang) of the page's language switch; fails if
    there is none, or more than one, or it is hidden."""
    from selenium.webdriver.common.by import By

    links = site.driver.find_elements(By.CSS_SELECTOR, SWITCH)
    assert len(links) == 1, f"{site.driver.current_url}: {len(links)} language switches"
    link = links[0]
    assert link.is_displayed(), f"{site.driver.current_url}: the language switch is hidden"
    href = link.get_dom_attribute("href")
    return link, href, link.text.strip(), link.get_attribute("hreflang")


_BOXES = """
const box = el => { const r = el.getBoundingClientRect(); return [r.top, r.bottom, r.left, r.right]; };
const buttons = document.querySelector('.bd-header-article .article-header-buttons');
return {link: box(arguments[0]), buttons: buttons ? box(buttons) : null,
        width: document.documentElement.clientWidth};
"""


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("docname", [PAGES[0], "book/faq/tracers", "book/guides/students"])
def test_switch_is_whole_on_screen_beside_the_header_buttons(site, docname, width):
    """At the top of the page the switch is inside the window, not cut off at its top edge, and
    on the row of the theme's header buttons (it once sat above them, half off the page)."""
    site.set_width(width)
    try:
        for page in (docname, zh(docname)):
            site.load(site.url(page))
            link, *_ = _switch(site)
            got = site.driver.execute_script(_BOXES, link)
            top, bottom, left, right = got["link"]
            assert top >= 0 and left >= 0 and right <= got["width"], (page, width, got)
            b_top, b_bottom, *_ = got["buttons"]
            assert top < b_bottom and bottom > b_top, f"{page} at {width} px: not beside {got}"
    finally:
        site.set_width(WINDOW[0])


def _is_relative(href: str) -> bool:
    url = urllib.parse.urlparse(href)
    return not url.scheme and not url.netloc and not href.startswith("/")


def _follow(site, link) -> str:
    from selenium.webdriver.support.ui import WebDriverWait

    before = site.driver.current_url
    link.click()
    WebDriverWait(site.driver, PAGE_TIMEOUT_S).until(lambda d: d.current_url != before)
    WebDriverWait(site.driver, PAGE_TIMEOUT_S).until(
        lambda d: d.execute_script("return document.readyState") == "complete"
    )
    return site.driver.current_url


@pytest.mark.parametrize("docname", PAGES)
def test_chinese_page_loads_without_console_errors(site, fetcher, docname):
    report = site.page(zh(docname))
    assert not report.console_errors, f"{report.url}: console errors: {report.console_errors}"
    assert not report.external_failures, f"{report.url}: {report.external_failures}"
    status, body = fetcher.get(report.url)
    lang = re.search(rb"<html[^>]*\slang=\"([^\"]*)\"", body)
    assert status == 200 and lang and lang.group(1).lower().startswith(b"zh"), (
        f"{report.url}: HTTP {status}, <html lang={lang and lang.group(1)!r}>"
    )


@pytest.mark.parametrize("docname", [PAGES[0], "book/faq/tracers"])
def test_chinese_edition_names_the_book_in_chinese(fetcher, site, docname):
    """The site's title (browser tab, sidebar) is the root page's translated title."""
    title = translated_book_title()
    assert title != book_title() and re.search(r"[\u4e00-\u9fff]", title), title
    _, body = fetcher.get(site.url(zh(docname)))
    text = body.decode("utf-8")
    assert re.search(rf"<title>[^<]*{re.escape(title)}</title>", text), docname
    assert book_title() not in text.split("<article", 1)[0].split("</head>", 1)[1], docname


@pytest.mark.parametrize("docname", PAGES)
def test_chinese_page_shows_its_translated_title(site, docname):
    english, shown = site.page(docname).title, site.page(zh(docname)).title
    catalogue = {m.id: m for m in read_catalogue(catalogue_path(docname)) if m.id}
    msgid = next((i for i in catalogue if _rendered(i) == english), None)
    assert msgid is not None, f"{docname}: its title {english!r} is not in its catalogue"
    message = catalogue[msgid]
    expected = english if (not message.string or message.fuzzy) else _rendered(message.string)
    assert shown == expected, f"{zh(docname)}: title {shown!r}, the catalogue says {expected!r}"


@pytest.mark.parametrize("docname", PAGES)
def test_chinese_page_shows_the_english_outputs(site, docname):
    """The two editions share one jupyter-cache: a page's outputs are the very same."""
    english, chinese = site.page(docname).outputs, site.page(zh(docname)).outputs
    assert chinese == english, f"{zh(docname)}: its cell outputs differ from the English page's"


@pytest.mark.parametrize("docname", PAGES)
def test_chinese_internal_links_resolve(site, fetcher, docname):
    broken = broken_links(site, fetcher, zh(docname))
    assert not broken, f"{zh(docname)}: broken links: {broken}"


@pytest.mark.parametrize("docname", PAGES)
def test_switch_leads_to_the_same_page_both_ways(site, docname):
    site.load(site.url(docname))
    link, href, text, hreflang = _switch(site)
    assert (text, hreflang) == (LABELS[LANGUAGE], "zh-CN") and _is_relative(href), (docname, href)
    assert _follow(site, link) == site.url(zh(docname))
    link, href, text, hreflang = _switch(site)
    assert (text, hreflang) == (LABELS["en"], "en") and _is_relative(href), (docname, href)
    assert _follow(site, link) == site.url(docname)


@pytest.mark.parametrize("docname", [PAGES[0], "book/faq/tracers"])
def test_switch_works_from_files(site, docname):
    """Opened from disk, without a server: the switch's links are relative."""
    english = (HTML / f"{docname}.html").as_uri()
    chinese = (HTML / ZH_SUBDIR / f"{docname}.html").as_uri()
    site.load(english)
    assert _follow(site, _switch(site)[0]) == chinese
    assert _follow(site, _switch(site)[0]) == english


@pytest.mark.parametrize("section", ["fixes"])
def test_switch_keeps_the_section_being_read(site, section):
    """Scrolled to a section, the switch opens the other edition at that section (the two
    editions give it the same id), and back; unscrolled, at the top (the tests above)."""
    docname = "book/faq/tracers"
    for start, other in ((docname, zh(docname)), (zh(docname), docname)):
        site.load(site.url(start))
        site.driver.execute_script(
            "document.getElementById(arguments[0]).scrollIntoView(); window.scrollBy(0, 5);",
            section)
        landed = _follow(site, _switch(site)[0])
        assert landed == f"{site.url(other)}#{section}", landed
        top = site.driver.execute_script(
            "return document.getElementById(arguments[0]).getBoundingClientRect().top;", section)
        assert abs(top) < 200, f"{landed}: the section is {top}px from the top of the window"
