"""No graded answer in the book or in anything the student's process can import (issue 10).

The corpus: the book's sources (what the site renders), the built site's HTML when present
(``_build/html``: ``make test`` builds it first), every module of the course's ``jaxcourse``
package (the book prints from it, notebooks import it), and every course module the sandbox
preloads before student code runs (autograder.sandbox and each assignment's probes, with what
they import). Third-party packages (jax, numpy, IPython) are left out: they hold no course answer.

The answers: the code inside the ``BEGIN SOLUTION`` regions of each graded solution cell in
``solutions/``, minus trivial lines (imports, ``pass``, ``return x``, ``raise
NotImplementedError``, comments).

The comparison is on token shingles normalised so that renaming hides nothing: identifiers are
numbered by first appearance within each window (``a * b + a`` and ``x * y + x`` agree), while
keywords, builtins, attribute names and operators stay as written. An answer cell leaks into
a corpus file when the windows of :data:`WINDOW` tokens it shares with that file cover at least
:data:`COVERAGE` of the cell's tokens: a printed answer, renamed and reformatted, covers most of
its cell, while one idiomatic line that any code of the kind contains (dropping an axis from a
shape, a product rule's form) covers a small part of it.
"""

from __future__ import annotations

import builtins
import html
import json
import keyword
import re
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.release import REGIONS, names, source_notebook

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "_build" / "html"
WINDOW = 20
SHORTEST = 12
COVERAGE = 0.35

_TOKEN = re.compile(r"""
    (?P<str>[rbuRBUfF]{0,2}(?:'[^'\n]*'|"[^"\n]*"))
  | (?P<num>\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)
  | (?P<name>[A-Za-z_]\w*)
  | (?P<op>\*\*|//|==|!=|<=|>=|->|:=|[-+*/%@&|^~<>()\[\]{}.,:;=])
""", re.VERBOSE)
_LITERAL = set(keyword.kwlist) | set(dir(builtins))
_TRIVIAL = re.compile(r"""^\s*(?:$|\#|import\s|from\s+\S+\s+import\s|pass\s*$|
                           return\s+\w+\s*$|raise\s+NotImplementedError\b|@)""", re.VERBOSE)


def tokens(text: str) -> list[tuple[str, bool]]:
    """(token, is_renamable) for every non-trivial line of ``text``."""
    out: list[tuple[str, bool]] = []
    for line in text.splitlines():
        if _TRIVIAL.match(line):
            continue
        previous = ""
        for m in _TOKEN.finditer(line):
            kind, tok = m.lastgroup, m.group()
            if kind == "str":
                out.append(("STR", False))
            elif kind == "name":
                renamable = tok not in _LITERAL and previous != "."
                out.append((tok, renamable))
            else:
                out.append((tok, False))
            previous = tok
    return out


def shingles(toks: list[tuple[str, bool]], size: int = WINDOW) -> dict[tuple, int]:
    """Normalised window -> the index of its first token."""
    out: dict[tuple, int] = {}
    for start in range(max(0, len(toks) - size + 1)):
        seen: dict[str, str] = {}
        window = []
        for tok, renamable in toks[start:start + size]:
            if renamable:
                tok = seen.setdefault(tok, f"v{len(seen)}")
            window.append(tok)
        out.setdefault(tuple(window), start)
    return out


def html_text(page: str) -> str:
    """The text of a page's code blocks and prose, tags removed."""
    page = re.sub(r"(?s)<(script|style)\b.*?</\1>", " ", page)
    page = re.sub(r"<br\s*/?>|</(?:p|div|pre|li|tr|h\d)>", "\n", page)
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def answers() -> dict[str, str]:
    """'assignment/grade_id' -> the code inside the solution regions of that cell."""
    out = {}
    begin, end = REGIONS[0]
    for name in names(root=ROOT):
        for cell in source_notebook(name, root=ROOT).cells:
            meta = cell.metadata.get("nbgrader", {})
            if not meta.get("solution") or cell.cell_type != "code":
                continue
            inside, kept = False, []
            for line in cell.source.splitlines():
                if line.strip() == begin:
                    inside = True
                elif line.strip() == end:
                    inside = False
                    kept.append("")
                elif inside:
                    kept.append(line)
            out[f"{name}/{meta['grade_id']}"] = "\n".join(kept)
    return out


