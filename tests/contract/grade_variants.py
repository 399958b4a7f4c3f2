"""Grade the variants an assignment's contract names, in this process; per-check verdicts as JSON.

    python tests/contract/grade_variants.py CONTRACT_MODULE VARIANT... > RESULT.json

``CONTRACT_MODULE`` defines ``ASSIGNMENT`` (autograder.contract.Assignment). A variant is
``reference``, ``untouched`` (the released notebook itself), ``wrong:NAME`` or ``alt:NAME`` (the
reference with that wrong solution's or alternative's cells), ``whole:NAME`` (that wrong
solution graded as a whole notebook whatever ``graded_as`` says) or ``demo:STUDENT`` (that
student's notebook of the demo class, as a whole notebook: ``demo:partial``). Each is built as a student would
hand it in (autograder.instructor.classroom), read back the way the grader reads a submission
(autograder.worker.normalise) and checked by the cell policy as the grader checks it
(autograder.worker.policy.apply: a refused cell is reported and not run); its cells then run with
``exec`` in one namespace, and the checks run with autograder.inprocess, as ``check_cell`` does
in the authored notebook (a check's inputs and a probe's value crossing the channel's encoding,
as in the sandbox; a value that cannot is listed in the check's ``not_plain``). The visible test
cells run last, each in a copy of the namespace, so the checks see what the grader's process has
(it never runs them).

``graded_as == "task"``: the reference runs once per process; each other variant runs only its
replaced cells on a copy of the reference's namespace, and only its tasks' checks.

``GRADE_VARIANTS_INPUTS=S`` (``30``, or ``blind-s1,blind-s2``: those secrets as the grader's
``--seed`` takes them): every check also runs under S course secrets, its inputs
drawn as the grader draws them (``runner.input_seed`` of the secret and the check: nothing of the
student or the code, so a secret is the only thing that draws other inputs); ``scores`` lists the
variant's total under each secret (tests/contract/test_score_stability.py). Each secret runs every
check after ``jax.clear_caches()``, as the grader's fresh process per submission would (nothing
one secret compiled is reused by the next: compilation counts stay the grader's).

Unsandboxed: for the course's own notebooks only; the contract tests run it in subprocesses.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from pathlib import Path

import jax
import nbformat
import numpy as np

from autograder import contract
from autograder.inprocess import run_check
from autograder.instructor import classroom
from autograder.student import cellguard
from autograder.worker import policy
from autograder.worker.normalise import normalise, read_release
from autograder.worker.runner import input_seed, student_env


def _inputs() -> list[bytes]:
    """The course secrets of ``GRADE_VARIANTS_INPUTS``; none when unset. A count draws generic
    ones; names separated by commas (``blind-s1,blind-s2``) are used as given, as the grader's
    ``--seed`` uses them, so a blind set's figures can be checked in process."""
    spec = os.environ.get("GRADE_VARIANTS_INPUTS", "")
    if not spec.isdigit():
        return [name.encode() for name in spec.split(",") if name]
    return [f"course secret {s}".encode() for s in range(int(spec))]


def _notebook(assignment: contract.Assignment, variant: str):
    root = assignment.reference.parents[2]
    name = assignment.name
    if variant.startswith("demo:"):
        nb = classroom.demo_submissions(name, root=root)[variant.partition(":")[2]]
        checked = normalise(nbformat.writes(nb).encode(), read_release(assignment.release))
        return policy.apply(checked, assignment.spec)
    if variant == "untouched":
        fills = {}
    else:
        fills = classroom.solution_sources(name, root=root)
        kind, _, which = variant.partition(":")
        if kind in ("wrong", "whole"):
            fills.update(assignment.wrong_solutions[which].cells)
        elif kind == "alt":
            fills.update(assignment.alternatives[which].cells)
        elif variant != "reference":
            raise ValueError(f"unknown variant {variant!r}")
    nb = classroom.make_submission(name, fills, root=root)
    checked = normalise(nbformat.writes(nb).encode(), read_release(assignment.release))
    return policy.apply(checked, assignment.spec)


def _changed_cells(assignment: contract.Assignment, variant: str) -> set[str]:
    kind, _, which = variant.partition(":")
    table = assignment.wrong_solutions if kind == "wrong" else assignment.alternatives
    return set(table[which].cells)


