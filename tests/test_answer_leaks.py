"""No graded answer in the book or in anything the student's process can import (issue 10).

The corpus: the book's sources (what the site renders), the built site's HTML when present
(``_build/html``: ``make test`` builds it first), every module of the course's ``jaxcourse``
package (the book prints from it, notebooks import it), and every course module the sandbox
preloads before student code runs (autograder.student.sandbox and each assignment's probes, with what
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

import ast
import builtins
import difflib
import html
import json
import keyword
import re
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.instructor.release import REGIONS, names, source_notebook

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
            "import autograder.student.sandbox\n"
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


# -- line by line: short answers printed in a chapter's code -----------------------------------
# The shingles above need windows of WINDOW tokens; a fix of two or three lines (ps3's) is shorter
# than that, and a chapter that prints it beside other code shares too few windows to count. Here
# each line is normalised on its own (identifiers numbered within the line; attribute names, names
# of keyword arguments, `self` and `cls` kept),
# an answer's lines are compared with the lines of each code cell of the book, and a cell of an
# answer leaks into a code cell when the lines that nearly match (LINE_RATIO) hold LINE_COVERAGE
# of the answer's tokens. Lines the notebook hands out (its given cells) do not count.

LINE_RATIO = 0.8
LINE_SHORTEST = 6
LINE_COVERAGE = 0.35
_CODE_CELL = re.compile(r"(?ms)^(`{3,})\{code-cell\}[^\n]*\n(.*?)^\1[ \t]*$")
_SIGNATURE = re.compile(r"^\s*(?:async\s+)?(?:def|class)\s")
_KEPT_NAMES = {"self", "cls"}  # names with a fixed meaning, like keyword arguments' names
LINE_ANSWER_SHORTEST = 12  # an answer of fewer tokens is one call of the API a chapter teaches


def code_cells(markdown: str) -> list[str]:
    """The sources of the ``{code-cell}`` blocks of a MyST page."""
    return [m.group(2) for m in _CODE_CELL.finditer(markdown)]


def normalised_lines(text: str) -> list[tuple[str, ...]]:
    """Every line with :data:`LINE_SHORTEST` tokens or more, but signatures and trivial lines,
    its identifiers numbered by first appearance within the line."""
    out = []
    for line in text.splitlines():
        if _TRIVIAL.match(line) or _SIGNATURE.match(line):
            continue
        toks = tokens(line)
        seen: dict[str, str] = {}
        norm, depth = [], 0
        for i, (tok, renamable) in enumerate(toks):
            depth += (tok in "([{") - (tok in ")]}")
            keyword_arg = (depth > 0 and 0 < i < len(toks) - 1 and toks[i - 1][0] in "(,"
                           and toks[i + 1][0] == "=")
            if renamable and not keyword_arg and tok not in _KEPT_NAMES:
                tok = seen.setdefault(tok, f"v{len(seen)}")
            norm.append(tok)
        if len(norm) >= LINE_SHORTEST:
            out.append(tuple(norm))
    return out


def handed_out(name: str) -> set[tuple[str, ...]]:
    """The normalised lines of the cells an assignment gives its students (not solutions)."""
    return {line for cell in source_notebook(name, root=ROOT).cells
            if cell.cell_type == "code" and not cell.metadata.get("nbgrader", {}).get("solution")
            for line in normalised_lines(cell.source)}


def _names(line: tuple) -> set[str]:
    """The names a line keeps as written (attributes, keyword arguments, builtins), keywords
    aside: what the line calls."""
    return {tok for tok in line if tok.isidentifier() and not keyword.iskeyword(tok)
            and not re.fullmatch(r"v\d+", tok)}


def _similar(a: tuple, b: tuple) -> float:
    """How alike two normalised lines are, 0 when ``a`` calls names and ``b`` none of them."""
    if _names(a) and not _names(a) & _names(b):
        return 0.0
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def find_line_leaks(secret: dict[str, str], cells: dict[str, str],
                    given: set[tuple[str, ...]] = frozenset()) -> list[str]:
    """One line per (answer cell, code cell) where the answer's lines that nearly match a line of
    the code cell hold :data:`LINE_COVERAGE` of the answer's tokens."""
    cell_lines = {label: normalised_lines(text) for label, text in cells.items()}
    leaks = []
    for answer, text in secret.items():
        lines = [line for line in normalised_lines(text) if line not in given]
        total = sum(map(len, lines))
        if total < LINE_ANSWER_SHORTEST:
            continue
        for label, theirs in cell_lines.items():
            if not theirs:
                continue
            hits = [line for line in lines
                    if max(_similar(line, other) for other in theirs) >= LINE_RATIO]
            share = sum(map(len, hits)) / total
            if share >= LINE_COVERAGE:
                leaks.append(f"{answer}: {share:.0%} of its lines nearly in {label}, "
                             f"e.g. `{' '.join(hits[0])}`")
    return leaks


