"""The Chinese notebook's code cells: the English code with its comments and strings in Chinese.

``solutions/<name>/zh.yml``'s ``code`` maps an English line of the released notebook's code
cells (without its indentation) to its Chinese line; the release puts each in place wherever the
line occurs, indentation kept. A translated line may change only what a reader reads: comments
and the text of string literals (stub messages, test messages, printed labels). Its code, the
task ids it names (``ps1.impl``) and nbgrader's ``YOUR CODE HERE`` marker stay as they are, and
the Chinese cell is checked to have the English cell's tokens once comments and string contents
are set aside (:func:`code_tokens`); a line that breaks that is reported and left in English.
"""

from __future__ import annotations

import io
import re
import tokenize

TASK_ID = re.compile(r"\bps\d+\.[a-z_]+\b")
KEPT_MARKERS = ("YOUR CODE HERE",)
# What a reader reads inside code: comments, string literals, the literal parts of f-strings
# (tokens of their own from Python 3.12; a whole f-string is one STRING token before).
_TEXT_TOKENS = {tokenize.COMMENT, tokenize.STRING} | (
    {tokenize.FSTRING_MIDDLE} if hasattr(tokenize, "FSTRING_MIDDLE") else set())
_LAYOUT_TOKENS = {tokenize.NL, tokenize.NEWLINE, tokenize.ENDMARKER}


def code_tokens(source: str) -> list[tuple[int, str]] | None:
    """The cell's tokens with comments dropped and each string literal reduced to its kind (its
    prefix and quotes, not its text): two cells with the same list run the same code. None when
    the cell does not tokenize (IPython magics, a cell that is not Python)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    kept = []
    for token in tokens:
        if token.type == tokenize.COMMENT or token.type in _LAYOUT_TOKENS:
            continue
        if token.type == tokenize.STRING:
            kept.append((token.type, re.match(r"[A-Za-z]*('''|\"\"\"|'|\")", token.string)[0]))
        elif token.type in _TEXT_TOKENS:
            kept.append((token.type, ""))
        else:
            kept.append((token.type, token.string))
    return kept


def text_of(source: str) -> list[str]:
    """What a reader reads in the cell: its comments and the text of its string literals."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return []
    return [t.string for t in tokens if t.type in _TEXT_TOKENS]


def translate_code(source: str, lines: dict[str, str]) -> tuple[str, list[str], set[str]]:
    """``source`` with each line that ``lines`` translates replaced; the problems (a line whose
    translation changes the code, drops a task id or a marker: that line stays English) and the
    English lines used."""
    problems, used, out = [], set(), []
    for line in source.split("\n"):
        english = line.strip()
        chinese = lines.get(english)
        if chinese is None:
            out.append(line)
            continue
        used.add(english)
        lost = [m for m in TASK_ID.findall(english) + [m for m in KEPT_MARKERS if m in english]
                if m not in chinese]
        if lost:
            problems.append(f"the translation of {english!r} drops {lost}")
            out.append(line)
            continue
        out.append(line[:len(line) - len(line.lstrip())] + chinese.strip())
    translated = "\n".join(out)
    if code_tokens(translated) != code_tokens(source):
        problems.append("its translated lines change its code, not only comments and strings: "
                        + "; ".join(repr(e) for e in sorted(used)))
        return source, problems, used
    return translated, problems, used
