"""The contract tests' registration hook: the toy assignment in tests/fixtures/toycontract is
added to autograder.assignments.REGISTRY here, before test_contract.py is collected, so every
contract test is parametrized over it too (test_toy_assignment.py shows it is)."""

import sys
from pathlib import Path

from autograder.assignments import REGISTRY

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
if str(FIXTURES) not in sys.path:
    sys.path.insert(0, str(FIXTURES))

from toycontract import TOY

REGISTRY.setdefault(TOY, "toycontract.toy_double.assignment")
