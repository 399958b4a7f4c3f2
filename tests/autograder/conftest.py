"""Fixtures of the engine tests; helpers live in engine_helpers (imported by name)."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest
from engine_helpers import FIXTURES  # noqa: F401  (puts tests/fixtures on sys.path)

from autograder.worker import runner

# Test sessions that check what their own grading runs leave behind take their uids from a range
# no other session on the machine holds: one flock per range, held for the session. The ranges
# lie far above the grader's own (runner.BASE_UID and its UID_BLOCKS blocks).
TEST_UID_LOCKS = Path("/tmp/.autograder-test-uid-ranges")
TEST_UID_FIRST = 300_000_000
TEST_UID_RANGE = runner.UID_BLOCKS * runner.UID_BLOCK
TEST_UID_RANGES = 64


@pytest.fixture(scope="session")
def toy_assignment():
    from toygrader.toy.checks import ASSIGNMENT

    return ASSIGNMENT


@pytest.fixture(scope="session")
def own_uids():
    """A uid range of this session alone: grading runs started with AUTOGRADER_BASE_UID set to
    its start give their sandboxed processes uids in it and nowhere else, so a check of what is
    left running looks at this session's processes only, whatever else grades on the machine."""
    TEST_UID_LOCKS.mkdir(mode=0o700, exist_ok=True)
    for index in range(TEST_UID_RANGES):
        fd = os.open(TEST_UID_LOCKS / f"{index}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        start = TEST_UID_FIRST + index * TEST_UID_RANGE
        try:
            yield range(start, start + TEST_UID_RANGE)
        finally:
            os.close(fd)
        return
    pytest.fail(f"all {TEST_UID_RANGES} test uid ranges ({TEST_UID_LOCKS}) are held by other "
                "test sessions", pytrace=False)
