"""`grade --dask ADDRESS`: a real Dask cluster (a scheduler and workers started as separate
processes on 127.0.0.1) grades the demo classes exactly as the local pool does, and a worker
killed in the middle of a class costs no student a grade."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from same_outputs import same_tree

from autograder.grade.grading import UsageError, grade
from autograder.instructor.classroom import demo_class
from autograder.instructor.release import names

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENTS = names(root=ROOT)
# Each cluster test grades a whole demo class through the cluster (1 to 5 minutes on a 2-core
# machine), on top of the local demo run they compare with (tests/conftest.py's demo_out, which
# has a limit of its own).
pytestmark = pytest.mark.timeout(1200)
BIN = Path(sys.executable).parent


def _start(args: list[str], log: Path, **env: str) -> subprocess.Popen:
    environment = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}",
                   "PYTHONPATH": str(ROOT), **env}
    return subprocess.Popen([str(BIN / "dask"), *args], cwd=ROOT, env=environment,
                            stdout=log.open("w"), stderr=subprocess.STDOUT,
                            start_new_session=True)


def _wait_for(predicate, what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.5)


class Cluster:
    """A scheduler and named workers, each its own process group."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.file = tmp / "scheduler.json"
        self.procs: dict[str, subprocess.Popen] = {}
        self.procs["scheduler"] = _start(
            ["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
             "--scheduler-file", str(self.file)], tmp / "scheduler.log")
        _wait_for(self.file.exists, "the scheduler file")
        self.address = json.loads(self.file.read_text())["address"]

    def add_worker(self, name: str, *, nanny: bool) -> None:
        args = ["worker", "--scheduler-file", str(self.file), "--nthreads", "1",
                "--no-dashboard", "--host", "127.0.0.1", "--name", name]
        env = {}
        if nanny:
            # A nanny runs the worker as a daemonic process, which may not start the sandbox's
            # fork server unless Dask is told otherwise.
            env["DASK_DISTRIBUTED__WORKER__DAEMON"] = "False"
        else:
            args.append("--no-nanny")
        self.procs[name] = _start(args, self.tmp / f"{name}.log", **env)

    def workers(self) -> dict[str, str]:
        from distributed import Client

        with Client(self.address, timeout="20s") as client:
            info = client.scheduler_info(n_workers=-1)["workers"]
        return {d["name"]: addr for addr, d in info.items()}

    def stop(self) -> None:
        for proc in self.procs.values():
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait(timeout=30)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = Cluster(tmp_path_factory.mktemp("dask"))
    try:
        c.add_worker("steady", nanny=True)
        c.add_worker("doomed", nanny=False)
        _wait_for(lambda: len(c.workers()) == 2, "two workers")
        yield c
    finally:
        c.stop()


