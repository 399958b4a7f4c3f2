"""The glossary as Sphinx glossary terms, chapters linked to it, and the book's index.

Loaded from _config.yml (``sphinx: extra_extensions``), in both editions. Three things:

* On the glossary page (book/appendix/glossary.md) each row of the tables whose first column is
  "Term in this book" becomes the target of its terms: the row gets the id Sphinx's own
  ``glossary`` directive would give the term (``term-primitive``), every name of its first cell
  (``trace (verb), tracing`` -> trace, tracing) is registered as a glossary term, so that
  ``{term}`primitive``` resolves, and the names go into the general index (genindex.html) as its
  main entries. The rows are found before Sphinx translates the page (so the Chinese edition, whose
  cells are translated, gets the same anchors). A term of the term list (locales/zh_CN/terms.yml)
  that no row names is anchored at the row of a longer term that contains it (donation: buffer
  donation), else at its row of the generated ``{term-list}`` table (VJP). A term of the list with no anchor at all is a build warning (an error
  under ``--warningiserror``).
* In every other page the first use of each term of the term list, in the body text (paragraphs,
  list items, table cells; not code, math, outputs, headings, captions or existing links), links
  to its glossary entry: the English ``forms`` on English pages, the term's Chinese word on the
  Chinese edition's pages (after translation). Terms marked ``link: false`` in the term list are
  everyday words too often meant in their plain sense to be linked automatically. Each such use
  is also an index entry, under the term, named by the page's title: the index leads from a term
  to the glossary (its bold, main entry) and to each chapter that uses it.
* A link to the index at the foot of the primary sidebar (_templates/index-link.html); the
  glossary page says where the index is.

On the Chinese edition the index entries read ``原语（primitive）`` and are grouped under the English
term's initial letter (Sphinx would otherwise make a heading of each Chinese character).
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms import SphinxTransform
from sphinx.util import logging
from sphinx.util.nodes import make_id

from jaxcourse.i18n_site import LANGUAGE, TERMS, load_terms

logger = logging.getLogger(__name__)

GLOSSARY = "book/appendix/glossary"
# The first header cell of the glossary's tables of terms (read before translation).
TERM_COLUMN = "Term in this book"
# Classes of the link text; glossary-link is styled by _static/glossary_links.css.
LINK_CLASSES = ["xref", "std", "std-term", "glossary-link"]
STATIC = Path(__file__).with_name("_static")
TEMPLATES = Path(__file__).with_name("_templates")

# Text inside these is not body text: no link is made there.
_SKIP = (
    nodes.literal,
    nodes.literal_block,
    nodes.reference,
    nodes.target,
    nodes.title,
    nodes.subtitle,
    nodes.rubric,
    nodes.caption,
    nodes.term,
    nodes.math,
    nodes.math_block,
    nodes.raw,
    nodes.FixedTextElement,
    nodes.abbreviation,
    nodes.citation_reference,
    nodes.footnote_reference,
    addnodes.pending_xref,
    addnodes.desc_signature,
    addnodes.index,
    addnodes.toctree,
    addnodes.only,
)


@cache
def terms() -> tuple[dict, ...]:
    return tuple(load_terms(TERMS))


def names(term: dict) -> list[str]:
    """The names a term is listed under: ``trace, tracing`` -> [trace, tracing]."""
    return [n.strip() for n in term["en"].split(",") if n.strip()]


def row_names(text: str) -> list[str]:
    """The terms of a glossary row's first cell: ``trace (verb), tracing`` -> [trace, tracing]
    (as tests/book/test_i18n_terms.py reads them)."""
    return [n.strip() for n in re.sub(r"\([^)]*\)", "", text).split(",") if n.strip()]


def index_text(term: dict, language: str) -> str:
    """What the index calls a term (its main entry, and the entry the chapters' uses go under)."""
    english = names(term)[0]
    if language == LANGUAGE and term["zh"] != english:
        return f"{term['zh']}（{term['en']}）"
    return english


def index_key(term: dict, language: str) -> str | None:
    """The index's letter heading: the English initial on the Chinese edition."""
    return term["en"][0].upper() if language == LANGUAGE else None


def is_english(language: str | None) -> bool:
    return not language or language.startswith("en")


@cache
def link_pattern(language: str) -> tuple[re.Pattern, dict[str, dict]] | None:
    """One regex of every linkable term's words in ``language``, longest first, and the term
    of each matched (lowercased) word."""
    owner: dict[str, dict] = {}
    for term in terms():
        if term.get("link", True) is False:
            continue
        words = term["forms"] if is_english(language) else [term["zh"]]
        for word in words:
            owner.setdefault(" ".join(str(word).split()).lower(), term)
    if not owner:
        return None
    parts = []
    for word in sorted(owner, key=len, reverse=True):
        body = r"\s+".join(re.escape(w) for w in word.split())
        # Whole words, not part of a hyphenated word ("high-level" is not "level"); a Chinese
        # word has no spaces around it, so only an end that is a Latin letter is bounded.
        if re.match(r"[A-Za-z0-9]", word[0]):
            body = r"(?<![A-Za-z0-9_-])" + body
        if re.match(r"[A-Za-z0-9]", word[-1]):
            body += r"(?![A-Za-z0-9_-])"
        parts.append(body)
    return re.compile("|".join(parts), re.IGNORECASE), owner


# ---------------------------------------------------------------------------------------------
# The glossary page: rows as term targets.


def _term_tables(document: nodes.document):
    """(table, is_term_list) for the glossary's tables of terms and the generated term list."""
    for table in document.findall(nodes.table):
        if "term-list" in table["classes"]:
            yield table, True
            continue
        head = next(table.findall(nodes.thead), None)
        first = next(head.findall(nodes.entry), None) if head is not None else None
        if first is not None and first.astext().strip() == TERM_COLUMN:
            yield table, False


def _body_rows(table: nodes.table):
    for body in table.findall(nodes.tbody):
        for row in body.children:
            if isinstance(row, nodes.row) and row.children:
                yield row


class GlossaryTargets(SphinxTransform):
    """Make each row of the glossary's term tables the target of its terms (see the module's
    docstring). Before Sphinx's Locale transform (20), which would put the Chinese text in the
    cells; it adds only ids and index nodes, which translation leaves alone."""

    default_priority = 15

    def apply(self, **kwargs) -> None:
        if self.env.docname != GLOSSARY:
            return
        language = self.config.language or "en"
        std = self.env.get_domain("std")
        by_name = {n.lower(): t for t in terms() for n in names(t)}
        rows: dict[str, nodes.row] = {}  # lowercased name -> the row that defines it
        list_rows: dict[str, nodes.row] = {}  # term's en -> its row of the term list
        for table, is_term_list in _term_tables(self.document):
            for row in _body_rows(table):
                text = row.children[0].astext().strip()
                if is_term_list:
                    list_rows[text] = row
                    continue
                for name in row_names(text):
                    rows.setdefault(name.lower(), row)
        anchored: dict[int, tuple[nodes.row, list[str]]] = {}
        for term in terms():
            row = next((rows[n.lower()] for n in names(term) if n.lower() in rows), None)
            if row is None:  # donation: the row of buffer donation
                row = next((r for name, r in rows.items() for n in names(term)
                            if re.search(rf"(?<![\w-]){re.escape(n.lower())}(?![\w-])", name)),
                           None)
            if row is None:
                row = list_rows.get(term["en"])
            if row is None:
                logger.warning("glossary term %r has no row in %s", term["en"], GLOSSARY,
                               location=self.document)
                continue
            anchored.setdefault(id(row), (row, []))[1].append(term["en"])
        for name, row in rows.items():  # a row's name that the term list lacks
            if name not in by_name:
                logger.warning("glossary term %r is not in the term list", name,
                               location=row)
        for row, listed in anchored.values():
            node_id = make_id(self.env, self.document, "term", names(by_en(listed[0]))[0])
            row["ids"].append(node_id)
            self.document.ids[node_id] = row
            entries = []
            for en in listed:
                term = by_en(en)
                for name in names(term):
                    std._note_term(name, node_id, location=row)
                    if is_english(language):
                        entries.append(("single", name, node_id, "main", None))
                if not is_english(language):
                    entries.append(("single", index_text(term, language), node_id, "main",
                                    index_key(term, language)))
            index = addnodes.index(entries=entries)
            index.source, index.line = row.source, row.line
            row.children[0] += index


@cache
def _by_en() -> dict[str, dict]:
    return {t["en"]: t for t in terms()}


def by_en(en: str) -> dict:
    return _by_en()[en]


# ---------------------------------------------------------------------------------------------
# The chapters: the first use of each term links to the glossary.


def _in_body_text(text: nodes.Text) -> bool:
    """Whether ``text`` is prose of a paragraph (a list item's, a table cell's, an admonition's
    too) and not inside code, math, a link, a heading, a caption or a cell's output."""
    in_paragraph = False
    node = text.parent
    while node is not None:
        if isinstance(node, _SKIP):
            return False
        if isinstance(node, nodes.container) and {"cell_output", "cell_input"} & set(
            node.get("classes", [])
        ):
            return False
        in_paragraph = in_paragraph or isinstance(node, nodes.paragraph)
        node = node.parent
    return in_paragraph


class LinkTermsToGlossary(SphinxTransform):
    """Link the first use of each term in a page's body text to its glossary entry, and make it
    an index entry named by the page's title."""

    # After Sphinx's Locale transforms (20, 25), so that a Chinese page is read in Chinese.
    default_priority = 40

    def apply(self, **kwargs) -> None:
        if self.env.docname == GLOSSARY:
            return
        language = self.config.language or "en"
        found = link_pattern("en" if is_english(language) else language)
        if found is None:
            return
        pattern, owner = found
        title_node = next(self.document.findall(nodes.title), None)
        title = title_node.astext().replace(";", ",").strip() if title_node else self.env.docname
        linked: set[str] = set()
        serial = 0
        for text in list(self.document.findall(nodes.Text)):
            if len(linked) == len(owner) or not _in_body_text(text):
                continue
            source = str(text)
            pieces: list[nodes.Node] = []
            start = 0
            for match in pattern.finditer(source):
                term = owner[" ".join(match.group(0).split()).lower()]
                if term["en"] in linked:
                    continue
                linked.add(term["en"])
                serial += 1
                target_id = f"glossary-use-{serial}"
                while target_id in self.document.ids:
                    serial += 1
                    target_id = f"glossary-use-{serial}"
                if match.start() > start:
                    pieces.append(nodes.Text(source[start:match.start()]))
                index = addnodes.index(entries=[(
                    "single", f"{index_text(term, language)}; {title}", target_id, "",
                    index_key(term, language))])
                xref = addnodes.pending_xref(
                    "", refdomain="std", reftype="term", reftarget=names(term)[0].lower(),
                    refexplicit=True, refwarn=True, refdoc=self.env.docname,
                )
                xref += nodes.inline(match.group(0), match.group(0), classes=LINK_CLASSES)
                # The index entry's anchor holds the term itself, not an empty target: Sphinx's
                # search shows an anchored result with the text at its anchor, and fails on an
                # empty one (searchtools.js appends makeSearchSummary's null to the page).
                target = nodes.inline("", "", xref, ids=[target_id])
                self.document.ids[target_id] = target
                pieces += [index, target]
                start = match.end()
            if pieces:
                if start < len(source):
                    pieces.append(nodes.Text(source[start:]))
                text.parent.replace(text, pieces)


def _config_inited(app, config) -> None:
    config.templates_path.append(str(TEMPLATES))
    end = config.html_theme_options.get("primary_sidebar_end")
    if end is None:
        end = ["sidebar-ethical-ads.html"]
    if isinstance(end, str):
        end = [item.strip() for item in end.split(",") if item.strip()]
    if "index-link.html" not in end:
        config.html_theme_options["primary_sidebar_end"] = ["index-link.html", *end]
    if str(STATIC) not in [str(p) for p in config.html_static_path]:
        config.html_static_path.append(str(STATIC))


def setup(app):
    app.connect("config-inited", _config_inited)
    app.add_transform(GlossaryTargets)
    app.add_transform(LinkTermsToGlossary)
    app.add_css_file("glossary_links.css")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
