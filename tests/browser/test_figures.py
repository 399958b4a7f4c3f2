"""The chapters' figures, legible on a phone and as before on a laptop (jaxcourse/_static/figures.css).

The figures are PNGs that matplotlib draws at build time, 520 to 890 px wide at 100 dpi, with
labels of 8 to 12 pt (11 to 17 px). Fitted to a 420 px window's column (about 360 px) they used to
be shown at 40 to 70% of their size, a 10-inch figure's labels at 5 to 7 px. Every figure of
every page that has one, in both editions, is checked:

- at 420 px it is shown at MIN_SCALE of its size or more (never above it), the page does not
  scroll sideways, and the figure's scroll container reaches its right edge (with the caption in
  view);
- at 1280 px it is laid out as before figures.css: as wide as its own size or the column, whichever
  is less, and nothing scrolls.
"""

from __future__ import annotations

import re

import pytest
from browser_site import HTML, WIDTHS, toc_docnames

from jaxcourse.i18n_site import ZH_SUBDIR

WIDE, NARROW = WIDTHS  # 1280, 420
# The least share of its drawn size a figure is shown at, 420 px wide. 0.65 puts matplotlib's
# 10 pt labels at 9 px and its 8 pt ones at 7 px on the screen. A laptop's 1280 px column (about
# 660 px) shows the book's widest figure (890 px) at 74%: 0.65 is a little less, while a phone is
# held nearer than a laptop's screen. More would leave less of a figure in view at once: at 0.65
# the widest figure is 580 px in a 360 px column, three fifths of it in view.
MIN_SCALE = 0.65
# An image of the book's built figures (Sphinx copies them to _images/; the theme's own pictures
# are under _static/).
_FIGURE_SRC = re.compile(r'<img\b[^>]*\bsrc="(?:\.\./)*_images/[^"]+"')


def _figure_pages() -> list[str]:
    """The pages, in both editions, with a figure, read from the built HTML."""
    pages = []
    for prefix in ("", f"{ZH_SUBDIR}/"):
        for docname in toc_docnames():
            path = HTML / f"{prefix}{docname}.html"
            if path.is_file() and _FIGURE_SRC.search(path.read_text(encoding="utf-8")):
                pages.append(f"{prefix}{docname}")
    return pages


FIGURE_PAGES = _figure_pages()

# Each figure of the article as laid out now. `drawn` is the image's size in CSS px as it was
# drawn: its width attribute where the page gives one (a 2x "retina" PNG is written with half its
# pixel width there), otherwise naturalWidth, which a srcset's density already divides. Its
# scroll container is the nearest ancestor inside the article that scrolls sideways (overflow-x
# auto or scroll); `reaches` says whether scrolling that to its end brings the image's right edge
# into view, `caption_in_view` whether the caption is then still inside the container.
_FIGURES = """
const article = document.querySelector('main article') || document.querySelector('article');
const box = article.getBoundingClientRect();
const scroller = img => {
  for (let el = img.parentElement; el && el !== article; el = el.parentElement) {
    if (['auto', 'scroll'].includes(getComputedStyle(el).overflowX)) return el;
  }
  return null;
};
return Array.from(article.querySelectorAll('img')).map(img => {
  const attr = img.getAttribute('width');
  const drawn = attr && /^\\d+(\\.\\d+)?$/.test(attr) ? parseFloat(attr) : img.naturalWidth;
  const parent = img.parentElement;
  const style = getComputedStyle(parent);
  const parentContent = parent.clientWidth - parseFloat(style.paddingLeft)
    - parseFloat(style.paddingRight);
  const container = scroller(img);
  const seen = {
    src: img.getAttribute('src').split('/').pop(),
    natural_width: img.naturalWidth,
    drawn: drawn,
    width: img.getBoundingClientRect().width,
    parent_content_width: parentContent,
    image_right: img.getBoundingClientRect().right,
    article_right: box.right,
    scroller: container ? container.tagName.toLowerCase() : null,
    scrolls: container ? container.scrollWidth > container.clientWidth + 1 : false,
    scroller_right: container ? container.getBoundingClientRect().right : null,
    reaches: null,
    caption_in_view: null,
  };
  if (container) {
    container.scrollLeft = container.scrollWidth;
    const inner = container.getBoundingClientRect();
    const end = inner.left + container.clientLeft + container.clientWidth;
    seen.reaches = img.getBoundingClientRect().right <= end + 1;
    const caption = container.querySelector(':scope > figcaption');
    if (caption) {
      const c = caption.getBoundingClientRect();
      seen.caption_in_view = c.left >= inner.left - 1 && c.right <= end + 1;
    }
    container.scrollLeft = 0;
  }
  return seen;
});
"""
_PAGE_WIDTH = "return [document.documentElement.scrollWidth, window.innerWidth]"