def _same_gradebook(demo_out: Path, name: str, run, db: str) -> None:
    """The cluster run's gradebook holds the scores the local run's holds."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{demo_out / name / 'gradebook.db'}") as mine, Gradebook(db) as theirs:
        for row in run.rows:
            if row["status"] == "error":
                continue
            assert (theirs.find_submission(name, row["student_id"]).score
                    == pytest.approx(mine.find_submission(name, row["student_id"]).score))


# Two demo classes prove that the cluster and the local pool grade alike: what the cluster changes
# (transport, workers, the gradebook written by the main process) does not depend on the
# assignment, and each class costs 15 s to 3 min here. These two are the cheapest: ps4's here,
# ps2's below, with a worker killed mid-class (one class graded for both, as ps1's once was).
CLUSTER_CLASS = "ps4_core" if "ps4_core" in ASSIGNMENTS else ASSIGNMENTS[0]
KILLED_CLASS = "ps2_autodidax" if "ps2_autodidax" in ASSIGNMENTS else ASSIGNMENTS[-1]


def test_the_cluster_grades_the_demo_class_as_the_local_pool_does(cluster, demo_out, tmp_path):
    name = CLUSTER_CLASS
    local = demo_out / name / "graded"
    db = f"sqlite:///{tmp_path / 'gradebook.db'}"
    run = grade(assignment=name, submitted=demo_out / name / "submitted", out=tmp_path / "out",
                root=ROOT, db_url=db, dask=cluster.address, progress=False, quiet=True)
    assert same_tree(local, tmp_path / "out") == []
    workers = {w for d in run.details.values() for w in d.get("workers", [])}
    assert workers <= set(cluster.workers().values()) and workers
    _same_gradebook(demo_out, name, run, db)


def test_a_worker_killed_mid_class_costs_no_student_a_grade(cluster, demo_out, tmp_path):
    """The class is graded alike (results, feedback, grades.csv, gradebook) although a worker
    died in the middle of it."""
    from distributed import Client

    name = KILLED_CLASS
    db = f"sqlite:///{tmp_path / 'gradebook.db'}"
    doomed = cluster.workers()["doomed"]
    outcome: dict = {}

    def work() -> None:
        try:
            outcome["run"] = grade(assignment=name, submitted=demo_out / name / "submitted",
                                   out=tmp_path / "out", root=ROOT, db_url=db,
                                   dask=cluster.address, progress=False, quiet=True)
        except BaseException as err:  # noqa: BLE001 - reported by the assertion below
            outcome["error"] = err

    thread = threading.Thread(target=work)
    thread.start()
    in_flight: list[str] = []

    def doomed_is_grading() -> bool:
        in_flight[:] = [k for k in client.processing().get(doomed, ()) if k.startswith("grade-")]
        return bool(in_flight)

    steady = cluster.workers()["steady"]
    with Client(cluster.address, timeout="20s") as client:
        # Kill the worker while it is grading a student.
        _wait_for(doomed_is_grading, "the doomed worker to take a student", timeout=300)
    os.killpg(cluster.procs["doomed"].pid, signal.SIGKILL)
    thread.join(timeout=600)
    assert not thread.is_alive(), "grading did not finish within 10 minutes of the kill"
    assert "error" not in outcome, outcome.get("error")
    run = outcome["run"]
    assert same_tree(demo_out / name / "graded", tmp_path / "out") == []
    _same_gradebook(demo_out, name, run, db)
    # Students the doomed worker finished before it died keep its result; the ones it held when
    # it was killed were graded again on the steady worker.
    assert {w for d in run.details.values() for w in d.get("workers", [])} <= {steady, doomed}
    moved = [sid for sid, d in run.details.items()
             if any(key.endswith(f"-{sid}") for key in in_flight) and d["workers"] == [steady]]
    assert moved, (in_flight, {sid: d.get("workers") for sid, d in run.details.items()})


def test_daemonic_workers_are_refused_with_a_clear_message(tmp_path_factory):
    c = Cluster(tmp_path_factory.mktemp("daemonic"))
    try:
        # Under a nanny, Dask's default: the worker is a daemonic process.
        c.procs["daemonic"] = _start(
            ["worker", "--scheduler-file", str(c.file), "--nthreads", "1", "--no-dashboard",
             "--host", "127.0.0.1", "--name", "daemonic"], c.tmp / "daemonic.log",
            DASK_DISTRIBUTED__WORKER__DAEMON="True")
        _wait_for(lambda: len(c.workers()) == 1, "one worker")
        name = ASSIGNMENTS[0]
        # The demo class as handed in (the refusal comes before any grading).
        submitted = demo_class(name, tmp_path_factory.mktemp("submitted"), root=ROOT)
        with pytest.raises(UsageError, match="DASK_DISTRIBUTED__WORKER__DAEMON=False"):
            grade(assignment=name, submitted=submitted,
                  out=tmp_path_factory.mktemp("never"), root=ROOT, dask=c.address,
                  db_url=f"sqlite:///{tmp_path_factory.mktemp('db') / 'g.db'}",
                  progress=False, quiet=True)
    finally:
        c.stop()


def test_no_scheduler_is_a_usage_error(tmp_path, monkeypatch):
    import autograder.grade.cluster

    monkeypatch.setattr(autograder.grade.cluster, "CONNECT_TIMEOUT", "2s")  # nothing listens on port 9
    name = ASSIGNMENTS[0]
    submitted = demo_class(name, tmp_path / "submitted", root=ROOT)  # handed in, not graded
    with pytest.raises(UsageError, match="no Dask scheduler"):
        grade(assignment=name, submitted=submitted, out=tmp_path / "o",
              root=ROOT, dask="tcp://127.0.0.1:9", db_url=f"sqlite:///{tmp_path / 'g.db'}",
              progress=False, quiet=True)


def test_a_worker_keeps_its_own_python_visible_in_the_sandbox():
    """The main process's Python may live elsewhere than a worker's: each worker keeps its own
    install visible, and hides nothing that contains it."""
    from autograder.grade.cluster import _for_this_machine
    from autograder.worker.runner import Config, Limits

    mine = Path(sys.prefix).resolve()
    config = Config(package="p", assignment="a", release_cells=[], limits=Limits(), secret=b"s",
                    hide=["/elsewhere/course", str(mine.parent)], keep=["/elsewhere/.venv"])
    here = _for_this_machine(config)
    assert str(mine) in here.keep and "/elsewhere/.venv" not in here.keep
    assert here.hide == ["/elsewhere/course"]
