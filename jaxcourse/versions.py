"""The JAX the book teaches, and the few differences between it and the older JAX of the second
toolchain that the book, the grader and the reproducers must read.

The book quotes the pinned release's source (Python 3.12 or later with the JAX requirements.txt
pins, ``constraints-py312.txt``). On another release those cells print that release's source
and say it is not the one the prose describes, instead of asserting what the prose says of the
pinned one. ``PINNED_JAX`` is read from requirements.txt, the one place the version is written:
every test and page reads it from here (tests/test_repository.py holds the rest of the tree to
that). The course also
runs on a second toolchain, Python 3.11 with JAX 0.10.2 (``constraints.txt``, ``make
TOOLCHAIN=legacy``: pip offers no later JAX on 3.11); where the two releases differ in what a
chapter prints, the chapter computes the difference with the helpers below.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jax

REQUIREMENTS = Path(__file__).resolve().parents[1] / "requirements.txt"


def _pinned(name: str) -> str:
    found = re.search(rf"^{name}==(\S+)", REQUIREMENTS.read_text(encoding="utf-8"), re.MULTILINE)
    if found is None:
        raise RuntimeError(f"{REQUIREMENTS} pins no {name}")
    return found[1]


PINNED_JAX = _pinned("jax")
# The JAX of the second toolchain, Python 3.11's (constraints.txt).
LEGACY_JAX = "0.10.2"
# JAX 0.11 replaced scan's `num_consts`/`num_carry` parameters by `ft_in`/`ft_out`, made
# `jax.extend.core.ClosedJaxpr` an alias of `Jaxpr`, and its XLA no longer cancels
# `log(exp(x))` on the CPU.
JAX_0_11 = (0, 11)


def on_pinned_jax() -> bool:
    """Whether the installed JAX is the release the book's prose describes."""
    return jax.__version__ == PINNED_JAX


def on_checked_jax() -> bool:
    """Whether the installed JAX is one of the two pinned toolchains' (constraints-py312.txt,
    constraints.txt): the releases the book's version-dependent claims are checked on."""
    return jax.__version__ in (PINNED_JAX, LEGACY_JAX)


def jax_version() -> tuple[int, ...]:
    """The installed JAX's release as numbers: (0, 12, 1), (0, 10, 2)."""
    return tuple(int(part) for part in jax.__version__.split(".") if part.isdigit())


def at_least(*release: int) -> bool:
    """Whether the installed JAX is ``release`` or newer: ``at_least(0, 11)``."""
    return jax_version() >= release


def not_pinned_note() -> str:
    return (f"(JAX {jax.__version__} is installed, not the pinned {PINNED_JAX} the text describes: "
            "the source above is the installed release's, and what the text says of the pinned "
            "release alone is not checked against it.)")


def scan_counts(params: Mapping[str, Any]) -> tuple[int, int]:
    """(loop-invariant inputs, carried values) of a scan equation, from its params.

    The body's inputs are those consts, then the carry, then one slice of each scanned input.
    JAX 0.10 names the two counts num_consts and num_carry; JAX 0.11 replaced them by ft_in, a
    flat tree of three groups (consts, carry, xs) with one entry per value."""
    if "num_consts" in params:
        return params["num_consts"], params["num_carry"]
    groups = params["ft_in"].unpack()  # consts, carry, xs
    return len(groups[0]), len(groups[1])
