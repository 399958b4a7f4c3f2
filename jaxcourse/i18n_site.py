"""The book's Simplified Chinese edition: Sphinx's translation workflow, and a language switch.

The English pages are the source. ``python -m jaxcourse.i18n_site gettext DIR`` extracts their
prose (headings, paragraphs, captions, admonitions, table cells; not code, not outputs) into one
``.pot`` catalogue per page; ``sphinx-intl update -p DIR -l zh_CN`` merges those into
``locales/zh_CN/LC_MESSAGES/<page>.po``, where translators fill each ``msgstr``. A paragraph
changed in English comes back from that merge as a *fuzzy* entry (or a new, empty one), and
tests/book/test_i18n_catalogues.py fails until it is translated again.

``python -m jaxcourse.i18n_site zh`` builds the Chinese edition into ``_build/html/zh`` with the
same Sphinx configuration as ``jupyter-book build .`` plus the language settings below. It reads
the same jupyter-cache (``_build/.jupyter_cache``): code cells are not translated, so every
chapter's notebook matches its cached execution and no chapter runs twice.

As a Sphinx extension (``sphinx: extra_extensions`` in _config.yml) it puts a link at the top of
every page to the same page in the other edition, as a relative URL (works from ``file://``).
The Chinese glossary takes its terms from ``locales/zh_CN/terms.yml``, the one term list that
the glossary and the term-consistency test share.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
LOCALES = ROOT / "locales"
LANGUAGE = "zh_CN"
CATALOGUES = LOCALES / LANGUAGE / "LC_MESSAGES"
TERMS = LOCALES / LANGUAGE / "terms.yml"
BUILD = ROOT / "_build"
HTML = BUILD / "html"
# The Chinese edition, served from a folder of the English one so that one site holds both.
ZH_SUBDIR = "zh"
ZH_BUILD = BUILD / "zh"
TEMPLATES = Path(__file__).with_name("_templates")

# What the switch says, in the language it leads to.
LABELS = {"en": "English", LANGUAGE: "中文"}

# What a translated build sets on top of the book's own configuration. The rest of it is in
# _config.yml (locale_dirs, one catalogue per page, fuzzy entries unused), so that the English
# configuration also extracts the catalogues: jupyter-book build . --builder custom
# --custom-builder gettext.
TRANSLATION = {"language": LANGUAGE}
# Full-text search of the Chinese edition: Sphinx's Chinese splitter, which cuts the text into
# words with jieba (a pinned requirement; without it no Chinese word reaches searchindex.js).
# jieba's own dictionary cuts the course's words apart (追踪器 into 追踪 and 器, 转置规则 into 转置
# and 规则), so a user dictionary of them is given to it: the term list's Chinese words and its
# `search_words` (search_dictionary).
SEARCH_LANGUAGE = "zh"
SEARCH_DICTIONARY = ZH_BUILD / "search_words.txt"


def load_terms(path: Path = TERMS) -> list[dict]:
    """The term list: dicts with en, zh, forms (the English words that count), hant, note."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    terms = data["terms"]
    for term in terms:
        term.setdefault("forms", [term["en"]])
    return terms


# Inline code, with or without a role: `x`, {role}`text <target>` (the text before <target> is
# prose, the target is not), $math$, and a link's target in [text](target).
_ROLE = re.compile(r"\{[\w:-]+\}`([^`]*)`")
_CODE = re.compile(r"``.+?``|`[^`]*`")
_MATH = re.compile(r"\$\$.+?\$\$|\$[^$]+\$", re.DOTALL)
_LINK_TARGET = re.compile(r"\]\(([^)]*)\)")
_URL = re.compile(r"<?https?://\S+")
# A display-math block is extracted without its $$: its TeX commands are not prose.
_TEX = re.compile(r"\\[A-Za-z]+(?:\{[^{}]*\})*")


