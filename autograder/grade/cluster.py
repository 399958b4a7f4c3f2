"""Grading on a Dask cluster: ``grade(..., dask="tcp://scheduler:8786")``.

Dask does the distribution (scheduling, retries on a lost worker, resources); this module only
says what a task is. A task is one student's notebook (its bytes travel with the task, so workers
need no shared file system) graded by exactly what a local pool worker runs:
``runner.init_worker`` once per worker process and grading run, then ``runner.grade_notebook``.
Its result is plain data, and the main process stays the only writer of every output.

What the workers need:
- ``DASK_DISTRIBUTED__WORKER__DAEMON=False`` when they run under a nanny (the default):
  the sandbox starts a fork server, and a daemonic process may not have children. A worker
  started with ``--no-nanny`` is not daemonic. ``grade`` refuses a cluster with daemonic workers.
- root, or unprivileged user namespaces, for the sandbox's namespaces (as locally);
- the course installed at the same version (this package and the assignment's checks and probes).
- ``--nthreads 1`` is the natural setting (one submission at a time per process, parallelism
  from ``--nworkers``); with more threads a worker process still grades one task at a time.
- A worker with a GPU is started with ``--resources GPU=1``: a class's GPU checks go only to
  such workers, and every other check can run anywhere.

Retries: a task whose worker dies is rescheduled by Dask (the scheduler's ``allowed-failures``);
a task never raises for anything a student did (``grade_notebook`` returns the failure as data),
so a student's own failure is never retried.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import secrets
import tempfile
import threading
import time
from pathlib import Path

from autograder.grade import record
from autograder.limits import UsageError
from autograder.results import CLUSTER_FAILED, StudentResult, StudentStatus
from autograder.worker import runner, submission
from autograder.worker.normalise import NotebookError

# One grading at a time per worker process: the runner's state (fork server, assignment) is
# per process.
_LOCK = threading.Lock()
_GPU = "GPU"
CONNECT_TIMEOUT = "20s"  # how long the client tries to reach the scheduler


def _daemonic() -> bool:
    return multiprocessing.current_process().daemon


def _grade_task(run_key: str, config: runner.Config, student_id: str, notebook_name: str,
                data: bytes | None, problem: str, only: frozenset[str] | None) -> StudentResult:
    """Runs on a Dask worker: one student's notebook (or a subset of its checks)."""
    from distributed import get_worker

    address = get_worker().address
    with _LOCK:
        if runner._state.get("run_key") != run_key:
            config = _for_this_machine(config)
            # Its children's uids come from a block of uids this worker process locks
            # (runner._UidBlock), so two worker processes on one machine never share one.
            runner.init_worker(config)
            runner._state["run_key"] = run_key
        with tempfile.TemporaryDirectory(prefix="autograder-dask-") as tmp:
            path = None
            if data is not None:
                path = Path(tmp) / notebook_name
                path.write_bytes(data)
            result = runner.grade_notebook(student_id, path, problem, only=only)
    result["worker"] = address
    return result


def _for_this_machine(config: runner.Config) -> runner.Config:
    """The sandbox keeps the Python install that THIS worker runs from visible (the main
    process's may live elsewhere, or not exist here), and hides nothing that contains it."""
    keep = runner.python_paths()
    hide = [h for h in config.hide if not any(Path(k).is_relative_to(h) for k in keep)]
    return dataclasses.replace(config, keep=keep, hide=hide)


