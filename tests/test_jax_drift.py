"""Drift guard: no JAX name the course uses is one the installed JAX deprecates or removed.

JAX deprecates a public name by listing it in its module's ``_deprecations`` table (accessing it
then warns, or raises once the name is gone; ``jax._src.deprecations``), and removes it a few
releases later. The warning is attributed to the caller, so ``filterwarnings`` on ``jax.*`` in
pyproject.toml does not see it; a chapter cell would print it into the book. This test reads every
``jax.<module>.<name>`` the course spells (the packages, the tests, the scripts, the code cells of
the chapters and of the assignments' sources, and Python source held in string constants: the
reproducers' and mutants' cells) and looks each one up in the installed JAX: a name in a
deprecation table, or one the module no longer has, fails, with where it is used. Run on both
toolchains (constraints.txt, constraints-py312.txt), it tells what the next JAX will break.
Private modules (``jax._src``, which the book reads on purpose) are not checked.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
import warnings
from collections import defaultdict
from pathlib import Path
from types import ModuleType

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[1]
PYTHON_DIRS = ("autograder", "jaxcourse", "tests", "scripts", "benchmarks")
MARKDOWN_DIRS = ("book", "solutions")


def _code_cells(path: Path) -> list[str]:
    notebook = jupytext.read(path)
    return ["\n".join(line for line in cell.source.splitlines()
                      if not line.lstrip().startswith(("%", "!")))
            for cell in notebook.cells if cell.cell_type == "code"]


def _sources() -> list[tuple[str, str]]:
    """(where, Python source) of everything the course runs."""
    found = []
    for folder in PYTHON_DIRS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path == Path(__file__).resolve():
                continue  # its own examples of deprecated names
            found.append((str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")))
    for folder in MARKDOWN_DIRS:
        for path in sorted((ROOT / folder).rglob("*.md")):
            text = path.read_text(encoding="utf-8")
            if text.startswith("---\njupytext:") or "```{code-cell}" in text:
                where = str(path.relative_to(ROOT))
                found += [(f"{where} (cell {i})", cell)
                          for i, cell in enumerate(_code_cells(path))]
    return found


class _Names(ast.NodeVisitor):
    """The dotted ``jax...`` names a piece of source spells, through its imports' aliases."""

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

    def visit_Constant(self, node: ast.Constant) -> None:
        # Cells kept as strings (reproducers, mutants, fixtures) are code the course runs too.
        if isinstance(node.value, str) and "jax" in node.value and "\n" in node.value:
            try:
                tree = ast.parse(node.value)
            except SyntaxError:
                return
            inner = _Names()
            inner.visit(tree)
            self.names |= inner.names


def jax_names(source: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()  # a cell that shows a syntax error on purpose
    visitor = _Names()
    visitor.visit(tree)
    return visitor.names


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


def uses() -> dict[str, list[str]]:
    """Each JAX name the course spells, with where."""
    where: dict[str, list[str]] = defaultdict(list)
    for place, source in _sources():
        for name in jax_names(source):
            where[name].append(place)
    return where


def test_no_jax_name_the_course_uses_is_deprecated_or_removed():
    found = uses()
    assert len(found) > 150, "the scan found too few JAX names: is it reading the course?"
    bad = {name: (why, places) for name, places in sorted(found.items())
           if (why := verdict(name)) is not None}
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
    }
    for source in sources:
        assert "jax.device_put_replicated" in jax_names(source), source
    assert verdict("jax.device_put_replicated").startswith(("removed", "deprecated"))
    assert verdict("jax.numpy.no_such_function").startswith("removed")  # gone, no table entry
    assert verdict("jax.numpy.sum") is None and verdict("jax.jit") is None
    assert verdict("jax._src.core.Primitive") is None


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