def book_code_cells() -> dict[str, str]:
    out = {}
    for path in sorted((ROOT / "book").rglob("*.md")):
        for i, cell in enumerate(code_cells(path.read_text(encoding="utf-8"))):
            out[f"{path.relative_to(ROOT)} code cell {i + 1}"] = cell
    return out


# Code cells of chapters that printed fixes of ps3 tasks (before issue 10 was fixed), with the
# answers each gave away; every one must be found.
PRINTED_BEFORE = [
    ("""
def log_or_y(x, y):
    ok = x > 0.0
    return jnp.where(ok, jnp.log(jnp.where(ok, x, 1.0)), y)
""", ["ps3_pitfalls/safe_log", "ps3_pitfalls/log_or_y"]),
    ("""
def ranks(x):
    result = jax.ShapeDtypeStruct(x.shape, jnp.int32)
    return jax.pure_callback(host_ranks, result, x, vmap_method="sequential")
""", ["ps3_pitfalls/callback"]),
    ("""
class Scaler3:
    def tree_flatten(self):
        return (self.factor,), (self.enabled,)

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children, *aux)
""", ["ps3_pitfalls/method"]),
]


def test_line_detector_finds_fixes_the_book_once_printed():
    secret = answers()
    given = handed_out("ps3_pitfalls")
    for printed, gave_away in PRINTED_BEFORE:
        for answer in gave_away:
            leaks = find_line_leaks({answer: secret[answer]}, {"old chapter": printed}, given)
            assert leaks, f"{answer} printed as before is not found"


def test_line_detector_ignores_unrelated_code():
    other = "total = sum(v * v for v in values)\nprint(jnp.linspace(0.0, 1.0, 5).tolist())\n"
    assert find_line_leaks(answers(), {"page": other}) == []


# ps3's answers are fixes of a few lines, each of a pitfall one chapter teaches: the line by line
# comparison is tuned on them. (On the longer answers of the other assignments, a single generic
# line, such as a conversion with np.asarray, can reach the coverage; the shingles cover those.)
LINE_CHECKED = ["ps3_pitfalls"]


@pytest.mark.parametrize("assignment", LINE_CHECKED)
def test_no_answer_line_by_line_in_book_code(assignment):
    secret = {k: v for k, v in answers().items() if k.startswith(f"{assignment}/")}
    leaks = find_line_leaks(secret, book_code_cells(), handed_out(assignment))
    assert not leaks, f"{len(leaks)} leak(s):\n" + "\n".join(leaks)


# -- the course package defines no graded function --------------------------------------------

def graded_names() -> dict[str, str]:
    """Name -> 'assignment/grade_id', for every function and class a solution cell defines."""
    out = {}
    for name in names(root=ROOT):
        for cell in source_notebook(name, root=ROOT).cells:
            meta = cell.metadata.get("nbgrader", {})
            if cell.cell_type != "code" or not meta.get("solution"):
                continue
            source = "\n".join(line for line in cell.source.splitlines()
                               if not line.lstrip().startswith(("%", "!")))
            for node in ast.parse(source).body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    out[node.name] = f"{name}/{meta['grade_id']}"
    return out


