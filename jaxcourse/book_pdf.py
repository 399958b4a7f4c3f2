"""The book as one PDF, _build/pdf/book.pdf, printed by headless Chromium: no TeX, no network.

``python -m jaxcourse.book_pdf`` (``make pdf``):

1. ``jupyter-book build . --builder singlehtml``: every chapter on one page, _build/singlehtml.
   It shares the HTML build's environment (_build/.doctrees) and jupyter-cache, so after
   ``make book`` no chapter is read or executed again; only the page is written (~10 s).
2. That page is copied to _build/singlehtml/print.html. Sphinx writes the single page at the root
   document's path (book/intro.html) but with links relative to the output's root (_static/,
   _images/), so the copy sits at the root, where they resolve, and its links to its own
   sections (``book/intro.html#term-primitive``) become ``#term-primitive``: links inside the PDF.
   A style for print (``PRINT_CSS``) leaves out the site's buttons and sidebars, and every folded
   answer (a ``<details>`` dropdown) is printed open.
3. Debian's /usr/bin/chromium (scripts/install_browser.sh) prints it: ``--print-to-pdf``, after
   MathJax has typeset the math (``--virtual-time-budget`` lets the page's scripts finish).

``page_count`` and ``pdf_text`` read the result back with pypdf (for the make's summary line and
the browser test).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "_build"
SINGLEHTML = BUILD / "singlehtml"
PDF = BUILD / "pdf" / "book.pdf"
CHROMIUM = Path("/usr/bin/chromium")
# Milliseconds of the page's own time (timers, MathJax) Chromium lets pass before printing.
VIRTUAL_TIME_MS = 60_000

# Only for the printed page: no buttons, sidebars or search, no "previous / next" footer; code
# wraps instead of running off the page; each chapter starts a new page.
PRINT_CSS = """
<style media="print">
  .bd-header-article, .header-article-items, .bd-sidebar-primary, .bd-sidebar-secondary,
  .skip-link, #pst-back-to-top, .prev-next-area, .bd-footer, .bd-footer-content,
  .search-button__wrapper, .copybtn, .headerlink, .sidebar-index-link, .language-switch,
  .notebook-download, .bd-header, .pst-async-banner-revealer { display: none !important; }
  .bd-main .bd-content .bd-article-container { max-width: 100% !important; padding: 0 !important; }
  .bd-page-width { max-width: 100% !important; }
  pre, div.highlight pre { white-space: pre-wrap !important; overflow-wrap: anywhere; }
  pre { overflow: visible !important; }
  div.toctree-wrapper > section { break-before: page; }
</style>
"""


_FOLDED = re.compile(r"<details(?![^>]*\bopen\b)")


def build_singlehtml() -> None:
    """The whole book as one HTML page (reuses the HTML build's environment and cache)."""
    subprocess.run(
        [str(Path(sys.executable).with_name("jupyter-book")), "build", str(ROOT),
         "--builder", "singlehtml", "--warningiserror", "--keep-going"],
        check=True, cwd=ROOT,
    )


def print_page() -> Path:
    """_build/singlehtml/print.html: the single page at the root, its own links made local."""
    from jaxcourse.i18n_site import docnames

    root = docnames()[0]  # the table of contents' root, as Sphinx names it
    page = (SINGLEHTML / f"{root}.html").read_text(encoding="utf-8")
    page = page.replace(f'href="{root}.html#', 'href="#')
    page = page.replace("</head>", PRINT_CSS + "</head>", 1)
    # The exercises' answers are folded (sphinx-design dropdowns, <details>): open in print.
    page = _FOLDED.sub("<details open", page)
    out = SINGLEHTML / "print.html"
    out.write_text(page, encoding="utf-8")
    return out


def print_pdf(page: Path, pdf: Path = PDF) -> Path:
    """``page`` printed to ``pdf`` by headless Chromium."""
    if not CHROMIUM.is_file():
        raise SystemExit(f"{CHROMIUM} missing: run scripts/install_browser.sh")
    pdf.parent.mkdir(parents=True, exist_ok=True)
    pdf.unlink(missing_ok=True)
    subprocess.run(
        [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--host-resolver-rules=MAP * ~NOTFOUND", "--no-pdf-header-footer",
         "--generate-pdf-document-outline", f"--virtual-time-budget={VIRTUAL_TIME_MS}",
         f"--print-to-pdf={pdf}", page.resolve().as_uri()],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    if not pdf.is_file() or not pdf.read_bytes().startswith(b"%PDF"):
        raise SystemExit(f"Chromium wrote no PDF to {pdf}")
    return pdf


# --- reading the PDF back (pypdf) -------------------------------------------------------------

def page_count(pdf: Path = PDF) -> int:
    from pypdf import PdfReader

    return len(PdfReader(pdf).pages)


def pdf_text(pdf: Path = PDF) -> str:
    """The text the PDF shows, page after page."""
    from pypdf import PdfReader

    return "\n".join(page.extract_text() or "" for page in PdfReader(pdf).pages)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jaxcourse.book_pdf", description=__doc__
                                     .split("\n\n")[0])
    parser.add_argument("--no-build", action="store_true",
                        help="print the single page already in _build/singlehtml")
    parser.add_argument("--unless-no-chromium", action="store_true",
                        help="without Chromium, say so and exit 0 (`make book`: a machine "
                             "where scripts/install_browser.sh could not install it still "
                             "builds the site)")
    args = parser.parse_args(argv)
    if args.unless_no_chromium and not CHROMIUM.is_file():
        print(f"The PDF was not made: {CHROMIUM} is missing (scripts/install_browser.sh says how "
              "to install it; the browser test fails until it is).", file=sys.stderr)
        return 0
    started = time.monotonic()
    if not args.no_build:
        build_singlehtml()
    built = time.monotonic()
    pdf = print_pdf(print_page())
    done = time.monotonic()
    print(f"{pdf.relative_to(ROOT)}: {page_count(pdf)} pages, {pdf.stat().st_size // 1024} KiB "
          f"(singlehtml {built - started:.0f} s, print {done - built:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
