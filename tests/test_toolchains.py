"""The demo classes grade alike on both toolchains (Python 3.11 with the pinned JAX, Python 3.12
with today's: the Makefile's TOOLCHAIN), check by check.

Each toolchain's record (tests/fixtures/toolchains/<python>-jax<version>.json, written by
scripts/record_demo_checks.py on that toolchain) holds every demo student's status and points
per check. This run's demo classes (tests/conftest.py's ``demo_out``) must match every record:
the other toolchain's, so a grade does not depend on the JAX a course installs, and this
toolchain's own, so a record is never left behind by a change to a check. Statuses and points
do not depend on the course's secret (tests/contract/test_score_stability.py), so the records
compare across checkouts with different secrets.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RECORDS = ROOT / "tests" / "fixtures" / "toolchains"
_spec = importlib.util.spec_from_file_location("record_demo_checks",
                                               ROOT / "scripts" / "record_demo_checks.py")
record_demo_checks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(record_demo_checks)


def _records() -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted(RECORDS.glob("*.json"))}


def test_both_toolchains_have_a_record():
    names = set(_records())
    assert any(n.startswith("python3.11-") for n in names), names
    assert any(not n.startswith("python3.11-") for n in names), names


@pytest.mark.parametrize("toolchain", sorted(_records()))
def test_the_demo_classes_grade_as_on_the_recorded_toolchain(demo_out, toolchain):
    here = record_demo_checks.per_check(demo_out)
    there = _records()[toolchain]
    differ = [f"{a}/{s}/{c}: here {here.get(a, {}).get(s, {}).get(c)}, on {toolchain} "
              f"{there.get(a, {}).get(s, {}).get(c)}"
              for a in sorted(set(here) | set(there))
              for s in sorted(set(here.get(a, {})) | set(there.get(a, {})))
              for c in sorted(set(here.get(a, {}).get(s, {})) | set(there.get(a, {}).get(s, {})))
              if here.get(a, {}).get(s, {}).get(c) != there.get(a, {}).get(s, {}).get(c)]
    assert not differ, (f"{len(differ)} checks differ (after changing a check or a demo "
                        f"student, run scripts/record_demo_checks.py on each toolchain):\n"
                        + "\n".join(differ[:40]))
