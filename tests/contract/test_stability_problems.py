"""How the score-stability runs judge their grades (no grading here): grade_variants'
``stability_problems``, which both tests/contract/test_score_stability.py and
benchmarks/score_stability.py use, and the benchmark's ``--part`` slices."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from grade_variants import stability_problems

ROOT = Path(__file__).resolve().parents[2]


def _report(scores, max_points=(2, 3), failed=()):
    return {"scores": list(scores), "failed_inputs": list(failed),
            "checks": [{"max_points": p} for p in max_points]}


def test_one_full_score_each_is_no_problem():
    graded = {"reference": _report([5, 5, 5]), "alt:other_way": _report([5, 5, 5]),
              "wrong:off_by_one": _report([2, 2, 2])}
    assert stability_problems(graded) == {}


def test_a_score_that_moves_with_the_inputs_is_a_problem_for_any_notebook():
    failed = ["x.y.z (course secret 3): wrong result"]
    graded = {"reference": _report([5, 3, 5], failed=failed), "wrong:w": _report([2, 3, 2])}
    problems = stability_problems(graded)
    assert set(problems) == {"reference", "wrong:w"}
    assert "[3, 5]" in problems["reference"] and "secret 3" in problems["reference"]


def test_a_correct_notebook_short_of_every_point_is_a_problem_even_when_stable():
    graded = {"reference": _report([3, 3, 3]), "alt:a": _report([4, 4]), "wrong:w": _report([0])}
    problems = stability_problems(graded)
    assert set(problems) == {"reference", "alt:a"}
    assert "3 of 5" in problems["reference"]


def test_an_alternative_graded_on_its_own_task_is_full_at_that_tasks_points():
    # graded_as == "task" (ps3): an alternative runs only its tasks' checks, 3 points here.
    graded = {"reference": _report([5, 5]), "alt:one_task": _report([3, 3], max_points=(3,))}
    assert stability_problems(graded) == {}


def _benchmark():
    name = "benchmarks_score_stability"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" /
                                                      "score_stability.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_the_parts_are_the_whole_run_each_notebook_once(n):
    variants = ["reference"] + [f"alt:{i}" for i in range(4)] + [f"wrong:{i}" for i in range(9)]
    parts = [_benchmark().part_of(variants, k, n) for k in range(1, n + 1)]
    assert sorted(v for part in parts for v in part) == sorted(variants)
    assert parts[0][0] == "reference"


@pytest.mark.parametrize("text", ["0/3", "4/3", "3", "a/b", "1/0"])
def test_a_part_outside_its_range_is_refused(text):
    import argparse

    with pytest.raises(argparse.ArgumentTypeError):
        _benchmark()._part(text)
