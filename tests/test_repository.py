"""The repository's promises: every dependency pinned with a reason, CI runs `make test`.

Two toolchains are pinned: Python 3.12 or later with the JAX the book teaches (requirements.txt,
constraints-py312.txt, the default) and Python 3.11 with JAX 0.10.2 (constraints.txt); the tests
check the one they run on.
"""

from __future__ import annotations

import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from jaxcourse.versions import LEGACY_JAX, PINNED_JAX

ROOT = Path(__file__).resolve().parents[1]
PIN = re.compile(r"^([A-Za-z0-9_.\-]+)==([A-Za-z0-9_.\-+]+)$")


def _requirements() -> list[tuple[str, str, list[str]]]:
    """(name, version, comment lines just above) for each requirement line."""
    pins, comments = [], []
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        line = line.strip()
        if not line:
            comments = []
        elif line.startswith("#"):
            comments.append(line)
        else:
            match = PIN.match(line)
            assert match, f"requirements.txt: {line!r} is not an exact pin (name==version)"
            pins.append((match[1], match[2], comments))
            comments = []
    return pins


def test_every_requirement_is_pinned_with_a_reason():
    pins = _requirements()
    assert pins
    for name, _, comments in pins:
        assert comments, f"requirements.txt: {name} has no reason comment above its pin"


def _constraints(name: str) -> dict[str, str]:
    pins = {}
    for line in (ROOT / name).read_text().splitlines():
        match = PIN.match(line.strip())
        if match:
            pins[match[1].lower().replace("_", "-")] = match[2]
    return pins


# The toolchain these tests run on: its constraints file and its JAX.
LEGACY = sys.version_info[:2] == (3, 11)
CONSTRAINTS = "constraints.txt" if LEGACY else "constraints-py312.txt"
TOOLCHAIN_JAX = LEGACY_JAX if LEGACY else PINNED_JAX


def test_jax_and_jaxlib_are_the_version_the_book_teaches():
    pins = {name.lower(): version for name, version, _ in _requirements()}
    assert pins["jax"] == pins["jaxlib"] == PINNED_JAX
    current = _constraints("constraints-py312.txt")
    assert current["jax"] == current["jaxlib"] == PINNED_JAX
    legacy = _constraints("constraints.txt")
    assert legacy["jax"] == legacy["jaxlib"] == LEGACY_JAX == "0.10.2"
    assert metadata.version("jax") == metadata.version("jaxlib") == TOOLCHAIN_JAX


# Where the pinned JAX's version may be written besides requirements.txt (the one place, which
# jaxcourse.versions.PINNED_JAX reads): the freeze pip installs from, the grader's table of the
# XLA flags measured on each release, and dated records of what was measured on which release.
VERSION_MAY_BE_WRITTEN = ("requirements.txt", "constraints-py312.txt",
                          "autograder/worker/runner.py", "benchmarks/", "tests/fixtures/toolchains/")


def test_the_pinned_jax_version_is_written_in_one_place():
    """Every test and page reads the version from jaxcourse.versions (a page's prose says "the
    pinned JAX", or prints the version a cell computes), so moving the pin is two lines."""
    written = re.compile(rf"(?<![\w.]){re.escape(PINNED_JAX)}(?![\w.])")
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.splitlines()
    found = []
    for name in files:
        path = ROOT / name
        if name.startswith(VERSION_MAY_BE_WRITTEN) or not path.is_file():
            continue
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except UnicodeDecodeError:
            continue  # a binary file
        found += [f"{name}:{i}: {line.strip()[:80]}" for i, line in enumerate(lines, 1)
                  if written.search(line) and "jax" in line.lower()]
    assert len(files) > 100
    assert not found, "write jaxcourse.versions.PINNED_JAX instead:\n" + "\n".join(found)


def test_constraints_agree_with_requirements_and_the_installed_environment():
    constraints = _constraints(CONSTRAINTS)
    for name, version, _ in _requirements():
        key = name.lower().replace("_", "-")
        if key in ("jax", "jaxlib"):
            version = TOOLCHAIN_JAX
        assert constraints.get(key) == version, f"{CONSTRAINTS} disagrees on {name}"
        assert metadata.version(name) == version, f"installed {name} is not the pinned {version}"


def test_the_two_toolchains_differ_only_where_constraints_py312_says_why():
    legacy, current = _constraints("constraints.txt"), _constraints("constraints-py312.txt")
    differ = {name for name in legacy.keys() | current.keys()
              if legacy.get(name) != current.get(name)}
    # jax and jaxlib: the point of the second toolchain; overrides: Python < 3.12 only;
    # setuptools and wheel: not in a 3.12 venv until nbgrader pulls them in.
    assert differ == {"jax", "jaxlib", "overrides", "setuptools", "wheel"}, (
        "re-resolve constraints-py312.txt (make constraints TOOLCHAIN=current) and say why "
        f"these differ: {sorted(differ)}")
    lines = (ROOT / "constraints-py312.txt").read_text().splitlines()
    header = "\n".join(line for line in lines[:next(i for i, line in enumerate(lines)
                                                     if not line.startswith("#"))])
    for name in differ:
        assert re.search(rf"\b{name}\b", header), f"constraints-py312.txt does not say why {name}"


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^make test$", ci, re.MULTILINE)
    readme = (ROOT / "README.md").read_text()
    assert "make test" in readme and re.search(r"^make$", readme, re.MULTILINE)
