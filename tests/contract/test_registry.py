"""The registry lists every assignment the grader can grade, each under its own name."""

from __future__ import annotations

import pkgutil
from pathlib import Path

import autograder.assignments
from autograder.assignments import REGISTRY, contract, course

ROOT = Path(__file__).resolve().parents[2]


def test_every_assignment_package_is_registered_under_its_name():
    packages = {m.name for m in pkgutil.iter_modules(autograder.assignments.__path__) if m.ispkg}
    assert set(course()) == packages  # `grade NAME` and `make demo` find assignments by package
    assert set(REGISTRY) - set(course()) == {"toy_double"}  # tests/conftest.py adds the toy
    for name in REGISTRY:
        assignment = contract(name)
        assert assignment.name == assignment.spec.name == name
        assert assignment.spec.notebook == assignment.release.name
        assert assignment.reference.name == f"{name}.md"


def test_the_readmes_contract_sample_is_what_an_assignment_writes():
    """autograder/README.md's first code sample is ps4's assignment.py (it named a `REPOSITORY`
    that no assignment defined)."""
    readme = (ROOT / "autograder" / "README.md").read_text(encoding="utf-8")
    sample = readme.split("```python\n", 1)[1].split("```\n", 1)[0]
    source = (ROOT / "autograder" / "assignments" / "ps4_core" / "assignment.py").read_text()
    assert sample.startswith("from ") and source.endswith(sample)