def test_graded_names_are_found():
    found = graded_names()
    assert found["broadcast_transpose"] == "ps4_core/broadcast_transpose"
    assert "plogp" in found and "Normaliser" in found


def test_no_course_module_defines_a_graded_function():
    graded = graded_names()
    clashes = []
    for path in sorted((ROOT / "jaxcourse").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                    and node.name in graded:
                clashes.append(f"{path.relative_to(ROOT)}:{node.lineno} defines {node.name}, "
                               f"the answer of {graded[node.name]}")
    assert not clashes, "\n".join(clashes)


# ps4.broadcast_transpose sums a cotangent over the axes a broadcast created or stretched. Nothing
# the student's process can import may do that for them: broadcast has no transpose rule in the
# package, the rules of add and mul transpose the broadcasting of scalars only, and no function of
# the course's core, called as a helper (ct, aval) or as a rule, sums a (2, 3) cotangent down to an
# operand of shape (1, 3) or (3,). Run in a fresh process: the assignment's tests register a rule.
PS4_PROBE = r"""
import importlib, inspect, json, pkgutil
import numpy as np
import jaxcourse.autodidax, jaxcourse.core
from jaxcourse.autodidax.core import ShapedArray, add_p, broadcast_p, mul_p
from jaxcourse.core.transpose import UndefinedPrimal, transpose_rules

report = {"rule": broadcast_p in transpose_rules, "stretched": [], "solvers": []}
ct = np.ones((2, 3))
for prim in (add_p, mul_p):
    try:
        transpose_rules[prim]([ct], UndefinedPrimal(ShapedArray((1, 3), np.float64)), ct)
        report["stretched"].append(str(prim))
    except NotImplementedError:
        pass
wanted = {(1, 3): np.full((1, 3), 2.0), (3,): np.full(3, 2.0)}
modules = [importlib.import_module(m.name) for pkg in (jaxcourse.autodidax, jaxcourse.core)
           for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + ".")]
for module in modules:
    for name, fn in vars(module).items():
        if not inspect.isfunction(fn) or fn.__module__ != module.__name__:
            continue
        for shape, want in wanted.items():
            aval = ShapedArray(shape, np.float64)
            calls = [lambda: fn(ct, aval), lambda: fn([ct], UndefinedPrimal(aval), ct),
                     lambda: fn([ct], UndefinedPrimal(aval), shape=(2, 3), axes=())]
            for call in calls:
                try:
                    out = call()
                except Exception:
                    continue
                for value in (out if isinstance(out, (list, tuple)) else [out]):
                    try:
                        if np.shape(value) == shape and np.allclose(np.asarray(value), want):
                            report["solvers"].append(f"{module.__name__}.{name}")
                    except Exception:
                        pass
print(json.dumps(report))
"""


def test_nothing_importable_transposes_a_broadcast():
    done = subprocess.run([sys.executable, "-c", PS4_PROBE], capture_output=True, text=True,
                          cwd=ROOT, timeout=300, check=True)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert not report["rule"], "the course package registers a transpose rule for broadcast"
    assert not report["stretched"], f"these rules transpose a stretched operand: {report}"
    assert not report["solvers"], f"importable helpers that sum a broadcast away: {report}"


if __name__ == "__main__":  # every leak, one per line: python tests/test_answer_leaks.py
    corpus_all = corpus_sources()
    if SITE.is_dir():
        corpus_all.update(site_pages())
    found = find_leaks(answers(), corpus_all)
    found += [leak for name in LINE_CHECKED for leak in find_line_leaks(
        {k: v for k, v in answers().items() if k.startswith(f"{name}/")}, book_code_cells(),
        handed_out(name))]
    print("\n".join(found) or "no leak found")
    sys.exit(1 if found else 0)
