"""Mutation score of an assignment's hidden checks: every first-order mutant of every reference
solution cell, graded in process; the mutants the checks do not catch are listed.

    .venv/bin/python benchmarks/mutation_score.py --assignment ps4_core [--assignment ...]
        [--seeds 2] [--limit K] [--cell NAME ...] [--workers 2] [--timeout 120] [--out FILE.json]

The mutants come from mutmut's operators (``mutmut.mutation.mutators.mutation_operators``, run by
its ``MutationVisitor`` over a libcst tree of the cell's source): numbers, strings, names
(True/False/None...), operators swapped, keywords (``is``/``is not``, ``in``/``not in``,
``break``/``continue``...), an assignment's value set to None, a call's arguments removed one at a
time, unary operators dropped, ternaries forced down each arm... One mutant is the reference
solution cell with exactly one such change; everything else in the notebook is the reference.
Two departures from ``mutmut run``, which wraps each function in a trampoline and so has to be
careful: the bodies of decorated functions and module-level statements are mutated too (here a
mutant is a whole cell's source, exec'd as the student's cell would be; decorators themselves
stay untouched, as in mutmut).

Each mutant's notebook (``autograder.instructor.classroom.make_submission`` with that one cell replaced) is
graded by ``tests/assignments/grade_inprocess.py`` (the student's cells exec'd once in one
namespace, then every check under each seed 0..N-1), in ``--workers`` long-lived worker
processes. A mutant is KILLED when
its score is below the reference's score under some seed (the reference must get every runnable
check under every seed; checks that need a GPU are not run, and lose nothing, where JAX sees
none), TIMEOUT when one grading runs past ``--timeout`` seconds (the worker is
killed and restarted; reported apart from the killed ones), and SURVIVED otherwise. A mutant
whose cell raises when exec'd counts as killed only if the grade drops. Before each notebook runs
the worker puts back every dict and list of the ``jaxcourse`` modules as they were before any
notebook ran, so that a rule one mutant registers (``jvp_rules[exp_p] = ...``) cannot leak into
the next. The mutants are trusted code: nothing is sandboxed.

``--limit K`` grades at most K mutants of each cell, spread evenly over the cell's mutants in
source order, for a quick run; the table then says how many were graded, not how many exist.
``--cell NAME`` (repeatable) grades the mutants of those solution cells only (their grade ids:
``--cell vmap --cell cuda`` after a change to those tasks' checks); the table counts those.

Prints one Markdown row per assignment (cells, mutants, killed, timed out, survived, score =
(killed + timed out) / mutants, seconds) and then every survivor: cell, line and diff.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import importlib
import json
import os
import pkgutil
import subprocess
import sys
import threading
import time
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from queue import Queue

from autograder.assignments import course

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENTS = tuple(course())  # the registry's: a new assignment is scored with no edit here
# Process-wide caches of the course's kernel builder, kept across notebooks: XLA refuses a second
# registration of an FFI target from another load of its library, and a target's name is the
# digest of its source, so the same source is the same kernel (a mutant of the C++ source gets a
# name of its own). Everything else of the jaxcourse modules is put back before each notebook.
KEPT = {("jaxcourse.kernels.build", name) for name in
        ("_registered", "_libraries", "_built", "_isolated_targets", "_children")}


# --- the mutants ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Mutant:
    line: int  # 1-based, in the cell's reference source: the first line the mutant changes
    node: str  # the libcst node type the operator rewrote
    source: str  # the whole mutated cell
    diff: str  # unified diff of the cell, reference -> mutant


def first_order_mutants(source: str, name: str = "cell") -> list[Mutant]:
    """Every distinct first-order mutant mutmut's operators make of ``source``, in source order."""
    import libcst as cst
    from libcst.metadata import MetadataWrapper
    from mutmut.mutation.file_mutation import MutationVisitor, deep_replace
    from mutmut.mutation.mutators import mutation_operators
    from mutmut.mutation.pragma_handling import IgnoredCode, PragmaVisitor

    class Visitor(MutationVisitor):
        def _skip_node_and_children(self, node: cst.CSTNode) -> bool:
            # mutmut skips decorated functions because of its trampolines; a mutant here is a
            # whole cell, so their bodies are mutated as any other (the decorators are not)
            if isinstance(node, cst.FunctionDef) and node.decorators:
                return False
            return super()._skip_node_and_children(node)

    wrapper = MetadataWrapper(cst.parse_module(source))
    pragmas = PragmaVisitor(name)  # `# pragma: no mutate` is honoured, as mutmut does
    wrapper.visit(pragmas)
    visitor = Visitor(mutation_operators,
                      IgnoredCode(pragmas.no_mutate_lines, pragmas.ignore_node_lines, set()))
    module = wrapper.visit(visitor)
    original = module.code
    found, seen = [], {original}
    for mutation in visitor.mutations:
        mutated = deep_replace(module, mutation.original_node, mutation.mutated_node).code
        if mutated in seen:
            continue
        seen.add(mutated)
        old, new = original.splitlines(), mutated.splitlines()
        line = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b),
                    min(len(old), len(new))) + 1
        diff = "\n".join(difflib.unified_diff(old, new, name, "mutant", n=0, lineterm=""))
        found.append(Mutant(line, type(mutation.original_node).__name__, mutated, diff))
    return found


