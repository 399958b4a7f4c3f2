"""What a task's text offers, the cell policy allows (and nothing more of that module)."""

from __future__ import annotations

import pytest

from autograder.assignments.ps3_pitfalls.checks import ASSIGNMENT as PS3
from autograder.student.cellguard import Guards, PolicyError
from autograder.worker import policy

PS3_ROOTS = policy.allowed_imports(PS3)


def _run(source: str, roots: tuple[str, ...]) -> dict:
    code, refusals = policy.check_source(source, roots)
    if code is None:
        raise PolicyError("; ".join(refusals))
    ns = {"__name__": "__main__", **Guards(roots).namespace()}
    exec(code, ns)  # noqa: S102 - rewritten by the policy, as the sandbox runs it
    return ns


@pytest.mark.parametrize("source", [
    "import timeit\nclock = timeit.default_timer\nt = clock()\n",
    "from timeit import default_timer\nt = default_timer()\n",
    "import time\nt = time.perf_counter()\n",
])
def test_ps3_clocks_the_benchmark_task_offers_are_allowed(source):
    assert isinstance(_run(source, PS3_ROOTS)["t"], float)


@pytest.mark.parametrize("source", [
    "from timeit import timeit\n",
    "import timeit\ntimeit.timeit('1 + 1')\n",
    "import timeit\ntimeit.repeat('1 + 1')\n",
    "import timeit\ntimer = timeit.Timer('1 + 1')\n",
])
def test_the_rest_of_timeit_runs_strings_and_is_refused(source):
    with pytest.raises(PolicyError, match="timeit"):
        _run(source, PS3_ROOTS)
