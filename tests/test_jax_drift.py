"""Drift guard: no JAX name the course runs or prints is one the installed JAX deprecates or
removed.

JAX deprecates a public name by listing it in its module's ``_deprecations`` table (accessing it
then warns, or raises once the name is gone; ``jax._src.deprecations``), and removes it a few
releases later. The warning is attributed to the caller, so ``filterwarnings`` on ``jax.*`` in
pyproject.toml does not see it; a chapter cell would print it into the book. This test reads every
``jax.<module>.<name>`` the course spells and looks each one up in the installed JAX: a name in a
deprecation table, or one the module no longer has, fails, with where it is used. Where it reads:

- Python source (the packages, the tests, the scripts, the benchmarks), through its imports'
  aliases;
- Python held in strings, in any form: a constant, an f-string (its fields read as ``_``), a
  concatenation, or a run of one-line strings that the course joins later (a reproducer's lines
  in a tuple or in a call's arguments); and, for a line too short to parse alone, every
  ``jax.``, ``jnp.`` or ``lax.`` name its text holds;
- the code cells of the chapters, of the assignments' sources and of the student notebooks
  (``assignments/``), and the prose of all of them and of the Chinese catalogues (``locales/``):
  a name the book prints in a sentence is one a reader will type.

Run on both toolchains (constraints.txt, constraints-py312.txt), it tells what the next JAX will
break; ``make check-newest-jax`` (scripts/newest_jax.py) runs it on the newest JAX the index
offers. Private modules (``jax._src``, which the book reads on purpose) are not checked.
"""

from __future__ import annotations

import ast
import functools
import importlib
import json
import re
import subprocess
import sys
import textwrap
import warnings
from collections import defaultdict
from pathlib import Path
from types import ModuleType

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[1]
PYTHON_DIRS = ("autograder", "jaxcourse", "tests", "scripts", "benchmarks")
MARKDOWN_DIRS = ("book", "solutions")
# A name written in text: the aliases every chapter, notebook and snippet imports JAX under. Not
# after a letter, a dot, a slash or a hyphen: `docs.jax.dev`, `jax-ml/jax`, a URL's path.
TEXT_NAME = re.compile(r"(?<![\w./\-])(jax|jnp|lax)((?:\.[A-Za-z_]\w*)+)")
TEXT_ALIASES = {"jax": "jax", "jnp": "jax.numpy", "lax": "jax.lax"}
# Names the course spells because they are gone: the chapters teach what replaced them (and check
# that they are gone), the cell policy refuses them wherever a JAX still has them, and one is not
# Python at all. Each must still be spelled somewhere (a test says so), so the list cannot rot.
NAMED_AS_GONE = {
    "jax.api": "book/primitives/composition.md checks the old module is gone",
    "jax.core.ConcreteArray": "the chapters tell it is gone and check hasattr(jax.core, ...)",
    "jax.core.Primitive": "the chapters teach jax.extend.core.Primitive instead, and check",
    "jax.lax.zeros_like_array": "composition.md's table of what is gone, checked by a cell",
    "jax.xla_computation": "book/faq/tracers.md tells it was replaced by lower(), and checks",
    "jax.result_info": "an attribute of the StableHLO text book/core/jit.md prints, not Python",
    "jax.pjit": "book/faq/donation.md tells older texts' entry point is gone, and checks hasattr",
    "jax.experimental.pjit.pjit": ("book/faq/donation.md shows it deprecated for jax.jit: the "
                                   "warning is caught and asserted, never left to the reader"),
}


def _code_cells(path: Path) -> list[str]:
    notebook = jupytext.read(path)
    return [_runnable(cell.source) for cell in notebook.cells if cell.cell_type == "code"]


def _runnable(source: str) -> str:
    """A cell's Python: its magics and shell lines left out."""
    return "\n".join(line for line in source.splitlines()
                     if not line.lstrip().startswith(("%", "!")))


