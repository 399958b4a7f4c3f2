"""How grading scales with workers: the local pool and a Dask cluster, on the same class.

    python benchmarks/grading_scale.py [--assignment ps1_primitives] [--students 24]
                                       [--counts 1 2 4]

One class (the assignment's demo class without its broken file, cycled to --students) is graded
end to end by the real command, once per worker count with the local pool (``--workers N``) and
once per worker count on a Dask cluster started for the purpose on 127.0.0.1 (a scheduler and N
``dask worker --nthreads 1`` processes, started before the clock starts, as an instructor's
cluster would be). Printed for each run: wall time, submissions per minute, speed-up over one
local worker, and efficiency (speed-up / N). Every run must give the same grades.csv; the script
fails otherwise.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
sys.path.insert(0, str(REPO))


def make_class(name: str, dest: Path, students: int) -> Path:
    from autograder.grade.grading import load_assignment
    from autograder.instructor.classroom import demo_class

    spec = load_assignment(name, "autograder.assignments")
    demo = demo_class(name, dest.parent / "demo", root=REPO)
    notebooks = sorted(p for p in demo.glob(f"*/{name}/*.ipynb") if p.parts[-3] != "broken")
    for i in range(students):
        source = notebooks[i % len(notebooks)]
        target = dest / f"s{i:03d}_{source.parts[-3]}" / name
        target.mkdir(parents=True)
        shutil.copy(source, target / spec.notebook)
    return dest


def env() -> dict:
    return dict(os.environ, PYTHONPATH=str(REPO), PATH=f"{BIN}:{os.environ['PATH']}",
                DASK_DISTRIBUTED__WORKER__DAEMON="False")


def grade(name: str, submitted: Path, out: Path, extra: list[str]) -> float:
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "autograder", "grade", name, str(submitted),
                    "--out", str(out), "--db", f"sqlite:///{out}.db", "--seed", "scale",
                    "--no-progress", *extra], cwd=REPO, env=env(), check=True,
                   stdout=subprocess.DEVNULL)
    return time.monotonic() - started


def start_cluster(work: Path, workers: int) -> tuple[str, list[subprocess.Popen]]:
    file = work / f"scheduler-{workers}.json"
    procs = [subprocess.Popen([str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port",
                               "0", "--no-dashboard", "--scheduler-file", str(file)],
                              cwd=REPO, env=env(), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)]
    while not file.exists():
        time.sleep(0.2)
    address = json.loads(file.read_text())["address"]
    for _ in range(workers):
        procs.append(subprocess.Popen(
            [str(BIN / "dask"), "worker", address, "--nthreads", "1", "--no-dashboard",
             "--host", "127.0.0.1"], cwd=REPO, env=env(), stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True))
    from distributed import Client

    with Client(address, timeout="30s") as client:
        client.wait_for_workers(workers, timeout=120)
    return address, procs


def stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assignment", default="ps1_primitives")
    parser.add_argument("--students", type=int, default=24)
    parser.add_argument("--counts", type=int, nargs="+", default=[1, 2, 4])
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="grading-scale-"))
    submitted = make_class(args.assignment, work / "class", args.students)
    print(f"class: {args.students} {args.assignment} submissions; machine: {os.cpu_count()} "
          f"cores; load average at start {os.getloadavg()[0]:.2f}")
    rows = []
    for kind in ("local", "dask"):
        for n in args.counts:
            out = work / f"{kind}-{n}"
            if kind == "local":
                seconds = grade(args.assignment, submitted, out, ["--workers", str(n)])
            else:
                address, procs = start_cluster(work, n)
                try:
                    seconds = grade(args.assignment, submitted, out, ["--dask", address])
                finally:
                    stop(procs)
            rows.append((kind, n, seconds, out))
    reference = rows[0][3] / "grades.csv"
    for _, _, _, out in rows:
        if not filecmp.cmp(reference, out / "grades.csv", shallow=False):
            raise SystemExit(f"grades differ: {out} vs {rows[0][3]}")
    base = rows[0][2]
    print(f"{'pool':<6} {'workers':>7} {'seconds':>8} {'per min':>8} {'speed-up':>8} "
          f"{'efficiency':>10}")
    for kind, n, seconds, _ in rows:
        speedup = base / seconds
        print(f"{kind:<6} {n:>7} {seconds:>8.1f} {60 * args.students / seconds:>8.1f} "
              f"{speedup:>8.2f} {speedup / n:>10.2f}")
    print(f"load average at end {os.getloadavg()[0]:.2f}; identical grades.csv in every run")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
