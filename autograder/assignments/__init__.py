"""The course's assignments, one package each, plugged in through one contract
(autograder.contract; what an assignment provides and how to add one: autograder/README.md).

``REGISTRY`` maps each assignment's name to the module that defines its ``ASSIGNMENT``; tests may
add entries (tests/contract/ registers a toy one). Imported in the student's process too, as the
parent of the probes: it imports nothing.
"""

from __future__ import annotations

REGISTRY: dict[str, str] = {
    name: f"autograder.assignments.{name}.assignment"
    for name in ("ps1_primitives", "ps2_autodidax", "ps3_pitfalls", "ps4_core", "ps5_kernels")
}


def contract(name: str):
    """The :class:`autograder.contract.Assignment` registered as ``name``."""
    import importlib

    return importlib.import_module(REGISTRY[name]).ASSIGNMENT
