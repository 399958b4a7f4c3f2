"""A sixth assignment plugs in through the contract alone: the toy in tests/fixtures/toycontract,
registered by this folder's conftest.py, is a parameter of every contract test, with no test
written for it (test_contract.py runs them all on it, reference to reproducers)."""

from __future__ import annotations

import inspect

import test_contract
from toycontract import TOY

from autograder.assignments import REGISTRY, contract


def _parameters(function) -> list:
    values = []
    for mark in getattr(function, "pytestmark", []):
        if mark.name == "parametrize":
            values += [v[0] if isinstance(v, tuple) else v for v in mark.args[1]]
    return values


def test_the_toy_is_registered_through_the_contract():
    toy = contract(TOY)
    assert REGISTRY[TOY] == "toycontract.toy_double.assignment"
    assert [t.id for t in toy.tasks] == ["toy.double", "toy.sumsq"]
    assert toy.wrong_solutions and toy.alternatives and toy.package == "toycontract"


def test_every_contract_test_runs_on_the_toy():
    tests = {name: fn for name, fn in inspect.getmembers(test_contract, inspect.isfunction)
             if name.startswith("test_")}
    assert len(tests) >= 7
    for name, function in tests.items():
        # Each contract test is parametrized over the registry, so the toy is one of its cases.
        assert TOY in _parameters(function), name
    wrong = [w for n, w in test_contract.WRONG if n == TOY]
    alternatives = [alt for n, alt in test_contract.ALTERNATIVES if n == TOY]
    assert wrong == sorted(contract(TOY).wrong_solutions) and len(wrong) == 3
    assert alternatives == ["double_by_adding"]