def prose(text: str) -> str:
    """``text`` (a msgid or msgstr in MyST) without its code, math, role targets and link targets:
    what a translator translates, and where the term-consistency test looks for terms."""

    def role(match: re.Match) -> str:
        labelled = re.match(r"(.*?)\s*<[^<>]*>\s*$", match.group(1), re.DOTALL)
        return f" {labelled.group(1)} " if labelled else " "

    text = _ROLE.sub(role, text)
    text = _CODE.sub(" ", text)
    text = _MATH.sub(" ", text)
    text = _LINK_TARGET.sub("] ", text)
    text = _TEX.sub(" ", text)
    return _URL.sub(" ", text)


def needs_translation(msgid: str) -> bool:
    """Whether a message has prose: one made only of code, math, numbers and links whose text is
    code reads the same in Chinese, and is filled in with its English by `update`."""
    return re.search(r"[A-Za-z]{2,}", prose(msgid)) is not None


def build_book(builder: str, outdir: Path, doctreedir: Path, overrides: dict, *,
               warningiserror: bool) -> int:
    """Sphinx with the book's configuration, as `jupyter-book build .` assembles it, and
    ``overrides`` on top (the Chinese edition's language, the second toolchain's cache)."""
    from jupyter_book.sphinx import build_sphinx

    return build_sphinx(
        ROOT,
        outdir,
        doctreedir=doctreedir,
        use_external_toc=True,
        noconfig=True,
        path_config=ROOT / "_config.yml",
        confoverrides={
            "external_toc_path": (ROOT / "_toc.yml").as_posix(),
            "latex_individualpages": False,
            **overrides,
        },
        builder=builder,
        warningiserror=warningiserror,
        keep_going=warningiserror,
    )


def build_gettext(outdir: Path) -> int:
    """One .pot catalogue per page into ``outdir``. The chapters' outputs come from the book's
    jupyter-cache, as in the book build (a chapter changed since the last `make book` is executed
    first): code and outputs are not translated, but a figure's caption lives in its cell's
    metadata and is shown only with the cell's output."""
    overrides = {"project": book_title()}
    return build_book("gettext", Path(outdir), Path(outdir) / ".doctrees", overrides,
                  warningiserror=False)


_HAN = re.compile(r"[\u3400-\u9fff]")


def search_dictionary(path: Path = TERMS) -> list[str]:
    """The words the Chinese search must find whole: every Chinese word of the term list, and
    the list's ``search_words`` (compounds such as 转置规则 that name one thing in the book)."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    words = [str(term["zh"]) for term in data["terms"]] + [str(w) for w in
                                                          data.get("search_words") or ()]
    # jieba reads a user dictionary's line as "word [frequency] [tag]": a word with a space in
    # it ("impl 规则") cannot be one; the splitter indexes its Latin part apart anyway.
    found = [w for w in words if _HAN.search(w) and " " not in w.strip()]
    return sorted(set(found), key=found.index)


def write_search_dictionary(target: Path = SEARCH_DICTIONARY) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("".join(f"{word}\n" for word in search_dictionary()), encoding="utf-8")
    return target


def build_zh() -> int:
    """The Chinese edition into _build/html/zh, reusing the English build's jupyter-cache."""
    overrides = dict(TRANSLATION, html_title=translated_book_title(),
                     html_search_language=SEARCH_LANGUAGE,
                     html_search_options={"dict": str(write_search_dictionary())})
    outdir = ZH_BUILD / "html"
    status = build_book("html", outdir, ZH_BUILD / ".doctrees", overrides, warningiserror=True)
    if status == 0:
        target = HTML / ZH_SUBDIR
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(outdir, target)
    return status


def docnames(toc: Path = ROOT / "_toc.yml") -> list[str]:
    """Every page of the table of contents, root first, as Sphinx names it (book/faq/tracers)."""
    data = yaml.safe_load(toc.read_text(encoding="utf-8"))
    names = [data["root"]]

    def walk(entries):
        for entry in entries or ():
            if "file" in entry:
                names.append(entry["file"])
            for key in ("parts", "chapters", "sections"):
                walk(entry.get(key))

    walk(data.get("parts"))
    walk(data.get("chapters"))
    return [str(Path(name).with_suffix("")) for name in names]


