"""The Chinese edition hands out Chinese notebooks and finds Chinese words.

The built site's tests read ``_build/html/zh`` (``make book``) and skip where it was not built:
every notebook a Chinese page links (an assignment, the chapter's own download) is a file of the
site whose markdown is Chinese and that is none of the English notebooks. The translation of a
chapter's markdown is also tested on its own.
"""

from __future__ import annotations

import hashlib
import json
import re
import urllib.parse
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

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
