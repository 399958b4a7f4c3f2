"""Runs an assignment's checks inside the current process, nbgrader style.

This is what the hidden-test regions of an assignment's source notebook call, so that plain
``nbgrader autograde`` and ``nbgrader validate`` work on the notebook. It is *not* safe against a
hostile student (their code shares this process); ``python -m autograder grade`` runs the same
checks with the probe sandboxed and the judging outside. A check's inputs and a probe's value
cross the sandbox's channel encoding here too (autograder.student.channel.carried), so what runs
here is what the sandbox can run: inputs that are not plain data are the grader's error
(:class:`InputsNotPlain`), a value that is not becomes the probe's error, as in the sandbox.
"""

from __future__ import annotations

import copy
import importlib
import zlib
from typing import Any

import jax
import numpy as np

from autograder.spec import Assignment, Check, Outcome, Verdict
from autograder.student import channel
from autograder.student.plain import to_plain
from autograder.worker.hidden import hide_values


class InputsNotPlain(TypeError):
    """A check's inputs cannot be sent to the student's process: the grader's own error (the
    sandboxed grader fails every submission on it)."""


def load(name: str) -> tuple[Assignment, Any]:
    """The assignment's (ASSIGNMENT, probes module)."""
    checks = importlib.import_module(f"autograder.assignments.{name}.checks")
    probes = importlib.import_module(f"autograder.assignments.{name}.probes")
    return checks.ASSIGNMENT, probes


def check_rng(check: Check, seed: int) -> np.random.Generator:
    """The inputs' generator of ``check`` under ``seed`` here (the grader seeds its own:
    ``runner.input_seed``)."""
    return np.random.default_rng([seed, zlib.crc32(check.id.encode())])


# (check id, its make_inputs and expect, the generator's state, JAX options) -> (inputs,
# expectation): drawn and computed once per process, as the grader's worker does
# (autograder.worker.runner._PREPARED), so grading many notebooks in one process (the contract
# tests) computes real JAX's answers once. Each use gets deep copies.
_PREPARED: dict[tuple, tuple[Any, Any]] = {}


def _prepared(check: Check, rng: np.random.Generator) -> tuple[Any, Any]:
    key = (check.id, check.make_inputs, check.expect, repr(rng.bit_generator.state),
           check.jax_config)
    if key not in _PREPARED:
        inputs = check.make_inputs(rng)
        _PREPARED[key] = (inputs, check.expect(inputs))
    return copy.deepcopy(_PREPARED[key])


def run_check(check: Check, probes: Any, ns: dict, seed: int,
              rng: np.random.Generator | None = None,
              not_plain: list[str] | None = None,
              hidden: list | None = None) -> tuple[Verdict, Outcome]:
    """One check's verdict on the namespace ``ns``. Its inputs are drawn from ``rng`` when given
    (seeded as the grader seeds it: ``runner.input_seed`` of the course secret and the check),
    else from ``check_rng(check, seed)``. ``not_plain``: where to add why a probe's value could
    not cross the channel (the outcome is then the probe's error, as in the sandbox). A failed
    verdict's message shows no value of the inputs or the expectation (autograder.worker.hidden),
    as the grader's; ``hidden``, when given, gets them appended (the inputs, a retry's inputs,
    the expectation), for tests that look for them."""
    if rng is None:
        rng = check_rng(check, seed)
    previous = {key: getattr(jax.config, key) for key, _ in check.jax_config}
    try:
        for key, val in check.jax_config:
            try:
                jax.config.update(key, val)
            except RuntimeError:  # settable only before the backend starts (jax_num_cpu_devices)
                pass
        inputs, expected = _prepared(check, rng)
        outcome = _ask(probes, check, ns, inputs, not_plain)
        verdict = check.judge(expected, outcome)
        retried: dict = {}
        if not verdict.passed and check.retry is not None and outcome.raised is None:
            retried = check.retry(inputs)
            # as autograder.worker.runner does
            second = _ask(probes, check, ns, retried, not_plain)
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


def carried_inputs(check: Check, inputs: Any) -> Any:
    """``inputs`` as the student's process receives them; InputsNotPlain naming the check when
    they cannot be sent."""
    try:
        return channel.carried(inputs)
    except (TypeError, ValueError) as err:
        raise InputsNotPlain(f"{check.id}: its inputs cannot be sent to the student's process "
                             f"({err})") from None


def _ask(probes: Any, check: Check, ns: dict, inputs: dict,
         not_plain: list[str] | None) -> Outcome:
    sent = carried_inputs(check, inputs)
    try:
        value = getattr(probes, check.probe)(ns, sent)
    except Exception as err:  # noqa: BLE001 - the student's code may raise anything
        return Outcome(raised=type(err).__name__, message=str(err)[:500])
    try:
        return Outcome(value=channel.carried(to_plain(value)))
    except Exception as err:  # noqa: BLE001 - as the sandbox reports a value it cannot send
        if not_plain is not None:
            not_plain.append(f"{type(err).__name__}: {err}"[:500])
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
