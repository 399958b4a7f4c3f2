"""What the browser test knows about the site: its pages, one browser visiting them, HTTP fetches.

One browser session visits every page once and keeps what it saw, so each check reads a cached
report instead of loading the page again.
"""

from __future__ import annotations

import os
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import yaml

from jaxcourse.i18n_site import docnames

ROOT = Path(__file__).resolve().parents[2]
# The table of contents the site was built from (a partial build may use another).
TOC = Path(os.environ.get("BOOK_TOC", ROOT / "_toc.yml"))
HTML = ROOT / "_build" / "html"
EXECUTED = ROOT / "_build" / "jupyter_execute"
SCREENSHOTS = ROOT / "_build" / "screenshots"
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
# Flags that keep Chromium from reaching out on its own (updates, sync, field trials) while it
# loads pages, and let it run as root in a container without a GPU. Host names other than the
# local server's resolve to nothing, so the test sees the site as a reader offline would, on any
# machine, with or without a network.
CHROMIUM_FLAGS = (
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
)
PAGE_TIMEOUT_S = 30
MATHJAX_TIMEOUT_S = 15
WINDOW = (1280, 1000)
# The widths a reader's page is checked and photographed at: a laptop, and a phone held upright.
WIDTHS = (1280, 420)


def toc_docnames(toc: Path = TOC) -> list[str]:
    """Every document of the table of contents, in reading order (root first)."""
    return docnames(toc)


def broken_links(site, fetcher, pagename: str) -> list[str]:
    """The links of one page to this site that answer no 200, or name an anchor the target lacks."""
    base = urllib.parse.urlparse(site.base_url)
    broken = []
    for href in site.page(pagename).links:
        url = urllib.parse.urlparse(href)
        if url.scheme not in ("http", "https") or url.netloc != base.netloc:
            continue
        target = url._replace(fragment="").geturl()
        status, _ = fetcher.get(target)
        if status != 200:
            broken.append(f"{href} (HTTP {status})")
        elif url.fragment and urllib.parse.unquote(url.fragment) not in fetcher.ids(target):
            broken.append(f"{href} (no such anchor)")
    return broken


def toc_parts(toc: Path = TOC) -> dict[str, list[str]]:
    """Caption of each part -> its documents."""
    data = yaml.safe_load(toc.read_text())
    return {
        part.get("caption", ""): [str(Path(c["file"]).with_suffix("")) for c in part["chapters"]]
        for part in data.get("parts") or ()
        if part.get("chapters")
    }


@dataclass
class PageReport:
    """What the browser saw on one page."""

    docname: str
    url: str
    console_errors: list[str]
    external_failures: list[str]  # resources from other hosts that could not load (offline)
    cells: list[dict]  # per code cell: tags, has_input, output_text, output_media, traceback
    images: list[dict]  # per <img>: src, alt, complete, natural_width, in_content
    links: list[str]  # absolute hrefs of every <a>
    downloads: list[str]  # absolute hrefs of the {download} links
    math_count: int  # math elements (inline and display) in the article
    untypeset: list[str]  # the TeX of those MathJax did not typeset
    title: str | None  # the article's <h1> as a reader sees it (no permalink sign)
    outputs: list  # per cell: the text of its outputs, widgets and captions left out (_OUTPUTS)


# The article's title, without the headerlink's sign.
_TITLE = """
const h1 = document.querySelector('article h1');
if (!h1) return null;
const copy = h1.cloneNode(true);
copy.querySelectorAll('.headerlink').forEach(a => a.remove());
return copy.textContent.trim();
"""

# The text of each cell's outputs, without what is in the page's language: the widgets the theme
# adds (the copy button's "Copy to clipboard" / "复制到剪贴板") and a figure's caption (prose,
# numbered "Fig. 1" / "图 1"); two editions of one page must show the same.
_OUTPUTS = """
return Array.from(document.querySelectorAll('article div.cell')).map(cell => {
  const output = cell.querySelector(':scope > div.cell_output');
  if (!output) return null;
  const copy = output.cloneNode(true);
  copy.querySelectorAll('button, .copybtn, .o-tooltip--left, figcaption').forEach(el => el.remove());
  return copy.textContent.trim();
});
"""