def _figures(site, page: str, width: int) -> tuple[list[dict], list[int]]:
    """The figures of ``page`` at ``width`` (see _FIGURES), and [page width, viewport width]."""
    site.set_width(width)
    try:
        site.load(site.url(page))
        return site.driver.execute_script(_FIGURES), site.driver.execute_script(_PAGE_WIDTH)
    finally:
        site.set_width(WIDE)


def test_figure_pages_are_found():
    english = [p for p in FIGURE_PAGES if not p.startswith(f"{ZH_SUBDIR}/")]
    # Not vacuous: the book draws figures in at least these chapters, in both editions.
    for page in ("book/core/jaxprs", "book/faq/benchmarking", "book/primitives/differentiation"):
        assert page in english and f"{ZH_SUBDIR}/{page}" in FIGURE_PAGES, page
    assert len(FIGURE_PAGES) == 2 * len(english), FIGURE_PAGES


def _laid_out(site, page: str, width: int) -> list[dict]:
    """The page's figures at ``width``, after checking it was laid out at that width, has a
    figure and does not scroll sideways."""
    figures, (page_width, viewport) = _figures(site, page, width)
    assert viewport == width, f"{page}: laid out at {viewport} px"
    assert figures, f"{page}: no figure in the article"
    assert page_width <= width, f"{page} at {width} px scrolls sideways ({page_width} px)"
    return figures


@pytest.mark.parametrize("page", FIGURE_PAGES)
def test_figures_are_legible_at_420(site, page):
    for fig in _laid_out(site, page, NARROW):
        name = f"{page}: {fig['src']}"
        scale = fig["width"] / fig["drawn"]
        assert scale >= MIN_SCALE, (
            f"{name} is shown at {scale:.0%} of its size ({fig['width']:.0f} of "
            f"{fig['drawn']:.0f} px) at {NARROW} px, less than {MIN_SCALE:.0%}"
        )
        assert scale <= 1 + 1e-3, f"{name} is blown up to {scale:.0%} of its size"
        if fig["image_right"] <= fig["article_right"] + 1:
            continue  # whole in the column
        assert fig["scroller"] and fig["scrolls"], (
            f"{name} sticks out of the column and nothing scrolls it into view"
        )
        assert fig["scroller_right"] <= fig["article_right"] + 1, (
            f"{name}: its scroll container ({fig['scroller']}) sticks out of the column"
        )
        assert fig["reaches"], f"{name}: scrolling its {fig['scroller']} does not reach its end"
        assert fig["caption_in_view"] is not False, f"{name}: its caption scrolls out of view"


@pytest.mark.parametrize("page", FIGURE_PAGES)
def test_figures_are_as_before_at_1280(site, page):
    for fig in _laid_out(site, page, WIDE):
        name = f"{page}: {fig['src']}"
        # book_site.css alone: the image's own size, or its box's width where that is less.
        expected = min(fig["drawn"], fig["parent_content_width"])
        assert abs(fig["width"] - expected) <= 1, (
            f"{name} is {fig['width']:.0f} px wide at {WIDE} px, not {expected:.0f} as before"
        )
        assert fig["image_right"] <= fig["article_right"] + 1, f"{name} sticks out of the column"
        assert not fig["scrolls"], f"{name} scrolls at {WIDE} px"


# The check above on a page without figures.css: the layout before it must fail.
_NO_FIGURES_CSS = "document.querySelector('link[href*=\"figures.css\"]').remove();"


def test_the_check_catches_figures_shrunk_to_the_column(site):
    page = "book/core/jaxprs"
    site.set_width(NARROW)
    try:
        site.load(site.url(page))
        assert site.driver.execute_script(
            "return document.querySelector('link[href*=\"figures.css\"]') !== null"
        ), f"{page} does not load figures.css"
        site.driver.execute_script(_NO_FIGURES_CSS)
        figures = site.driver.execute_script(_FIGURES)
    finally:
        site.set_width(WIDE)
    assert figures
    assert min(fig["width"] / fig["drawn"] for fig in figures) < MIN_SCALE, (
        f"without figures.css the figures of {page} are still shown at {MIN_SCALE:.0%} or more"
    )
