"""Run an unpacked Gradescope bundle as Gradescope does: ``run_autograder`` under bash, with
``AUTOGRADER_ROOT`` pointing at the folder that holds ``source/``, ``submission/`` and
``submission_metadata.json``, and without this checkout on ``PYTHONPATH`` (the bundle's own code
runs). Shared by tests/test_exports.py, tests/test_gradescope_bundle.py and
tests/test_gradescope_setup.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def run_autograder(autograder: Path, user_id: str, *, timeout: float,
                   python: str | None = sys.executable) -> dict:
    """Writes the submission's metadata for ``user_id``, runs the bundle with ``python`` (this
    one by default; None: the bundle's own ``source/.venv``, which its setup.sh makes), and
    returns its results.json; fails with the run's output if it exits non-zero."""
    (autograder / "submission_metadata.json").write_text(json.dumps(
        {"users": [{"id": user_id, "name": "A Student", "email": "a@example.org"}]}))
    env = {**os.environ, "AUTOGRADER_ROOT": str(autograder)}
    env.pop("PYTHONPATH", None)  # the bundle's own code, not this checkout's
    env.pop("PYTHON", None)
    if python:
        env["PYTHON"] = python
    run = subprocess.run(["bash", str(autograder / "source" / "run_autograder")], env=env,
                         capture_output=True, text=True, timeout=timeout, check=False)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    return json.loads((autograder / "results" / "results.json").read_text())