_PAGE_SCRIPT = """
const cells = Array.from(document.querySelectorAll('div.cell')).map(cell => {
  const input = cell.querySelector(':scope > div.cell_input');
  const output = cell.querySelector(':scope > div.cell_output');
  return {
    tags: Array.from(cell.classList).filter(c => c.startsWith('tag_')).map(c => c.slice(4)),
    has_input: input !== null,
    output_text: output ? output.textContent : null,
    output_media: output ? output.querySelectorAll('img, svg, table, iframe').length : 0,
    traceback: output ? output.querySelectorAll('.output.traceback').length > 0 : false,
  };
});
const content = document.querySelector('article') || document.body;
const images = Array.from(document.images).map(img => ({
  src: img.currentSrc || img.src,
  alt: img.getAttribute('alt'),
  complete: img.complete,
  natural_width: img.naturalWidth,
  in_content: content.contains(img),
}));
const math = Array.from(document.querySelectorAll('article .math'));
const untypeset = math.filter(m => !m.querySelector('mjx-container')).map(m => m.textContent);
const links = Array.from(document.querySelectorAll('a[href]')).map(a => a.href);
const downloads = Array.from(document.querySelectorAll('a.reference.download')).map(a => a.href);
return {cells, images, links, downloads, math_count: math.length, untypeset};
"""


# Resolves once MathJax has typeset the page, or at once on a page without math; gives up after
# the timeout (arguments[0], ms) so a page whose MathJax never loads is reported, not waited on.
_WAIT_FOR_MATHJAX = """
const [timeout, done] = arguments;
if (!document.querySelector('.math')) return done(true);
const until = Date.now() + timeout;
const poll = () => {
  const promise = window.MathJax && MathJax.startup && MathJax.startup.promise;
  if (promise) return promise.then(() => done(true), () => done(false));
  if (Date.now() > until) return done(false);
  setTimeout(poll, 50);
};
poll();
"""


# What the article holds that a reader reads across: code, outputs, tables, figures, math, prose.
# Each must fit its box: no scroll bar hiding the end of a line, nothing sticking out of the
# article column. Inline elements are left out (their clientWidth is always 0), as are the
# theme's own widgets (copy buttons, header links), which sit inside these blocks anyway.
BLOCKS = (
        "pre",
        "div.highlight",
        "div.cell",
        "div.cell_input",
        "div.cell_output",
        "div.output",
        "table",
        ".pst-scrollable-table-container",
        "figure",
        "img",
        'mjx-container[display="true"]',
        "div.admonition",
        "blockquote",
        "p",
        "li",
        "dl",
        "section",
)
BLOCK_SELECTOR = ", ".join(BLOCKS)

# Returns what the reader sees of the article's layout at the current window width: every block
# that hides or spills content (scrollWidth > clientWidth, or its right edge past the article's),
# how many blocks were checked, and each code cell's number of stream output boxes.
_LAYOUT_SCRIPT = """
const selector = arguments[0];
const article = document.querySelector('main article') || document.querySelector('article');
if (!article) return null;
const right = article.getBoundingClientRect().right;
const name = el => el.tagName.toLowerCase() + Array.from(el.classList).slice(0, 3)
  .map(c => '.' + c).join('');
const rendered = el => el.getClientRects().length > 0
  && getComputedStyle(el).visibility !== 'hidden';
const blocks = [article, ...article.querySelectorAll(selector)].filter(rendered);
// A figure that scrolls sideways on purpose (jaxcourse/_static/figures.css, narrow screens): its
// image may be wider than the column inside it; tests/browser/test_figures.py checks the rest.
const scrollsFigure = el => el.matches('figure, div.cell_output')
  && el.querySelector(':scope > img') !== null
  && ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
const inScrollingFigure = el => {
  for (let up = el.parentElement; up && up !== article; up = up.parentElement) {
    if (scrollsFigure(up)) return true;
  }
  return false;
};
const isWide = el => {
  const box = el.getBoundingClientRect();
  const hides = el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1 && !scrollsFigure(el);
  const spills = box.right > right + 1 && !inScrollingFigure(el);
  return hides || spills;
};
const wide = [];
for (const el of blocks) {
  const box = el.getBoundingClientRect();
  if (isWide(el)) {
    wide.push({
      block: name(el),
      scroll_width: el.scrollWidth,
      client_width: el.clientWidth,
      right: Math.round(box.right),
      text: (el.textContent || el.getAttribute('src') || '').trim().slice(0, 120),
    });
  }
}
// A block whose only fault is a wide block inside it is the same fault: count the innermost.
const flagged = blocks.filter(isWide);
const innermost = flagged.filter(el => !flagged.some(other => other !== el && el.contains(other)));
const streams = Array.from(article.querySelectorAll('div.cell')).map(cell =>
  cell.querySelectorAll(':scope > div.cell_output > div.output.stream, '
    + ':scope > div.cell_output > div.output.stderr').length);
return {
  viewport_width: window.innerWidth,
  page_width: document.documentElement.scrollWidth,
  article_width: article.clientWidth,
  checked: blocks.length,
  checked_code: blocks.filter(el => el.tagName === 'PRE').length,
  wide,
  wide_innermost: innermost.length,
  stream_boxes: streams,
};
"""


