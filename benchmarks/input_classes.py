"""Which input classes each hidden check covers on every grading: the cases its input maker
draws (``{"cases": [{"case": NAME, ...}, ...]}``, named by ``case`` or ``kind`` where the
assignment names them), the same whatever the seed.

    python benchmarks/input_classes.py [ASSIGNMENT ...]

Draws every check's inputs under several seeds, checks that the list of case names does not
depend on the seed (a class drawn only sometimes would be a grade that depends on who hands the
notebook in), and prints one Markdown row per check: the classes, or "one random draw" for a
check without cases (its classes are then drawn at random within one input, see its
assignment's checks.py). Exit status 1 when a check's cases change with the seed.
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


def classes(check) -> list[list[str]]:
    """The case names of ``check``'s inputs under each seed of SEEDS."""
    import jax

    previous = {key: getattr(jax.config, key) for key, _ in check.jax_config}
    try:
        for key, value in check.jax_config:
            try:
                jax.config.update(key, value)
            except RuntimeError:
                pass
        drawn = [check.make_inputs(np.random.default_rng(seed)) for seed in SEEDS]
    finally:
        for key, value in previous.items():
            jax.config.update(key, value)
    return [[_name(c, i) for i, c in enumerate(d["cases"])]
            if isinstance(d, dict) and "cases" in d else [] for d in drawn]


def _name(case, index: int) -> str:
    name = case.get("case", case.get("kind")) if isinstance(case, dict) else None
    return str(name) if name is not None else f"case {index + 1} (unnamed)"


def main(argv: list[str]) -> int:
    names = argv or assignment_names("autograder.assignments")
    unstable = 0
    for name in names:
        checks = importlib.import_module(f"autograder.assignments.{name}.checks").ASSIGNMENT.checks
        print(f"\n### {name}\n\n| check | input classes on every grading |\n| --- | --- |")
        for check in checks:
            per_seed = classes(check)
            stable = all(p == per_seed[0] for p in per_seed)
            unstable += not stable
            shown = (f"{len(per_seed[0])} cases: " + "; ".join(dict.fromkeys(per_seed[0]))
                     if per_seed[0] else "one random draw")
            print(f"| `{check.id}` | {shown}{'' if stable else ' (CHANGES WITH THE SEED)'} |")
    return 1 if unstable else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