def sample(mutants: list[Mutant], limit: int | None) -> list[Mutant]:
    """At most ``limit`` of ``mutants``, spread evenly over the cell (all of them without one)."""
    if limit is None or len(mutants) <= limit:
        return mutants
    return [mutants[i * len(mutants) // limit] for i in range(limit)]


# --- the worker: grades mutants of one assignment, one JSON line per job ---------------------


def _snapshot() -> list[tuple[object, object]]:
    """(container, copy) for every dict and list at the top of every jaxcourse module."""
    import jaxcourse

    for info in pkgutil.walk_packages(jaxcourse.__path__, "jaxcourse."):
        with contextlib.suppress(Exception):  # a module that needs a GPU toolchain, say
            importlib.import_module(info.name)
    saved = []
    for name, module in list(sys.modules.items()):
        if name == "jaxcourse" or name.startswith("jaxcourse."):
            for key, value in vars(module).items():
                if type(value) in (dict, list) and (name, key) not in KEPT:
                    saved.append((value, value.copy()))
    return saved


def _restore(saved: list[tuple[object, object]]) -> None:
    for container, copy in saved:
        if isinstance(container, dict):
            container.clear()
            container.update(copy)
        else:
            container[:] = copy


@contextlib.contextmanager
def _cells_ran(grade_inprocess, ns: dict, errors: list):
    """``grade_inprocess._grade`` with the cells already run: the checks of each seed see one
    namespace, as a kernel that ran the notebook once would."""
    run_cells = grade_inprocess.run_cells
    grade_inprocess.run_cells = lambda _nb: (ns, list(errors))
    try:
        yield
    finally:
        grade_inprocess.run_cells = run_cells


def worker(assignment: str, channel: int) -> int:
    sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "assignments")]
    os.chdir(ROOT)
    out = os.fdopen(channel, "w", buffering=1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # what the student's cells print must not reach the channel
    import grade_inprocess

    from autograder.instructor.classroom import make_submission, solution_sources

    saved = _snapshot()
    reference = solution_sources(assignment, root=ROOT)
    for line in sys.stdin:
        job = json.loads(line)
        nb = make_submission(assignment, {**reference, **job["fills"]}, root=ROOT)
        scores, lost = {}, []
        _restore(saved)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ns, errors = grade_inprocess.run_cells(nb)  # once: ps5 registers FFI handlers
        for seed in job["seeds"]:
            with warnings.catch_warnings(), _cells_ran(grade_inprocess, ns, errors):
                warnings.simplefilter("ignore")
                result = grade_inprocess._grade(nb, assignment, seed)
            scores[seed] = sum(c["points"] for c in result["checks"])
            lost += [f"{c['id']}@{seed}" for c in result["checks"] if c["status"] == "failed"]
            if job.get("stop") is not None and scores[seed] < job["stop"][str(seed)]:
                break  # killed: the other seeds cannot revive it
        out.write(json.dumps({"scores": scores, "lost": lost, "cell_errors": errors}) + "\n")
    return 0


class Worker:
    """A worker process; ``grade`` returns its answer, or None when it ran past the timeout."""

    def __init__(self, assignment: str):
        self.assignment = assignment
        self._start()

    def _start(self) -> None:
        read, write = os.pipe()
        env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--worker", self.assignment, "--channel", str(write)],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(write,), text=True, env=env, cwd=ROOT)
        os.close(write)
        self.channel = os.fdopen(read, "r")
        self.answers: Queue = Queue()
        threading.Thread(target=self._read, args=(self.channel, self.answers), daemon=True).start()

    @staticmethod
    def _read(channel, answers: Queue) -> None:
        for line in channel:
            answers.put(json.loads(line))
        answers.put(None)  # the process ended

    def grade(self, job: dict, timeout: float) -> dict | None:
        self.proc.stdin.write(json.dumps(job) + "\n")
        self.proc.stdin.flush()
        try:
            answer = self.answers.get(timeout=timeout)
        except Exception:  # noqa: BLE001 - queue.Empty: past the timeout
            answer = None
        if answer is None:
            self.close()
            self._start()
        return answer

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()
        self.channel.close()


# --- the driver ------------------------------------------------------------------------------


def score_assignment(assignment: str, *, seeds: list[int], limit: int | None, workers: int,
                     timeout: float, progress=print, cells: list[str] | None = None) -> dict:
    from autograder.instructor.classroom import solution_sources

    start = time.monotonic()
    reference = solution_sources(assignment, root=ROOT)
    unknown = sorted(set(cells or ()) - set(reference))
    if unknown:
        raise SystemExit(f"{assignment} has no solution cell {unknown}; it has {sorted(reference)}")
    jobs = []
    for cell, source in reference.items():
        if cells and cell not in cells:
            continue
        mutants = first_order_mutants(source, cell)
        jobs += [(cell, m) for m in sample(mutants, limit)]
    pool = [Worker(assignment) for _ in range(max(1, workers))]
    try:
        ref = pool[0].grade({"fills": {}, "seeds": seeds, "stop": None}, timeout * len(seeds))
        if ref is None or ref["lost"] or ref["cell_errors"]:
            raise RuntimeError(f"{assignment}: the reference does not pass: {ref}")
        full = {str(seed): ref["scores"][str(seed)] for seed in seeds}
        todo: Queue = Queue()
        for index, job in enumerate(jobs):
            todo.put(index)
        rows: list[dict | None] = [None] * len(jobs)

        def run(w: Worker) -> None:
            while not todo.empty():
                try:
                    index = todo.get_nowait()
                except Exception:  # noqa: BLE001 - queue.Empty: another thread took the last
                    return
                cell, mutant = jobs[index]
                answer = w.grade({"fills": {cell: mutant.source}, "seeds": seeds, "stop": full},
                                 timeout * len(seeds))
                row = {"cell": cell, **asdict(mutant)}
                if answer is None:
                    row.update(status="timeout", scores={}, lost=[], cell_errors=[])
                else:
                    killed = any(answer["scores"][s] < full[s] for s in answer["scores"])
                    row.update(status="killed" if killed else "survived", **answer)
                rows[index] = row
                progress(f"  {assignment} {index + 1}/{len(jobs)} {cell}:{mutant.line} "
                         f"{row['status']}")

        threads = [threading.Thread(target=run, args=(w,)) for w in pool]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        for w in pool:
            w.close()
    count = {s: sum(r["status"] == s for r in rows) for s in ("killed", "timeout", "survived")}
    return {"assignment": assignment, "cells": len(cells or reference), "mutants": len(rows),
            **count, "score": (count["killed"] + count["timeout"]) / len(rows) if rows else 1.0,
            "seconds": round(time.monotonic() - start, 1), "seeds": seeds, "limit": limit,
            "reference_scores": full, "rows": rows}


def table(results: list[dict]) -> str:
    lines = ["| assignment | cells | mutants | killed | timed out | survived | score | seconds |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r['assignment']} | {r['cells']} | {r['mutants']} | {r['killed']} "
                     f"| {r['timeout']} | {r['survived']} | {r['score']:.1%} | {r['seconds']:g} |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assignment", action="append", choices=ASSIGNMENTS)
    parser.add_argument("--seeds", type=int, default=2, help="grade under seeds 0..N-1")
    parser.add_argument("--limit", type=int, default=None,
                        help="at most K mutants per cell, spread evenly over it")
    parser.add_argument("--cell", action="append",
                        help="only the mutants of this solution cell (its grade id)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per grading")
    parser.add_argument("--out", type=Path, help="write every mutant's verdict here (JSON)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--channel", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker(args.worker, args.channel)
    sys.path.insert(0, str(ROOT))
    os.chdir(ROOT)  # mutmut reads its (absent) configuration from the working directory
    seeds = list(range(args.seeds))
    say = (lambda _: None) if args.quiet else (lambda s: print(s, file=sys.stderr, flush=True))
    results = []
    for assignment in args.assignment or ASSIGNMENTS:
        results.append(score_assignment(assignment, seeds=seeds, limit=args.limit,
                                        workers=args.workers, timeout=args.timeout,
                                        progress=say, cells=args.cell))
        if args.out:  # after each assignment, so a long run that is cut short keeps the rest
            args.out.write_text(json.dumps(results, indent=1) + "\n")
    print(table(results))
    for r in results:
        for row in r["rows"]:
            if row["status"] == "survived":
                print(f"\n{r['assignment']} {row['cell']} line {row['line']} ({row['node']}):\n"
                      f"{row['diff']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