def _run(cells, ns: dict, report: dict) -> None:
    """Each cell as the sandbox runs it: the cell policy's rewritten code (``cell.code``) for a
    student's cell, under the guards ``cellguard.install`` put in ``ns``; a provided cell as
    written."""
    for cell in cells:
        if cell.cell_type != "code" or cell.role == "test":
            continue
        if not cell.run:
            if cell.note:  # refused by the cell policy
                report["refused"].append(f"{cell.grade_id}: {cell.note}")
            continue
        try:
            exec(compile(cell.code or cell.source, cell.grade_id or "<added>", "exec"), ns)  # noqa: S102
        except Exception as err:  # noqa: BLE001 - a wrong solution may raise anything
            report["cell_errors"].append(f"{cell.grade_id}: {type(err).__name__}: {err}")


def _grade(assignment: contract.Assignment, probes, ns: dict, tasks: set[str] | None,
           report: dict) -> None:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                    "fixtures"))
    from hidden_values import shown_values  # tests/fixtures

    has_gpu = any(d.platform == "gpu" for d in jax.devices())
    run = [check for check in assignment.checks
           if (tasks is None or check.task in tasks) and (has_gpu or not check.needs_gpu)]
    # (a GPU check is not run here, as the grader reports it: neither way)
    for check in run:
        not_plain: list[str] = []  # why a probe's value could not cross the channel
        hidden: list = []
        verdict, _ = run_check(check, probes, ns, seed=0, not_plain=not_plain, hidden=hidden)
        report["checks"].append({
            "id": check.id, "task": check.task, "grade_cell": check.grade_cell,
            "max_points": check.points, "points": check.points if verdict.passed else 0,
            "passed": verdict.passed, "message": verdict.message, "blame": check.blame,
            "not_plain": not_plain, "shown_values": shown_values(verdict.message, hidden)})
    secrets = _inputs()
    if not secrets:
        return
    # The grader grades each submission in a fresh process: its cells, then all its checks in
    # order under one secret. Here every secret runs in this one process, so JAX's in-memory
    # caches (jax.jit's executables, per function and keyed by its arguments' shapes, dtypes,
    # pytree structure and static values: ps3.method.compiles counts a jitted method's through
    # ``apply._cache_size()``) would still hold what an earlier secret, or the run above,
    # compiled. Each secret starts with them cleared (jax.clear_caches: all of them, the C++ ones
    # included), then shares them across its checks as the grader's process does.
    scores = [0.0] * len(secrets)
    for k, secret in enumerate(secrets):
        jax.clear_caches()
        for check in run:
            rng = np.random.default_rng(input_seed(secret, check.id))
            drawn, _ = run_check(check, probes, ns, seed=0, rng=rng)
            scores[k] += check.points if drawn.passed else 0
            if not drawn.passed:
                report["failed_inputs"].append(f"{check.id} ({secret.decode()}): "
                                               f"{drawn.message[:200]}")
    report["scores"] = scores


def _visible(cells, ns: dict, grade_cells: set[str] | None, report: dict) -> None:
    for cell in cells:
        if cell.cell_type == "code" and cell.role == "test" and (
                grade_cells is None or cell.grade_id in grade_cells):
            try:
                exec(compile(cell.source, cell.grade_id, "exec"), dict(ns))  # noqa: S102
            except Exception as err:  # noqa: BLE001 - reported, not raised
                report["visible_failures"].append(f"{cell.grade_id}: {type(err).__name__}")


def grade(assignment: contract.Assignment, variants: list[str]) -> dict[str, dict]:
    probes = assignment.probes_module()
    by_task = assignment.graded_as == "task"
    results = {}
    base_ns: dict | None = None
    for variant in (["reference"] if by_task else []) + variants:
        if variant in results:
            continue
        report: dict = {"refused": [], "cell_errors": [], "checks": [], "visible_failures": [],
                        "failed_inputs": []}
        notebook = _notebook(assignment, variant)
        if not by_task or variant in ("reference", "untouched") or variant.startswith(
                ("whole:", "demo:")):
            ns: dict = {"__name__": "__main__"}
            cellguard.install(ns, policy.allowed_imports(assignment.spec))
            _run(notebook.cells, ns, report)
            _grade(assignment, probes, ns, None, report)
            _visible(notebook.cells, ns, None, report)
            if variant == "reference":
                base_ns = ns
        else:
            changed = _changed_cells(assignment, variant)
            tasks = {t.id for t in assignment.tasks if t.cell in changed}
            ns = dict(base_ns)
            _run([c for c in notebook.cells if c.grade_id in changed], ns, report)
            _grade(assignment, probes, ns, tasks, report)
            _visible(notebook.cells, ns, {c.grade_cell for c in assignment.checks
                                          if c.task in tasks}, report)
        results[variant] = report
    return {v: results[v] for v in variants}