def catalogue_path(docname: str) -> Path:
    return CATALOGUES / f"{docname}.po"


def book_title() -> str:
    return yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["title"]


def translated_book_title() -> str:
    """The book's title as the root page's catalogue translates it (the title of the site in
    the Chinese edition's sidebar and browser tab); the English one while it is untranslated."""
    english = book_title()
    root = catalogue_path(docnames()[0])
    found = next((m for m in read_catalogue(root) if m.id == english), None) if root.is_file() \
        else None
    return found.string if found is not None and found.string and not found.fuzzy else english


def read_catalogue(path: Path):
    from babel.messages.pofile import read_po

    with path.open("rb") as f:
        return read_po(f, abort_invalid=True)


def write_catalogue(path: Path, catalogue) -> None:
    """As sphinx-intl writes it (line width 76), so that its next `update` changes nothing."""
    from babel.messages.pofile import write_po

    with path.open("wb") as f:
        write_po(f, catalogue, width=76)


def tidy(path: Path) -> int:
    """Give every untranslated message without prose (see needs_translation) its English text,
    and drop the obsolete entries that hold no translation (nothing to reuse); an obsolete entry
    with a translation stays for the translator to reuse, then delete. Returns the changes."""
    catalogue = read_catalogue(path)
    changes = 0
    for message in catalogue:
        if message.id and not message.string and not needs_translation(message.id):
            message.string = message.id
            changes += 1
    for msgid in [k for k, m in catalogue.obsolete.items() if not m.string]:
        del catalogue.obsolete[msgid]
        changes += 1
    if changes:
        write_catalogue(path, catalogue)
    return changes


def update(potdir: Path) -> int:
    """Regenerate the .pot catalogues and merge them into locales/ with sphinx-intl: a new
    paragraph becomes an empty entry, a changed one a fuzzy entry holding the old translation."""
    status = build_gettext(potdir)
    if status:
        return status
    subprocess.run(
        [sys.executable, "-m", "sphinx_intl", "update", "--pot-dir", str(potdir),
         "--locale-dir", str(LOCALES), "--language", LANGUAGE],
        check=True,
    )
    for path in sorted(CATALOGUES.rglob("*.po")):
        tidy(path)
    return 0


# ---------------------------------------------------------------------------------------------
# The Sphinx extension: the language switch and the glossary's term list.

# The term list's table, in the language of the edition that shows it.
_TERM_HEADERS = {
    "en": ("Term in this book", "Chinese edition", "繁體 (primitives)", "Why this word"),
    LANGUAGE: ("英文术语", "中文版用词", "繁體（primitives 译文）", "说明"),
}


def _other_edition(language: str, pagename: str) -> tuple[str, str, str]:
    """(href, language code, label) of ``pagename`` in the other edition, relative to the page:
    the Chinese edition is the folder zh/ of the English one."""
    up = "../" * pagename.count("/")
    if language == LANGUAGE:
        return f"../{up}{pagename}.html", "en", LABELS["en"]
    return f"{up}{ZH_SUBDIR}/{pagename}.html", "zh-CN", LABELS[LANGUAGE]


def _add_language_switch(app, pagename, templatename, context, doctree) -> None:
    href, hreflang, label = _other_edition(app.config.language, pagename)
    context["language_switch"] = {"href": href, "hreflang": hreflang, "label": label}


def _config_inited(app, config) -> None:
    config.templates_path.append(str(TEMPLATES))
    # The switch goes before the theme's own buttons at the top of the article (full screen,
    # download), where it is on screen at every width; the primary sidebar folds away on phones.
    end = config.html_theme_options.get("article_header_end") or ["article-header-buttons.html"]
    if isinstance(end, str):
        end = [item.strip() for item in end.split(",") if item.strip()]
    if "language-switch.html" not in end:
        config.html_theme_options["article_header_end"] = ["language-switch.html", *end]


