"""``grade()``: a whole class, in parallel, with one writer for every output.

The main process finds the submissions, starts a pool of workers (autograder.worker.runner), collects
each student's result as it arrives (progress bar on stderr), then writes results JSON, feedback
HTML, grades.csv and the gradebook, and prints a summary table.
"""

from __future__ import annotations

import concurrent.futures
import importlib
import multiprocessing
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from autograder.course import assignment_names, course_secret
from autograder.grade import classdir, cluster, feedback, late, record, reproduce, summary
from autograder.grade.messages import LANGS
from autograder.limits import UsageError
from autograder.results import (
    GRADER_ERRORS,
    GRADER_FAILED,
    NOT_PASSED,
    RECORD_FAILED,
    CheckResult,
    ClassResult,
    GradeRow,
    Status,
    StudentResult,
    StudentStatus,
)
from autograder.spec import Assignment
from autograder.text import clean_text
from autograder.worker.normalise import read_release
from autograder.worker.runner import (
    Config,
    Limits,
    gpu_not_run,
    grade_notebook,
    init_worker,
    not_graded,
    python_paths,
)


@dataclass
class GradeRun:
    rows: list[GradeRow]
    seconds: float
    check_seconds: float
    isolation: str
    out: Path
    details: dict[str, StudentResult] = field(default_factory=dict)
    # This run's submissions (``details``' keys) that failed for a grader-side reason
    # (failed_by_grader), each with its row's message.
    grader_failures: dict[str, str] = field(default_factory=dict)

    @property
    def grader_failed_all(self) -> bool:
        """Whether every submission of this run failed for a grader-side reason: the grader,
        not the class, needs fixing (``grade`` then exits results.GRADER_FAILED_EXIT)."""
        return bool(self.details) and len(self.grader_failures) == len(self.details)


def load_assignment(name: str, package: str) -> Assignment:
    try:
        return importlib.import_module(f"{package}.{name}.checks").ASSIGNMENT
    except ModuleNotFoundError as err:
        known = assignment_names(package)
        raise UsageError(f"unknown assignment {name!r} (the assignments are: "
                         f"{', '.join(known)}; {err})") from None


def hidden_paths(*, root: Path, submitted: Path, out: Path, db_url: str) -> list[str]:
    """What student code must not see: course and repository files (not the virtualenv or the
    Python install JAX imports from), the class's submissions, the output, the gradebook."""
    keep = {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()}
    import autograder

    repo = Path(autograder.__file__).resolve().parent.parent
    dirs = {root.resolve(), repo}
    if Path(sys.prefix).name == ".venv":
        dirs.add(Path(sys.prefix).resolve().parent)
    hide = {submitted.resolve(), out.resolve()}
    if db_url.startswith("sqlite:///"):
        hide.add(Path(db_url[len("sqlite:///"):]).resolve())
    for d in dirs:
        if d.is_dir():
            for entry in d.iterdir():
                resolved = entry.resolve()
                if not any(k == resolved or k.is_relative_to(resolved) for k in keep):
                    hide.add(resolved)
    # Hiding a parent also hides its children; mount the parents only, outermost first.
    ordered = sorted(hide, key=lambda p: len(p.parts))
    result: list[Path] = []
    for p in ordered:
        if (p.exists() and not any(p.is_relative_to(q) for q in result)
                and not any(k.is_relative_to(p) for k in keep)):
            result.append(p)
    return [str(p) for p in result]


def find_notebooks(submitted: Path, assignment: Assignment) -> list[tuple[str, Path | None, str]]:
    jobs = []
    for student_dir in sorted(p for p in submitted.iterdir() if p.is_dir()):
        folder = student_dir / assignment.name
        wanted = folder / assignment.notebook
        found = sorted(folder.glob("*.ipynb")) if folder.is_dir() else []
        if wanted.is_file():
            jobs.append((student_dir.name, wanted, ""))
        elif len(found) == 1:
            jobs.append((student_dir.name, found[0], ""))
        elif found:
            jobs.append((student_dir.name, None,
                         f"several notebooks and none named {assignment.notebook}"))
        else:
            jobs.append((student_dir.name, None, f"no notebook submitted in {assignment.name}/"))
    return jobs


