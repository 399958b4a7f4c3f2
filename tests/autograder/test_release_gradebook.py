"""Releasing an assignment whose graded cells changed after submissions were graded: nbgrader
refuses, and the instructor gets one sentence saying why and what to do, not its traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.instructor.release import ReleaseError, release

REPO = Path(__file__).resolve().parents[2]
CELL = """```{{code-cell}} ipython3
---
nbgrader:
  cell_type: code
  grade: {grade}
  grade_id: {grade_id}
  locked: {locked}
  points: {points}
  schema_version: 3
  solution: {solution}
  task: false
---
{body}
```
"""


def _source(root: Path, tests: int, points: int = 1) -> None:
    cells = [CELL.format(grade="false", grade_id="answer", locked="false", solution="true", points=1,
                         body="### BEGIN SOLUTION\nx = 1\n### END SOLUTION")]
    cells += [CELL.format(grade="true", grade_id=f"test_{i}", locked="true", solution="false",
                          points=points, body="assert x == 1") for i in range(tests)]
    path = root / "solutions" / "tiny" / "tiny.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("---\njupytext:\n  text_representation:\n    extension: .md\n"
                    "    format_name: myst\nkernelspec:\n  display_name: Python 3\n"
                    "  language: python\n  name: python3\n---\n\n# Tiny\n\n" + "\n".join(cells))


@pytest.fixture
def course(tmp_path):
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()  # noqa: F821\n")
    _source(tmp_path, tests=2)
    return tmp_path


# nbgrader's own add_submission warns from inside SQLAlchemy's autoflush (its code, not ours).
@pytest.mark.filterwarnings("ignore:Object of type:sqlalchemy.exc.SAWarning")
def test_a_release_that_would_orphan_graded_submissions_says_why(course):
    from nbgrader.api import Gradebook

    db = f"sqlite:///{course / 'gradebook.db'}"
    release("tiny", root=course, db_url=db)
    with Gradebook(db) as gb:
        gb.add_student("s1")
        gb.add_submission("tiny", "s1")
    release("tiny", root=course, db_url=db)  # the same cells: allowed
    _source(course, tests=1)  # one graded cell fewer
    with pytest.raises(ReleaseError, match="holds submissions of tiny graded against") as err:
        release("tiny", root=course, db_url=db)
    assert "Traceback" not in str(err.value)
    # The remedy it names removes this assignment's grades alone: another assignment's stay.
    remedy = str(err.value).split("`")[1]
    assert remedy == f"nbgrader db assignment remove tiny --force --db {db}"
    with Gradebook(db) as gb:
        gb.add_assignment("other")
        gb.add_submission("other", "s1")
    bin_dir = Path(sys.executable).parent  # nbgrader runs alembic from PATH
    subprocess.run([sys.executable, "-m", *remedy.split()], check=True, capture_output=True,
                   cwd=course, env=dict(os.environ, PATH=f"{bin_dir}{os.pathsep}"
                                        f"{os.environ['PATH']}"), timeout=300)
    release("tiny", root=course, db_url=db)  # allowed now
    with Gradebook(db) as gb:
        assert [s.student.id for s in gb.assignment_submissions("other")] == ["s1"]
        assert gb.assignment_submissions("tiny") == []
    with Gradebook(db) as gb:
        gb.add_submission("tiny", "s1")
    _source(course, tests=2)  # changed again, graded again: the command-line refusal below

    env = dict(os.environ, PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, "-m", "autograder", "release", "--root", str(course)],
                          capture_output=True, text=True, env=env, cwd=course, timeout=300,
                          check=False)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert done.stderr.startswith("error: tiny was not released: the gradebook")


@pytest.mark.filterwarnings("ignore:Object of type:sqlalchemy.exc.SAWarning")
def test_a_release_that_changes_points_of_graded_cells_says_so(course, capsys):
    from nbgrader.api import Gradebook

    db = f"sqlite:///{course / 'gradebook.db'}"
    release("tiny", root=course, db_url=db)
    _source(course, tests=2, points=3)
    release("tiny", root=course, db_url=db)  # no submissions yet: nothing to regrade
    assert "changed" not in capsys.readouterr().err
    with Gradebook(db) as gb:
        gb.add_student("s1")
        gb.add_submission("tiny", "s1")
    _source(course, tests=2, points=2)
    release("tiny", root=course, db_url=db)
    err = capsys.readouterr().err
    assert "points of tiny changed" in err and "test_0: 3 -> 2; test_1: 3 -> 2" in err
    release("tiny", root=course, db_url=db)  # recorded now: said once
    assert "changed" not in capsys.readouterr().err


def _ps1_results(students: list[str]) -> tuple:
    """Results as ``grade`` hands them to the gradebook: every check passed but the GPU one,
    `not-run` on a machine without a GPU."""
    from autograder.grade.grading import load_assignment
    from autograder.grade.record import results_json

    spec = load_assignment("ps1_primitives", "autograder.assignments")
    results = []
    for student in students:
        tests = {c.id: {"name": c.id, "points": 0.0 if c.needs_gpu else float(c.points),
                        "max_points": float(c.points),
                        "status": "not-run" if c.needs_gpu else "passed", "message": ""}
                 for c in spec.checks}
        result = results_json(student, "ps1_primitives", list(tests.values()))
        results.append(dict(result, tests_by_check=tests))
    return spec, results


@pytest.mark.filterwarnings("ignore:Object of type:sqlalchemy.exc.SAWarning")
def test_the_gradebook_keeps_the_graders_maximum_through_a_release(tmp_path):
    """One maximum everywhere (issue 30): without a GPU, ps1 is out of 52 in grades.csv and
    Canvas; `nbgrader export` read 54 (the GPU check's 2 points that did not run). The gradebook
    now says 52, and a release (nbgrader writes the notebook's points over the gradebook's)
    neither calls that a change of points nor leaves 54 behind."""
    from nbgrader.api import Gradebook

    from autograder.grade import record
    from autograder.instructor.release import gpu_maxima_kept, points_changed, release_path
    from autograder.worker.normalise import read_release

    spec, results = _ps1_results(["s1", "s2"])
    assert {r["max_score"] for r in results} == {52.0}
    db = f"sqlite:///{tmp_path / 'gradebook.db'}"
    cells = read_release(release_path("ps1_primitives", root=REPO))
    failed = record.write_gradebook(db, spec, cells, results,
                                    {c.id: c.grade_cell for c in spec.checks})
    assert failed == {}
    with Gradebook(db) as gb:
        assert gb.find_assignment("ps1_primitives").max_score == 52.0
        assert gb.find_submission("ps1_primitives", "s1").score == 52.0
    assert points_changed("ps1_primitives", root=REPO, db_url=db) == []
    # test_lowering: 10 points in the notebook, 2 of them the GPU check's.
    assert gpu_maxima_kept("ps1_primitives", root=REPO, db_url=db) == {"test_lowering": 8.0}
    # A class graded where the GPU check ran is out of the notebook's 54.
    for r in results:
        r["tests_by_check"]["ps1.lowering.gpu"].update(status="passed", points=2.0)
    record.write_gradebook(db, spec, cells, results, {c.id: c.grade_cell for c in spec.checks})
    with Gradebook(db) as gb:
        assert gb.find_assignment("ps1_primitives").max_score == 54.0
    assert gpu_maxima_kept("ps1_primitives", root=REPO, db_url=db) == {}


@pytest.mark.filterwarnings("ignore:Object of type:sqlalchemy.exc.SAWarning")
def test_a_release_keeps_a_maximum_that_left_out_gpu_checks(course, capsys, monkeypatch):
    """nbgrader's release writes the notebook's points over the gradebook's maxima; where the
    grader left a GPU check out (test_0: 2 points, 0.5 of them a GPU check's), the release puts
    the grader's maximum back and calls it no change of points."""
    from nbgrader.api import Gradebook

    from autograder.instructor import release as release_module

    monkeypatch.setattr(release_module, "_gpu_points", lambda name: {"test_0": 0.5})
    _source(course, tests=2, points=2)
    db = f"sqlite:///{course / 'gradebook.db'}"
    release("tiny", root=course, db_url=db)
    with Gradebook(db) as gb:
        gb.add_student("s1")
        gb.add_submission("tiny", "s1")
        gb.update_or_create_grade_cell("test_0", "tiny", "tiny", max_score=1.5)  # as grade does
    release("tiny", root=course, db_url=db)
    assert "changed" not in capsys.readouterr().err
    with Gradebook(db) as gb:
        assert {c.name: c.max_score for c in gb.find_notebook("tiny", "tiny").grade_cells} == {
            "test_0": 1.5, "test_1": 2.0}


def test_release_all_says_what_it_did(course):
    """`make release` ran 68 s and printed nothing (issue 30): now a line per assignment as it
    starts, each notebook written, updated or unchanged, and where it all went."""
    from autograder.instructor.release import release_all

    said: list[str] = []
    db = f"sqlite:///{course / 'gradebook.db'}"
    release_all(root=course, db_url=db, report=said.append)
    assert said[0] == "releasing tiny: solutions/tiny/tiny.md -> nbgrader generate_assignment"
    assert said[1] == "  assignments/tiny/tiny.ipynb: written"
    assert said[-1].startswith("released 1 assignment into assignments/")
    said.clear()
    release_all(root=course, db_url=db, report=said.append)
    assert said[1] == "  assignments/tiny/tiny.ipynb: unchanged"


def test_release_names_the_assignments_to_release(course):
    """`release NAME ...` releases those alone (all of them took 2-3 minutes for one changed
    source); a name without a source stops it before anything is released."""
    from autograder.instructor.release import release_all

    other = course / "solutions" / "other" / "other.md"
    other.parent.mkdir()
    other.write_text((course / "solutions" / "tiny" / "tiny.md").read_text())
    db = f"sqlite:///{course / 'gradebook.db'}"
    with pytest.raises(ReleaseError, match=r"no source for 'ps9' \(.*: other, tiny\)"):
        release_all(root=course, db_url=db, only=["other", "ps9"])
    assert not (course / "assignments").exists()
    said: list[str] = []
    done = release_all(root=course, db_url=db, report=said.append, only=["other"])
    assert done == [course.resolve() / "assignments" / "other" / "other.ipynb"]
    assert not (course / "assignments" / "tiny").exists()
    assert said[0].startswith("releasing other:") and "tiny" not in "".join(said)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    command = subprocess.run([sys.executable, "-m", "autograder", "release", "tiny", "--root",
                              str(course)], capture_output=True, text=True, env=env, cwd=course,
                             timeout=300, check=False)
    assert command.returncode == 0, command.stderr[-2000:]
    assert "releasing tiny:" in command.stdout and "releasing other" not in command.stdout
    assert (course / "assignments" / "tiny" / "tiny.ipynb").is_file()