def term_table(language: str, terms: list[dict] | None = None):
    """The term list as a docutils table: English, the Chinese edition's word, the Traditional
    seed's word, note; headers in ``language``."""
    from docutils import nodes

    terms = load_terms() if terms is None else terms
    headers = _TERM_HEADERS.get(language, _TERM_HEADERS["en"])
    widths = (22, 18, 20, 40)
    table = nodes.table(classes=["term-list"])
    group = nodes.tgroup(cols=len(headers))
    table += group
    for width in widths:
        group += nodes.colspec(colwidth=width)

    def row(cells, cell_classes=()):
        tr = nodes.row()
        for text, cls in zip(cells, cell_classes or [()] * len(cells), strict=True):
            entry = nodes.entry()
            entry += nodes.paragraph(text=text or "—", classes=list(cls))
            tr += entry
        return tr

    head = nodes.thead()
    head += row(headers)
    group += head
    body = nodes.tbody()
    note_key = "note_zh" if language == LANGUAGE else "note"
    for term in terms:
        note = term.get(note_key) or term.get("note") or ""
        # The Chinese cells are marked so that a test can read the word the page shows.
        body += row(
            (term["en"], term["zh"], term.get("hant"), " ".join(str(note).split())),
            ((), ("term-zh",), (), ()),
        )
    group += body
    return table


def _term_list_directive():
    from sphinx.util.docutils import SphinxDirective

    class TermList(SphinxDirective):
        """``{term-list}``: the Chinese edition's term list (locales/zh_CN/terms.yml) as a table.
        Its cells are generated, not read from the page, so no catalogue translates them: both
        editions print the list itself."""

        has_content = False

        def run(self):
            self.env.note_dependency(str(TERMS))
            return [term_table(self.config.language)]

    return TermList


# Sphinx parses each translated message as a little document of its own. A {glue} role in it
# reads the chapter's glued outputs through the chapter's notebook renderer, which myst-nb keeps
# on the chapter's document only while parsing it ("No key found in glue data" otherwise). The
# renderer is kept aside when myst-nb drops it, lent to the messages' documents while Sphinx
# translates the chapter, and let go right after (it must not reach the pickled doctree).
_lent: dict[str, object] = {}
_borrowers: list = []


class _KeepRenderer(dict):
    """A document's attributes, keeping the notebook renderer aside when myst-nb pops it."""

    def pop(self, key, *default):
        value = super().pop(key, *default)
        if key == "nb_renderer":
            _lent["renderer"] = value
        return value


def _lend_notebook_renderer_to_translations(app) -> None:
    from myst_nb.sphinx_ import Parser
    from sphinx.io import SphinxI18nReader
    from sphinx.transforms import SphinxTransform

    class ForgetNotebookRenderer(SphinxTransform):
        default_priority = 21  # just after sphinx.transforms.i18n.Locale (20)

        def apply(self, **kwargs) -> None:
            # The messages' nodes, now in the chapter, still point to their documents.
            for document in _borrowers:
                document.attributes.pop("nb_renderer", None)
            _borrowers.clear()
            _lent.clear()

    app.add_transform(ForgetNotebookRenderer)
    if getattr(Parser.parse, "keeps_renderer", False):
        return
    parse, new_document = Parser.parse, SphinxI18nReader.new_document

    def parse_keeping_renderer(self, inputstring, document):
        if str(document.current_source).endswith("<translated>"):  # a message, not a chapter
            return parse(self, inputstring, document)
        _lent.clear()
        document.attributes = _KeepRenderer(document.attributes)
        try:
            parse(self, inputstring, document)
        finally:
            document.attributes = dict(document.attributes)

    def new_document_with_renderer(self):
        document = new_document(self)
        if "renderer" in _lent:
            document["nb_renderer"] = _lent["renderer"]
            _borrowers.append(document)
        return document

    parse_keeping_renderer.keeps_renderer = True
    Parser.parse = parse_keeping_renderer
    SphinxI18nReader.new_document = new_document_with_renderer


