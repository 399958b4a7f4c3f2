"""Which input classes each hidden check covers on every grading: the classes its cases name
(``{"cases": [...]}``; a case names every class it stands for in ``classes``, or its one class in
``case`` or ``kind``), the same whatever the seed.

    python benchmarks/input_classes.py [ASSIGNMENT ...]

Draws every check's inputs under several seeds and prints one Markdown row per check: the set of
classes its cases name, or "one random draw" for a check without cases (its classes are then
drawn at random within one input, see its assignment's checks.py). A case that names no class,
or a class that some seeds draw and others do not (a grade that would depend on who hands the
notebook in), is printed after the row and makes the exit status 1.
tests/contract/test_input_classes.py holds the same for every check on every ``make test``.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.course import assignment_names

SEEDS = range(8)


def classes(check, seeds=SEEDS) -> list[list[str]]:
    """The input classes of ``check``'s cases under each seed of ``seeds``, each seed's in the
    order its cases first name them; [] for a check without cases."""
    import jax

    previous = {key: getattr(jax.config, key) for key, _ in check.jax_config}
    try:
        for key, value in check.jax_config:
            try:
                jax.config.update(key, value)
            except RuntimeError:
                pass
        drawn = [check.make_inputs(np.random.default_rng(seed)) for seed in seeds]
    finally:
        for key, value in previous.items():
            jax.config.update(key, value)
    return [list(dict.fromkeys(n for i, c in enumerate(d["cases"]) for n in _names(c, i)))
            if isinstance(d, dict) and "cases" in d else [] for d in drawn]


UNNAMED = "unnamed"


def _names(case, index: int) -> list[str]:
    """A case's classes: its ``classes`` (every class it stands for), else its ``case`` or
    ``kind`` (one); UNNAMED when it has none."""
    if isinstance(case, dict) and case.get("classes"):
        return [str(n) for n in case["classes"]]
    name = case.get("case", case.get("kind")) if isinstance(case, dict) else None
    return [str(name)] if name is not None else [f"{UNNAMED} (case {index + 1})"]


def problems(check, seeds=SEEDS) -> list[str]:
    """What is wrong with ``check``'s classes: a case that names none, or a class that some
    seeds draw and others do not (a grade that depends on who hands the notebook in)."""
    per_seed = classes(check, seeds)
    found = sorted({n for names in per_seed for n in names if n.startswith(UNNAMED)})[:1]
    every = set.intersection(*(set(n) for n in per_seed)) if per_seed else set()
    some = sorted({n for names in per_seed for n in names} - every)
    return found + [f"drawn only under some seeds: {n}" for n in some]


def main(argv: list[str]) -> int:
    names = argv or assignment_names("autograder.assignments")
    bad = 0
    for name in names:
        checks = importlib.import_module(f"autograder.assignments.{name}.checks").ASSIGNMENT.checks
        print(f"\n### {name}\n\n| check | input classes on every grading |\n| --- | --- |")
        for check in checks:
            first = classes(check, SEEDS[:1])[0]
            wrong = problems(check)
            bad += bool(wrong)
            shown = (f"{len(first)} classes: " + "; ".join(sorted(first)) if first
                     else "one random draw")
            print(f"| `{check.id}` | {shown}{' (' + '; '.join(wrong) + ')' if wrong else ''} |")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
