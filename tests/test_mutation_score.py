"""benchmarks/mutation_score.py's mutant generator, on a tiny source string (no grading): it must
keep yielding mutmut's first-order mutants, one change each, so that the mutation score cannot
silently rot when mutmut or the script changes."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _script():
    name = "benchmarks_mutation_score"
    if name not in sys.modules:
        path = ROOT / "benchmarks" / "mutation_score.py"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up while the class is built
        spec.loader.exec_module(module)
    return sys.modules[name]


SOURCE = """\
@decorate(3)
def f(a, b):
    if a is None:
        return b
    return a * 2.0 if b else -a


rules[key] = f
"""


def test_every_first_order_mutant_of_a_tiny_cell():
    mutants = _script().first_order_mutants(SOURCE, "cell")
    changed = {(m.line, m.node, m.source.splitlines()[m.line - 1].strip()) for m in mutants}
    assert changed == {
        (3, "Is", "if a is not None:"),
        (5, "BinaryOperation", "return a / 2.0 if b else -a"),
        (5, "Float", "return a * 3.0 if b else -a"),
        (5, "UnaryOperation", "return a * 2.0 if b else +a"),
        (5, "IfExp", "return a * 2.0 if (b) and False else -a"),
        (5, "IfExp", "return a * 2.0 if (b) or True else -a"),
        (8, "Assign", "rules[key] = None"),
    }
    assert len(mutants) == len(changed)
    for m in mutants:  # first order: exactly one line differs, and the decorator is never touched
        before, after = SOURCE.splitlines(), m.source.splitlines()
        assert len(before) == len(after)
        assert [i + 1 for i, (x, y) in enumerate(zip(before, after)) if x != y] == [m.line]
        assert after[0] == "@decorate(3)"
        assert m.diff.startswith("--- cell\n+++ mutant\n")
        compile(m.source, "mutant", "exec")


def test_a_one_line_cell_has_its_one_mutant_with_its_diff():
    script = _script()
    diff = "--- cell\n+++ mutant\n@@ -1 +1 @@\n-x = y\n+x = None"
    assert script.first_order_mutants("x = y\n") == [script.Mutant(1, "Assign", "x = None\n", diff)]


def test_cell_names_an_existing_solution_cell_or_the_run_stops_saying_which_exist():
    with pytest.raises(SystemExit) as stopped:
        _script().score_assignment("ps4_core", seeds=[0], limit=None, workers=1, timeout=1.0,
                                   cells=["no_such_cell"])
    message = str(stopped.value)
    assert "no_such_cell" in message and "dce" in message, message
