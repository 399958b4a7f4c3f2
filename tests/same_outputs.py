"""Two gradings of one class compared, and a load generator to grade one of them under.

``grade_class(name, submitted, out, *flags)`` grades a class by the real command, as an
instructor would (its gradebook beside ``out``). ``same_tree(a, b)`` lists the output files of two
``grade`` runs that differ: every results JSON
and ``grades.csv`` byte for byte, every feedback page with long decimal fractions masked (what a
notebook's own cells print can hold a measured time: ps3's timer prints one). ``busy_cores(n)``
keeps ``n`` processes spinning at the grader's own priority while its block runs: half of them
pure Python, half NumPy (memory traffic as well as instructions).
"""

from __future__ import annotations

import contextlib
import filecmp
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

_TIMING = re.compile(rb"\d+\.\d{4,}(e-?\d+)?")

_SPIN = {
    "python": "while True:\n    sum(i * i for i in range(10_000))\n",
    "numpy": ("import numpy as np\na = np.random.default_rng(0).standard_normal((600, 600))\n"
              "while True:\n    a = np.tanh(a @ a.T / 600.0)\n"),
}


REPO = Path(__file__).resolve().parents[1]


def grade_class(name: str, submitted: Path, out: Path, *flags: str,
                timeout: float = 900) -> subprocess.CompletedProcess:
    """``python -m autograder grade NAME SUBMITTED --out OUT FLAGS`` from the course root, the
    venv's tools on the PATH (nbgrader's gradebook runs alembic)."""
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    return subprocess.run(
        [sys.executable, "-m", "autograder", "grade", name, str(submitted), "--out", str(out),
         "--db", f"sqlite:///{out.parent / (out.name + '.db')}", "--no-progress", *flags],
        check=False, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)


def same_feedback(a: Path, b: Path) -> bool:
    return _TIMING.sub(b"N", a.read_bytes()) == _TIMING.sub(b"N", b.read_bytes())


def _grade_rows(path: Path, students: set[str] | None) -> list[bytes]:
    lines = path.read_bytes().splitlines(keepends=True)
    if students is None:
        return lines
    return lines[:1] + [line for line in lines[1:]
                        if line.split(b",", 1)[0].decode() in students]


def same_tree(a: Path, b: Path, students: set[str] | None = None) -> list[str]:
    """Files that differ (or exist on one side only) between two output folders; with
    ``students``, only theirs (``a`` may hold more: a class of which ``b`` graded these)."""
    differ = []

    def names(folder: Path) -> list[str]:
        return sorted(p.name for p in folder.iterdir()
                      if students is None or p.name.rsplit(".", 1)[0] in students)

    for sub in ("results", "feedback"):
        left, right = names(a / sub), names(b / sub)
        if left != right:
            differ.append(f"{sub}: {left} != {right}")
            continue
        if sub == "feedback":
            differ += [f"{sub}/{n}" for n in left if not same_feedback(a / sub / n, b / sub / n)]
            continue
        _, mismatch, errors = filecmp.cmpfiles(a / sub, b / sub, left, shallow=False)
        differ += [f"{sub}/{n}" for n in mismatch + errors]
    if _grade_rows(a / "grades.csv", students) != _grade_rows(b / "grades.csv", students):
        differ.append("grades.csv")
    return differ


class Load:
    """What ``busy_cores`` measured: the generator's CPU seconds and the wall time it ran."""

    def __init__(self, processes: int):
        self.processes = processes
        self.cpu_s = 0.0
        self.wall_s = 0.0
        self.ran_throughout = 0  # spinners still running when the block ended

    @property
    def cores_kept_busy(self) -> float:
        return self.cpu_s / self.wall_s if self.wall_s else 0.0


@contextlib.contextmanager
def busy_cores(n: int | None = None) -> Iterator[Load]:
    n = n or os.cpu_count() or 2
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    kinds = ["python", "numpy"] * n
    procs = [subprocess.Popen([sys.executable, "-c", _SPIN[kind]], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
             for kind in kinds[:n]]
    load = Load(n)
    started = time.monotonic()
    try:
        yield load
    finally:
        load.wall_s = time.monotonic() - started
        for proc in procs:
            load.ran_throughout += proc.poll() is None
            try:  # user + system time of a live process, from /proc (clock ticks)
                fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
                load.cpu_s += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
            except (OSError, IndexError, ValueError):
                pass
            proc.kill()
            proc.wait()
