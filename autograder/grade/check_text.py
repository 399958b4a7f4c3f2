"""A check's description and failure message in Chinese, from message templates.

The checks, probes and judges write their messages in English (the results JSON keeps them so).
A Chinese page matches each message against the catalogues' English templates and writes the
Chinese template with the same inputs: ``messages_zh.yml`` here (the engine: the judges, the
runner, the cell policy) and ``autograder/assignments/<name>/messages_zh.yml`` (one per
assignment, beside its checks: ``descriptions``, check id -> en, zh; ``messages``, English
template -> Chinese template).

A template's fields are the expressions of the f-string that writes the message, as written
there (``{arr.shape}``, ``{failed.message}``), so that
tests/autograder/test_check_messages_zh.py can tell from the source which messages have no
template. An input that is itself a message (a judge's verdict inside a check's) is translated
in turn; one that is not (a shape, a dtype, an exception's own text) is shown as code, as it
was written, so a Chinese page holds English only inside ``<code>`` and ``<pre>``.
"""

from __future__ import annotations

import functools
import re
from html import escape
from pathlib import Path

import yaml

from autograder.text import clean_text

ROOT = Path(__file__).resolve().parents[2]
ENGINE = Path(__file__).with_name("messages_zh.yml")
FIELD = re.compile(r"\{([^{}]+)\}")
MAX_CHARS = 4000  # a message is capped at 1000 by the worker; the page caps what it shows too


def catalogue_path(assignment: str) -> Path:
    return ROOT / "autograder" / "assignments" / assignment / "messages_zh.yml"


def _load(path: Path) -> dict:
    if not path.is_file():
        return {}
    return yaml.safe_load(path.read_text(encoding="utf-8")) or {}


class Template:
    """One English template, compiled to a pattern whose groups are its fields in order.
    ``where``: a field's own pattern (default: any text); ``lists``: a field that holds several
    messages joined by a separator, each translated."""

    def __init__(self, english: str, chinese: str, where: dict | None = None,
                 lists: dict | None = None):
        self.english, self.chinese, self.lists = english, chinese, lists or {}
        self.fields = FIELD.findall(english)
        literal = FIELD.split(english)[::2]
        where = where or {}
        pattern = "".join(
            re.escape(text) + (f"({where.get(self.fields[i], '.+?')})"
                               if i < len(self.fields) else "")
            for i, text in enumerate(literal))
        # A runner strips a message's final full stop before adding its own.
        self.pattern = re.compile(pattern.removesuffix(r"\.") + r"\.?", re.DOTALL)
        self.weight = len("".join(literal))  # the most specific template is tried first

    def render(self, match: re.Match, translate) -> str:
        values = dict(zip(self.fields, match.groups()))

        def one(value: str) -> str:
            inner = translate(value)
            if inner is not None:
                return inner
            return escape(value) if NUMBER.fullmatch(value) else f"<code>{escape(value)}</code>"

        def field(name: str) -> str:
            value = values[name]
            if name in self.lists:
                return "；".join(one(v) for v in re.split(self.lists[name], value))
            return one(value)

        shown = []
        for i, part in enumerate(FIELD.split(self.chinese)):
            if i % 2:
                shown.append(field(part) if part in values else escape("{" + part + "}"))
            else:
                shown.append(CODE.sub(r"<code>\1</code>", escape(part)))
        return "".join(shown)


CODE = re.compile(r"`([^`]+)`")
NUMBER = re.compile(r"-?\d+(\.\d+)?")


def _template(english: str, entry) -> Template:
    if isinstance(entry, dict):
        return Template(english, entry["zh"], entry.get("where"), entry.get("lists"))
    return Template(english, entry)


@functools.cache
def templates(assignment: str) -> tuple[Template, ...]:
    found = {}
    for data in (_load(ENGINE), _load(catalogue_path(assignment))):
        for english, chinese in (data.get("messages") or {}).items():
            found[english] = _template(english, chinese)
    return tuple(sorted(found.values(), key=lambda t: -t.weight))


@functools.cache
def descriptions(assignment: str) -> dict[str, dict]:
    return _load(catalogue_path(assignment)).get("descriptions") or {}


