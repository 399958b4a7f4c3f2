"""A time limit is `error` to regrade, never a silent 0 (the real command, the toy course).

The toy's limits are 10 s per check and per cell (engine_helpers.GRADE_OPTIONS). A machine under
load is stood in for by code that is slow only the first time it runs in a process: 13 s, over
the limit but under twice the limit. Such a notebook must earn what it earns on a quiet machine.
A rule that never returns is stopped twice and its checks are `error`, without charging any
other rule and without running the rule's remaining checks.
"""

from __future__ import annotations

import hostile
import pytest
from engine_helpers import grade_command, read_grades, read_result
from toy_notebooks import FULL

SLOW_ONCE_JVP = """\
# toy.jvp
import time

first_call = []


def square_jvp(primals, tangents):
    if not first_call:  # slow once per process, as a busy machine would make it
        first_call.append(True)
        time.sleep(13)
    (x,), (t,) = primals, tangents
    return square(x), 2 * x * t


ad.primitive_jvps[square_p] = square_jvp
"""
SLOW_CELL = "import time\ntime.sleep(13)\n"

CASES = {
    "slow_rule": (hostile.submission(dict(FULL, jvp=SLOW_ONCE_JVP)), 5),
    "slow_cell": (hostile.submission(FULL, extra={"start": [SLOW_CELL]}), 5),
    "looping_rule": (hostile.submission(dict(FULL, jvp=hostile.LOOPING_JVP)), 3),
    "honest": (hostile.submission(FULL), 5),
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("time_limits")
    submitted = hostile.write_class(base / "submitted", CASES)
    # Three workers: the three slow students (about 35 s each, mostly asleep or stopped by a
    # limit) are graded side by side instead of two of them one after the other.
    proc = grade_command(submitted, base / "out", "--workers", "3", timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return base / "out"


@pytest.mark.parametrize("student", sorted(CASES))
def test_a_slow_machine_does_not_change_the_grade(graded, student):
    row = read_grades(graded)[student]
    assert float(row["score"]) == CASES[student][1], row
    assert row["status"] == "graded"


def test_slow_but_correct_work_passes_every_check(graded):
    for student in ("slow_rule", "slow_cell", "honest"):
        tests = read_result(graded, student)["tests"]
        assert {t["status"] for t in tests} == {"passed", "not-run"}, (student, tests)


def test_a_rule_that_never_returns_is_error_and_charges_no_other_rule(graded):
    tests = {t["name"].split(":")[0]: t for t in read_result(graded, "looping_rule")["tests"]}
    jvp = [t for name, t in tests.items() if name.startswith("toy.jvp.")]
    others = [t for name, t in tests.items()
              if not name.startswith("toy.jvp.") and t["status"] != "not-run"]
    assert jvp and all(t["status"] == "error" and "to be regraded" in t["message"]
                       and t["message"].startswith("[toy.jvp]") for t in jvp), jvp
    assert any("second time" in t["message"] for t in jvp), jvp
    # The rule's other check (another JAX config, so another process) is not run at all.
    assert any("not run: an earlier check of this rule" in t["message"] for t in jvp), jvp
    assert all(t["status"] == "passed" for t in others), others
