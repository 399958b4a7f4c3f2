"""Every case of every check names its input classes, and every grading draws every class
(issue 25: a check covers its input classes every time, with random draws on top).

A check's inputs are ``{"cases": [...]}``; each case names the classes it stands for
(``classes``, or one ``case`` or ``kind``). Under each of 30 seeds the set of names must be the
same: a class drawn under some seeds only is a grade that depends on who hands the notebook in,
the fault behind every unstable score tests/contract/test_score_stability.py has found, and it
shows here in seconds, without grading anything. The judgement is benchmarks/input_classes.py's
(``problems``), which prints the classes of every check.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from autograder.assignments import REGISTRY, contract
from autograder.spec import Check

ROOT = Path(__file__).resolve().parents[2]
SEEDS = range(30)


def _tool():
    name = "benchmarks_input_classes"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / "input_classes.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_check_draws_every_class_it_names_whatever_the_seed(name):
    found = {check.id: why for check in contract(name).checks
             if (why := _tool().problems(check, SEEDS))}
    assert found == {}, "\n".join(f"{check_id}: {why}" for check_id, why in found.items())


def _check(make_inputs) -> Check:
    return Check("toy.check", "toy", "", 1.0, "cell", "probe", make_inputs, None, None)


def test_a_class_drawn_only_sometimes_or_a_case_without_a_name_is_caught():
    def sometimes(rng):
        big = rng.integers(4) == 0
        return {"cases": [{"x": 1.0, "classes": ["small"]},
                          {"x": 9.0, "classes": ["big" if big else "small"]}]}

    def unnamed(rng):
        return {"cases": [{"x": rng.uniform(), "case": "named"}, {"x": rng.uniform()}]}

    def every_time(rng):
        order = rng.permutation(2)
        named = [{"x": 1.0, "classes": ["small", "rank 0"]}, {"x": [9.0], "kind": "big"}]
        return {"cases": [named[i] for i in order]}

    tool = _tool()
    assert tool.problems(_check(sometimes), SEEDS) == ["drawn only under some seeds: big"]
    assert tool.problems(_check(unnamed), SEEDS)[0].startswith(tool.UNNAMED)
    assert tool.problems(_check(every_time), SEEDS) == []
    assert tool.classes(_check(every_time), [0])[0] in (["small", "rank 0", "big"],
                                                       ["big", "small", "rank 0"])
    assert tool.classes(_check(lambda rng: {"x": rng.uniform()}), [0, 1]) == [[], []]
