"""The course's assignments, one package each, plugged in through one contract
(autograder.contract; what an assignment provides and how to add one: autograder/README.md).

``REGISTRY`` maps each assignment's name to the module that defines its ``ASSIGNMENT``: the one
list of the assignments, which every list in the tests, the markers and the benchmarks is made
from. Tests may add entries (tests/conftest.py registers a toy one); ``course()`` leaves those
out. Imported in the student's process too, as the parent of the probes: it imports nothing.
"""

from __future__ import annotations

REGISTRY: dict[str, str] = {
    name: f"autograder.assignments.{name}.assignment"
    for name in ("ps1_primitives", "ps2_autodidax", "ps3_pitfalls", "ps4_core", "ps5_kernels")
}


def course() -> list[str]:
    """The course's own assignments, sorted: the registry's entries in this package (not what
    tests added), the ones ``grade``, ``release`` and ``make demo`` find here."""
    return sorted(name for name, module in REGISTRY.items()
                  if module.startswith(f"{__name__}.{name}."))


def contract(name: str):
    """The :class:`autograder.contract.Assignment` registered as ``name``."""
    import importlib

    return importlib.import_module(REGISTRY[name]).ASSIGNMENT