def grade(*, assignment: str, submitted: Path, out: Path, workers: int | None = None,
          db_url: str | None = None, root: Path = Path("."),
          package: str = "autograder.assignments", seed: str | None = None,
          limits: Limits | None = None, progress: bool = True, quiet: bool = False,
          dask: str | None = None, students: list[str] | None = None,
          lang: str = "en") -> GradeRun:
    """Grade every submission under ``submitted``; ``dask``: a Dask scheduler's address to send
    the class to instead of the local pool (autograder.grade.cluster); ``students``: grade only these
    and merge them into the class already in ``out`` (autograder.grade.classdir); ``lang``: the
    language of the feedback pages and the summary (autograder.grade.messages; grades do not change)."""
    started = time.monotonic()
    if lang not in LANGS:
        raise UsageError(f"unknown language {lang!r} (the languages are: {', '.join(LANGS)})")
    limits = limits or Limits()
    root, submitted, out = Path(root), Path(submitted), Path(out)
    spec = load_assignment(assignment, package)
    release_path = root / "assignments" / assignment / spec.notebook
    if not release_path.is_file():
        raise UsageError(f"release notebook {release_path} not found (run `release` first)")
    if not submitted.is_dir():
        raise UsageError(f"submission directory {submitted} not found")
    classdir.check_layout(submitted, spec)
    late_policy = late.load(root, assignment)
    all_jobs = find_notebooks(submitted, spec)
    jobs = classdir.pick(all_jobs, students, submitted) if students else all_jobs
    db_url = db_url or f"sqlite:///{(root / 'gradebook.db').resolve()}"
    for sub in ("results", "feedback"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    release_cells = read_release(release_path)
    config = Config(package=package, assignment=assignment, release_cells=release_cells,
                    limits=limits, secret=course_secret(root, seed),
                    hide=hidden_paths(root=root, submitted=submitted, out=out, db_url=db_url),
                    keep=python_paths())
    gradebook_ready = record.prepare_gradebook(db_url)
    if dask:
        details = cluster.run_on_dask(
            config, jobs, dask, progress=progress,
            gpu_checks=frozenset(c.id for c in spec.checks if c.needs_gpu),
            all_checks=frozenset(c.id for c in spec.checks))
    else:
        workers = max(1, min(workers or os.cpu_count() or 1, len(jobs) or 1))
        details = _run_pool(config, jobs, workers, progress)
    # Checks a detail lacks (the worker failed) are errors, but GPU checks when no worker had a
    # GPU for them (all such checks were `not-run`): the maximum score is the assignment's, the
    # same for a student whose worker failed as for the others.
    gpu_ran = any(d["tests"].get(c.id, {}).get("status", Status.NOT_RUN) != Status.NOT_RUN
                  for d in details.values() for c in spec.checks if c.needs_gpu)
    rows: list[GradeRow] = []
    results: list[ClassResult] = []
    for student_id, _, _ in jobs:
        # Every string made writable (a lone surrogate is not UTF-8), the id included; the files
        # are named from the id as found on disk (record.safe_filename).
        details[student_id] = detail = record.valid(details[student_id])
        shown_id = record.valid_text(student_id)
        for c in spec.checks:
            detail["tests"].setdefault(c.id, gpu_not_run(c) if c.needs_gpu and not gpu_ran
                                       else not_graded(c, detail["message"]))
        tests = [detail["tests"][c.id] for c in spec.checks]
        result = record.results_json(shown_id, assignment, tests)
        if late_policy is not None:
            result = late.apply(result, late.lateness(late_policy,
                                                      submitted / student_id / assignment))
        detail["tests_by_check"] = detail["tests"]
        status, message = detail["status"], _row_message(detail, tests)
        try:
            _write_student(out, spec, assignment, package, student_id, result, detail, lang)
        except Exception as err:  # noqa: BLE001 - one student's files must not stop the class
            status = StudentStatus.ERROR
            message = f"{RECORD_FAILED} ({type(err).__name__}: {clean_text(str(err), 300)})"
        rows.append({"student_id": shown_id, "assignment": assignment,
                     "score": result["score"], "max_score": result["max_score"],
                     "status": status, "message": message,
                     **{k: result[k] for k in record.LATE_FIELDS if k in result}})
        results.append(dict(result, tests_by_check=detail["tests"]))
    if students:
        rows, results = classdir.merge(out, spec, all_jobs, rows, results)
    failed: dict[str, str] = {}
    try:
        gradebook_ready.join()
        failed = record.write_gradebook(db_url, spec, release_cells, results,
                                        {c.id: c.grade_cell for c in spec.checks})
    finally:
        # grades.csv and the summary are written whatever happened to the gradebook.
        for row in rows:
            if row["student_id"] in failed:
                row.update(status=StudentStatus.ERROR, message=failed[row["student_id"]])
        record.write_grades_csv(out, rows, late=late_policy is not None)
        (out / "summary.html").write_text(summary.render(spec, results, rows, lang=lang),
                                         encoding="utf-8")
    isolation = _isolation(details)
    by_id = {row["student_id"]: row for row in rows}
    own_rows = {sid: by_id[record.valid_text(sid)] for sid, _, _ in jobs}
    run = GradeRun(rows, time.monotonic() - started,
                   sum(d.get("check_seconds", 0.0) for d in details.values()), isolation, out,
                   details, {sid: row["message"] for sid, row in own_rows.items()
                             if failed_by_grader(row, details[sid])})
    if not quiet:
        print(summary_table(run))
    return run


def failed_by_grader(row: GradeRow, detail: StudentResult) -> bool:
    """Whether a submission failed for a grader-side reason, not the student's: its row is an
    error the grader caused (its worker failed, its Dask task was lost, its records could not be
    written), or every check that ran is an ``error`` the grader caused (its inputs or
    expectation could not be prepared; "not graded" after a worker's failure). A notebook that
    could not be read, a time limit or a wrong answer is the submission's own failure."""
    if row["status"] == StudentStatus.ERROR and row["message"].startswith(GRADER_ERRORS):
        return True
    ran = [t for t in detail["tests"].values() if t["status"] != Status.NOT_RUN]
    return bool(ran) and all(
        t["status"] == Status.ERROR
        and t["message"].removeprefix("not graded: ").startswith(GRADER_ERRORS) for t in ran)


def _write_student(out: Path, spec: Assignment, assignment: str, package: str,
                   student_id: str, result: ClassResult, detail: StudentResult,
                   lang: str = "en") -> None:
    """One student's results JSON and feedback page (``student_id``: as found on disk)."""
    # A snippet per failed check, unless the file was not a notebook it could follow.
    detail["reproducers"] = ({} if detail["status"] == StudentStatus.ERROR
                             else reproduce.for_failed_checks(spec, assignment, detail["tests"],
                                                              package))
    name = record.safe_filename(student_id)
    record.write_results(out, result, name)
    (out / "feedback" / f"{name}.html").write_text(feedback.render(result, spec, detail,
                                                                   lang=lang), encoding="utf-8")


def _row_message(detail: StudentResult, tests: list[CheckResult]) -> str:
    if detail["status"] == StudentStatus.ERROR:
        return detail["message"]
    failed = sum(t["status"] in NOT_PASSED for t in tests)
    not_run = sum(t["status"] == Status.NOT_RUN for t in tests)
    parts = [f"{len(tests) - failed - not_run} of {len(tests)} checks passed"]
    if not_run:
        parts.append(f"{not_run} not run (no GPU)")
    return "; ".join(parts)


def _isolation(details: dict) -> str:
    kinds = sorted({d.get("isolation", "") for d in details.values() if d.get("isolation")})
    return " | ".join(kinds) if kinds else "no submission reached the sandbox"


def _run_pool(config: Config, jobs: list, workers: int,
              progress: bool) -> dict[str, StudentResult]:
    from tqdm import tqdm

    ctx = multiprocessing.get_context("spawn")
    details: dict[str, StudentResult] = {}
    bar = tqdm(total=len(jobs), desc="grading", unit="nb", file=sys.stderr, disable=not progress)
    with concurrent.futures.ProcessPoolExecutor(
        max_workers=workers, mp_context=ctx, initializer=init_worker,
        initargs=(config,),
    ) as pool:
        futures = {pool.submit(grade_notebook, sid, path, problem): sid
                   for sid, path, problem in jobs}
        for future in concurrent.futures.as_completed(futures):
            sid = futures[future]
            try:
                details[sid] = future.result()
            except Exception as err:  # noqa: BLE001 - a worker crash must not stop the class
                details[sid] = record.submission_error(sid, GRADER_FAILED, err)
            bar.update(1)
    bar.close()
    return details


def summary_table(run: GradeRun) -> str:
    # Nothing reaches the instructor's terminal with a control character in it.
    width = max([len("student")] + [len(clean_text(r["student_id"], 60)) for r in run.rows])
    lines = [f"{'student':<{width}}  {'score':>13}  {'status':<7}  {'time':>6}  message"]
    for r in run.rows:
        seconds = run.details.get(r["student_id"], {}).get("seconds", 0.0)
        lines.append(f"{clean_text(r['student_id'], 60):<{width}}  "
                     f"{r['score']:>6g}/{r['max_score']:<6g}  "
                     f"{r['status']:<7}  {seconds:>5.1f}s  {clean_text(r['message'], 70)}")
    lines.append(f"{len(run.rows)} submissions in {run.seconds:.1f} s "
                 f"({60 * len(run.rows) / max(run.seconds, 1e-9):.1f}/min); "
                 f"isolation: {clean_text(run.isolation, 400)}; output in {run.out}")
    lines.append(f"class summary (scores per task, checks failed most often, submissions that "
                 f"could not be graded): {run.out / 'summary.html'}")
    workers = sorted({w for d in run.details.values() for w in d.get("workers", [])})
    if workers:
        where = cluster.gpu_summary(run.details)
        lines.append(clean_text(f"graded on Dask workers {', '.join(workers)}"
                                + (f"; {where}" if where else ""), 2000))
    return "\n".join(lines)
