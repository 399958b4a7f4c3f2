"""One result type from the worker to every record (autograder/README.md, "Results"): what the
code builds has the keys autograder.results declares, the status enums write exactly the strings
they replace, and no module that makes or reads a result spells a status as a string literal."""

from __future__ import annotations

import ast
import csv
import io
import json
import pickle
import typing
from pathlib import Path
from types import SimpleNamespace

import pytest

from autograder import results
from autograder.grade import cluster, record
from autograder.grade.messages import CATALOGUES
from autograder.results import (
    CheckResult,
    ResultsFile,
    Status,
    StudentResult,
    StudentStatus,
    check_result,
)
from autograder.worker import runner
from autograder.worker.runner import gpu_not_run, not_graded

ROOT = Path(__file__).resolve().parents[2]


def _assert_typed(value: dict, typed: type) -> None:
    declared = set(typing.get_type_hints(typed))
    assert set(value) <= declared, f"undeclared in {typed.__name__}: {set(value) - declared}"
    missing = typed.__required_keys__ - set(value)
    assert not missing, f"{typed.__name__} lacks {missing}"


def _assert_entry(entry: dict) -> None:
    _assert_typed(entry, CheckResult)
    assert isinstance(entry["status"], Status)
    assert type(entry["points"]) is float and type(entry["max_points"]) is float


CHECKS = (SimpleNamespace(id="t.a", description="first", points=2, needs_gpu=False),
          SimpleNamespace(id="t.gpu", description="on a GPU", points=1, needs_gpu=True))


def test_the_declared_keys_are_the_ones_the_types_say():
    assert CheckResult.__required_keys__ == {"name", "points", "max_points", "status", "message"}
    assert set(record.CSV_FIELDS) | set(record.LATE_FIELDS) == set(
        typing.get_type_hints(results.GradeRow))
    assert results.GradeRow.__required_keys__ == set(record.CSV_FIELDS)
    assert {"student_id", "status", "message", "cells", "notes", "tests"} == \
        StudentResult.__required_keys__


def test_check_results_strip_addresses_only_where_asked():
    message = "got <function f at 0x7f00deadbeef>"
    kept = check_result(CHECKS[0], 0.0, Status.FAILED, message)
    stripped = check_result(CHECKS[0], 0.0, Status.FAILED, message, strip_addresses=True)
    assert kept == {"name": "t.a: first", "points": 0.0, "max_points": 2.0,
                    "status": "failed", "message": message}
    assert stripped["message"] == "got <function f>"
    for entry in (kept, stripped, not_graded(CHECKS[0], "why"), gpu_not_run(CHECKS[1])):
        _assert_entry(entry)
    assert not_graded(CHECKS[0], "x at 0x1")["message"] == "not graded: x at 0x1"
    assert gpu_not_run(CHECKS[1])["status"] == Status.NOT_RUN


def test_the_workers_error_result_is_a_student_result(monkeypatch):
    """runner.grade_notebook on a submission with no notebook: its error path, every check
    an entry (the GPU one not-run on a machine without a GPU)."""
    monkeypatch.setitem(runner._state, "assignment", SimpleNamespace(checks=CHECKS))
    monkeypatch.setitem(runner._state, "has_gpu", False)
    result = runner.grade_notebook("alice", None, "no notebook at 0x1234 submitted")
    _assert_typed(result, StudentResult)
    assert result["status"] is StudentStatus.ERROR
    assert set(result["tests"]) == {"t.a", "t.gpu"}
    for entry in result["tests"].values():
        _assert_entry(entry)
    assert result["tests"]["t.a"] == {
        "name": "t.a: first", "points": 0.0, "max_points": 2.0, "status": "error",
        "message": "not graded: no notebook submitted"}
    assert result["tests"]["t.gpu"]["status"] == "not-run"
    merged = cluster._merge({"cpu": dict(result, worker="tcp://a"),
                             "gpu": dict(result, worker="tcp://b")})
    _assert_typed(merged, StudentResult)


def test_submission_error_and_results_json_are_typed():
    failed = record.submission_error("bob", "the grader failed", RuntimeError("boom"))
    _assert_typed(failed, StudentResult)
    assert failed["status"] == "error" and isinstance(failed["status"], StudentStatus)
    tests = [check_result(CHECKS[0], 2.0, Status.PASSED, ""), gpu_not_run(CHECKS[1])]
    written = record.results_json("bob", "ps", tests)
    _assert_typed(written, ResultsFile)
    assert (written["score"], written["max_score"]) == (2.0, 2.0)
    late = {"late_days": 1, "late_penalty": 0.1, "late_note": "1 day late: 10% off"}
    from autograder.grade import late as late_module

    _assert_typed(late_module.apply(written, late), ResultsFile)


