"""The Gradescope bundle: what it carries (checked file by file) and which notebook it grades.

Run as Gradescope runs it: the bundle unzipped into ``autograder/source``, the student's upload
in ``autograder/submission`` with the ``.ipynb_checkpoints`` folder JupyterLab leaves beside a
notebook, and ``run_autograder`` writing ``autograder/results/results.json``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.gradescope import build_bundle, bundle_files, stage_submission, unpack
from autograder.release import names

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENTS = names(root=ROOT)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_the_bundle_carries_one_assignment_and_no_solution(assignment):
    carried = {name for _, name in bundle_files(assignment, ROOT)}
    own = f"autograder/assignments/{assignment}/"
    assert {own + m for m in ("checks.py", "probes.py", "reproduce.py")} <= carried
    assert f"assignments/{assignment}/{assignment}.ipynb" in carried
    assert {"autograder/runner.py", "autograder/sandbox.py", "requirements.txt",
            "constraints.txt", "pyproject.toml"} <= carried
    for name in carried:
        assert not name.startswith(("solutions/", "tests/", "book/", ".git")), name
        assert not name.endswith("mutants.py"), name  # wrong solutions, correct alternatives
        assert name not in ("autograder/classroom.py", "autograder/demo.py")
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


def test_run_autograder_grades_the_notebook_not_its_checkpoint(demo_out, tmp_path):
    name = ASSIGNMENTS[0]
    bundle = build_bundle(assignment=name, root=ROOT, dest=tmp_path / "bundle.zip")
    autograder = tmp_path / "autograder"
    unpack(bundle, autograder / "source")
    submitted = demo_out / name / "submitted"
    upload = autograder / "submission"
    checkpoints = upload / ".ipynb_checkpoints"
    checkpoints.mkdir(parents=True)
    # The checkpoint is the untouched notebook (0 points); the real file is the partial one.
    untouched = next((submitted / "untouched" / name).glob("*.ipynb"))
    (checkpoints / f"{name}-checkpoint.ipynb").write_bytes(untouched.read_bytes())
    partial = next((submitted / "partial" / name).glob("*.ipynb"))
    (upload / partial.name).write_bytes(partial.read_bytes())
    (autograder / "submission_metadata.json").write_text(json.dumps(
        {"users": [{"id": "partial", "name": "A Student", "email": "a@example.org"}]}))
    env = {**os.environ, "AUTOGRADER_ROOT": str(autograder), "PYTHON": sys.executable}
    env.pop("PYTHONPATH", None)  # the bundle's own code, not this checkout's
    run = subprocess.run(["bash", str(autograder / "source" / "run_autograder")], env=env,
                         capture_output=True, text=True, timeout=900, check=False)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    data = json.loads((autograder / "results" / "results.json").read_text())
    mine = json.loads((demo_out / name / "graded" / "results" / "partial.json").read_text())
    assert data["score"] == mine["score"] > 0