@dataclass
class LayoutReport:
    """How one page lays out at one window width."""

    docname: str
    width: int
    viewport_width: int  # window.innerWidth, to prove the page was laid out at `width`
    page_width: int  # the document's scrollWidth: wider than the viewport = sideways scrolling
    article_width: int
    checked: int  # blocks checked
    checked_code: int  # of which <pre> (code and outputs)
    wide: list[dict]  # every block that hides or spills content
    wide_innermost: int  # the same, counting a nest of wide blocks once
    stream_boxes: list[int]  # per code cell, its stdout/stderr boxes
    screenshot: Path | None


class Site:
    """The served site and one browser; visits each page at most once (``page``: everything the
    tests read from a page is taken at that one visit)."""

    def __init__(self, base_url: str, driver):
        self.base_url = base_url
        self.driver = driver
        self._reports: dict[str, PageReport] = {}
        self._layouts: dict[tuple[str, int], LayoutReport] = {}

    def url(self, docname: str) -> str:
        return urllib.parse.urljoin(self.base_url, f"{docname}.html")

    def console_errors(self) -> tuple[list[str], list[str]]:
        """SEVERE browser-log entries since the last call: (the page's own, external loads).

        A resource from another host fails to load because the test runs offline; those
        failures are returned apart, as the URLs, so the test can hold them to an allowlist.
        """
        own, external = [], []
        for entry in self.driver.get_log("browser"):
            if entry["level"] != "SEVERE":
                continue
            message = entry["message"]
            url, _, rest = message.partition(" - ")
            host = urllib.parse.urlparse(url).hostname
            if rest.startswith("Failed to load resource") and host not in (None, "127.0.0.1"):
                external.append(url)
            else:
                own.append(message)
        return own, external

    def load(self, url: str) -> None:
        from selenium.webdriver.support.ui import WebDriverWait

        self.console_errors()  # drop anything left over from the previous page
        self.driver.get(url)
        wait = WebDriverWait(self.driver, PAGE_TIMEOUT_S)
        wait.until(lambda d: d.execute_script("return document.readyState") == "complete")
        wait.until(
            lambda d: d.execute_script(
                "return Array.from(document.images).every(i => i.complete)"
            )
        )
        self.driver.execute_async_script(_WAIT_FOR_MATHJAX, MATHJAX_TIMEOUT_S * 1000)

    def page(self, docname: str) -> PageReport:
        if docname not in self._reports:
            url = self.url(docname)
            self.load(url)
            seen = self.driver.execute_script(_PAGE_SCRIPT)
            own, external = self.console_errors()
            self._reports[docname] = PageReport(
                docname=docname,
                url=url,
                console_errors=own,
                external_failures=external,
                cells=seen["cells"],
                images=seen["images"],
                links=seen["links"],
                downloads=seen["downloads"],
                math_count=seen["math_count"],
                untypeset=seen["untypeset"],
                title=self.driver.execute_script(_TITLE),
                outputs=self.driver.execute_script(_OUTPUTS),
            )
        return self._reports[docname]

    def search(self, term: str) -> tuple[int, str]:
        """Runs the site's own search page; returns (number of results, its summary line)."""
        from selenium.common.exceptions import TimeoutException
        from selenium.webdriver.support.ui import WebDriverWait

        self.load(urllib.parse.urljoin(self.base_url, f"search.html?q={urllib.parse.quote(term)}"))
        count = "return document.querySelectorAll('#search-results ul.search li').length"
        try:
            WebDriverWait(self.driver, PAGE_TIMEOUT_S).until(
                lambda d: d.execute_script(count) > 0
            )
        except TimeoutException:
            pass
        summary = self.driver.execute_script(
            "const s = document.querySelector('#search-results'); return s ? s.innerText : ''"
        )
        return self.driver.execute_script(count), summary

    def set_width(self, width: int) -> None:
        """Resize the window to ``width`` CSS pixels (headless Chromium's window has no frame, so
        that is the viewport's width; the layout report records window.innerWidth to prove it)."""
        self.driver.set_window_size(width, WINDOW[1])

    def measure_layout(self) -> dict:
        """The layout report of the page loaded now (see _LAYOUT_SCRIPT)."""
        return self.driver.execute_script(_LAYOUT_SCRIPT, BLOCK_SELECTOR)

    def layout(self, docname: str, width: int, *, screenshot: bool = True) -> LayoutReport:
        """Load ``docname`` at ``width``, measure what fits, and photograph the whole page."""
        key = (docname, width)
        if key not in self._layouts:
            self.set_width(width)
            try:
                self.load(self.url(docname))
                seen = self.measure_layout()
                dest = None
                if screenshot:
                    name = f"{docname.replace('/', '__')}@{width}.png"
                    dest = self.screenshot(SCREENSHOTS / name)
            finally:
                self.set_width(WINDOW[0])
            assert seen is not None, f"{docname}: no <article> on the page"
            self._layouts[key] = LayoutReport(docname=docname, width=width, screenshot=dest, **seen)
        return self._layouts[key]

    def screenshot(self, dest: Path) -> Path:
        """A PNG of the whole page loaded now, top to bottom, at the window's width.

        The window is made as tall as the page, so the theme lays the page out as a reader's
        browser does (Chromium's capture-beyond-viewport mode lays it out wrongly), then put back.
        """
        size = self.driver.get_window_size()
        # What the window's height has beyond the page's viewport (none in headless Chromium).
        frame = size["height"] - self.driver.execute_script("return window.innerHeight")
        page_height = "return document.documentElement.scrollHeight"
        try:
            # Twice: the taller window may lay the page out a little differently.
            for _ in range(2):
                full = self.driver.execute_script(page_height)
                self.driver.set_window_size(size["width"], full + frame)
            png = self.driver.get_screenshot_as_png()
        finally:
            self.driver.set_window_size(size["width"], size["height"])
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(png)
        return dest


class _IdCollector(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for key, value in attrs:
            if key in ("id", "name") and value:
                self.ids.add(value)


class Fetcher:
    """HTTP GETs against the local server, each URL fetched once."""

    def __init__(self):
        self._bodies: dict[str, tuple[int, bytes]] = {}
        self._ids: dict[str, frozenset[str]] = {}

    def get(self, url: str) -> tuple[int, bytes]:
        if url not in self._bodies:
            try:
                with urllib.request.urlopen(url, timeout=PAGE_TIMEOUT_S) as response:
                    self._bodies[url] = (response.status, response.read())
            except urllib.error.HTTPError as err:
                self._bodies[url] = (err.code, b"")
        return self._bodies[url]

    def ids(self, url: str) -> frozenset[str]:
        """The id (and name) attributes of the HTML page at ``url``: its link anchors."""
        if url not in self._ids:
            collector = _IdCollector()
            collector.feed(self.get(url)[1].decode("utf-8", "replace"))
            self._ids[url] = frozenset(collector.ids)
        return self._ids[url]
