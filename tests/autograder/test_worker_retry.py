"""A pool worker that dies takes only the student it was grading: that student is graded once
more in a fresh worker (an ``error`` only if that fails too) and the summary says so. Progress
without a terminal is a plain line every ten notebooks."""

from __future__ import annotations

import io
import json

from engine_helpers import TOY_ROOT
from toy_notebooks import FULL, submission

from autograder.grade import grading, progress
from autograder.limits import Limits
from autograder.results import GRADER_FAILED


def test_a_dead_worker_costs_one_retry_not_an_error(tmp_path, monkeypatch):
    for student in ("alice", "bob"):
        folder = tmp_path / "submitted" / student / "toy"
        folder.mkdir(parents=True)
        (folder / "toy.ipynb").write_text(json.dumps(submission(FULL)))
    # Three deaths, one worker: alice's worker dies, then bob's, then alice's again (an error
    # after her retry); bob's retry grades in full.
    monkeypatch.setenv("TOYDIES_COUNT", str(tmp_path / "deaths"))
    monkeypatch.setenv("TOYDIES_DEATHS", "3")
    out = tmp_path / "out"
    run = grading.grade(assignment="toy", submitted=tmp_path / "submitted", out=out, workers=1,
                        db_url=f"sqlite:///{tmp_path / 'gb.db'}", root=TOY_ROOT,
                        package="toydies", seed="retry", progress=False, quiet=True,
                        limits=Limits(cell_timeout_s=10, cell_policy=False))
    assert (tmp_path / "deaths").read_text() == "3"
    rows = {r["student_id"]: r for r in run.rows}
    assert rows["bob"]["status"] == "graded" and rows["bob"]["score"] == 5.0
    assert rows["alice"]["status"] == "error"
    assert rows["alice"]["message"].startswith(GRADER_FAILED)
    assert "graded twice" in rows["alice"]["message"]
    assert set(run.retried) == {"alice", "bob"}
    assert "BrokenProcessPool" in run.retried["bob"]
    page = (out / "summary.html").read_text()
    retried = page.split("Graded again after their worker died")[1]
    assert "alice" in retried and "bob" in retried
    assert "2 graded again after their worker died: alice, bob" in grading.summary_table(run)
    # A grader failure is never kept: the next run grades alice again.
    run = grading.grade(assignment="toy", submitted=tmp_path / "submitted", out=out, workers=1,
                        db_url=f"sqlite:///{tmp_path / 'gb.db'}", root=TOY_ROOT,
                        package="toydies", seed="retry", progress=False, quiet=True,
                        limits=Limits(cell_timeout_s=10, cell_policy=False))
    assert run.kept == ["bob"] and set(run.details) == {"alice"}
    assert {r["student_id"]: r["score"] for r in run.rows} == {"alice": 5.0, "bob": 5.0}


class _Log(io.StringIO):
    def isatty(self) -> bool:
        return False


def test_progress_without_a_terminal_is_a_line_every_ten(monkeypatch):
    now = [0.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: now[0])
    log = _Log()
    bar = progress.Progress(25, enabled=True, stream=log)
    for _ in range(25):
        now[0] += 6  # six seconds a notebook
        bar.update()
    bar.close()
    assert log.getvalue().splitlines() == [
        "grading: 10/25 nb in 1:00, about 1:30 left",
        "grading: 20/25 nb in 2:00, about 0:30 left",
        "grading: 25/25 nb in 2:30"]
    quiet = _Log()
    bar = progress.Progress(25, enabled=False, stream=quiet)
    bar.update(25)
    assert quiet.getvalue() == ""


def test_progress_on_a_terminal_is_tqdms_bar():
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    bar = progress.Progress(3, enabled=True, stream=Tty())
    assert bar.bar is not None and not bar.lines
    bar.close()
