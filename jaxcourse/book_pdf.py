"""The book as one PDF, _build/pdf/book.pdf, printed by headless Chromium: no TeX, no network.

``python -m jaxcourse.book_pdf`` (``make pdf``):

1. ``jupyter-book build . --builder singlehtml``: every chapter on one page, _build/singlehtml.
   It shares the HTML build's environment (_build/.doctrees) and jupyter-cache, so after
   ``make book`` no chapter is read or executed again; only the page is written (~10 s).
2. That page is copied to _build/singlehtml/print.html. Sphinx writes the single page at the root
   document's path (book/intro.html) but with links relative to the output's root (_static/,
   _images/), so the copy sits at the root, where they resolve, and its links to its own
   sections (``book/intro.html#term-primitive``) become ``#term-primitive``: links inside the PDF.
   A style for print (``PRINT_CSS``) leaves out the site's buttons and sidebars.
3. Debian's /usr/bin/chromium (scripts/install_browser.sh) prints it: ``--print-to-pdf``, after
   MathJax has typeset the math (``--virtual-time-budget`` lets the page's scripts finish).

``page_count`` and ``pdf_text`` read the result back without a PDF library (the project has
none): the page objects, and the text of Chromium's (Skia's) PDFs, whose content streams are
Flate-compressed and show glyph ids that each font's ToUnicode map turns back into characters.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
import zlib
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


def _root_docname() -> str:
    import yaml

    return str(Path(yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))["root"])
               .with_suffix(""))


def build_singlehtml() -> None:
    """The whole book as one HTML page (reuses the HTML build's environment and cache)."""
    subprocess.run(
        [str(Path(sys.executable).with_name("jupyter-book")), "build", str(ROOT),
         "--builder", "singlehtml", "--warningiserror", "--keep-going"],
        check=True, cwd=ROOT,
    )


def print_page() -> Path:
    """_build/singlehtml/print.html: the single page at the root, its own links made local."""
    root = _root_docname()
    page = (SINGLEHTML / f"{root}.html").read_text(encoding="utf-8")
    page = page.replace(f'href="{root}.html#', 'href="#')
    page = page.replace("</head>", PRINT_CSS + "</head>", 1)
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


# --- reading the PDF back ---------------------------------------------------------------------

_OBJECT = re.compile(rb"(\d+) 0 obj\s*(.*?)endobj", re.DOTALL)
_STREAM = re.compile(rb"stream\r?\n(.*?)\r?\nendstream", re.DOTALL)


def _objects(data: bytes) -> dict[int, tuple[bytes, bytes | None]]:
    """Object number -> (its dictionary, its stream inflated, or None)."""
    objects = {}
    for match in _OBJECT.finditer(data):
        body = match.group(2)
        stream = _STREAM.search(body)
        raw = None
        if stream:
            raw = stream.group(1)
            if b"/FlateDecode" in body[: stream.start()]:
                try:
                    raw = zlib.decompress(raw)
                except zlib.error:
                    raw = b""
        objects[int(match.group(1))] = (body[: stream.start()] if stream else body, raw)
    return objects


def page_count(pdf: Path = PDF) -> int:
    """How many pages: the page objects (``/Type /Page``, not the tree's ``/Pages``)."""
    return len(re.findall(rb"/Type\s*/Page(?![A-Za-z])", pdf.read_bytes()))


def _to_unicode(cmap: bytes) -> dict[int, str]:
    table: dict[int, str] = {}

    def text(hexstr: bytes) -> str:
        return bytes.fromhex(hexstr.decode()).decode("utf-16-be", "replace")

    for block in re.findall(rb"beginbfchar(.*?)endbfchar", cmap, re.DOTALL):
        for src, dst in re.findall(rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>", block):
            table[int(src, 16)] = text(dst)
    for block in re.findall(rb"beginbfrange(.*?)endbfrange", cmap, re.DOTALL):
        for lo, hi, dst in re.findall(
            rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>\s*(<[0-9A-Fa-f]+>|\[[^\]]*\])", block
        ):
            lo, hi = int(lo, 16), int(hi, 16)
            if dst.startswith(b"["):
                for code, one in zip(range(lo, hi + 1), re.findall(rb"<([0-9A-Fa-f]+)>", dst)):
                    table[code] = text(one)
            else:
                start = bytes.fromhex(dst[1:-1].decode())
                base = int.from_bytes(start, "big")
                for code in range(lo, hi + 1):
                    value = (base + code - lo).to_bytes(len(start), "big")
                    table[code] = value.decode("utf-16-be", "replace")
    return table


def pdf_text(pdf: Path = PDF) -> str:
    """The text the PDF shows, page after page (spaces between runs of text, roughly)."""
    objects = _objects(pdf.read_bytes())
    # Each font's glyph map, by object number; each page's fonts, by resource name.
    maps = {num: _to_unicode(objects[int(ref)][1] or b"")
            for num, (head, _) in objects.items()
            for ref in re.findall(rb"/ToUnicode\s+(\d+) 0 R", head)
            if int(ref) in objects}
    chunks = []
    for head, _ in objects.values():
        if not re.search(rb"/Type\s*/Page(?![A-Za-z])", head):
            continue
        fonts_dict = re.search(rb"/Font\s*<<(.*?)>>", head, re.DOTALL)
        if fonts_dict is None:
            ref = re.search(rb"/Resources\s+(\d+) 0 R", head)
            resources = objects.get(int(ref.group(1)), (b"", None))[0] if ref else b""
            fonts_dict = re.search(rb"/Font\s*<<(.*?)>>", resources, re.DOTALL)
        fonts = {name: maps.get(int(num), {}) for name, num in
                 re.findall(rb"/([\w.+-]+)\s+(\d+) 0 R", fonts_dict.group(1) if fonts_dict
                            else b"")}
        contents = re.search(rb"/Contents\s+(\d+) 0 R", head)
        stream = objects.get(int(contents.group(1)), (b"", None))[1] if contents else None
        if not stream:
            continue
        glyphs: dict[int, str] = {}
        for token in re.finditer(rb"/([\w.+-]+)\s+[\d.]+\s+Tf|<([0-9A-Fa-f]*)>\s*Tj|\[(.*?)\]\s*TJ",
                                 stream, re.DOTALL):
            if token.group(1) is not None:
                glyphs = fonts.get(token.group(1), {})
                continue
            hexes = [token.group(2)] if token.group(2) is not None else \
                re.findall(rb"<([0-9A-Fa-f]*)>", token.group(3))
            for hexstr in hexes:
                codes = bytes.fromhex(hexstr.decode())
                chunks.append("".join(glyphs.get(int.from_bytes(codes[i:i + 2], "big"), "")
                                      for i in range(0, len(codes) - 1, 2)))
            chunks.append(" ")
        chunks.append("\n")
    return re.sub(r"[ \t]+", " ", "".join(chunks))


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
