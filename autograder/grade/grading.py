"""``grade()``: a whole class, in parallel, with one writer for every output.

The main process finds the submissions, starts a pool of workers (autograder.worker.runner), collects
each student's result as it arrives (progress bar on stderr), then writes results JSON, feedback
HTML, grades.csv and the gradebook, and prints a summary table.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import importlib
import multiprocessing
import os
import signal
import sys
import time
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path

from autograder.course import assignment_names, course_secret
from autograder.grade import (
    classdir,
    cluster,
    feedback,
    late,
    record,
    reproduce,
    resume,
    similarity,
    stopping,
    summary,
)
from autograder.grade.messages import LANGS, notebook_lang
from autograder.grade.progress import Progress
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
from autograder.worker import points
from autograder.worker.normalise import grade_ids, read_release
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
    kept: list[str] = field(default_factory=list)  # results kept from an earlier run
    total: int = 0  # submissions found in SUBMITTED
    retried: dict[str, str] = field(default_factory=dict)  # graded again after a worker died
    interrupted: int | None = None  # the signal that stopped the run
    results: list = field(default_factory=list)  # the class's results (``rows``' order)
    off_roster: list[str] = field(default_factory=list)  # graded, not among nbgrader's students

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


def _similarity_page(out: Path, name: str, notebooks: dict[str, Path | None],
                     release_cells: list[dict], lang: str) -> bool:
    """OUT/similarity.html (autograder.grade.similarity); whether it was written. A failure costs
    the page, never the run: it is printed and the summary links no page. A class of one
    (a Gradescope submission, a `--student` regrade's folder of one) compares nothing."""
    if sum(path is not None for path in notebooks.values()) < 2:
        return False
    try:
        page = similarity.render(name, notebooks, release_cells, lang=lang)
    except Exception as err:  # noqa: BLE001 - a report, never the grades
        print(f"the similarity report could not be made: {type(err).__name__}: {err}",
              file=sys.stderr)
        return False
    record.write_atomic(out / "similarity.html", page)
    return True


def find_notebooks(submitted: Path, assignment: Assignment) -> list[tuple[str, Path | None, str]]:
    """One job (student id, notebook or None, why None) per student folder that holds an
    ``<assignment>/`` folder (``absent`` lists the others)."""
    jobs = []
    for student_dir in sorted(p for p in submitted.iterdir() if p.is_dir()):
        folder = student_dir / assignment.name
        if not folder.is_dir():
            continue
        wanted = folder / assignment.notebook
        found = sorted(folder.glob("*.ipynb"))
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


def absent(submitted: Path, assignment: Assignment) -> list[str]:
    """Student folders without an ``<assignment>/`` folder (another assignment's only)."""
    return [p.name for p in sorted(submitted.iterdir())
            if p.is_dir() and not (p / assignment.name).is_dir()]


def other_releases(root: Path, assignment: str) -> dict[str, frozenset[str]]:
    """The course's other released notebooks' nbgrader grade ids (normalise.foreign)."""
    found = {}
    for path in sorted((root / "assignments").glob("*/*.ipynb")):
        if path.parent.name != assignment and path.stem == path.parent.name:
            try:
                found[path.stem] = frozenset(grade_ids(read_release(path)))
            except (OSError, ValueError, KeyError, TypeError):
                continue
    return found


def grade(*, assignment: str, submitted: Path, out: Path, workers: int | None = None,
          db_url: str | None = None, root: Path = Path("."),
          package: str = "autograder.assignments", seed: str | None = None,
          limits: Limits | None = None, progress: bool = True, quiet: bool = False,
          dask: str | None = None, students: list[str] | None = None,
          lang: str | None = None, regrade_all: bool = False) -> GradeRun:
    """Grade every submission under ``submitted``; ``dask``: a Dask scheduler's address to send
    the class to instead of the local pool (autograder.grade.cluster); ``students``: grade only these
    and merge them into the class already in ``out`` (autograder.grade.classdir); ``lang``: the
    language of the feedback pages and the summary (autograder.grade.messages; grades do not
    change; None: each page in the language its notebook says, ``notebook_lang``, and the summary
    in the one every notebook says, else English);
    a result already in ``out`` for the same notebook and settings is kept (autograder.grade.resume)
    unless ``regrade_all``. SIGINT or SIGTERM stops the run (autograder.grade.stopping): what was
    graded stays, ``interrupted`` says which signal."""
    started = time.monotonic()
    if lang is not None and lang not in LANGS:
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
    # The released test cells' points are what this run scores against (autograder.worker.points).
    rescaled = points.changes(spec, release_cells)
    if rescaled and not quiet:
        print(f"points from the release: {'; '.join(rescaled)} (each check of a cell scaled "
              "in proportion)")
    spec = points.scaled(spec, release_cells)
    config = Config(package=package, assignment=assignment, release_cells=release_cells,
                    limits=limits, secret=course_secret(root, seed),
                    hide=hidden_paths(root=root, submitted=submitted, out=out, db_url=db_url),
                    keep=python_paths(), other_assignments=other_releases(root, assignment))
    gradebook_ready = record.prepare_gradebook(db_url)
    fingerprint = resume.run_digest(spec=spec, package=package, release_path=release_path,
                                    secret=config.secret, limits=limits, lang=lang or "auto")
    digests = {sid: resume.student_digest(fingerprint, path,
                                          late.for_student(late_policy, sid))
               for sid, path, _ in all_jobs}
    forced = {job[0] for job in jobs} if students else set()
    kept_results: dict[str, ClassResult] = {}
    for sid, _, _ in all_jobs:
        if sid in forced or (regrade_all and not students):
            continue
        # --student grades only the named; the others stand as they are on disk.
        found = (resume.read(out, spec, sid) if students
                 else resume.kept(out, spec, sid, digests[sid]))
        if found is not None:
            kept_results[sid] = found
    to_grade = [job for job in jobs if job[0] not in kept_results]
    fresh: dict[str, tuple[GradeRow, ClassResult]] = {}
    details: dict[str, StudentResult] = {}
    gpu_checks = frozenset(c.id for c in spec.checks if c.needs_gpu)
    notebooks = {sid: path for sid, path, _ in all_jobs}
    # Without --lang the summary is in the language every notebook of the class says, else English.
    page_langs = {notebook_lang(path) for path in notebooks.values()} if lang is None else set()
    class_lang = page_langs.pop() if len(page_langs) == 1 else "en"

    def on_result(student_id: str, detail: StudentResult) -> None:
        details[student_id] = detail
        fresh[student_id] = _record_student(
            out, spec, assignment, package, student_id, detail,
            lang=lang or notebook_lang(notebooks.get(student_id)),
            late_policy=late_policy, submitted=submitted, digest=digests.get(student_id),
            gpu_seen=any(d["tests"].get(c, {}).get("status", Status.NOT_RUN) != Status.NOT_RUN
                         for d in details.values() for c in gpu_checks))

    interrupted: stopping.Interrupted | None = None
    retried: dict[str, str] = {}
    try:
        with stopping.interruptible():
            if not to_grade:
                pass
            elif dask:
                found = cluster.run_on_dask(config, to_grade, dask, progress=progress,
                                            gpu_checks=gpu_checks,
                                            all_checks=frozenset(c.id for c in spec.checks),
                                            on_result=on_result)
            else:
                workers = max(1, min(workers or os.cpu_count() or 1, len(to_grade)))
                found = _run_pool(config, to_grade, workers, progress, on_result=on_result,
                                  retried=retried)
            if to_grade:
                # A detail the pool or cluster returned without reporting it (or replaced).
                for sid, detail in found.items():
                    if details.get(sid) is not detail:
                        on_result(sid, detail)
    except stopping.Interrupted as stop:
        interrupted = stop
    with stopping.final() if interrupted else contextlib.nullcontext():
        if interrupted:
            stopping.kill_descendants()
        rows, results = _class_from(out, spec, all_jobs, fresh, kept_results,
                                    merge_old=bool(students))
        failed: dict[str, str] = {}
        roster: list[str] = []
        try:
            if interrupted is None:
                gradebook_ready.join()
                # nbgrader's students before this run adds any (``nbgrader db student import``
                # or earlier runs of `grade`).
                roster = record.roster(db_url)
                failed = record.write_gradebook(
                    db_url, spec, release_cells, results,
                    {c.id: c.grade_cell for c in spec.checks},
                    duedate=late_policy.due if late_policy is not None else None)
        finally:
            # grades.csv and the summary are written whatever happened to the gradebook.
            for row in rows:
                if row["student_id"] in failed:
                    row.update(status=StudentStatus.ERROR, message=failed[row["student_id"]])
            shown = {row["student_id"] for row in rows}
            off_roster = [sid for sid in shown if roster and sid not in set(roster)]
            missing = _missing(spec, results, [
                *((sid, "no submission: no folder of this assignment") for sid in
                  map(record.valid_text, absent(submitted, spec)) if sid not in shown),
                *((sid, "no submission: on the roster, no folder in SUBMITTED")
                  for sid in sorted(set(roster) - shown - set(map(record.valid_text,
                                                                  absent(submitted, spec)))))])
            record.write_grades_csv(out, rows + missing, late=late_policy is not None)
            compared = interrupted is None and _similarity_page(
                out, spec.name, {record.valid_text(sid): path for sid, path, _ in all_jobs},
                release_cells, lang or class_lang)
            record.write_atomic(out / "summary.html",
                                summary.render(spec, results, rows, lang=lang or class_lang,
                                               retried=retried, missing=missing,
                                               off_roster=off_roster,
                                               similarity_link=compared))
    isolation = _isolation(details)
    by_id = {row["student_id"]: row for row in rows}
    own_rows = {sid: by_id[record.valid_text(sid)] for sid, _, _ in to_grade
                if record.valid_text(sid) in by_id and sid in details}
    run = GradeRun(rows + missing, time.monotonic() - started,
                   sum(d.get("check_seconds", 0.0) for d in details.values()), isolation, out,
                   details, {sid: row["message"] for sid, row in own_rows.items()
                             if failed_by_grader(row, details[sid])},
                   kept=sorted(kept_results), total=len(all_jobs), retried=retried,
                   interrupted=interrupted.signum if interrupted else None, results=results,
                   off_roster=sorted(off_roster))
    if not quiet or interrupted:
        print(summary_table(run), file=sys.stderr if interrupted else sys.stdout)
    return run


def _record_student(out: Path, spec: Assignment, assignment: str, package: str,
                    student_id: str, detail: StudentResult, *, lang: str, late_policy,
                    submitted: Path, digest: str | None,
                    gpu_seen: bool) -> tuple[GradeRow, ClassResult]:
    """One graded student's row and result, their results file and feedback page written
    at once (so a run stopped later keeps them)."""
    # Every string made writable (a lone surrogate is not UTF-8), the id included; the files
    # are named from the id as found on disk (record.safe_filename).
    detail = record.valid(detail)
    shown_id = record.valid_text(student_id)
    # Checks a detail lacks (the worker failed) are errors, but GPU checks when no worker had a
    # GPU for them: the maximum score is the assignment's, the same for a student whose worker
    # failed as for the others.
    for c in spec.checks:
        detail["tests"].setdefault(c.id, gpu_not_run(c) if c.needs_gpu and not gpu_seen
                                   else not_graded(c, detail["message"]))
    tests = [detail["tests"][c.id] for c in spec.checks]
    result = record.results_json(shown_id, assignment, tests)
    if late_policy is not None:
        result = late.apply(result, late.lateness(late.for_student(late_policy, student_id),
                                                  submitted / student_id / assignment))
    detail["tests_by_check"] = detail["tests"]
    status, message = detail["status"], _row_message(detail, tests)
    result = dict(result, status=status, message=message)
    resume.forget(out, student_id)
    try:
        _write_student(out, spec, assignment, package, student_id, result, detail, lang)
        resume.remember(out, student_id, digest, status, message)
    except Exception as err:  # noqa: BLE001 - one student's files must not stop the class
        status = StudentStatus.ERROR
        message = f"{RECORD_FAILED} ({type(err).__name__}: {clean_text(str(err), 300)})"
        result.update(status=status, message=message)
        # Its results file still says what was graded; with no side file (resume.forget above)
        # the next run grades the student again.
        with contextlib.suppress(Exception):
            record.write_results(out, result, record.safe_filename(student_id))
    return _row(result), dict(result, tests_by_check=detail["tests"])


def _row(result: ClassResult) -> GradeRow:
    return {"student_id": result["student_id"], "assignment": result["assignment"],
            "score": result["score"], "max_score": result["max_score"],
            "status": result["status"], "message": result["message"],
            **{k: result[k] for k in record.LATE_FIELDS if k in result}}


def _missing(spec: Assignment, results: list[ClassResult],
             who: list[tuple[str, str]]) -> list[GradeRow]:
    """A ``missing`` row, score 0 of the class's maximum, for each (student, why)."""
    top = max((r["max_score"] for r in results),
              default=float(sum(c.points for c in spec.checks if not c.needs_gpu)))
    return [{"student_id": sid, "assignment": spec.name, "score": 0.0, "max_score": top,
             "status": StudentStatus.MISSING, "message": why} for sid, why in who]


def _class_from(out: Path, spec: Assignment, all_jobs: list, fresh: dict,
                kept_results: dict, *, merge_old: bool) -> tuple[list[GradeRow],
                                                                  list[ClassResult]]:
    """The class as grades.csv, the summary and the gradebook get it: this run's students and
    the results kept on disk, in SUBMITTED's order; a student neither graded nor kept (the run
    was stopped first) has no row yet. ``merge_old`` (``--student``): students of the earlier
    grades.csv no longer in SUBMITTED stay, as before."""
    rows: list[GradeRow] = []
    results: list[ClassResult] = []
    for sid, _, _ in all_jobs:
        if sid in fresh:
            row, result = fresh[sid]
        elif sid in kept_results:
            result = kept_results[sid]
            row = _row(result)
        else:
            continue
        rows.append(row)
        results.append(result)
    if merge_old:
        rows, results = classdir.keep_old(out, spec, all_jobs, rows, results)
    return rows, results


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
    # The feedback page first: a results file on disk always has its page (a run stopped in
    # between grades the student again).
    record.write_atomic(out / "feedback" / f"{name}.html",
                        feedback.render(result, spec, detail, lang=lang))
    record.write_results(out, result, name)


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


def _run_pool(config: Config, jobs: list, workers: int, progress: bool, *,
              on_result=None, retried: dict[str, str] | None = None) -> dict[str, StudentResult]:
    """Grade ``jobs`` on ``workers`` worker processes, calling ``on_result(student_id, detail)``
    as each student is done. Each worker is a pool of its own, so a worker that dies takes only
    the student it was grading with it: that student is graded once more, in a fresh worker
    after the others (``retried``: student id -> why), and is an ``error`` only if it fails
    again."""
    ctx = multiprocessing.get_context("spawn")
    details: dict[str, StudentResult] = {}
    retried = {} if retried is None else retried
    queue = list(jobs)
    bar = Progress(len(jobs), enabled=progress)

    def new_slot() -> concurrent.futures.ProcessPoolExecutor:
        return concurrent.futures.ProcessPoolExecutor(
            max_workers=1, mp_context=ctx, initializer=init_worker, initargs=(config,))

    slots = [new_slot() for _ in range(workers)]
    running: dict[concurrent.futures.Future, tuple[int, tuple]] = {}

    def feed(index: int) -> None:
        if queue:
            job = queue.pop(0)
            with stopping.shielded():  # the worker starts here, on its first job
                future = slots[index].submit(grade_notebook, *job)
            running[future] = (index, job)

    try:
        for index in range(workers):
            feed(index)
        while running:
            done, _ = concurrent.futures.wait(running, return_when="FIRST_COMPLETED")
            for future in done:
                index, job = running.pop(future)
                sid = job[0]
                try:
                    detail = future.result()
                except Exception as err:  # noqa: BLE001 - a worker crash must not stop the class
                    if isinstance(err, BrokenProcessPool):
                        slots[index].shutdown(wait=False, cancel_futures=True)
                        slots[index] = new_slot()
                    if sid not in retried:
                        retried[sid] = f"{type(err).__name__}: {clean_text(str(err), 200)}"
                        queue.append(job)
                        feed(index)
                        continue
                    detail = record.submission_error(sid, GRADER_FAILED, err)
                    detail["message"] += " (graded twice, in a fresh worker the second time)"
                details[sid] = detail
                if on_result is not None:
                    on_result(sid, detail)
                bar.update(1)
                feed(index)
    except BaseException:
        # Stopped (Ctrl-C, SIGTERM): no worker may finish a student after this.
        for slot in slots:
            slot.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        bar.close()
    for slot in slots:
        slot.shutdown(wait=True)
    return details


def summary_table(run: GradeRun) -> str:
    """The run's table (this run's students; all of them when it kept none) and what it did."""
    # Nothing reaches the instructor's terminal with a control character in it.
    kept = set(run.kept)
    shown = [r for r in run.rows if r["student_id"] not in kept] if kept else run.rows
    width = max([len("student")] + [len(clean_text(r["student_id"], 60)) for r in shown])
    lines = [f"{'student':<{width}}  {'score':>13}  {'status':<7}  {'time':>6}  message"]
    for r in shown:
        seconds = run.details.get(r["student_id"], {}).get("seconds", 0.0)
        lines.append(f"{clean_text(r['student_id'], 60):<{width}}  "
                     f"{r['score']:>6g}/{r['max_score']:<6g}  "
                     f"{r['status']:<7}  {seconds:>5.1f}s  {clean_text(r['message'], 70)}")
    graded = len(run.details)
    lines.append(f"{graded} submissions in {run.seconds:.1f} s "
                 f"({60 * graded / max(run.seconds, 1e-9):.1f}/min); "
                 f"isolation: {clean_text(run.isolation, 400)}; output in {run.out}")
    if kept:
        lines.append(f"{len(kept)} results kept from an earlier run (students not named by "
                     f"--student, or the same notebook, timestamp and settings; --regrade-all "
                     f"grades them again); grades.csv has {len(run.rows)} rows")
    stamps = [(r["student_id"], r["timestamp_problem"]) for r in run.results
              if r.get("timestamp_problem")]
    if stamps:
        lines.append(f"{len(stamps)} timestamps could not be read (graded as on time; listed "
                     f"in the summary): " + clean_text("; ".join(f"{s}: {why}"
                                                                for s, why in stamps[:10]), 800))
    missing = [r["student_id"] for r in run.rows if r["status"] == StudentStatus.MISSING]
    if missing:
        lines.append(f"{len(missing)} students handed nothing in (a `missing` row, score 0): "
                     + clean_text(", ".join(missing[:20]), 600)
                     + (f" and {len(missing) - 20} more" if len(missing) > 20 else ""))
    if run.off_roster:
        lines.append(f"warning: {len(run.off_roster)} submissions are from ids not among "
                     f"nbgrader's students (graded, and added to the gradebook; check for a "
                     f"typo): " + clean_text(", ".join(run.off_roster[:20]), 600))
    if run.retried:
        lines.append(f"{len(run.retried)} graded again after their worker died: "
                     + clean_text(", ".join(sorted(run.retried)), 400))
    lines.append(f"class summary (scores per task, checks failed most often, submissions that "
                 f"could not be graded): {run.out / 'summary.html'}")
    workers = sorted({w for d in run.details.values() for w in d.get("workers", [])})
    if workers:
        where = cluster.gpu_summary(run.details)
        lines.append(clean_text(f"graded on Dask workers {', '.join(workers)}"
                                + (f"; {where}" if where else ""), 2000))
    if run.interrupted is not None:
        name = signal.Signals(run.interrupted).name
        left = run.total - len(run.rows)
        lines.append(f"interrupted by {name}: {len(run.rows)} of {run.total} submissions are "
                     f"kept in {run.out} (results/, feedback/, grades.csv and summary.html of "
                     f"those); the gradebook was not written. Run the same command again to "
                     f"grade the other {left}.")
    return "\n".join(lines)