def _translate_toctree_captions(app) -> None:
    """The parts' captions of the sidebar come from _toc.yml: sphinx-external-toc inserts the
    toctrees (priority 100) after Sphinx has translated the page (20), so their captions, which
    the gettext build does extract from the root page, are translated here, from the same
    catalogue."""
    from os import path

    from sphinx import addnodes
    from sphinx.locale import init as init_locale
    from sphinx.transforms import SphinxTransform
    from sphinx.util.i18n import docname_to_domain

    class TranslateToctreeCaptions(SphinxTransform):
        default_priority = 101

        def apply(self, **kwargs) -> None:
            if not self.config.language or self.config.language == "en":
                return
            toctrees = [t for t in self.document.findall(addnodes.toctree) if t.get("caption")]
            if not toctrees:
                return
            domain = docname_to_domain(self.env.docname, self.config.gettext_compact)
            dirs = [path.join(self.env.srcdir, d) for d in self.config.locale_dirs]
            catalogue, found = init_locale(dirs, self.config.language, domain)
            if not found:
                return
            for toctree in toctrees:
                caption = toctree.get("rawcaption") or toctree["caption"]
                translated = catalogue.gettext(caption)
                if translated and translated != caption:
                    toctree["rawcaption"] = caption
                    toctree["caption"] = translated

    app.add_transform(TranslateToctreeCaptions)


def _search_keywords(app, doctree, docname) -> None:
    """The search dictionary's words that a paragraph or title holds only across its inline
    markup, as the page's search keywords (``<meta name="keywords">``, which Sphinx's index reads
    as words of the page). Sphinx splits each text node apart: where the glossary links the first
    转置 of a chapter, "一条转置规则" reaches the splitter as 一条, 转置 and 规则, and a search for
    转置规则 would miss the page."""
    from docutils import nodes

    if app.builder.format != "html" or app.config.html_search_language != SEARCH_LANGUAGE:
        return
    words, found = search_dictionary(), []
    for element in doctree.findall(lambda n: isinstance(n, (nodes.paragraph, nodes.title,
                                                            nodes.term, nodes.caption))):
        text = element.astext()
        pieces = [t.astext() for t in element.findall(nodes.Text)]
        found += [w for w in words if w in text and w not in found
                  and not any(w in piece for piece in pieces)]
    if found:
        doctree.append(nodes.meta(name="keywords", content=", ".join(found)))


def setup(app):
    app.connect("config-inited", _config_inited)
    app.connect("doctree-resolved", _search_keywords)
    _lend_notebook_renderer_to_translations(app)
    _translate_toctree_captions(app)
    app.connect("html-page-context", _add_language_switch)
    # The switch keeps the section being read (_static/language_switch.js; jaxcourse.book_site
    # puts jaxcourse/_static on the static path).
    app.add_js_file("language_switch.js", loading_method="defer")
    app.add_directive("term-list", _term_list_directive())
    return {"parallel_read_safe": True, "parallel_write_safe": True}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jaxcourse.i18n_site")
    sub = parser.add_subparsers(dest="command", required=True)
    gettext = sub.add_parser("gettext", help="extract the English prose into .pot catalogues")
    gettext.add_argument("outdir", type=Path)
    upd = sub.add_parser("update", help="gettext, then sphinx-intl update of locales/zh_CN")
    upd.add_argument("potdir", type=Path, nargs="?", default=BUILD / "gettext")
    sub.add_parser("zh", help="build the Chinese edition into _build/html/zh")
    args = parser.parse_args(argv)
    if args.command == "gettext":
        return build_gettext(args.outdir)
    if args.command == "update":
        return update(args.potdir)
    return build_zh()


if __name__ == "__main__":
    sys.exit(main())