def translate(assignment: str, message: str, depth: int = 0) -> str | None:
    """``message`` as Chinese HTML, or None when no template matches the whole of it."""
    if depth > 8 or not message.strip():
        return None
    stripped = message.strip()
    for template in templates(assignment):
        match = template.pattern.fullmatch(stripped)
        if match:
            return template.render(
                match, lambda value: translate(assignment, value, depth + 1))
    return None


def description(assignment: str, check_id: str, english: str) -> str:
    """The check's description in Chinese (escaped HTML) where its catalogue holds this English
    description; else the English (a description changed since it was translated)."""
    entry = descriptions(assignment).get(check_id) or {}
    if entry.get("en") == english and entry.get("zh"):
        return CODE.sub(r"<code>\1</code>", escape(entry["zh"]))
    return escape(english)


def message_html(assignment: str, message: str, fallback, blame: str = "") -> str:
    """A check's message on a Chinese page (escaped HTML): ``[task id]``, then each part of it
    translated: the refusal of the task's cell, what the check saw, and ``blame`` (the check's
    rule at fault, which the runner adds after a full stop); ``fallback(text)`` for a part no
    template matches (the fixed phrases of autograder.grade.messages), shown escaped."""
    message = clean_text(message, MAX_CHARS, keep_lines=True).strip()
    prefix = ""
    if match := re.match(r"\[(ps\d+\.[A-Za-z0-9_.]+)\]", message):
        prefix, message = match.group(0) + " ", message[match.end():].strip()
    tail = []
    said = _sentence(blame)
    if said and message.endswith(" " + said):
        message, tail = message[:-len(said)].rstrip(), [blame]
    head = []
    if REFUSED_THEN.strip() in message:
        first, _, message = message.partition(REFUSED_THEN.strip())
        head = [first.strip(), REFUSED_THEN.strip()]
    shown = []
    for part in [*head, message, *tail]:
        translated = translate(assignment, part)
        if translated is None:
            shown.append(escape(fallback(part)))
        else:  # a Chinese sentence ends with its own full stop, and needs no space after it
            shown.append(translated if translated.endswith(("。", "：")) else translated + "。")
    return escape(prefix) + "".join(shown)


REFUSED_THEN = " What the check then saw: "  # autograder.worker.runner.REFUSED_THEN


def _sentence(text: str) -> str:
    """As autograder.worker.runner._sentence (not imported: the main process imports no worker
    module for its pages): a plain first word capitalised."""
    return text[:1].upper() + text[1:] if re.match(r"[a-z]+(?=[ ,;:])", text) else text


@functools.cache
def _comment_templates(assignment: str) -> tuple[Template, ...]:
    entries = _load(catalogue_path(assignment)).get("comments") or {}
    return tuple(sorted((_template(en, zh) for en, zh in entries.items()),
                        key=lambda t: -t.weight))


def comment(assignment: str, english: str) -> str | None:
    """A snippet's comment (its text after ``# ``) in Chinese, its fields as they were; None
    when the catalogue's ``comments`` have no template for it."""
    if match := re.fullmatch(r"(ps\d+\.[\w.]+): (.+)\.", english):  # the snippet's title
        entry = descriptions(assignment).get(match.group(1)) or {}
        if entry.get("en") == match.group(2) and entry.get("zh"):
            return f"{match.group(1)}：{entry['zh'].replace('`', '')}。"
    for template in _comment_templates(assignment):
        if match := template.pattern.fullmatch(english):
            values = dict(zip(template.fields, match.groups()))
            return FIELD.sub(lambda m, values=values: values.get(m.group(1), m.group(0)),
                             template.chinese)
    return None


def snippet(assignment: str, code: str) -> str:
    """A *Try it yourself* snippet with its comments in Chinese (its code unchanged: the
    comments are found as Python's tokenizer finds them, never inside a string)."""
    import io
    import tokenize

    lines = code.splitlines(keepends=True)
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(code).readline)
                  if t.type == tokenize.COMMENT]
    except (tokenize.TokenError, SyntaxError):
        return code
    for token in reversed(tokens):  # from the end: earlier columns stay where they are
        (row, col), (_, end) = token.start, token.end
        translated = comment(assignment, token.string[1:].strip())
        if translated is not None:
            line = lines[row - 1]
            lines[row - 1] = f"{line[:col]}# {translated}{line[end:]}"
    return "".join(lines)
