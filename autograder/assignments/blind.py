"""A blind set moved into the tests (benchmarks/README.md, "Blind sets"): the assignment's
``blind_<date>.yml`` holds each wrong solution's and alternative's cell verbatim, as its author
handed it in, with its task and description."""

from __future__ import annotations

from pathlib import Path

import yaml


def read(path: Path) -> tuple[dict, dict, dict]:
    """The set's wrong solutions and shortcuts (``blind_<name>`` -> (description, cells)),
    their tasks, and its alternatives (the same form), for an assignment's ``mutants``."""
    found = yaml.safe_load(path.read_text(encoding="utf-8"))
    wrong = {f"blind_{name}": (w["description"], {w["cell"]: w["source"]})
             for name, w in found["wrong"].items()}
    tasks = {f"blind_{name}": w["task"] for name, w in found["wrong"].items()}
    correct = {f"blind_{name}": (a["description"], {a["cell"]: a["source"]})
               for name, a in found["alternatives"].items()}
    return wrong, tasks, correct
