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
    assert "Traceback" not in str(err.value) and "move the gradebook aside" in str(err.value)

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
