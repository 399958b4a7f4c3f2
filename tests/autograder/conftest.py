"""Fixtures of the engine tests; helpers live in engine_helpers (imported by name)."""

from __future__ import annotations

import pytest
from engine_helpers import FIXTURES  # noqa: F401  (puts tests/fixtures on sys.path)


@pytest.fixture(scope="session")
def toy_assignment():
    from toygrader.toy.checks import ASSIGNMENT

    return ASSIGNMENT
