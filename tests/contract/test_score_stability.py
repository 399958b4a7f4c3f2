"""Is a grade a function of the code? (issue 25)

Every notebook the contract names (the reference, each correct alternative, each wrong solution)
is graded in process under 30 course secrets, each check's inputs drawn as the grader draws them
(``runner.input_seed``: the secret and the check; the student and the code draw nothing, so one
code gets one grade in a course by construction, tests/autograder/test_one_grade_per_code.py),
and must get one score. A notebook whose score moves with the secret would be graded differently
in another course or term: a check whose case matrix misses an input class that only some draws
reach.

Costly (every check 30 times: about half an hour per assignment on a 2-core machine), so it runs
only when asked: ``make test-stability`` (``pytest --stability -m stability``), not in ``make test``.
"""

from __future__ import annotations

import pytest
from grade_variants import in_subprocesses, stability_problems

from autograder.assignments import REGISTRY, contract

INPUTS = "30"  # course secrets (as many draws as the 10 secrets x 3 ids of old)
pytestmark = [pytest.mark.stability, pytest.mark.timeout(4 * 3600)]


def _variants(name: str) -> list[str]:
    a = contract(name)
    return (["reference"] + [f"alt:{alt}" for alt in sorted(a.alternatives)]
            + [f"wrong:{w}" for w in sorted(a.wrong_solutions)])


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_notebook_gets_one_score_under_every_course_secret(name, tmp_path):
    graded = in_subprocesses(REGISTRY[name], _variants(name), inputs=INPUTS, timeout=4 * 3600,
                             compile_cache=tmp_path / "jax-compile-cache")
    assert len(graded["reference"]["scores"]) == 30
    # One score per notebook under every input; the reference and every correct alternative get
    # every point of the checks they are graded on, under every input.
    problems = stability_problems(graded)
    assert not problems, "\n".join(f"{v}: {why}" for v, why in problems.items())
