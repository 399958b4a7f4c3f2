"""One result type from the worker to every record (see autograder/README.md, "Results").

What a worker returns for one submission, what each check's entry holds, what results/<student>.json
and grades.csv hold: typed here once, with the two status vocabularies as enums. Standard library
only: the worker side (autograder.worker.runner, on a pool or Dask worker) and the main process
(autograder.grade.*, autograder.instructor.exports) both import it, and what crosses between them
is still plain data (pickled dicts; a ``StrEnum`` member pickles by name and compares, hashes,
formats and JSON-encodes as its string, so every output is byte for byte what the plain strings
gave).
"""

# No ``from __future__ import annotations``: Python 3.11's TypedDict reads NotRequired only
# from evaluated annotations (``__required_keys__``).
import enum
import re
from typing import Any, NotRequired, Protocol, TypedDict


class Status(enum.StrEnum):
    """A check's status (``CheckResult["status"]``), and a task's result on the feedback page."""

    PASSED = "passed"
    FAILED = "failed"  # ran, and the answer is wrong
    ERROR = "error"  # could not be graded (to be regraded): a time limit, a grader error
    NOT_RUN = "not-run"  # needs a GPU the grading machine lacks: left out of the maximum


# Checks that ran and did not pass: what gets a "Try it yourself" snippet, what the summary counts.
NOT_PASSED = frozenset({Status.FAILED, Status.ERROR})


class StudentStatus(enum.StrEnum):
    """A submission's status (``StudentResult["status"]``, grades.csv's ``status`` column)."""

    GRADED = "graded"
    ERROR = "error"  # no grade: the file, the worker or the records failed (``message`` says why)
    MISSING = "missing"  # nothing handed in: on the roster, or no <assignment>/ folder; score 0


# How the grader's own failures begin their messages (a submission's, or a check's, also behind
# runner.not_graded's "not graded: "): a submission with one of these on its row, or on every check
# that ran, failed for a grader-side reason, and `grade` exits GRADER_FAILED_EXIT when every
# submission did (autograder.grade.grading.failed_by_grader).
GRADER_FAILED = "the grader failed on this submission"  # its worker raised (grade.grading)
CLUSTER_FAILED = "the cluster could not grade this submission"  # its Dask task was lost
RECORD_FAILED = "the grader could not write this student's results or feedback"
GRADEBOOK_FAILED = "the gradebook row could not be written"
PREPARE_FAILED = "grader error while preparing this check"  # make_inputs or expect raised
GRADER_ERRORS = (GRADER_FAILED, CLUSTER_FAILED, RECORD_FAILED, GRADEBOOK_FAILED, PREPARE_FAILED)
GRADER_FAILED_EXIT = 3  # `grade`'s exit status then (2: a usage error; 0: the class was graded)


class CheckResult(TypedDict):
    """One check's entry. Built by ``check_result`` alone (the worker: autograder.worker.runner;
    the main process, for a check a worker never reported: autograder.grade.grading, through
    runner.not_graded and runner.gpu_not_run). Read by
    record (scores, gradebook), feedback, summary, reproduce, grading's row message and
    exports (Gradescope); written as an element of ``ResultsFile["tests"]``."""

    name: str  # "<check id>: <description>" (``check_name``)
    points: float
    max_points: float
    status: Status
    message: str


