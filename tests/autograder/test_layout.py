"""The grader's folders say where their code runs (autograder/README.md, "Where code runs"): every
module imports, no two modules import each other (directly or through others, with imports
inside functions counted), the student's process never imports the grader's side, and the
README's table names every module in the folder it is in."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "autograder"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))
           if "__pycache__" not in p.parts}


def _imports(name: str, path: Path) -> set[str]:
    """The autograder modules ``name`` imports anywhere in its text (in functions too): for
    ``from P import x`` both P and, where it is a module, P.x."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return {m for m in found if m in MODULES and m != name}


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    found: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                found.append(path[path.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, path)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    return found


@pytest.mark.parametrize("name", sorted(m for m in MODULES if not m.endswith("__main__")))
def test_every_module_imports(name):
    importlib.import_module(name)


def test_no_import_cycle():
    assert _cycles(GRAPH) == []


def test_the_cycle_finder_sees_a_cycle_hidden_in_a_function(tmp_path):
    b = tmp_path / "b.py"
    b.write_text("def f():\n    from autograder import cli\n")
    graph = {"autograder.limits": {"autograder.cli"}, "autograder.cli": {"autograder.limits"}}
    assert _cycles(graph) == [["autograder.cli", "autograder.limits", "autograder.cli"]]
    assert "autograder.cli" in _imports("autograder.b", b)


def test_the_students_process_imports_nothing_of_the_graders_side():
    student = {m for m in MODULES if m.startswith("autograder.student")}
    allowed = student | {"autograder"}  # the top package, which imports nothing
    assert GRAPH["autograder"] == set()
    for name in student:
        assert GRAPH[name] <= allowed, (name, sorted(GRAPH[name] - allowed))


def test_the_readme_table_names_every_module_in_its_folder():
    text = (PACKAGE / "README.md").read_text(encoding="utf-8")
    section = text.split("## Where code runs", 1)[1].split("\n## ", 1)[0]
    listed: set[str] = set()
    rows = re.findall(r"^\| `autograder/([\w/]*)` \| ([^|]*) \|", section, re.MULTILINE)
    for folder, cells in rows:
        listed.update(f"autograder/{folder}{m}.py" for m in re.findall(r"`(\w+)`", cells))
    on_disk = {p.relative_to(ROOT).as_posix() for p in MODULES.values()
               if "assignments" not in p.parts and p.name != "__init__.py"}
    assert on_disk <= listed, sorted(on_disk - listed)
    assert listed <= on_disk, sorted(listed - on_disk)


# The folders in the order a submission's work flows through them: a module may import from its
# own folder, the shared top level and the folders before its own, never from one after it (the
# student's process is held to its own folder above). The assignments' packages are plug-ins of
# the worker and the grade step, outside this order.
LAYERS = ("student", "worker", "grade", "instructor")


def _layer(name: str) -> int | None:
    parts = name.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 2 and parts[1] in LAYERS else None


def test_no_folder_imports_from_a_folder_after_its_own():
    wrong = sorted((name, dep) for name, deps in GRAPH.items() for dep in deps
                   if _layer(name) is not None and _layer(dep) is not None
                   and _layer(dep) > _layer(name))
    assert wrong == []


def test_the_layer_rule_sees_an_import_against_the_flow():
    graph = {"autograder.worker.runner": {"autograder.grade.record"}}
    assert [(n, d) for n, ds in graph.items() for d in ds if _layer(d) > _layer(n)] != []
