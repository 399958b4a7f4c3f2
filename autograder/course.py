"""The course's files that several commands read, importable without JAX: the secret every
check's inputs derive from, the names of the assignments a package holds, and an assignment's
Chinese texts (``solutions/<name>/zh.yml``: ``release`` translates the notebook with them, the
feedback pages take the task titles from them).

``grade`` (autograder.grade.grading) and the Gradescope bundle (autograder.instructor.gradescope)
read the same secret file, so a bundle grades a notebook exactly as the local class did.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import secrets
from pathlib import Path

import yaml

from autograder.limits import UsageError

SECRET_FILE = ".autograder_secret"


def course_secret(root: Path, seed: str | None) -> bytes:
    """Per-course secret from which every check's inputs derive (or ``seed`` when given)."""
    if seed is not None:
        return seed.encode()
    path = root / SECRET_FILE
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_hex(32))
    return path.read_text().strip().encode()


def assignment_names(package: str) -> list[str]:
    """The assignments in ``package``: its sub-packages, sorted (their modules not imported)."""
    pkg = importlib.import_module(package)
    return sorted(m.name for m in pkgutil.iter_modules(pkg.__path__) if m.ispkg)


def check_assignment(name: str, package: str) -> None:
    """A UsageError naming the valid assignments unless ``name`` is one (nothing imported from
    it: the grader's ``load_assignment`` says the same when it imports the checks)."""
    known = assignment_names(package)
    if name not in known:
        raise UsageError(f"unknown assignment {name!r} (the assignments are: "
                         f"{', '.join(known)}; No module named '{package}.{name}')")


def translations_path(name: str, *, root: Path) -> Path:
    return Path(root) / "solutions" / name / "zh.yml"


def translations(name: str, *, root: Path) -> dict:
    """``solutions/<name>/zh.yml``: ``cells`` (cell id -> ``en_sha256``, ``zh``), ``code`` (an
    English line of the code cells -> its Chinese line: comments and strings) and ``tasks``
    (task id -> ``en``, ``zh``: the task's title in the feedback pages)."""
    data = yaml.safe_load(translations_path(name, root=root).read_text(encoding="utf-8"))
    return {"cells": data.get("cells") or {}, "code": data.get("code") or {},
            "tasks": data.get("tasks") or {}}
