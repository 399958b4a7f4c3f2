"""A chapter's markdown, translated with the page's own catalogue (the Chinese chapter notebook).

The Chinese edition's pages are translated by Sphinx, message by message: each message is the
source text of one heading, paragraph, list item, table cell or caption, its lines joined with
spaces (locales/zh_CN/LC_MESSAGES/<page>.po). The chapter's downloadable notebook is written
from the MyST source, not from the translated page, so the same catalogue is applied to the
source here: each message's English text, found where it stands alone on its lines (after the
markup that opens a heading, a list item, a quote, a definition, a directive or a table cell),
is replaced by its translation. Code cells are not touched, as on the page.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# What may stand before a message on its first line: indentation, the marks of headings, list
# items, quotes and definitions, a directive's name (a title: ```{admonition} Title), a table's
# cell separator.
_OPENING = re.compile(
    r"(?:[ \t]*(?:#{1,6}|[-*+]|\d+[.)]|>|:|[`:~]{3,}\{[\w:-]+\})(?=[ \t])[ \t]*)*[ \t]*$"
    r"|.*\|[ \t]*$"
)
# What may follow it on its last line: nothing, or the next table cell.
_CLOSING = re.compile(r"[ \t]*(?:\|.*)?$")


def _pattern(msgid: str) -> re.Pattern:
    """``msgid`` with each run of spaces free to be any whitespace: Sphinx joined its lines."""
    return re.compile(r"\s+".join(re.escape(word) for word in msgid.split()))


def translate_markdown(text: str, messages: Iterable[tuple[str, str]]) -> str:
    """``text`` with every message (msgid, msgstr) that stands alone on its lines replaced by
    its translation; the longest messages first, so that a short one ("Assignment") is never
    taken out of a longer one. An untranslated message stays in English, as on the page."""
    pairs = sorted(((i, s) for i, s in messages if i and s and i != s),
                   key=lambda pair: len(pair[0]), reverse=True)
    for msgid, msgstr in pairs:
        pattern, start = _pattern(msgid), 0
        while (match := pattern.search(text, start)) is not None:
            line_start = text.rfind("\n", 0, match.start()) + 1
            line_end = text.find("\n", match.end())
            line_end = len(text) if line_end < 0 else line_end
            if _OPENING.fullmatch(text[line_start:match.start()]) and \
                    _CLOSING.fullmatch(text[match.end():line_end]):
                # One line in the notebook, as on the page: Chinese needs no line breaks.
                replacement = " ".join(msgstr.split("\n"))
                text = text[:match.start()] + replacement + text[match.end():]
                start = match.start() + len(replacement)
            else:
                start = match.end()
    return text
