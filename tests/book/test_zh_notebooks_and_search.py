"""The Chinese edition hands out Chinese notebooks and finds Chinese words.

The built site's tests read ``_build/html/zh`` (``make book``) and skip where it was not built:
every notebook a Chinese page links (an assignment, the chapter's own download) is a file of the
site whose markdown is Chinese and that is none of the English notebooks; its search index holds
the course's words whole (追踪器, 转置规则) and sends them to the pages that use them. The
translation of a chapter's markdown and the search dictionary are also tested on their own.
"""

from __future__ import annotations

import hashlib
import json
import re
import urllib.parse
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from jaxcourse.i18n_site import search_dictionary
from jaxcourse.notebook_translation import translate_markdown

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
ZH = HTML / "zh"
CJK = re.compile(r"[\u3400-\u9fff]")
ASSIGNMENTS = sorted(p.name for p in (ROOT / "assignments").iterdir() if p.is_dir())

built = pytest.mark.skipif(not (ZH / "searchindex.js").is_file(),
                           reason="the Chinese edition has not been built (make book)")


def test_markdown_is_translated_where_a_message_stands_alone():
    messages = [
        ("Assignment", "作业"),
        ("The tracer records each primitive it sees.", "追踪器记录它见到的每个原语。"),
        ("a `weighted_sum` rule", "一条 `weighted_sum` 规则"),
        ("Note", "注意"),
    ]
    source = ("## Assignment\n\nThe tracer records\neach primitive it sees.\n\n"
              "- a `weighted_sum` rule\n\n| Assignment | Note |\n| --- | --- |\n\n"
              "```{admonition} Note\nAssignment\n```\n\n"
              "An Assignment inside a sentence stays.\n")
    assert translate_markdown(source, messages) == (
        "## 作业\n\n追踪器记录它见到的每个原语。\n\n- 一条 `weighted_sum` 规则\n\n"
        "| 作业 | 注意 |\n| --- | --- |\n\n```{admonition} 注意\n作业\n```\n\n"
        "An Assignment inside a sentence stays.\n")


def test_an_untranslated_or_passed_through_message_stays_english():
    source = "# Notebook\n\nSome text here.\n"
    assert translate_markdown(source, [("Notebook", ""), ("Some text here.",
                                                          "Some text here.")]) == source


def test_search_dictionary_holds_the_terms_and_the_rule_names():
    words = search_dictionary()
    assert {"追踪器", "原语", "转置规则", "批处理规则"} <= set(words)
    # jieba reads "word frequency tag" per line: no word may hold a space or Latin letters only.
    assert all(CJK.search(w) and " " not in w for w in words)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _markdown(path: Path) -> str:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")


def _zh_pages() -> list[Path]:
    return sorted(p for p in ZH.rglob("*.html")
                  if not p.relative_to(ZH).parts[0].startswith("_") and p.name not in
                  ("genindex.html", "search.html"))


@built
def test_every_notebook_a_chinese_page_links_is_a_chinese_notebook():
    english = {_digest(p) for p in HTML.rglob("*.ipynb") if ZH not in p.parents}
    english |= {_digest(ROOT / "assignments" / n / f"{n}.ipynb") for n in ASSIGNMENTS}
    released_zh = {_digest(ROOT / "assignments" / n / "zh" / f"{n}.ipynb"): n
                   for n in ASSIGNMENTS}
    wrong, linked_assignments, chapters = [], set(), 0
    for page in _zh_pages():
        soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
        for a in soup.find_all("a", href=True):
            href = urllib.parse.urlparse(a["href"]).path
            if not href.endswith(".ipynb"):
                continue
            target = (page.parent / urllib.parse.unquote(href)).resolve()
            where = f"{page.relative_to(HTML)} -> {a['href']}"
            if not target.is_file():
                wrong.append(f"{where}: no such file in the site")
                continue
            digest = _digest(target)
            if digest in english:
                wrong.append(f"{where}: the English notebook")
            elif not CJK.search(_markdown(target)):
                wrong.append(f"{where}: no Chinese in its markdown")
            if digest in released_zh:
                linked_assignments.add(released_zh[digest])
            elif "_notebooks" in target.parts:
                chapters += 1
    assert wrong == [], "\n".join(wrong)
    # Each assignment is handed out as its released Chinese notebook; chapters have their own.
    assert linked_assignments == set(ASSIGNMENTS)
    assert chapters >= 30, chapters


