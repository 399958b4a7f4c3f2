"""The cell policy's allowlist: every module a cell may hold, every attribute it may take from
each, and every public member of the classes it can reach, as reviewed by a person.

The list is ``allowlist.txt`` beside this file. A module that is not on it is refused, and so is
any attribute of a listed module that is not listed for it: an upgrade of NumPy or JAX that adds
a function adds nothing a cell can call until someone has reviewed it and put it on the list.
The members of classes (``ndarray.tofile``, ``Device.client``) are audited the same way: every
public member of every class a cell can reach is on the list, allowed or refused with its reason;
refused members are refused on every object, by name, at run time (``cellguard``).

The file's form, one entry a line:

``[module NAME] why``
    a module a cell may hold (``NAME`` is its ``__name__``); ``as PATH`` after the name adds a
    dotted path it is imported under when that differs (``jax.extend.mlir.dialects.stablehlo``).
``[class NAME]``
    the public members of a class a cell can reach (``numpy.ndarray``).
``[names] why``
    attribute names refused on every object (frames, native memory, the backend's client):
    refusals only; the class sections list what is allowed.
``name name ...``
    allowed attributes of the section above.
``!name: why``
    an attribute refused, and why (it is shown to the student).

``python -m autograder.student.allowlist audit`` walks everything a cell can reach and prints
what is neither allowed nor refused (``tests/autograder/test_allowlist_audit.py`` fails on it);
``... accept`` adds those names to their sections as allowed, for a reviewed upgrade. Imported in
the student's process (the sandbox's preload): it holds no grader state.
"""

from __future__ import annotations

import builtins
import contextlib
import importlib
import sys
import types
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

LIST = Path(__file__).with_name("allowlist.txt")


@dataclass
class Section:
    kind: str  # "module", "class" or "names"
    name: str
    why: str = ""
    paths: tuple[str, ...] = ()  # other dotted paths a module is imported under
    allowed: set[str] = field(default_factory=set)
    refused: dict[str, str] = field(default_factory=dict)


@dataclass
class Allowlist:
    modules: dict[str, Section]
    classes: dict[str, Section]
    names: Section = field(default_factory=lambda: Section("names", ""))

    def importable(self) -> dict[str, str]:
        """Dotted path -> the module's ``__name__``, for every path a cell may import."""
        out = {}
        for section in self.modules.values():
            for path in (section.name, *section.paths):
                out[path] = section.name
        return out

    def refused_members(self) -> dict[str, str]:
        """Attribute name -> why, for the names refused on every object."""
        return dict(self.names.refused)

    def class_refusals(self) -> dict[str, dict[str, str]]:
        """Member name -> {class key -> why}: members refused on one class and its subclasses
        (``Operation.parse``, where ``Attribute.parse`` is harmless)."""
        out: dict[str, dict[str, str]] = {}
        for key, section in self.classes.items():
            for name, why in section.refused.items():
                out.setdefault(name, {})[key] = why
        return out


def parse(text: str) -> Allowlist:
    modules: dict[str, Section] = {}
    classes: dict[str, Section] = {}
    names = Section("names", "")
    current: Section | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            head, _, why = line[1:].partition("]")
            if head == "names":
                current = names
                continue
            kind, _, rest = head.partition(" ")
            parts = rest.split(" as ")
            name = parts[0].strip()
            if kind not in ("module", "class") or not name:
                raise ValueError(f"allowlist.txt:{number}: bad section {line!r}")
            current = Section(kind, name, why.strip(), tuple(p.strip() for p in parts[1:]))
            table = modules if kind == "module" else classes
            if name in table:
                raise ValueError(f"allowlist.txt:{number}: {kind} {name} listed twice")
            table[name] = current
        elif current is None:
            raise ValueError(f"allowlist.txt:{number}: names before any section")
        elif current is names and not line.startswith("!"):
            raise ValueError(f"allowlist.txt:{number}: [names] holds refusals only")
        elif line.startswith("!"):
            name, _, why = line[1:].partition(":")
            if not why.strip():
                raise ValueError(f"allowlist.txt:{number}: a refusal says why")
            current.refused[name.strip()] = why.strip()
        else:
            current.allowed.update(line.split())
    return Allowlist(modules, classes, names)


def load(path: Path = LIST) -> Allowlist:
    return parse(path.read_text(encoding="utf-8"))


# -- the reachability audit ---------------------------------------------------------------------


