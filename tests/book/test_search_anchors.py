"""Every anchor the built book's search index points at holds text, in both editions.

Sphinx's search page shows each result with the text at its anchor (``searchtools.js``,
``htmlToText``); an anchor whose element is empty makes ``makeSearchSummary`` return null, which
the page then appends, throwing a TypeError per result (the glossary's "first use" anchors were
empty targets: ``tests/browser/test_site.py::test_search_finds_transpose`` caught it when the
summaries loaded before the test read the console). Reads ``searchindex.js``: its index entries
(the glossary's uses) and section titles, each a (page, anchor) pair.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"


def _anchored(index: dict) -> set[tuple[str, str]]:
    pairs = set()
    for entries in index["indexentries"].values():
        pairs |= {(index["docnames"][doc], anchor) for doc, anchor, _ in entries if anchor}
    for places in index["alltitles"].values():
        pairs |= {(index["docnames"][doc], anchor) for doc, anchor in places if anchor}
    return pairs


@pytest.mark.parametrize("edition", ["", "zh"])
def test_built_search_anchors_hold_text(edition):
    site = HTML / edition if edition else HTML
    if not (site / "searchindex.js").is_file():
        pytest.skip("the book has not been built (make book)")
    text = (site / "searchindex.js").read_text(encoding="utf-8")
    index = json.loads(text[text.index("(") + 1:text.rindex(")")])
    pairs = _anchored(index)
    assert len(pairs) > 100, len(pairs)  # the glossary's uses and the sections are there
    pages: dict[str, BeautifulSoup] = {}
    empty = []
    for docname, anchor in sorted(pairs):
        if docname not in pages:
            html = (site / f"{docname}.html").read_text(encoding="utf-8")
            pages[docname] = BeautifulSoup(html, "html.parser")
        main = pages[docname].find(attrs={"role": "main"})
        element = main.find(id=anchor) if main else None
        if element is not None and not element.get_text(strip=True):
            empty.append(f"{docname}.html#{anchor}")
    assert empty == []