@functools.cache  # read once per session: three tests read it
def _sources() -> list[tuple[str, str, str]]:
    """(where, "python" or "text", source) of everything the course runs or prints."""
    found = []
    for folder in PYTHON_DIRS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path == Path(__file__).resolve():
                continue  # its own examples of deprecated names
            found.append((str(path.relative_to(ROOT)), "python", path.read_text(encoding="utf-8")))
    for folder in MARKDOWN_DIRS:
        for path in sorted((ROOT / folder).rglob("*.md")):
            text = path.read_text(encoding="utf-8")
            where = str(path.relative_to(ROOT))
            found.append((where, "text", text))
            if text.startswith("---\njupytext:") or "```{code-cell}" in text:
                found += [(f"{where} (cell {i})", "python", cell)
                          for i, cell in enumerate(_code_cells(path))]
    for path in sorted((ROOT / "assignments").rglob("*.ipynb")):
        where = str(path.relative_to(ROOT))
        for i, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
            source = "".join(cell["source"])
            found.append((f"{where} (cell {i})", "text", source))
            if cell["cell_type"] == "code":
                found.append((f"{where} (cell {i})", "python", _runnable(source)))
    for path in sorted((ROOT / "locales").rglob("*.po")):
        found.append((str(path.relative_to(ROOT)), "text", path.read_text(encoding="utf-8")))
    return found


def text_names(text: str) -> set[str]:
    """The ``jax.``, ``jnp.`` and ``lax.`` names a piece of text spells."""
    return {TEXT_ALIASES[match[1]] + match[2] for match in TEXT_NAME.finditer(text)}


