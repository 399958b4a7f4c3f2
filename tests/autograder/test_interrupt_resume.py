"""A class run stopped by Ctrl-C (SIGINT to the process group) and by SIGTERM keeps what it
graded, leaves no process behind and exits 130 / 143; the same command again grades only the
rest and ends with the grades.csv of a run never stopped."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import psutil
from engine_helpers import REPO, TOY_ROOT, grade_args, grade_env
from toy_notebooks import FULL, submission

from autograder.grade import grading, late, resume
from autograder.limits import Limits

CLASS = {"alice": submission(FULL), "bob": submission({"impl": True}), "carol": submission()}


def _write(dest: Path, students: dict, indent: int | None = None) -> Path:
    for student, nb in students.items():
        folder = dest / student / "toy"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "toy.ipynb").write_text(json.dumps(nb, indent=indent))
    return dest


def _results(out: Path) -> dict[str, os.stat_result]:
    folder = out / "results"
    return {p.stem: p.stat() for p in folder.glob("*.json")} if folder.is_dir() else {}


def _start(submitted: Path, out: Path, log: Path) -> subprocess.Popen:
    with open(log, "w") as f:
        # Its own session and process group, as a shell gives a job; one worker, so that the
        # class is graded one notebook at a time and there is a rest to stop.
        return subprocess.Popen(grade_args(submitted, out, "--workers", "1"), cwd=REPO,
                                env=grade_env(), stdout=f, stderr=subprocess.STDOUT,
                                start_new_session=True)


def _in_group(pgid: int) -> list[psutil.Process]:
    found = []
    for p in psutil.process_iter(["status"]):
        try:
            if os.getpgid(p.pid) == pgid and p.info["status"] != psutil.STATUS_ZOMBIE:
                found.append(p)
        except (OSError, psutil.Error):
            continue
    return found


def _interrupt(submitted: Path, out: Path, sig: signal.Signals, log: Path) -> set[str]:
    """Start the run, stop it with ``sig`` once one more result is on disk; what it kept."""
    before = set(_results(out))
    proc = _start(submitted, out, log)
    deadline = time.monotonic() + 300
    while set(_results(out)) == before:
        assert proc.poll() is None, log.read_text()
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.1)
    below = psutil.Process(proc.pid).children(recursive=True)
    assert below, "the run has no pool worker to kill"
    if sig == signal.SIGINT:
        os.killpg(proc.pid, sig)  # Ctrl-C reaches the whole foreground group
    else:
        proc.send_signal(sig)
    stopped = time.monotonic()
    assert proc.wait(timeout=60) == 128 + sig, log.read_text()
    assert time.monotonic() - stopped < 20, "the run took too long to stop"
    text = log.read_text()
    # The main process's resource tracker ends on its own once the main process has.
    _, left = psutil.wait_procs(below, timeout=5)
    left = [p for p in left if p.status() != psutil.STATUS_ZOMBIE]
    assert not left, ([p.cmdline() for p in left], text)
    assert not _in_group(proc.pid), text
    assert "Traceback" not in text, text
    kept = set(_results(out))
    assert kept > before and kept < set(CLASS), (kept, text)
    assert f"interrupted by {sig.name}: {len(kept)} of {len(CLASS)} submissions are kept" in text
    assert (out / "grades.csv").is_file() and (out / "summary.html").is_file()
    return kept


def test_stopped_runs_keep_their_results_and_the_rerun_grades_the_rest(tmp_path):
    submitted = _write(tmp_path / "submitted", CLASS)
    out = tmp_path / "out"
    first = _interrupt(submitted, out, signal.SIGINT, tmp_path / "run1.log")
    second = _interrupt(submitted, out, signal.SIGTERM, tmp_path / "run2.log")
    assert first < second
    # A notebook whose bytes changed since (the same cells, written out differently) is
    # graded again; the others of ``second`` are kept as they are.
    changed = min(second)
    _write(submitted, {changed: CLASS[changed]}, indent=2)
    stats = _results(out)
    done = subprocess.run(grade_args(submitted, out, "--workers", "1"), cwd=REPO, check=False,
                          env=grade_env(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    graded = set(CLASS) - second | {changed}
    shown = {line.split()[0] for line in done.stdout.splitlines()[1:len(graded) + 1]}
    assert shown == graded, done.stdout
    assert f"{len(second) - 1} results kept from an earlier run" in done.stdout
    now = _results(out)
    for student in second - {changed}:
        assert (now[student].st_ino, now[student].st_mtime_ns) == (
            stats[student].st_ino, stats[student].st_mtime_ns), student
    assert now[changed].st_mtime_ns != stats[changed].st_mtime_ns

    whole = tmp_path / "whole"
    options = {"assignment": "toy", "workers": 2, "db_url": f"sqlite:///{tmp_path / 'whole.db'}",
               "root": TOY_ROOT, "package": "toygrader", "seed": "engine-tests",
               "progress": False, "quiet": True,
               "limits": Limits(cell_timeout_s=10, cell_policy=False)}
    grading.grade(submitted=submitted, out=whole, **options)
    for name in ("grades.csv", "summary.html"):
        assert (out / name).read_bytes() == (whole / name).read_bytes(), name
    for student in CLASS:
        path = Path("results") / f"{student}.json"
        assert (out / path).read_bytes() == (whole / path).read_bytes(), student

    # Graded again into the same OUT, everything is kept; with --regrade-all, nothing.
    same = grading.grade(submitted=submitted, out=whole, **options)
    assert same.kept == sorted(CLASS) and not same.details
    assert (whole / "grades.csv").read_bytes() == (out / "grades.csv").read_bytes()
    only_carol = _write(tmp_path / "only_carol", {"carol": CLASS["carol"]})
    again = grading.grade(submitted=only_carol, out=whole, regrade_all=True, **options)
    assert not again.kept and set(again.details) == {"carol"}


def _digest(tmp_path: Path, policy=None, seed: bytes = b"s", limits: Limits | None = None) -> str:
    spec = grading.load_assignment("toy", "toygrader")
    run = resume.run_digest(spec=spec, package="toygrader",
                            release_path=TOY_ROOT / "assignments" / "toy" / "toy.ipynb",
                            secret=seed, limits=limits or Limits(), lang="en")
    return resume.student_digest(run, tmp_path / "s" / "alice" / "toy" / "toy.ipynb", policy)


def test_what_a_kept_result_depends_on(tmp_path):
    _write(tmp_path / "s", {"alice": CLASS["alice"]})
    base = _digest(tmp_path)
    assert base == _digest(tmp_path)
    assert base != _digest(tmp_path, seed=b"other")
    assert base != _digest(tmp_path, limits=Limits(cell_timeout_s=1))
    due = late.parse_time("2026-11-20 12:00")
    assert base != _digest(tmp_path, policy=late.Policy(due, 3, 0.1))
    (tmp_path / "s" / "alice" / "toy" / "timestamp.txt").write_text("2026-11-21 12:00:00 UTC")
    stamped = _digest(tmp_path)
    assert stamped != base
    _write(tmp_path / "s", {"alice": CLASS["bob"]})
    assert _digest(tmp_path) != stamped
    (tmp_path / "s" / "bob" / "toy").mkdir(parents=True)
    os.mkfifo(tmp_path / "s" / "bob" / "toy" / "toy.ipynb")  # never read, never kept
    assert resume.student_digest("r", tmp_path / "s" / "bob" / "toy" / "toy.ipynb", None) is None


def test_a_kept_result_depends_on_the_graders_code(tmp_path, monkeypatch):
    """Not the checks and probes alone: a result graded before a wall, a judge, the allowlist or
    a program generator changed (a hostile notebook's points, a page that showed a secret) is
    graded again after."""
    _write(tmp_path / "s", {"alice": CLASS["alice"]})
    package = tmp_path / "code" / "graderbits"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "allowlist.txt").write_text("numpy.sum\n")
    monkeypatch.syspath_prepend(str(tmp_path / "code"))
    monkeypatch.setattr(resume, "_CODE", (*resume._CODE, "graderbits"))
    base = _digest(tmp_path)
    assert base == _digest(tmp_path)
    (package / "allowlist.txt").write_text("numpy.sum\nnumpy.testing.runstring\n")
    assert _digest(tmp_path) != base
    (package / "__pycache__").mkdir()  # what the interpreter caches is not code that changed
    (package / "__pycache__" / "x.pyc").write_bytes(b"\0")
    changed = _digest(tmp_path)
    (package / "__pycache__" / "x.pyc").write_bytes(b"\1")
    assert _digest(tmp_path) == changed
    assert resume._CODE[:2] == ("autograder", "jaxcourse")
