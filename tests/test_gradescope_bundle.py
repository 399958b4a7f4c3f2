"""The Gradescope bundle: what it carries (checked file by file) and which notebook it grades
(``stage_submission``). The bundle run end to end, as Gradescope runs it with a checkpoint folder
beside the notebook, is tests/test_exports.py's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autograder.instructor.gradescope import bundle_files, stage_submission
from autograder.instructor.release import names

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENTS = names(root=ROOT)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_the_bundle_carries_one_assignment_and_no_solution(assignment):
    carried = {name for _, name in bundle_files(assignment, ROOT)}
    own = f"autograder/assignments/{assignment}/"
    assert {own + m for m in ("checks.py", "probes.py", "reproduce.py")} <= carried
    assert f"assignments/{assignment}/{assignment}.ipynb" in carried
    assert {"autograder/worker/runner.py", "autograder/student/sandbox.py", "requirements.txt",
            "constraints.txt", "pyproject.toml"} <= carried
    for name in carried:
        assert not name.startswith(("solutions/", "tests/", "book/", ".git")), name
        assert not name.endswith("mutants.py"), name  # wrong solutions, correct alternatives
        assert name not in ("autograder/instructor/classroom.py", "autograder/instructor/demo.py")
        for other in set(ASSIGNMENTS) - {assignment}:
            assert other not in name, name


def _notebook(path: Path, marker: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"cells": [], "metadata": {"marker": marker}}))
    return path


def _staged(tmp_path: Path, files: dict[str, str]) -> dict[str, str]:
    upload, folder = tmp_path / "submission", tmp_path / "staged"
    for name, marker in files.items():
        _notebook(upload / name, marker)
    stage_submission(upload, folder, "ps1_primitives.ipynb")
    return {p.name: json.loads(p.read_text())["metadata"]["marker"] for p in folder.iterdir()}


@pytest.mark.parametrize(("files", "staged"), [
    # JupyterLab's checkpoint sorts first and used to win (a 52/52 notebook graded 0/52).
    ({".ipynb_checkpoints/ps1_primitives-checkpoint.ipynb": "old",
      "ps1_primitives.ipynb": "real"}, {"ps1_primitives.ipynb": "real"}),
    ({".ipynb_checkpoints/ps1_primitives-checkpoint.ipynb": "old"}, {}),
    ({"my_work.ipynb": "renamed"}, {"my_work.ipynb": "renamed"}),
    ({"upload/ps1_primitives.ipynb": "zipped", "__MACOSX/ps1_primitives.ipynb": "junk"},
     {"ps1_primitives.ipynb": "zipped"}),
    ({"ps1_primitives.ipynb": "top", "old/ps1_primitives.ipynb": "nested",
      "scratch.ipynb": "other"}, {"ps1_primitives.ipynb": "top"}),
    # Several and none named right: the local rule makes that an `error` with its message.
    ({"a.ipynb": "a", "b.ipynb": "b"}, {"a.ipynb": "a", "b.ipynb": "b"}),
])
def test_the_notebook_is_chosen_as_the_local_grader_chooses(tmp_path, files, staged):
    assert _staged(tmp_path, files) == staged