@pytest.mark.parametrize("member", [*Status, *StudentStatus])
def test_a_status_writes_as_its_string(member):
    plain = member.value
    assert type(plain) is str
    entry = {"status": member, "message": ""}
    assert json.dumps(entry, indent=2) == json.dumps({"status": plain, "message": ""}, indent=2)
    assert json.dumps(entry) == json.dumps({"status": plain, "message": ""})
    assert f"{member}" == str(member) == format(member) == "%s" % (member,) == plain  # noqa: UP031
    assert f"{member:<7}" == f"{plain:<7}"
    for row in ([member], [plain]):
        buffer = io.StringIO()
        csv.writer(buffer).writerow(row)
        assert buffer.getvalue() == f"{plain}\r\n"
    assert record.csv_field(member) == plain
    assert pickle.loads(pickle.dumps(member)) is member
    assert member == plain and hash(member) == hash(plain) and plain in {member}


def test_every_check_status_has_a_word_in_every_language():
    for lang, catalogue in CATALOGUES.items():
        missing = [s for s in Status if f"status.{s.value}" not in catalogue]
        assert not missing, (lang, missing)


# Where a result's status is made or read: none of them spells one as a string literal.
SCANNED = [
    "autograder/worker/runner.py",
    "autograder/grade/grading.py",
    "autograder/grade/cluster.py",
    "autograder/grade/record.py",
    "autograder/grade/feedback.py",
    "autograder/grade/summary.py",
    "autograder/grade/messages.py",
    "autograder/grade/reproduce.py",
    "autograder/grade/late.py",
    "autograder/grade/classdir.py",
    "autograder/instructor/exports.py",
]
STATUS_WORDS = {s.value for s in (*Status, *StudentStatus)}
_STATUS_KEYS = {"status", "result"}  # a check's status, a task's result (feedback.task_lines)
_ENTRY_BUILDERS = {"check_result", "_entry"}  # autograder.results and runner's wrapper


def _literals(node: ast.AST | None) -> list[ast.Constant]:
    """The status words ``node`` is, or holds (a tuple or set of them, either branch of an if)."""
    if isinstance(node, ast.Constant) and node.value in STATUS_WORDS:
        return [node]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [c for e in node.elts for c in _literals(e)]
    if isinstance(node, ast.IfExp):
        return _literals(node.body) + _literals(node.orelse)
    return []


def _is_status(node: ast.AST) -> bool:
    """``x["status"]``, ``x.get("status", ...)`` or a name ``status``."""
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and node.slice.value in _STATUS_KEYS
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return (node.func.attr == "get" and bool(node.args)
                and isinstance(node.args[0], ast.Constant) and node.args[0].value in _STATUS_KEYS)
    return isinstance(node, ast.Name) and node.id in _STATUS_KEYS


def status_literals(source: str) -> list[int]:
    """Lines where a status is a string literal: a dict's "status" value, a ``status=``
    argument or default, a check entry's status argument, ``.get("status", "...")``'s default,
    a comparison with a status, or an assignment to one."""
    found: list[ast.Constant] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and key.value in _STATUS_KEYS:
                    found += _literals(value)
        elif isinstance(node, ast.Call):
            found += [c for k in node.keywords if k.arg in _STATUS_KEYS for c in _literals(k.value)]
            if _is_status(node):
                found += [c for a in node.args[1:] for c in _literals(a)]
            name = getattr(node.func, "id", getattr(node.func, "attr", ""))
            if name in _ENTRY_BUILDERS and len(node.args) > 2:  # (check, points, status, ...)
                found += _literals(node.args[2])
        elif isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(_is_status(o) for o in operands):
                found += [c for o in operands for c in _literals(o)]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            positional = args.posonlyargs + args.args
            pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
            pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
            found += [c for a, d in pairs if a.arg in _STATUS_KEYS for c in _literals(d)]
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if _is_status(target):
                    found += _literals(node.value)
                elif isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                    found += [c for t, v in zip(target.elts, node.value.elts) if _is_status(t)
                              for c in _literals(v)]
    return sorted({c.lineno for c in found})


def test_the_scan_finds_status_literals():
    bad = '''
def f(row, t, status: str = "failed"):
    row.update(status="error")
    entry = {"name": "x", "status": "passed" if t else "not-run"}
    if t["status"] in ("failed", "error") or t.get("status", "not-run") != "not-run":
        status, message = "error", "why"
    main["status"], main["message"] = "graded", ""
    cell = {"output": "", "error": "not completed"}  # a cell's error text: no status
    results["tests"][c] = _entry(c, 0.0, "error", "not graded")
    return status == "graded"
'''
    assert status_literals(bad) == [2, 3, 4, 5, 6, 7, 9, 10]


@pytest.mark.parametrize("path", SCANNED)
def test_no_status_string_literal_in_the_result_modules(path):
    lines = status_literals((ROOT / path).read_text(encoding="utf-8"))
    assert not lines, f"{path}: status string literals on lines {lines} (use autograder.results)"