def run_on_dask(config: runner.Config, jobs: list, address: str, *, gpu_checks: frozenset[str],
                all_checks: frozenset[str], progress: bool,
                on_result=None) -> dict[str, StudentResult]:
    """Grade ``jobs`` (student_id, path or None, problem) on the cluster at ``address``.

    Returns the same per-student details as the local pool, plus ``workers``: the addresses that
    graded each student, and ``gpu_worker`` where GPU checks ran; ``on_result(student_id,
    details)`` is called as each student's tasks are all done."""
    from distributed import Client

    from autograder.grade.progress import Progress

    try:
        client = Client(address, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError) as err:
        raise UsageError(f"no Dask scheduler answered at {address} ({err})") from None
    try:
        info = client.scheduler_info(n_workers=-1)["workers"]
        if not info:
            raise UsageError(f"the Dask cluster at {address} has no workers")
        daemonic = [w for w, d in client.run(_daemonic).items() if d]
        if daemonic:
            raise UsageError(
                f"Dask workers {', '.join(sorted(daemonic))} are daemonic processes, which may "
                "not start the sandbox's fork server: start them with "
                "DASK_DISTRIBUTED__WORKER__DAEMON=False (or --no-nanny)")
        gpu_workers = [w for w, d in info.items() if d.get("resources", {}).get(_GPU)]
        # Without a GPU worker, GPU checks are graded where the rest are, and reported not-run
        # there exactly as in a local run.
        split = bool(gpu_checks) and bool(gpu_workers)
        run_key = secrets.token_hex(8)
        [config_future] = client.scatter([config], broadcast=True, hash=False)
        futures = {}
        again = {}  # future -> how to submit the same task under a new key
        for student_id, path, problem in jobs:
            data, name = None, ""
            if path is not None:
                # Read here, with the same rules as a local worker (regular files only, bounded),
                # so the task carries the bytes and a link or FIFO never reaches a worker.
                try:
                    data, name = submission.read(path), path.name
                except (NotebookError, OSError) as err:
                    problem = str(err)
            cpu_only = (all_checks - gpu_checks) if split else None
            args = (_grade_task, run_key, config_future, student_id, name, data, problem)
            kinds = [("cpu", cpu_only, f"grade-{run_key}-{student_id}", {})]
            if split:
                kinds.append(("gpu", gpu_checks, f"grade-gpu-{run_key}-{student_id}",
                              {"resources": {_GPU: 1}}))
            for kind, only, key, extra in kinds:
                def submit(suffix: str = "", args=args, only=only, key=key, extra=extra):
                    return client.submit(*args, only, pure=False, key=key + suffix, **extra)

                future = submit()
                futures[future] = (student_id, kind)
                again[future] = submit
        parts: dict[str, dict[str, StudentResult]] = {}
        bar = Progress(len(futures), desc="grading (dask)", unit="tasks", enabled=progress)
        tasks_of = {}
        for student_id, kind in futures.values():
            tasks_of[student_id] = tasks_of.get(student_id, 0) + 1
        pending = dict(futures)
        resubmitted, idle = 0, 0.0
        while pending:
            # Polled: distributed.wait and as_completed go through the process's default client,
            # which need not be this one (a second client in the process broke them).
            done = [f for f in pending if f.done()]
            if not done:
                time.sleep(_TICK_S)
                idle += _TICK_S
            for future in done:
                student_id, kind = pending.pop(future)
                try:
                    parts.setdefault(student_id, {})[kind] = future.result()
                except Exception as err:  # noqa: BLE001 - a lost task must not stop the class
                    parts.setdefault(student_id, {})[kind] = record.submission_error(
                        student_id, CLUSTER_FAILED, err)
                bar.update(1)
                if on_result is not None and len(parts[student_id]) == tasks_of[student_id]:
                    on_result(student_id, _merge(parts[student_id]))
            if done:
                idle = 0.0
            if idle < _POLL_S:
                continue
            idle = 0.0
            # Nothing finished for a while: a task the scheduler holds as finished while this
            # client never heard so (seen when a worker dies as it hands its result over) is
            # submitted again under a new key. Grading is deterministic, so the result is the same.
            stale = client.run_on_scheduler(_finished_keys, keys=[f.key for f in pending])
            for future in [f for f in pending if f.key in stale]:
                resubmitted += 1
                submit = again.pop(future)
                fresh = submit(f"-again{resubmitted}")
                pending[fresh] = pending.pop(future)
                again[fresh] = submit
        bar.close()
    finally:
        client.close()
    return {sid: _merge(by_kind) for sid, by_kind in parts.items()}


_POLL_S = 20.0  # seconds without a finished task before the scheduler is asked what it holds
_TICK_S = 0.2  # how often the client's futures are looked at


def _finished_keys(dask_scheduler, keys: list[str]) -> set[str]:
    """Which of ``keys`` the scheduler holds as finished (runs on the scheduler)."""
    tasks = dask_scheduler.tasks
    return {k for k in keys if k in tasks and tasks[k].state == "memory"}


def _merge(by_kind: dict[str, StudentResult]) -> StudentResult:
    """One student's details from its CPU task and, where split, its GPU task."""
    main = dict(by_kind.get("cpu") or by_kind["gpu"])
    main["workers"] = sorted({d.get("worker", "") for d in by_kind.values()} - {""})
    gpu = by_kind.get("gpu") if "cpu" in by_kind else None
    if gpu is not None:
        main["tests"] = {**main.get("tests", {}), **gpu.get("tests", {})}
        main["notes"] = main.get("notes", []) + [n for n in gpu.get("notes", [])
                                                 if n not in main.get("notes", [])]
        main["check_seconds"] = main.get("check_seconds", 0.0) + gpu.get("check_seconds", 0.0)
        main["seconds"] = main.get("seconds", 0.0) + gpu.get("seconds", 0.0)
        main["gpu_worker"] = gpu.get("worker", "")
        if gpu.get("status") == StudentStatus.ERROR and main.get("status") != StudentStatus.ERROR:
            main["status"], main["message"] = StudentStatus.ERROR, gpu.get("message", "")
    return main


def gpu_summary(details: dict[str, StudentResult]) -> str:
    """Where a class's GPU checks ran, for the summary line."""
    where = sorted({d["gpu_worker"] for d in details.values() if d.get("gpu_worker")})
    return f"GPU checks ran on {', '.join(where)}" if where else ""


