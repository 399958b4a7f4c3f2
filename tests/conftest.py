"""Fixtures shared by test folders: the demo classes, graded once per session by the real
command, serve the end-to-end test and the Dask cluster test (which must match them)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# ps5's kernels: each distinct source is compiled once per session, in this process and in the
# subprocesses the tests start (the grader's sandbox clears its environment and compiles anew).
os.environ.setdefault("JAXCOURSE_KERNEL_CACHE", tempfile.mkdtemp(prefix="jaxcourse-kernels-"))


@pytest.fixture(scope="session")
def demo_out(tmp_path_factory) -> Path:
    """`python -m autograder demo --out OUT`: every assignment's demo class, graded locally."""
    out = tmp_path_factory.mktemp("demo")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    run = subprocess.run([sys.executable, "-m", "autograder", "demo", "--out", str(out)],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200,
                         check=False)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return out
