"""Shared fixtures for the assignment tests: notebooks built from the sources, graded in-process
in a few subprocesses (each notebook registers its rules on its own primitive)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]
GRADER = Path(__file__).with_name("grade_inprocess.py")


def grade_notebooks(assignment: str, notebooks: list[Path], *, processes: int = 2,
                    seed: int = 0) -> dict[str, dict]:
    """notebook stem -> grade_inprocess.py's result, from ``processes`` parallel subprocesses."""
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    groups = [notebooks[i::processes] for i in range(processes) if notebooks[i::processes]]
    running = [
        subprocess.Popen(
            [sys.executable, str(GRADER), assignment, *map(str, group), "--seed", str(seed)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
        for group in groups
    ]
    results = {}
    for proc in running:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err[-3000:]
        results.update({Path(k).stem: v for k, v in json.loads(out).items()})
    return results


def write(nb: nbformat.NotebookNode, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path
