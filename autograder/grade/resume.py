"""Resuming a class run: which results in OUT can be kept, and writing files so that none is
ever half-written.

Each results/<student>.json is written as soon as that student is graded, by ``record.write_atomic``
(a temporary file in the same folder, then ``os.replace``), feedback page first, results file
last, then ``OUT/.resume/<student>.json``: a hash of everything its grade depends on (the
notebook's bytes, its timestamp.txt, the student's late policy, the release notebook, every
file of the assignment's package and of the grader's and the course library's code, the versions
of Python, JAX and NumPy, the course secret, the limits) and the student's grades.csv status and
message, which a rerun needs to rebuild the row. Both are kept beside the results file, not in it,
so that the results file stays the contract's (DESIGN.md: its five keys) and byte-identical for
the same code, whatever the notebook's language or layout.
A later ``grade`` keeps a result whose digest is what it would compute now and grades the rest;
``--regrade-all`` keeps none.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import sys
from dataclasses import asdict
from pathlib import Path

from autograder.grade import record
from autograder.limits import Limits
from autograder.results import GRADER_ERRORS, ClassResult, StudentStatus
from autograder.spec import Assignment
from autograder.worker import submission
from autograder.worker.normalise import NotebookError


def _plain(limits: dict) -> dict:
    """10 and 10.0 seconds are one limit (the command line gives floats, callers may not)."""
    return {k: float(v) if isinstance(v, int | float) and not isinstance(v, bool) else v
            for k, v in limits.items()}


# The grader's own code and data, and the course's library the students' code runs on.
_CODE = ("autograder", "jaxcourse")
_CODE_SUFFIXES = (".py", ".txt", ".json", ".yml", ".yaml", ".toml", ".cc", ".cu", ".h")
# What the checks' expectations and the students' code compute with.
_DISTRIBUTIONS = ("jax", "jaxlib", "numpy", "ml_dtypes", "nbformat")


def _tree(module: str) -> bytes:
    """Every source and data file of the package ``module``, by path: an assignment's checks
    are a few modules among many (its programs, its points, the judges, the cell policy and its
    allowlist, the sandbox), and a result graded before any of them changed must not stand
    after (a hostile notebook that earned points before a wall was mended would keep them)."""
    spec = importlib.util.find_spec(module)
    roots = list(spec.submodule_search_locations or []) if spec else []
    h = hashlib.sha256()
    for top in map(Path, roots):
        for path in sorted(p for p in top.rglob("*") if p.suffix in _CODE_SUFFIXES
                           and "__pycache__" not in p.parts and p.is_file()):
            h.update(str(path.relative_to(top)).encode() + b"\0")
            h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.digest()


def _versions() -> bytes:
    found = []
    for name in _DISTRIBUTIONS:
        try:
            found.append(f"{name}={importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            found.append(f"{name}=none")
    return "\n".join([sys.version, *found]).encode()


def run_digest(*, spec: Assignment, package: str, release_path: Path, secret: bytes,
               limits: Limits, lang: str) -> str:
    """What every student's grade of this run depends on, but their own files."""
    h = hashlib.sha256()
    for part in (spec.name.encode(), package.encode(), release_path.read_bytes(),
                 _tree(f"{package}.{spec.name}"), *map(_tree, _CODE), _versions(),
                 hashlib.sha256(b"autograder-resume\0" + secret).digest(),
                 json.dumps(_plain(asdict(limits)), sort_keys=True).encode(), lang.encode()):
        h.update(hashlib.sha256(part).digest())
    return h.hexdigest()


def student_digest(run: str, path: Path | None, late_policy: object) -> str | None:
    """The digest a result of the notebook at ``path`` must carry to be kept; None when there
    is no notebook to hash (such a submission is graded again: it costs nothing)."""
    if path is None:
        return None
    try:
        data = submission.read(path)
    except (NotebookError, OSError):
        return None
    try:
        # As late.lateness reads it (never a link, a FIFO or a device: the run would hang or
        # read without end before grading anyone).
        stamp = submission.read_beside(path.parent, "timestamp.txt")
        stamp = b"(none)" if stamp is None else stamp[:200]
    except NotebookError as err:
        stamp = f"(refused: {err})".encode()
    h = hashlib.sha256(run.encode())
    for part in (data, stamp, repr(late_policy).encode()):
        h.update(hashlib.sha256(part).digest())
    return h.hexdigest()


def kept(out: Path, spec: Assignment, student_id: str, digest: str | None) -> ClassResult | None:
    """The result on disk of ``student_id`` if it can stand: written by this grader for the same
    notebook and everything else its grade depends on, and not a failure of the grader's."""
    if digest is None:
        return None
    result = read(out, spec, student_id)
    if result is None or _stored(out, student_id).get("digest") != digest:
        return None
    if result["status"] == StudentStatus.ERROR and str(result["message"]).startswith(
            GRADER_ERRORS):
        return None
    return result


def _side_path(out: Path, student_id: str) -> Path:
    return out / ".resume" / f"{record.safe_filename(student_id)}.json"


def _stored(out: Path, student_id: str) -> dict:
    """The side file's {"digest", "status", "message"}; {} when missing or unreadable."""
    try:
        stored = json.loads(_side_path(out, student_id).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return stored if isinstance(stored, dict) else {}


def forget(out: Path, student_id: str) -> None:
    """Before a student's files are rewritten: none of them may be kept until all are."""
    _side_path(out, student_id).unlink(missing_ok=True)


def remember(out: Path, student_id: str, digest: str | None, status: str, message: str) -> None:
    """After a student's files are written: what a later run compares and the row it rebuilds
    (``digest`` None: nothing, the student is graded again)."""
    if digest is not None:
        _side_path(out, student_id).parent.mkdir(exist_ok=True)
        record.write_atomic(_side_path(out, student_id), json.dumps(
            {"digest": digest, "status": status, "message": message}, sort_keys=True) + "\n")


def read(out: Path, spec: Assignment, student_id: str) -> ClassResult | None:
    """``student_id``'s results file as a ClassResult (its checks by id, its row's status and
    message from the side file), None when it is missing or not one of this grader's for this
    assignment."""
    path = out / "results" / f"{record.safe_filename(student_id)}.json"
    try:
        result = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(result, dict) or result.get("student_id") != record.valid_text(student_id):
        return None
    tests = result.get("tests")
    row = _stored(out, student_id)
    if (result.get("assignment") != spec.name or not isinstance(tests, list)
            or len(tests) != len(spec.checks) or "status" not in row):
        return None
    return dict(result, status=row["status"], message=row.get("message", ""),
                tests_by_check={c.id: t for c, t in zip(spec.checks, tests)})