def _string(node: ast.AST) -> str | None:
    """The text of a string expression: a constant, an f-string (each field as ``_``, a name), or
    a ``+`` of those; None for anything else."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.JoinedStr):
        return "".join(part.value if isinstance(part, ast.Constant) else "_"
                       for part in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _string(node.left), _string(node.right)
        return None if left is None or right is None else left + right
    return None


def _parsed_names(source: str) -> set[str]:
    """The names of ``source`` read as Python (dedented), or nothing where it is not Python."""
    try:
        tree = ast.parse(textwrap.dedent(source))
    except (SyntaxError, ValueError):  # ValueError: a null byte or a lone surrogate, on purpose
        return set()
    inner = _Names()
    inner.visit(tree)
    return inner.names


def _runs(items: list[ast.expr]) -> list[list[str]]:
    """The runs of consecutive string expressions among ``items`` (a tuple's elements, a call's
    arguments): the lines of a snippet the course joins with newlines."""
    runs, current = [], []
    for item in items:
        text = _string(item)
        if text is None:
            runs, current = runs + [current] if current else runs, []
        else:
            current.append(text)
    return runs + [current] if current else runs


class _Names(ast.NodeVisitor):
    """The dotted ``jax...`` names a piece of source spells, through its imports' aliases, and
    those of the Python it holds in strings."""

    def __init__(self):
        self.aliases: dict[str, str] = {}
        self.names: set[str] = set()

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name == "jax" or alias.name.startswith("jax."):
                if alias.asname:
                    self.aliases[alias.asname] = alias.name
                else:
                    self.aliases["jax"] = "jax"
                self.names.add(alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level == 0 and (module == "jax" or module.startswith("jax.")):
            for alias in node.names:
                if alias.name != "*":
                    self.aliases[alias.asname or alias.name] = f"{module}.{alias.name}"
                    self.names.add(f"{module}.{alias.name}")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        parts, inner = [node.attr], node.value
        while isinstance(inner, ast.Attribute):
            parts.append(inner.attr)
            inner = inner.value
        if isinstance(inner, ast.Name) and inner.id in self.aliases:
            self.names.add(".".join([self.aliases[inner.id], *reversed(parts)]))
            return  # the whole chain is one name; its inner attributes are prefixes of it
        self.generic_visit(node)

    def _strings(self, node: ast.AST) -> None:
        # Code kept as a string (reproducers, mutants, fixtures, messages) is code the course
        # runs or prints too: read as Python where it parses, and as text in any case.
        text = _string(node)
        if text is not None and ("jax" in text or "jnp" in text or "lax" in text):
            self.names |= _parsed_names(text) | text_names(text)

    def visit_Constant(self, node: ast.Constant) -> None:
        self._strings(node)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        self._strings(node)
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        self._strings(node)
        self.generic_visit(node)

    def _lines(self, items: list[ast.expr]) -> None:
        # A run of one-line strings joined later: the longest tail of it that parses (a
        # snippet's heading and description come before its code).
        for run in _runs(items):
            for start in range(len(run) - 1):
                names = _parsed_names("\n".join(run[start:]))
                if names:
                    self.names |= names
                    break

    def visit_Tuple(self, node: ast.Tuple) -> None:
        self._lines(node.elts)
        self.generic_visit(node)

    def visit_List(self, node: ast.List) -> None:
        self._lines(node.elts)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        self._lines([arg.value if isinstance(arg, ast.Starred) else arg for arg in node.args])
        self.generic_visit(node)


def jax_names(source: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()  # a cell that shows a syntax error on purpose
    visitor = _Names()
    visitor.visit(tree)
    return visitor.names


@functools.cache  # built once per session: each draws its inputs and computes the expected values
def _snippets() -> list[tuple[str, str, str]]:
    """Every reproducer as the feedback prints it (the snippet a student pastes into a notebook):
    the Python the course builds from strings at grading time, read as it is finally run."""
    from autograder.grade import reproduce
    from autograder.grade.grading import load_assignment
    from autograder.instructor.demo import assignment_names

    found = []
    for name in assignment_names("autograder.assignments"):
        for check in load_assignment(name, "autograder.assignments").checks:
            code = None if check.needs_gpu else reproduce.reproducer(name, check.id)
            if code is not None:
                found.append((f"{name}'s reproducer of {check.id}", "python", code))
    return found


def _module(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(name)
    except ImportError:  # not a module: an attribute
        return None


def verdict(name: str) -> str | None:
    """Why the installed JAX objects to ``name`` ("deprecated ...", "removed ..."), or None."""
    parts = name.split(".")
    if any(part.startswith("_") for part in parts):
        return None  # jax._src and private names: read on purpose, not public API
    module, i = _module(parts[0]), 1
    while i < len(parts) and _module(".".join(parts[: i + 1])) is not None:
        module, i = _module(".".join(parts[: i + 1])), i + 1
    if module is None or i == len(parts):
        return None
    owner, attr = ".".join(parts[:i]), parts[i]
    table = vars(module).get("_deprecations", {})
    if attr in table:
        message, obj = table[attr]
        state = "removed" if obj is None else "deprecated"
        return f"{state} in jax {importlib.import_module('jax').__version__}: {message}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        present = hasattr(module, attr)
    if not present:
        return f"removed: {owner} has no {attr} in jax {importlib.import_module('jax').__version__}"
    return None


def uses(sources: list[tuple[str, str, str]] | None = None) -> dict[str, list[str]]:
    """Each JAX name the course spells (``sources``: all of it, the reproducers as printed
    included), with where."""
    where: dict[str, list[str]] = defaultdict(list)
    for place, kind, source in _sources() + _snippets() if sources is None else sources:
        for name in jax_names(source) if kind == "python" else text_names(source):
            where[name].append(place)
    return where


def objections(found: dict[str, list[str]]) -> dict[str, tuple[str, list[str]]]:
    """The names of ``found`` the installed JAX deprecates or removed: name -> (why, where)."""
    return {name: (why, places) for name, places in sorted(found.items())
            if name not in NAMED_AS_GONE and (why := verdict(name)) is not None}


def test_no_jax_name_the_course_uses_is_deprecated_or_removed():
    found = uses()
    assert len(found) > 150, "the scan found too few JAX names: is it reading the course?"
    bad = objections(found)
    assert not bad, "\n".join(f"{name}: {why}; used in {', '.join(sorted(set(places))[:5])}"
                              for name, (why, places) in bad.items())


def test_the_guard_sees_a_deprecated_name_through_any_spelling():
    # A name each toolchain's JAX lists in a deprecation table (module.__getattr__ warns or raises).
    import jax

    assert "device_put_replicated" in vars(jax)["_deprecations"]
    sources = {
        "import jax\njax.device_put_replicated(x, devices)\n",
        "from jax import device_put_replicated\n",
        "import jax as j\nf = j.device_put_replicated\n",
        'CELL = """\nimport jax\njax.device_put_replicated(1, [])\n"""\n',
        # A one-line string, and one that does not parse alone: a snippet's line.
        'LINE = "jax.device_put_replicated(1, [])"\n',
        'LINES = ("xs = [", "    jax.device_put_replicated(1, devices),", "]")\n',
        # A run of one-line strings joined later, where the name is only an alias's attribute.
        'CODE = ("from jax import device_put_replicated as r", "r(1, [])")\n',
        'snippet("ps0.check", "what", "import jax as j", "j.device_put_replicated(1, [])")\n',
        # An f-string and a concatenation.
        'f"y = jax.device_put_replicated({x}, devices)"\n',
        '"import jax as j\\n" + "j.device_put_replicated(1, [])"\n',
    }
    for source in sources:
        assert "jax.device_put_replicated" in jax_names(source), source
    for text in ("Write `jax.device_put_replicated(x, d)` no more.",
                 'msgstr "不要再写 `jax.device_put_replicated(x, d)`。"'):
        assert "jax.device_put_replicated" in text_names(text), text
    assert text_names("`jnp.where`, `lax.scan`") == {"jax.numpy.where", "jax.lax.scan"}
    assert not text_names("https://docs.jax.dev/en/latest/jax.numpy.html, jax-ml/jax.git")
    assert verdict("jax.device_put_replicated").startswith(("removed", "deprecated"))
    assert verdict("jax.numpy.no_such_function").startswith("removed")  # gone, no table entry
    assert verdict("jax.numpy.sum") is None and verdict("jax.jit") is None
    assert verdict("jax._src.core.Primitive") is None


def test_every_name_named_as_gone_is_still_named():
    assert not set(NAMED_AS_GONE) - set(uses(_sources())), "drop them from NAMED_AS_GONE"


def test_the_guard_reads_every_kind_of_source_the_course_has():
    kinds = {(where.split("/")[0], kind) for where, kind, _ in _sources()}
    assert {("book", "text"), ("book", "python"), ("assignments", "python"),
            ("assignments", "text"), ("locales", "text"), ("autograder", "python")} <= kinds
    # What the scan of the files finds includes every name of the printed reproducers: the Python
    # the course builds from strings is seen in its strings (here the placement check's lines).
    static = uses(_sources())
    printed = uses(_snippets())
    assert len(printed) > 30
    assert set(printed) <= set(static), sorted(set(printed) - set(static))
# Imports every module of the package in a fresh interpreter (modules this process already imported
# would not run again), with DeprecationWarning an error wherever it is attributed.
IMPORT_ALL = """
import importlib, pkgutil, sys, warnings
warnings.simplefilter("error", DeprecationWarning)
root = importlib.import_module(sys.argv[1])
count = 0
for info in pkgutil.walk_packages(root.__path__, sys.argv[1] + "."):
    if not info.name.endswith("__main__"):
        importlib.import_module(info.name)
        count += 1
print(count)
"""


@pytest.mark.parametrize("package", ["jaxcourse", "autograder"])
def test_importing_the_course_warns_of_no_deprecation(package):
    done = subprocess.run([sys.executable, "-c", IMPORT_ALL, package], capture_output=True,
                          text=True, cwd=ROOT, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert int(done.stdout) > 5