@built
def test_chinese_chapter_notebooks_keep_no_english_paragraph():
    """Every prose paragraph of a Chinese chapter notebook is translated (code blocks aside):
    a message that failed to match its source text would stay English here."""
    english_lines = []
    for path in sorted((ZH / "_notebooks").rglob("*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf-8"))
        en = json.loads((HTML / path.relative_to(ZH)).read_text(encoding="utf-8"))
        assert [c["source"] for c in nb["cells"] if c["cell_type"] == "code"] == \
            [c["source"] for c in en["cells"] if c["cell_type"] == "code"], path
        text = re.sub(r"(?ms)^(`{3,}|~{3,}).*?^\1", "", _markdown(path))  # fenced code aside
        english_lines += [f"{path.relative_to(ZH)}: {line[:80]}" for line in text.splitlines()
                          if re.search(r"(?:\b[A-Za-z]{2,}\b[ ,;:]+){6}", line)
                          and not CJK.search(line) and not line.startswith("    ")]
    assert english_lines == [], "\n".join(english_lines[:20])


def _search_index(site: Path) -> dict:
    text = (site / "searchindex.js").read_text(encoding="utf-8")
    return json.loads(text[text.index("(") + 1:text.rindex(")")])


@built
@pytest.mark.parametrize("word", ["追踪器", "转置规则"])
def test_chinese_search_finds_the_pages_that_use_a_word(word):
    index = _search_index(ZH)
    # A page whose title holds the word is listed under titleterms only (Sphinx's IndexBuilder).
    places = [index[key][word] for key in ("terms", "titleterms") if word in index[key]]
    assert places, f"{word} is not a word of the Chinese search index"
    found = {index["docnames"][i] for place in places
             for i in ([place] if isinstance(place, int) else place)}
    using = set()
    for docname in index["docnames"]:
        # The page's own text: the article, not the theme's links to the next and previous page.
        article = BeautifulSoup((ZH / f"{docname}.html").read_text(encoding="utf-8"),
                                "html.parser").find("article")
        if article is not None and word in article.get_text():
            using.add(docname)
    assert len(using) >= 5, using
    assert found == using, (f"{word}: pages using it but not found {sorted(using - found)}, "
                            f"found but not using it {sorted(found - using)}")


@built
@pytest.mark.parametrize("edition", ["en", "zh"])
def test_students_guide_says_how_to_get_chinese_notebooks_and_feedback(edition):
    site = ZH if edition == "zh" else HTML
    soup = BeautifulSoup((site / "book" / "guides" / "students.html").read_text(encoding="utf-8"),
                         "html.parser")
    text = soup.find("article").get_text()
    assert "assignments/<name>/zh/<name>.ipynb" in text and "--lang zh" in text
    # The real pages, graded while the guide was built; the page's language picks one (CSS).
    frames = {div["class"][0]: div.find("iframe") for div in soup.select(".feedback-en, "
                                                                           ".feedback-zh")}
    assert set(frames) == {"feedback-en", "feedback-zh"}
    zh_page = frames["feedback-zh"]["srcdoc"]
    assert "<html lang='zh-CN'>" in zh_page and "自己试试" in zh_page
    assert "<html lang='en'>" in frames["feedback-en"]["srcdoc"]
    assert "html:lang(zh) .feedback-en" in str(soup)
    assert soup.find("html")["lang"].startswith("zh" if edition == "zh" else "en")