def sandbox_modules() -> list[Path]:
    """The course's own modules a student's process holds: what the fork server preloads."""
    probes = [f"autograder.assignments.{n}.probes" for n in names(root=ROOT)]
    code = ("import importlib, json, sys\n"
            "import autograder.sandbox\n"
            f"for name in {probes!r}:\n"
            "    importlib.import_module(name)\n"
            "print(json.dumps(sorted({m.__file__ for m in list(sys.modules.values())\n"
            "                         if getattr(m, '__file__', None)})))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=300, check=True)
    files = [Path(f) for f in json.loads(done.stdout.strip().splitlines()[-1])]
    own = (ROOT / "autograder", ROOT / "jaxcourse")
    return sorted(f for f in files if f.suffix == ".py" and any(f.is_relative_to(d) for d in own))


def corpus_sources() -> dict[str, str]:
    """Label -> text, for everything but the built site."""
    out = {}
    for path in sorted((ROOT / "book").rglob("*.md")):
        out[str(path.relative_to(ROOT))] = path.read_text(encoding="utf-8")
    modules = set(sandbox_modules()) | set((ROOT / "jaxcourse").rglob("*.py"))
    for path in sorted(modules):
        out[str(path.relative_to(ROOT))] = path.read_text(encoding="utf-8")
    return out


def site_pages() -> dict[str, str]:
    return {str(p.relative_to(ROOT)): html_text(p.read_text(encoding="utf-8", errors="replace"))
            for p in sorted(SITE.rglob("*.html"))}


def find_leaks(secret: dict[str, str], corpus: dict[str, str]) -> list[str]:
    """One line per (answer cell, corpus file) whose shared windows cover :data:`COVERAGE` of
    the cell, with the share and the first shared text.

    An answer shorter than :data:`WINDOW` tokens (a one-line rule) is one window of its own
    length, if it has at least :data:`SHORTEST` tokens."""
    answer_tokens = {cell: tokens(text) for cell, text in secret.items()}
    sizes = {min(WINDOW, len(t)) for t in answer_tokens.values() if len(t) >= SHORTEST}
    corpus_tokens = {label: tokens(text) for label, text in corpus.items()}
    index: dict[tuple, str] = {}
    for size in sizes:
        for label, toks in corpus_tokens.items():
            for window in shingles(toks, size):
                index.setdefault(window, label)
    leaks = []
    for cell, toks in answer_tokens.items():
        if len(toks) < SHORTEST:
            continue
        size = min(WINDOW, len(toks))
        covered: dict[str, set[int]] = {}
        for start in range(len(toks) - size + 1):
            window = next(iter(shingles(toks[start:start + size], size)))
            if window in index:
                covered.setdefault(index[window], set()).update(range(start, start + size))
        for label, positions in sorted(covered.items()):
            share = len(positions) / len(toks)
            if share >= COVERAGE:
                first = min(positions)
                shown = " ".join(t for t, _ in toks[first:first + size])
                leaks.append(f"{cell}: {share:.0%} of its code in {label}, e.g. `{shown}`")
    return leaks


# -- the detector itself -------------------------------------------------------------------------

PLANTED = '''
def multiply_add_batch(args, batch_axes):
    size = next(a.shape[d] for a, d in zip(args, batch_axes) if d is not None)
    aligned = [
        jnp.broadcast_to(a, (size, *a.shape)) if d is None else jnp.moveaxis(a, d, 0)
        for a, d in zip(args, batch_axes)
    ]
    return multiply_add_prim(*aligned), 0
'''
RENAMED_PAGE = '''<html><body><p>A worked example:</p><div class="highlight"><pre>
<span class="k">def</span> <span class="nf">rule</span>(operands, dims):
    <span class="n">n</span> = next(o.shape[k] for o, k in zip(operands, dims)
             if k is not None)
    <span class="c1"># reformatted, renamed, commented</span>
    moved = [jnp.broadcast_to(o, (n, *o.shape)) if k is None
             else jnp.moveaxis(o, k, 0) for o, k in zip(operands, dims)]
    return prim(*moved), 0
</pre></div></body></html>'''


def test_planted_leak_is_found_through_renaming_and_markup():
    leaks = find_leaks({"demo/batch": PLANTED}, {"fake/page.html": html_text(RENAMED_PAGE)})
    assert leaks and leaks[0].startswith("demo/batch: ") and "fake/page.html" in leaks[0]


def test_one_shared_idiom_is_not_a_leak():
    answer = PLANTED + "    extra = [a.sum() + b.mean() * 3 for a, b in zip(args, batch_axes)]\n" * 3
    idiom = "size = next(a.shape[d] for a, d in zip(args, batch_axes) if d is not None)\n"
    assert find_leaks({"demo/batch": answer}, {"page": idiom}) == []


def test_unrelated_code_is_not_a_leak():
    other = "def rule(xs, axes):\n    return [x.sum(axis=a) * 2 + 1 for x, a in zip(xs, axes)]\n"
    assert find_leaks({"demo/batch": PLANTED}, {"page": other * 5}) == []


def test_trivial_lines_are_ignored():
    text = "import jax\nfrom jax import numpy as jnp\n    return x\n    pass\n# note\n"
    assert tokens(text) == []


def test_every_assignment_has_answers():
    found = answers()
    for name in names(root=ROOT):
        assert any(k.startswith(f"{name}/") and tokens(v) for k, v in found.items()), name


# -- the course's real data ----------------------------------------------------------------------

# Known leaks, marked strict so that the mark must go once they are gone (none now). Every leak
# found is listed in the failure, and by `python tests/test_answer_leaks.py`.
KNOWN_LEAKS: dict[str, str] = {}


@pytest.fixture(scope="module")
def corpus():
    return corpus_sources()


@pytest.mark.parametrize("assignment", [
    pytest.param(n, marks=pytest.mark.xfail(reason=KNOWN_LEAKS[n], strict=True))
    if n in KNOWN_LEAKS else n for n in names(root=ROOT)])
def test_no_answer_in_book_sources_or_sandbox_modules(corpus, assignment):
    secret = {k: v for k, v in answers().items() if k.startswith(f"{assignment}/")}
    leaks = find_leaks(secret, corpus)
    assert not leaks, f"{len(leaks)} leak(s):\n" + "\n".join(leaks)


@pytest.mark.parametrize("assignment", [
    pytest.param(n, marks=pytest.mark.xfail(reason=KNOWN_LEAKS[n], strict=True))
    if n in KNOWN_LEAKS else n for n in names(root=ROOT)])
def test_no_answer_in_built_site(assignment):
    if not SITE.is_dir():
        pytest.skip(f"{SITE.relative_to(ROOT)} is missing: build the book first "
                    "(`make test` does); the book's sources are checked above")
    secret = {k: v for k, v in answers().items() if k.startswith(f"{assignment}/")}
    leaks = find_leaks(secret, site_pages())
    assert not leaks, f"{len(leaks)} leak(s):\n" + "\n".join(leaks)


if __name__ == "__main__":  # every leak, one per line: python tests/test_answer_leaks.py
    corpus_all = corpus_sources()
    if SITE.is_dir():
        corpus_all.update(site_pages())
    found = find_leaks(answers(), corpus_all)
    print("\n".join(found) or "no leak found")
    sys.exit(1 if found else 0)
