"""The registry lists every assignment the grader can grade, each under its own name."""

from __future__ import annotations

import pkgutil

import autograder.assignments
from autograder.assignments import REGISTRY, contract, course


def test_every_assignment_package_is_registered_under_its_name():
    packages = {m.name for m in pkgutil.iter_modules(autograder.assignments.__path__) if m.ispkg}
    assert set(course()) == packages  # `grade NAME` and `make demo` find assignments by package
    assert set(REGISTRY) - set(course()) == {"toy_double"}  # tests/conftest.py adds the toy
    for name in REGISTRY:
        assignment = contract(name)
        assert assignment.name == assignment.spec.name == name
        assert assignment.spec.notebook == assignment.release.name
        assert assignment.reference.name == f"{name}.md"
