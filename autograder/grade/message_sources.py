"""Every English message template the checks, probes, judges and the cell policy can write, read
from their source (for tests/autograder/test_check_messages_zh.py: a message without a Chinese
template in autograder.grade.check_text's catalogues fails it until it is translated).

A template is the message's f-string with each ``{expression}`` kept as written there; a plain
string is its own template. Found: the message of every ``Verdict(False, ...)``, every
``raise SomeError(...)`` of a probe or judge, every ``failure=`` of ``judge_each``, the reasons
the cell policy gives (``self.error(node, ...)``) and the banned-call messages. A message held in
a variable (``Verdict(False, jitted)``) is another message passed on and is not a template.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENGINE_MODULES = ("autograder/worker/judge.py",)
POLICY_MODULES = ("autograder/worker/policy.py", "autograder/worker/banned.py")


def template_of(node: ast.AST) -> str | None:
    """The template a string expression writes, or None when it is not one literal string."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(value.value)
            else:  # ast.FormattedValue
                parts.append("{" + ast.unparse(value.value) + "}")
        return "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = template_of(node.left), template_of(node.right)
        return left + right if left is not None and right is not None else None
    return None


def _name(func: ast.AST) -> str:
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _with_parents(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            child.parent = node
    return tree


def module_templates(path: Path, *, policy: bool = False) -> set[str]:
    tree = _with_parents(ast.parse(path.read_text(encoding="utf-8")))
    found = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name, args = _name(node.func), node.args
        picked = []
        if name == "Verdict" and len(args) >= 2:
            picked.append(args[1])
        elif (name.endswith(("Error", "Refused")) and args
              and isinstance(getattr(node, "parent", None), ast.Raise)):
            picked.append(args[0])
        elif policy and name == "error" and len(args) >= 2:
            picked.append(args[1])
        picked += [k.value for k in node.keywords if k.arg == "failure"]
        found |= {t for t in map(template_of, picked) if t}
    return found


def assignment_templates(name: str) -> set[str]:
    """The templates of one assignment's checks and probes (its descriptions and blames are
    read from the assignment itself)."""
    folder = ROOT / "autograder" / "assignments" / name
    return set().union(*(module_templates(p) for p in sorted(folder.glob("*.py"))
                         if p.name in ("checks.py", "probes.py", "programs.py")))


def engine_templates() -> set[str]:
    return set().union(*(module_templates(ROOT / m) for m in ENGINE_MODULES))


def policy_templates() -> set[str]:
    return set().union(*(module_templates(ROOT / m, policy=True) for m in POLICY_MODULES))
