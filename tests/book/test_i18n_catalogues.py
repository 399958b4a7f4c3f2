"""The Chinese edition's catalogues are complete and in step with the English pages.

The English prose is extracted afresh (Sphinx's gettext builder, ~40 s; the chapters' outputs, which
carry the figures' captions, come from the book's jupyter-cache) into a temporary folder and
compared, page by page, with locales/zh_CN/LC_MESSAGES/<page>.po.
A page fails when its catalogue lacks a message the English page now has (run
``python -m jaxcourse.i18n_site update``), keeps one the page no longer has, holds a fuzzy entry
(an English paragraph changed since it was translated: sphinx-intl marked the old translation
fuzzy), an obsolete one (``#~``), an empty msgstr, an English sentence passed through as its own
translation, or a translation that lost a piece of the markup the page needs (code, math, a
role's target, a link's target). The failure names the page and the entries, with line numbers.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from jaxcourse.i18n_site import (
    CATALOGUES,
    ROOT,
    catalogue_path,
    docnames,
    prose,
    read_catalogue,
)

PAGES = docnames()
# The markup of a message that its translation must keep character for character.
_KEPT = re.compile(
    r"\{[\w:-]+\}`[^`<]*`"  # a role without display text: {numref}`fig-x`, {glue:text}`key`
    r"|\{[\w:-]+\}`[^`]*<([^`>]*)>`"  # a role's target, whatever its (translated) text
    r"|``.+?``|`[^`]*`"  # inline code
    r"|\$\$.+?\$\$|\$[^$]+\$"  # math
    r"|\]\(([^)]*)\)",  # a link's target
    re.DOTALL,
)
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
# A message of this many English words or more is a sentence or a heading: its translation has
# Chinese in it (shorter ones may be names: "NumPy", "JVP").
SENTENCE_WORDS = 3


# The Chinese edition hands out an assignment's Chinese notebook, released beside the English
# one: assignments/<name>/zh/<name>.ipynb for assignments/<name>/<name>.ipynb.
_ASSIGNMENT = re.compile(r"(assignments/(ps\d+_\w+?))/(\2\.ipynb)")


def in_chinese(piece: str) -> str:
    """The markup ``piece`` as the Chinese edition may write it."""
    return _ASSIGNMENT.sub(r"\1/zh/\3", piece)


def kept_markup(msgid: str) -> list[str]:
    """The pieces of ``msgid`` a translation must contain unchanged."""
    pieces = []
    for match in _KEPT.finditer(msgid):
        role_target, link_target = match.group(1), match.group(2)
        if role_target is not None:
            pieces.append(f"<{role_target}>")
        elif link_target is not None:
            pieces.append(f"]({link_target})")
        else:
            pieces.append(match.group(0))
    return pieces


@pytest.fixture(scope="session")
def pot_dir(tmp_path_factory) -> Path:
    """The English pages' .pot catalogues, built now from the sources."""
    out = tmp_path_factory.mktemp("gettext")
    run = subprocess.run(
        [sys.executable, "-m", "jaxcourse.i18n_site", "gettext", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=900, check=False,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return out


def _where(message) -> str:
    line = f":{message.lineno}" if message.lineno else ""
    return f"  po{line}: {message.id[:100]!r}"


def problems(pot, po) -> list[str]:
    """Everything that keeps the catalogue ``po`` from translating the page ``pot`` was made
    from, one line each."""
    english = {m.id for m in pot if m.id}
    translated = {m.id: m for m in po if m.id}
    found = []
    for msgid in sorted(english - translated.keys()):
        found.append(f"new English text, not in the catalogue (run update): {msgid[:100]!r}")
    for msgid in sorted(translated.keys() - english):
        found.append(f"no longer on the English page:{_where(translated[msgid])}")
    for msgid in po.obsolete:
        found.append(f"obsolete entry (#~), delete it: {msgid[:100]!r}")
    for msgid, message in translated.items():
        if msgid not in english:
            continue
        if message.fuzzy:
            found.append(f"fuzzy (the English changed; re-translate, drop '#, fuzzy'):"
                         f"{_where(message)}")
        elif not message.string:
            found.append(f"untranslated:{_where(message)}")
        else:
            words = re.findall(r"[A-Za-z]{2,}", prose(msgid))
            if len(words) >= SENTENCE_WORDS and not _CJK.search(message.string):
                found.append(f"left in English:{_where(message)}")
            lost = [p for p in kept_markup(msgid)
                    if p not in message.string and in_chinese(p) not in message.string]
            if lost:
                found.append(f"markup lost {lost}:{_where(message)}")
    return found


@pytest.mark.parametrize("docname", PAGES)
def test_catalogue_is_complete_and_current(pot_dir, docname):
    pot_path = pot_dir / f"{docname}.pot"
    assert pot_path.is_file(), f"the gettext build wrote no catalogue for {docname}"
    po_path = catalogue_path(docname)
    assert po_path.is_file(), (
        f"{po_path.relative_to(ROOT)} missing: run `.venv/bin/python -m jaxcourse.i18n_site update`"
    )
    found = problems(read_catalogue(pot_path), read_catalogue(po_path))
    shown = "\n".join(found[:40]) + (f"\n... and {len(found) - 40} more" if len(found) > 40 else "")
    assert not found, f"{po_path.relative_to(ROOT)}: {len(found)} problems\n{shown}"


def test_every_catalogue_belongs_to_a_page():
    pages = set(PAGES)
    strays = [
        str(path.relative_to(ROOT))
        for path in CATALOGUES.rglob("*.po")
        if str(path.relative_to(CATALOGUES).with_suffix("")) not in pages
    ]
    assert not strays, f"catalogues of pages not in _toc.yml: {strays}"


def test_problems_are_found():
    """The check itself, on a small pair of catalogues: each fault is reported, a good entry not."""
    from babel.messages.catalog import Catalog

    pot = Catalog()
    for msgid in ("A `primitive` has [rules](rules.md) for $x^2$.", "Changed paragraph here.",
                  "New paragraph on the page.", "Left in English by mistake.", "`ps1.jvp`"):
        pot.add(msgid)
    po = Catalog(locale="zh_CN")
    po.add("A `primitive` has [rules](rules.md) for $x^2$.", "`primitive` 有 [规则](rules.md)，对 $x^2$。")
    po.add("Changed paragraph here.", "旧的译文。", flags=["fuzzy"])
    po.add("Left in English by mistake.", "Left in English by mistake.")
    po.add("`ps1.jvp`", "`ps1.jvp`")
    po.add("Removed paragraph.", "删除的段落。")
    po.obsolete["Old paragraph."] = po["Removed paragraph."]
    assert problems(pot, po) == [
        "new English text, not in the catalogue (run update): 'New paragraph on the page.'",
        "no longer on the English page:  po: 'Removed paragraph.'",
        "obsolete entry (#~), delete it: 'Old paragraph.'",
        "fuzzy (the English changed; re-translate, drop '#, fuzzy'):  po: 'Changed paragraph here.'",
        "left in English:  po: 'Left in English by mistake.'",
    ]
    po["A `primitive` has [rules](rules.md) for $x^2$."].string = "`primitive` 有规则。"
    assert (
        "markup lost ['](rules.md)', '$x^2$']:  po: 'A `primitive` has [rules](rules.md) for $x^2$.'"
    ) in problems(pot, po)


def test_an_assignment_link_may_lead_to_its_chinese_notebook():
    target = "{download}`ps1.ipynb <../../assignments/ps1_primitives/ps1_primitives.ipynb>`"
    assert in_chinese(target) == (
        "{download}`ps1.ipynb <../../assignments/ps1_primitives/zh/ps1_primitives.ipynb>`")
    # Any other target is kept as it is.
    assert in_chinese("](../guides/students.md)") == "](../guides/students.md)"