def class_key(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _public(obj: Any) -> list[str]:
    try:
        return sorted(n for n in dir(obj) if isinstance(n, str) and not n.startswith("_"))
    except Exception:  # noqa: BLE001 - a library object whose dir() fails offers nothing
        return []


def _attribute(obj: Any, name: str) -> tuple[bool, Any]:
    try:
        with warnings.catch_warnings():  # typing.re and the like warn when read
            warnings.simplefilter("ignore")
            return True, getattr(obj, name)
    except Exception:  # noqa: BLE001 - a property that raises on the class: nothing reached
        return False, None


@dataclass
class Reach:
    """What a cell can reach: for each module and class, its public names."""

    modules: dict[str, list[str]] = field(default_factory=dict)
    classes: dict[str, list[str]] = field(default_factory=dict)
    callables: int = 0
    # (module, name) whose value is a module that is not on the list: refused by that rule.
    unlisted: set[tuple[str, str]] = field(default_factory=set)


def reachable(allowlist: Allowlist, roots: tuple[str, ...]) -> Reach:
    """Every module and class reachable from ``roots`` (importable module names) and the cells'
    builtins, through every attribute the allowlist lets a cell take, and their public names.
    A module that is not on the list is recorded (with no names) and not entered."""
    reach = Reach()
    refused = allowlist.refused_members()
    seen_classes: set[int] = set()
    todo: list[Any] = []

    def visit_class(cls: type) -> None:
        if id(cls) in seen_classes:
            return
        seen_classes.add(id(cls))
        todo.append(cls)

    # A cell may import any listed module, which makes it an attribute of its parent: import
    # them all first, as a notebook may have.
    for section in allowlist.modules.values():
        for path in (section.name, *section.paths):
            if path.split(".")[0] in roots:
                with contextlib.suppress(ImportError):
                    importlib.import_module(path)
    for name in roots:
        try:
            todo.append(importlib.import_module(name))
        except ImportError:
            continue
    for name in dir(builtins):
        if not name.startswith("_"):
            value = getattr(builtins, name)
            visit_class(value if isinstance(value, type) else type(value))
    while todo:
        obj = todo.pop()
        if isinstance(obj, types.ModuleType):
            if obj.__name__ in reach.modules:
                continue
            section = allowlist.modules.get(obj.__name__)
            names = _public(obj)
            reach.modules[obj.__name__] = names if section else []
            if section is None:
                continue
            for name in names:
                if name in section.refused or name in refused:
                    continue
                ok, value = _attribute(obj, name)
                if not ok:
                    continue
                if isinstance(value, types.ModuleType) and value.__name__ not in allowlist.modules:
                    reach.unlisted.add((obj.__name__, name))
                    continue
                if callable(value):
                    reach.callables += 1
                if isinstance(value, types.ModuleType):
                    todo.append(value)
                else:
                    visit_class(value if isinstance(value, type) else type(value))
        else:
            key = class_key(obj)
            names = _public(obj)
            reach.classes.setdefault(key, names)
            for name in names:
                if name in refused:
                    continue
                ok, value = _attribute(obj, name)
                if not ok:
                    continue
                if callable(value):
                    reach.callables += 1
                if isinstance(value, types.ModuleType):
                    todo.append(value)
                elif isinstance(value, type):
                    visit_class(value)
    return reach


def unreviewed(allowlist: Allowlist, reach: Reach) -> dict[str, list[str]]:
    """``"module NAME"``/``"class NAME"`` -> the names reached there that the list neither
    allows nor refuses. A module that is not on the list is refused wherever it is reached (a
    cell is never handed it), so it is not entered and needs no review."""
    out: dict[str, list[str]] = {}
    refused_anywhere = allowlist.refused_members()
    for name, names in sorted(reach.modules.items()):
        section = allowlist.modules.get(name)
        if section is None:
            continue
        new = [n for n in names if n not in section.allowed and n not in section.refused
               and n not in refused_anywhere and (name, n) not in reach.unlisted]
        if new:
            out[f"module {name}"] = new
    for name, names in sorted(reach.classes.items()):
        section = allowlist.classes.get(name)
        known = (section.allowed | set(section.refused)) if section else set()
        new = [n for n in names if n not in known and n not in refused_anywhere]
        if new:
            out[f"class {name}"] = new
    return out


def summary(allowlist: Allowlist, reach: Reach) -> str:
    listed = [m for m in reach.modules if m in allowlist.modules]
    total = sum(len(reach.modules[m]) for m in listed) + sum(
        len(v) for v in reach.classes.values())
    allowed = sum(len(allowlist.modules[m].allowed) for m in listed) + sum(
        len(allowlist.classes[c].allowed) for c in reach.classes if c in allowlist.classes)
    return (f"reached {len(reach.modules)} modules ({len(listed)} allowed, the rest refused), "
            f"{len(reach.classes)} classes, {reach.callables} callables; {total} public names, "
            f"{allowed} of them allowed")


def accept(path: Path, missing: dict[str, list[str]]) -> None:
    """Append the unreviewed names to their sections as allowed (new class sections at the end):
    the step after a person has read them."""
    lines = path.read_text(encoding="utf-8").splitlines()
    for head, names in missing.items():
        kind, _, name = head.partition(" ")
        if not names:
            continue
        wrapped = _wrap(names)
        heads = (f"[{kind} {name}]", f"[{kind} {name} ")
        start = next((i for i, line in enumerate(lines) if line.startswith(heads)), None)
        if start is None:
            lines += [f"[{kind} {name}]", *wrapped]
            continue
        end = start + 1
        while end < len(lines) and not lines[end].startswith("["):
            end += 1
        lines[end:end] = wrapped
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _wrap(names: list[str], width: int = 99) -> list[str]:
    out, line = [], ""
    for name in names:
        if line and len(line) + 1 + len(name) > width:
            out.append(line)
            line = name
        else:
            line = f"{line} {name}" if line else name
    return [*out, line] if line else out


# What any assignment's cells may import: cellguard.BASE_IMPORTS (test_allowlist_audit holds the
# two equal; this module cannot import cellguard, which imports it) and ps3's extras.
AUDIT_ROOTS = ("jax", "numpy", "math", "functools", "itertools", "operator", "collections",
               "dataclasses", "typing", "time", "timeit")


def audit_roots() -> tuple[str, ...]:
    return AUDIT_ROOTS


def main(argv: list[str]) -> int:
    allowlist = load()
    reach = reachable(allowlist, audit_roots())
    missing = unreviewed(allowlist, reach)
    if argv[:1] == ["accept"]:
        accept(LIST, missing)
        print(f"added {sum(len(v) for v in missing.values())} names to {LIST.name}")
        return 0
    print(summary(allowlist, reach))
    for head, names in missing.items():
        print(f"unreviewed: {head}: {' '.join(names) or '(the module is not on the list)'}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
