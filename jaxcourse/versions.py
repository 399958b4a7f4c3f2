"""The JAX the book teaches, for the few cells that read JAX's own source or internals.

The book quotes the pinned release's source (requirements.txt). On another release those cells
print that release's source and say it is not the one the prose describes, instead of asserting
what the prose says of the pinned one. tests/test_repository.py keeps this pin and
requirements.txt equal.
"""

from __future__ import annotations

import jax

PINNED_JAX = "0.10.2"


def on_pinned_jax() -> bool:
    """Whether the installed JAX is the release the book's prose describes."""
    return jax.__version__ == PINNED_JAX


def not_pinned_note() -> str:
    return (f"(JAX {jax.__version__} is installed, not the pinned {PINNED_JAX} the text describes: "
            "the source above is the installed release's, and what the text says of the pinned "
            "release alone is not checked against it.)")
