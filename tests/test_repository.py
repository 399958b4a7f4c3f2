"""The repository's promises: every dependency pinned with a reason, CI runs `make test`."""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

from jaxcourse.versions import PINNED_JAX

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


def test_jax_and_jaxlib_are_the_version_the_book_teaches():
    pins = {name.lower(): version for name, version, _ in _requirements()}
    assert pins["jax"] == pins["jaxlib"] == PINNED_JAX == "0.10.2"
    assert metadata.version("jax") == "0.10.2"


def test_constraints_agree_with_requirements_and_the_installed_environment():
    constraints = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        match = PIN.match(line.strip())
        if match:
            constraints[match[1].lower().replace("_", "-")] = match[2]
    for name, version, _ in _requirements():
        key = name.lower().replace("_", "-")
        assert constraints.get(key) == version, f"constraints.txt disagrees on {name}"
        assert metadata.version(name) == version, f"installed {name} is not the pinned {version}"


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^make test$", ci, re.MULTILINE)
    readme = (ROOT / "README.md").read_text()
    assert "make test" in readme and re.search(r"^make$", readme, re.MULTILINE)
