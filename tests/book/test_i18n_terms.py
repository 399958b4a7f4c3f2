"""The Chinese edition says each term one way: the way of its term list (locales/zh_CN/terms.yml).

Where an English message uses a term (one of its ``forms``: a whole word, in the prose, not in
code, math or a link's target), its translation must contain the term's Chinese. A translator
who quotes the English word itself (a glossary cell saying a source "keeps the English word")
exempts that term for that entry with a translator comment in the .po, ``# term-exempt: lowering``,
which the next `sphinx-intl update` keeps. A term's ``plain`` phrases are ordinary uses of its
word ("at the level of float32 rounding"), which ask for no term. The glossary prints the same list (its ``{term-list}``
table), and every term of the glossary's tables is in it.
"""

from __future__ import annotations

import re
from functools import cache

import pytest

from jaxcourse.i18n_site import (
    HTML,
    LANGUAGE,
    ROOT,
    ZH_SUBDIR,
    catalogue_path,
    docnames,
    load_terms,
    prose,
    read_catalogue,
    term_table,
)

PAGES = docnames()
TERMS = load_terms()
GLOSSARY = ROOT / "book" / "appendix" / "glossary.md"
EXEMPT = re.compile(r"^term-exempt:\s*(.+)$")


@cache
def form_pattern(form: str) -> re.Pattern:
    # Whole words, and not part of a hyphenated word ("high-level" is not the term "level").
    words = r"\s+".join(re.escape(word) for word in form.split())
    return re.compile(rf"(?<![\w-]){words}(?![\w-])", re.IGNORECASE)


def terms_used(english: str) -> list[dict]:
    text = prose(english)
    used = []
    for term in TERMS:
        # A form inside one of the term's ordinary phrases (its `plain`) is not the term.
        own = text
        for phrase in term.get("plain") or ():
            own = form_pattern(phrase).sub(" ", own)
        if any(form_pattern(f).search(own) for f in term["forms"]):
            used.append(term)
    return used


def _squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


def inconsistencies(message) -> list[str]:
    """The terms of ``message.id`` whose Chinese its translation lacks."""
    exempt = {m.group(1).strip() for c in message.user_comments if (m := EXEMPT.match(c.strip()))}
    translation = _squeeze(prose(message.string))
    return [
        f"{t['en']} -> {t['zh']}"
        for t in terms_used(message.id)
        if t["en"] not in exempt and _squeeze(t["zh"]) not in translation
    ]


@pytest.mark.parametrize("docname", PAGES)
def test_translations_use_the_term_list(docname):
    path = catalogue_path(docname)
    assert path.is_file(), f"{path} missing"
    found = []
    for message in read_catalogue(path):
        if not message.id or not message.string or message.fuzzy:
            continue  # an untranslated or fuzzy entry is test_i18n_catalogues' to report
        missing = inconsistencies(message)
        if missing:
            found.append(f"  po:{message.lineno}: {message.id[:80]!r} lacks {missing}")
    assert not found, f"{path.relative_to(ROOT)}: {len(found)} entries\n" + "\n".join(found[:40])


def test_term_check_itself():
    from babel.messages.catalog import Message

    ok = Message("The tracer of a primitive, `jax.vmap` aside.", "原语的追踪器，`jax.vmap` 除外。")
    assert inconsistencies(ok) == []
    wrong = Message("Each primitive has a batching rule.", "每个基元都有一条批处理规则。")
    assert inconsistencies(wrong) == ["primitive -> 原语"]
    # Code and hyphenated words are not the term; a form matches whatever its case.
    assert terms_used("A high-level view of `tracer` and [x](trace.md)") == []
    assert [t["en"] for t in terms_used("Tangents")] == ["tangent"]
    exempt = Message("lowering (English)", "lowering（英文）", user_comments=["term-exempt: lowering"])
    assert inconsistencies(exempt) == []
    # An ordinary "level" (the term's `plain` phrases) asks for no 级别; the term itself does.
    assert terms_used("Errors at the level of float32 rounding.") == []
    assert [t["en"] for t in terms_used("The tracer at level 2 wins.")] == ["tracer", "level"]


def _glossary_terms() -> list[str]:
    """The first cell of every row of the glossary's tables, split into its terms."""
    names = []
    for line in GLOSSARY.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or set(cells[0]) <= set("-: ") or cells[0].startswith("Term"):
            continue
        for part in re.sub(r"\([^)]*\)", "", cells[0]).split(","):
            names.append(part.strip())
    return names


def test_every_glossary_term_is_in_the_term_list():
    names = _glossary_terms()
    assert len(names) > 40, names
    forms = {f.lower() for t in TERMS for f in t["forms"]}
    missing = [name for name in names if name.lower() not in forms]
    assert not missing, f"glossary terms without a Chinese word in the term list: {missing}"


def test_term_list_is_consistent():
    english = [t["en"] for t in TERMS]
    assert len(english) == len(set(english)), "a term is listed twice"
    owners: dict[str, str] = {}
    for term in TERMS:
        assert term["zh"] and term["forms"], term
        for form in term["forms"]:
            assert owners.setdefault(form.lower(), term["en"]) == term["en"], (
                f"{form!r} is a form of both {owners[form.lower()]!r} and {term['en']!r}"
            )


def test_glossary_table_is_printed_from_the_term_list():
    from docutils import nodes

    for language in ("en", LANGUAGE):
        table = term_table(language, TERMS)
        rows = table.findall(nodes.row)
        cells = [[entry.astext() for entry in row.findall(nodes.entry)] for row in rows]
        assert [(c[0], c[1]) for c in cells[1:]] == [(t["en"], t["zh"]) for t in TERMS]


def test_the_chinese_glossary_gives_its_notes_in_chinese():
    """A note explains a choice of word to a Chinese reader: the Chinese table prints note_zh,
    which every note has, written in Chinese (CJK in each sentence)."""
    from docutils import nodes

    noted = [t for t in TERMS if t.get("note")]
    assert noted
    for term in noted:
        assert re.search(r"[\u4e00-\u9fff]", term.get("note_zh") or ""), term["en"]
    rows = term_table(LANGUAGE, TERMS).findall(nodes.row)
    notes = {cells[0]: cells[3] for cells in
             ([e.astext() for e in row.findall(nodes.entry)] for row in rows)}
    for term in noted:
        assert notes[term["en"]] == " ".join(term["note_zh"].split()), term["en"]


def test_built_chinese_glossary_shows_the_term_list():
    page = HTML / ZH_SUBDIR / "book" / "appendix" / "glossary.html"
    if not page.is_file():
        pytest.fail(f"{page} not built: run `make book`")
    html = page.read_text(encoding="utf-8")
    shown = re.findall(r'<p class="term-zh">([^<]*)</p>', html)
    assert shown == [t["zh"] for t in TERMS]
    assert '<html lang="zh-CN"' in html or "<html lang=\"zh_CN\"" in html
