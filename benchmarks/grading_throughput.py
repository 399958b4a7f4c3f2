"""Throughput of `python -m autograder grade` (isolation on) against plain `nbgrader autograde`.

    python benchmarks/grading_throughput.py [--assignment toy] [--students 40] [--workers N]

Both graders get the same class (full, partial and wrong submissions, cycled to --students) and
are timed end to end as an instructor runs them, interpreter start-up included. Printed:
submissions per minute for each, their ratio, and the engine's overhead over the checks' own
compute (cells plus checks run in-process, without isolation, one submission after another).

``--assignment toy`` (default) uses the toy course in tests/fixtures. For a course assignment
(e.g. ps1_primitives) the class comes from ``autograder.instructor.classroom.demo_class`` and the nbgrader
source notebook (with hidden tests calling autograder.inprocess.check_cell) from ``--source``,
by default solutions/<name>/<name>.md or .ipynb.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"
sys.path[:0] = [str(REPO), str(FIXTURES)]


def toy_class(dest: Path, students: int) -> tuple[Path, dict, Path]:
    """(SUBMITTED dir, source notebook, course root) for the toy."""
    import hostile
    from toy_notebooks import source_notebook

    variants = {k: hostile.cases([])[k][0] for k in hostile.HONEST}
    names = sorted(variants)
    chosen = {f"s{i:03d}_{names[i % len(names)]}": (variants[names[i % len(names)]], 0)
              for i in range(students)}
    return hostile.write_class(dest, chosen), source_notebook(), FIXTURES / "toy_course"


def course_class(name: str, dest: Path, students: int, source: Path | None) -> tuple:
    from autograder.grade.grading import load_assignment
    from autograder.instructor.classroom import demo_class

    spec = load_assignment(name, "autograder.assignments")
    demo = demo_class(name, dest.parent / "demo", root=REPO)
    notebooks = sorted(demo.glob(f"*/{name}/*.ipynb"))
    for i in range(students):
        target = dest / f"s{i:03d}_{notebooks[i % len(notebooks)].parts[-3]}" / name
        target.mkdir(parents=True)
        shutil.copy(notebooks[i % len(notebooks)], target / spec.notebook)
    source = source or next(p for p in (REPO / "solutions" / name / f"{name}.md",
                                        REPO / "solutions" / name / f"{name}.ipynb")
                            if p.exists())
    if source.suffix == ".md":
        import jupytext

        nb = json.loads(jupytext.writes(jupytext.read(source), fmt="ipynb"))
    else:
        nb = json.loads(source.read_text())
    return dest, nb, REPO


def env_with(paths: list[Path]) -> dict:
    bindir = str(Path(sys.executable).parent)
    return dict(os.environ, PYTHONPATH=os.pathsep.join(str(p) for p in paths),
                PATH=bindir + os.pathsep + os.environ.get("PATH", ""))


def time_nbgrader(name: str, notebook: str, source: dict, submitted: Path, work: Path,
                  env: dict) -> float:
    course = work / "nbgrader_course"
    (course / "source" / name).mkdir(parents=True)
    (course / "source" / name / notebook).write_text(json.dumps(source))
    (course / "nbgrader_config.py").write_text(
        "c = get_config()\n"
        f"c.CourseDirectory.root = {str(course)!r}\n"
        f"c.CourseDirectory.db_url = 'sqlite:///{course / 'gradebook.db'}'\n"
        "c.ExecutePreprocessor.timeout = 300\n")
    nbgrader = [sys.executable, "-m", "nbgrader"]
    subprocess.run([*nbgrader, "generate_assignment", name, "--force"], cwd=course, env=env,
                   check=True, capture_output=True)
    shutil.copytree(submitted, course / "submitted")
    started = time.perf_counter()
    proc = subprocess.run([*nbgrader, "autograde", name, "--force"], cwd=course, env=env,
                          capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        print(proc.stderr[-2000:], file=sys.stderr)
    return elapsed


def time_engine(name: str, package: str, root: Path, submitted: Path, work: Path,
                workers: int | None, env: dict) -> tuple[float, str]:
    cmd = [sys.executable, "-m", "autograder", "grade", name, str(submitted), "--out",
           str(work / "engine_out"), "--root", str(root), "--package", package,
           "--db", f"sqlite:///{work / 'engine_gradebook.db'}", "--no-progress",
           "--seed", "benchmark"]
    if workers:
        cmd += ["--workers", str(workers)]
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, check=True)
    elapsed = time.perf_counter() - started
    print(proc.stdout.strip())  # the summary table: every submission's score and message
    return elapsed, proc.stdout.strip().splitlines()[-1]


def checks_compute(name: str, package: str, root: Path, submitted: Path) -> float:
    """Seconds to run every submission's cells and checks in this process, no isolation."""
    import importlib

    from autograder.inprocess import run_check
    from autograder.worker.normalise import NotebookError, normalise, read_release

    checks = importlib.import_module(f"{package}.{name}.checks").ASSIGNMENT
    probes = importlib.import_module(f"{package}.{name}.probes")
    release = read_release(root / "assignments" / name / checks.notebook)
    total = 0.0
    for path in sorted(submitted.glob(f"*/{name}/*.ipynb")):
        started = time.perf_counter()
        ns: dict = {}
        try:
            cells = normalise(path.read_bytes(), release).code_to_run
        except NotebookError:  # a broken file costs nothing to grade
            continue
        for source in cells:
            try:
                exec(compile(source, str(path), "exec"), ns)  # noqa: S102 - honest work only
            except Exception:  # noqa: BLE001, S110 - an unfinished cell is part of the work
                pass
        for check in checks.checks:
            if not check.needs_gpu:
                run_check(check, probes, ns, 0)
        total += time.perf_counter() - started
    return total


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--assignment", default="toy")
    p.add_argument("--students", type=int, default=40)
    p.add_argument("--workers", type=int, default=None)
    p.add_argument("--source", type=Path, default=None, help="nbgrader source notebook")
    p.add_argument("--skip-nbgrader", action="store_true")
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="grading-bench-") as tmp:
        work = Path(tmp)
        if args.assignment == "toy":
            submitted, source, root = toy_class(work / "submitted", args.students)
            package, notebook = "toygrader", "toy.ipynb"
            env = env_with([REPO, FIXTURES])
        else:
            submitted, source, root = course_class(args.assignment, work / "submitted",
                                                   args.students, args.source)
            package = "autograder.assignments"
            notebook = next(submitted.glob(f"*/{args.assignment}/*.ipynb")).name
            env = env_with([REPO])
        n = len(list(submitted.iterdir()))
        loads = [os.getloadavg()[0]]
        engine_s, summary = time_engine(args.assignment, package, root, submitted, work,
                                        args.workers, env)
        compute_s = checks_compute(args.assignment, package, root, submitted)
        workers = args.workers or os.cpu_count()
        print(f"class: {n} submissions of {args.assignment}; {os.cpu_count()} cores")
        print(f"engine  : {engine_s:7.1f} s  {60 * n / engine_s:6.1f} submissions/min "
              f"(--workers {workers}, isolation on)")
        print(f"          {summary}")
        print(f"checks' own compute (in-process, serial): {compute_s:.1f} s; engine overhead: "
              f"{engine_s * workers / compute_s:.2f}x in core-seconds, "
              f"{engine_s / compute_s:.2f}x in wall time")
        if not args.skip_nbgrader:
            nbgrader_s = time_nbgrader(args.assignment, notebook, source, submitted, work, env)
            print(f"nbgrader: {nbgrader_s:7.1f} s  {60 * n / nbgrader_s:6.1f} submissions/min "
                  "(nbgrader autograde, one kernel per notebook, in-kernel tests)")
            print(f"ratio   : {nbgrader_s / engine_s:.2f}x nbgrader's throughput")
        # The machine may be shared: the figures mean little without the load they ran under.
        loads.append(os.getloadavg()[0])
        print(f"load average (1 min) at start and end: {loads[0]:.2f}, {loads[1]:.2f}")


if __name__ == "__main__":
    main()