class StudentResult(TypedDict):
    """What a worker returns for one submission (autograder.worker.runner.grade_notebook, or
    autograder.grade.record.submission_error when no worker graded it), keyed by student id in
    the main process's ``details``. Read by autograder.grade.grading (rows, results JSON), cluster
    (``_merge`` of a CPU and a GPU task), feedback (cells, notes, message) and summary_table."""

    student_id: str
    status: StudentStatus
    message: str  # why the submission is an error; "" when graded
    cells: list[dict[str, Any]]  # the notebook as graded: asdict(normalise.Cell) + output, error
    notes: list[str]  # what the student is told about the notebook as a whole
    tests: dict[str, CheckResult]  # check id -> entry (grading fills in the checks it lacks)
    # Set by the worker once it reached the notebook (absent from record.submission_error):
    isolation: NotRequired[str]  # how the sandbox isolated the student's code
    check_seconds: NotRequired[float]
    seconds: NotRequired[float]
    skipped: NotRequired[dict[int, str]]  # cell position -> why it was not (fully) run
    # Set by autograder.grade.cluster:
    worker: NotRequired[str]  # the Dask worker of one task
    workers: NotRequired[list[str]]  # every Dask worker that graded this student
    gpu_worker: NotRequired[str]  # the Dask worker of the GPU checks, where split
    # Set by autograder.grade.grading in the main process, for feedback:
    tests_by_check: NotRequired[dict[str, CheckResult]]
    reproducers: NotRequired[dict[str, str]]  # check id -> "Try it yourself" snippet


class ResultsFile(TypedDict):
    """results/<student>.json. Built by autograder.grade.record.results_json (and
    autograder.grade.late.apply where a late policy applies), written by record.write_results;
    read by feedback, summary, resume.read (a rerun, ``grade --student``) and exports."""

    student_id: str
    assignment: str
    score: float
    max_score: float
    tests: list[CheckResult]  # in the assignment's check order
    # Only where the course has a late policy for the assignment (autograder.grade.late):
    raw_score: NotRequired[float]
    late_days: NotRequired[int]
    late_penalty: NotRequired[float]
    late_note: NotRequired[str]
    due: NotRequired[str]  # the student's due date (an extension's), ISO, UTC
    submitted_at: NotRequired[str]  # timestamp.txt's time, ISO, UTC (absent: unreadable)
    timestamp_problem: NotRequired[str]  # why timestamp.txt could not be read
    # Written by autograder.grade.grading since results are kept between runs
    # (autograder.grade.resume): the grades.csv row's status and message.
    status: NotRequired[StudentStatus]
    message: NotRequired[str]


class ClassResult(ResultsFile):
    """A ``ResultsFile`` with its checks by id, as the main process hands a class to
    record.write_gradebook and summary (built by grading.grade, resume.read and
    classdir.keep_old, whose fallback for a student without a results file has no
    ``assignment`` and no ``tests``)."""

    tests_by_check: dict[str, CheckResult]


class GradeRow(TypedDict):
    """A grades.csv row (record.CSV_FIELDS, then record.LATE_FIELDS under a late policy). Built
    by autograder.grade.grading.grade, written by record.write_grades_csv; read back (every
    field as text) by record.read_grades for classdir.keep_old and exports (Canvas, Gradescope)."""

    student_id: str
    assignment: str
    score: float
    max_score: float
    status: StudentStatus
    message: str
    raw_score: NotRequired[float]
    late_days: NotRequired[int]
    late_penalty: NotRequired[float]


class _Check(Protocol):
    """What ``check_result`` reads of an autograder.spec.Check (not imported: it needs numpy)."""

    id: str
    description: str
    points: float


def check_name(check: _Check) -> str:
    return f"{check.id}: {check.description}"


# Object addresses (`<function f at 0x7f...>`) differ between processes: dropped from what the
# worker says, so grading the same notebook twice gives byte-identical results.
OBJECT_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def check_result(check: _Check, points: float, status: Status, message: str, *,
                 strip_addresses: bool = False) -> CheckResult:
    """One check's entry, the only place one is built (the grader's wordings of the entries
    built in two places, autograder.worker.runner.not_graded and gpu_not_run, call it).
    ``strip_addresses``: the worker's messages (the student's objects print with their
    address); the main process's are kept as they are."""
    if strip_addresses:
        message = OBJECT_ADDRESS.sub("", message)
    return {"name": check_name(check), "points": points, "max_points": float(check.points),
            "status": status, "message": message}

