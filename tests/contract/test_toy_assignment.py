"""A sixth assignment plugs in through the contract alone: the toy in tests/fixtures/toycontract,
registered by tests/conftest.py, is a parameter of every contract test, with no test
written for it (test_contract.py runs them all on it, reference to reproducers). And a contract
test fails on a toy the real grader could not grade: inputs or a probe's value that are not plain
data (the broken copies in tests/fixtures/toycontract/not_plain)."""

from __future__ import annotations

import dataclasses
import inspect
import re

import grade_variants
import pytest
import test_contract
from toycontract import TOY

from autograder import inprocess
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


@pytest.fixture
def register(monkeypatch):
    """``register(module)``: a broken toy of tests/fixtures/toycontract/not_plain in the registry
    for this test only; its name there."""
    def add(module: str) -> str:
        monkeypatch.setitem(REGISTRY, f"toy_{module}", f"toycontract.not_plain.{module}")
        return f"toy_{module}"

    return add


def test_inputs_that_are_not_plain_data_fail_the_contract_test(register):
    name = register("scalar_inputs")
    with pytest.raises(AssertionError) as failed:
        test_contract.test_every_checks_inputs_cross_the_channel(name)
    lines = str(failed.value).splitlines()
    assert lines[0].startswith("toy.double.values: its inputs cannot be sent to the student's "
                               "process (float32 is not plain data) (seed 0)"), lines
    assert "toy.sumsq" not in str(failed.value)  # its inputs are the toy's own: plain
    # The in-process grading refuses them too, naming the check, as the sandbox cannot send them.
    a = contract(name)
    with pytest.raises(inprocess.InputsNotPlain, match=r"^toy\.double\.values: "):
        inprocess.run_check(a.checks[0], a.probes_module(), {}, seed=0)


def test_probe_results_that_are_not_plain_data_fail_the_contract_test(register):
    name = register("text_results")
    report = grade_variants.grade(contract(name), ["reference"])  # the toy's cells, in process
    with pytest.raises(AssertionError) as failed:
        test_contract.test_every_probe_result_crosses_the_channel(lambda _: report, name)
    first = str(failed.value).splitlines()[0]
    assert re.fullmatch(r"reference: toy\.double\.values: TypeError: probe result: arrays of "
                        r"dtype str\d+ are not plain data", first), first
    assert "toy.sumsq" not in str(failed.value)


def test_an_empty_field_fails_the_contract_test_unless_the_contract_says_why(monkeypatch):
    """``named_in_blame`` and ``untouched_says`` empty: ``"" in blame`` held for any blame. Now
    the tests fail on an empty field unless ``empty_by_design`` says why (and skip with it)."""
    toy = contract(TOY)
    unnamed = dataclasses.replace(toy, untouched_says="", tasks=tuple(
        dataclasses.replace(t, named_in_blame="") for t in toy.tasks))
    monkeypatch.setitem(test_contract.CONTRACTS, TOY, unnamed)
    untouched = {"untouched": {"checks": [{"message": "NotImplementedError: toy.double: ..."}]}}
    with pytest.raises(AssertionError, match="named_in_blame is empty; fill it in"):
        test_contract.test_every_failed_check_of_a_wrong_solution_names_its_rule(
            None, TOY, "double_adds_one")
    with pytest.raises(AssertionError, match="untouched_says is empty; fill it in"):
        test_contract.test_untouched_notebook_says_what_its_stubs_raise(lambda _: untouched, TOY)
    said = dataclasses.replace(unnamed, empty_by_design={
        "named_in_blame": "toy.double: its blame says what double returns",
        "untouched_says": "a reason that does not hold"})
    monkeypatch.setitem(test_contract.CONTRACTS, TOY, said)
    with pytest.raises(pytest.skip.Exception, match="toy.double: named_in_blame is empty by"):
        test_contract.test_every_failed_check_of_a_wrong_solution_names_its_rule(
            None, TOY, "double_adds_one")
    with pytest.raises(AssertionError, match="says not why"):  # toy.sumsq is not named there
        test_contract.test_every_failed_check_of_a_wrong_solution_names_its_rule(
            None, TOY, "sumsq_squares_the_sum")
    with pytest.raises(AssertionError, match="every check says NotImplementedError"):
        test_contract.test_untouched_notebook_says_what_its_stubs_raise(lambda _: untouched, TOY)
