"""Runs an assignment's checks inside the current process, nbgrader style.

This is what the hidden-test regions of an assignment's source notebook call, so that plain
``nbgrader autograde`` and ``nbgrader validate`` work on the notebook. It is *not* safe against a
hostile student (their code shares this process); ``python -m autograder grade`` runs the same
checks with the probe sandboxed and the judging outside.
"""

from __future__ import annotations

import importlib
import zlib
from typing import Any

import jax
import numpy as np

from autograder.spec import Assignment, Check, Outcome, Verdict
from autograder.student.plain import to_plain
from autograder.worker.hidden import hide_values


def load(name: str) -> tuple[Assignment, Any]:
    """The assignment's (ASSIGNMENT, probes module)."""
    checks = importlib.import_module(f"autograder.assignments.{name}.checks")
    probes = importlib.import_module(f"autograder.assignments.{name}.probes")
    return checks.ASSIGNMENT, probes


def run_check(check: Check, probes: Any, ns: dict, seed: int,
              rng: np.random.Generator | None = None,
              hidden: list | None = None) -> tuple[Verdict, Outcome]:
    """One check's verdict on the namespace ``ns``. Its inputs are drawn from ``rng`` when given
    (seeded as the grader seeds it: ``runner.input_seed`` of the course secret and the check),
    else from ``seed`` and the check. A failed verdict's message shows no value of the inputs or
    the expectation (autograder.worker.hidden), as the grader's; ``hidden``, when given, gets
    them appended (the inputs, a retry's inputs, the expectation), for tests that look for them."""
    if rng is None:
        rng = np.random.default_rng([seed, zlib.crc32(check.id.encode())])
    inputs = check.make_inputs(rng)
    previous = {key: getattr(jax.config, key) for key, _ in check.jax_config}
    try:
        for key, val in check.jax_config:
            try:
                jax.config.update(key, val)
            except RuntimeError:  # settable only before the backend starts (jax_num_cpu_devices)
                pass
        expected = check.expect(inputs)
        outcome = _ask(probes, check, ns, inputs)
        verdict = check.judge(expected, outcome)
        retried: dict = {}
        if not verdict.passed and check.retry is not None and outcome.raised is None:
            retried = check.retry(inputs)
            second = _ask(probes, check, ns, retried)  # as autograder.worker.runner does
            both = type(outcome.value) is dict and type(second.value) is dict
            outcome = Outcome(value={**outcome.value, **second.value}) if both else second
            verdict = check.judge(expected, outcome)
    finally:
        for key, val in previous.items():
            try:
                jax.config.update(key, val)
            except RuntimeError:  # the backend started meanwhile: that setting stays
                pass
    if hidden is not None:
        hidden += [inputs, retried, expected]
    if not verdict.passed:
        verdict = Verdict(False, hide_values(verdict.message, inputs, retried, expected))
    return verdict, outcome


def _ask(probes: Any, check: Check, ns: dict, inputs: dict) -> Outcome:
    try:
        return Outcome(value=to_plain(getattr(probes, check.probe)(ns, inputs)))
    except Exception as err:  # noqa: BLE001 - the student's code may raise anything
        return Outcome(raised=type(err).__name__, message=str(err)[:500])


def check_cell(name: str, grade_cell: str, ns: dict, seed: int = 0) -> None:
    """Run every check counted toward ``grade_cell``; AssertionError lists those that failed.

    Checks that need a GPU are skipped where JAX sees none.
    """
    assignment, probes = load(name)
    has_gpu = any(d.platform == "gpu" for d in jax.devices())
    failures = []
    for check in assignment.checks:
        if check.grade_cell != grade_cell or (check.needs_gpu and not has_gpu):
            continue
        verdict, _ = run_check(check, probes, ns, seed)
        if not verdict.passed:
            blame = f" {check.blame}" if check.blame else ""
            failures.append(f"[{check.task}] {check.description}: {verdict.message}.{blame}")
    if failures:
        raise AssertionError("\n".join(failures))