def stability_problems(graded: dict[str, dict]) -> dict[str, str]:
    """variant -> what is wrong with its scores under ``GRADE_VARIANTS_INPUTS``: a score that
    moves with the course secret (any variant), or a correct notebook (the
    reference, an alternative: not ``wrong:``) short of every point of the checks it was graded
    on (a ``graded_as == "task"`` alternative is graded on its own tasks' checks only)."""
    problems = {}
    for variant, report in graded.items():
        scores = report["scores"]
        if len(set(scores)) != 1:
            problems[variant] = (f"scores {sorted(set(scores))} under {len(scores)} inputs; "
                                 f"{report['failed_inputs'][:5]}")
            continue
        full = sum(check["max_points"] for check in report["checks"])
        if not variant.startswith("wrong:") and scores and scores[0] != full:
            problems[variant] = (f"a correct notebook scored {scores[0]:g} of {full:g}; "
                                 f"{report['failed_inputs'][:5]}")
    return problems


def in_subprocesses(module: str, variants: list[str], *, processes: int = 2, inputs: str = "",
                    timeout: float = 3000, compile_cache: Path | None = None) -> dict[str, dict]:
    """variant -> report, the variants dealt to ``processes`` runs of this script (the contract
    tests, the reproducer tests and test_score_stability share it); ``inputs``:
    ``GRADE_VARIANTS_INPUTS``.

    ``compile_cache``: a folder for JAX's persistent compilation cache, shared by every run that
    names it. Most of a variant's time is XLA compiling programs that the reference and every
    other variant compile too (the checks' own programs, the rules of the cells a variant leaves
    as they are): with the cache a compiled program is read back instead, about 2.5x faster once
    warm (benchmarks/README.md, "The tests' compilation cache"). Only the course's own notebooks
    run here, so sharing compiled code between them is safe; the grader never shares one between
    students (a student's process could write what another's would load). The verdicts are the
    same either way: the cache skips XLA's compile, never tracing, so ``jax.jit``'s own caches
    (what ps3 counts) fill as before; reproducers that count XLA compiles run elsewhere."""
    import subprocess

    tests = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(tests.parent), str(tests / "fixtures"), os.environ.get("PYTHONPATH", "")]))
    # XLA compiles as in the student's process the grader starts (its fast-compile flags where no
    # GPU is seen): the same executables, and about 15% less time per variant on the CPU.
    env.update(student_env(has_gpu=any(d.platform == "gpu" for d in jax.devices())))
    if inputs:
        env["GRADE_VARIANTS_INPUTS"] = inputs
    if compile_cache is not None:
        env.update(JAX_COMPILATION_CACHE_DIR=str(compile_cache),
                   JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0",
                   JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES="0")
    running = [subprocess.Popen(
        [sys.executable, "-W", "error::DeprecationWarning", __file__, module,
         *variants[i::processes]], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=env, cwd=tests.parent) for i in range(processes) if variants[i::processes]]
    found: dict[str, dict] = {}
    for proc in running:
        out, err = proc.communicate(timeout=timeout)
        assert proc.returncode == 0, err[-3000:]
        found.update(json.loads(out))
    return found


def main(argv: list[str]) -> int:
    module, *variants = argv
    assignment = importlib.import_module(module).ASSIGNMENT
    for key, value in assignment.backend_options:  # before JAX starts a backend, as the sandbox
        jax.config.update(key, value)
    # The notebooks print (ps3 teaches debug printing): everything they write, from Python or from
    # native code, goes to stderr, and only the JSON reaches the real stdout.
    result_fd = os.dup(1)
    sys.stdout.flush()
    os.dup2(2, 1)
    results = grade(assignment, variants)
    sys.stdout.flush()
    with os.fdopen(result_fd, "w", encoding="utf-8") as out:
        json.dump(results, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
