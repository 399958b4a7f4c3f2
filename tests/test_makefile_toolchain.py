"""Which toolchain ``make`` sets up, by the Pythons that run on the PATH (the Makefile's top).

``make -n -B setup`` (print the set-up's commands, run none) with a PATH of fake interpreters
(tests/test_gradescope_setup.py's: each says its version, or does not run, as pyenv's shim of a
version pyenv has not chosen) names the interpreter that would make the venv. A name on the PATH
that does not run is passed over; with none that runs, the set-up stops with a message saying
what to install.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from test_gradescope_setup import BROKEN, FAKE_PYTHON

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ("bash", "sed", "test")


def _dry_run(tmp_path: Path, pythons: dict[str, str | None], *args: str,
             pyenv: str | None = None, venv: str | None = None) -> str:
    """``pyenv``: the text of a fake ``pyenv`` command; without it, none is on the PATH.
    ``venv``: the version a fake ``.venv/bin/python`` of the checkout says it is."""
    folder = tmp_path / "bin"
    folder.mkdir(parents=True)
    for tool in TOOLS:
        if shutil.which(tool):
            (folder / tool).symlink_to(shutil.which(tool))
    for name, version in {**pythons, **({"pyenv": pyenv} if pyenv else {})}.items():
        script = folder / name
        text = pyenv if name == "pyenv" else None
        script.write_text(text or (FAKE_PYTHON.format(version=version, ensurepip=0) if version
                                   else BROKEN))
        script.chmod(0o755)
    env = {**os.environ, "PATH": str(folder), "FAKE_LOG": str(tmp_path / "python.log")}
    for name in ("PYTHON", "TOOLCHAIN", "MAKEFLAGS", "MAKELEVEL"):
        env.pop(name, None)
    # A checkout of its own (links to what the set-up reads), so that the venvs of this one, of
    # whichever toolchain, take no part: the Makefile stops where .venv holds another Python.
    repo = tmp_path / "repo"
    repo.mkdir()
    for name in ("Makefile", "requirements.txt", "constraints.txt", "constraints-py312.txt",
                 "pyproject.toml", "scripts"):
        (repo / name).symlink_to(ROOT / name)
    if venv:
        (repo / ".venv" / "bin").mkdir(parents=True)
        (repo / ".venv" / "bin" / "python").write_text(FAKE_PYTHON.format(version=venv, ensurepip=0))
        (repo / ".venv" / "bin" / "python").chmod(0o755)
    run = subprocess.run([shutil.which("make"), "-n", "-B", "setup", *args], cwd=repo, env=env,
                         capture_output=True, text=True, timeout=60, check=False)
    return run.stdout + run.stderr


def _venv_line(output: str) -> str:
    return next(line for line in output.splitlines() if " -m venv " in line)


@pytest.mark.parametrize("pythons, interpreter, venv", [
    # Both run: the primary toolchain, today's Python and JAX.
    ({"python3.11": "3.11", "python3.12": "3.12"}, "python3.12", ".venv"),
    # pyenv: a shim for 3.11 that does not run, 3.12 chosen.
    ({"python3.11": None, "python3.12": "3.12", "python3": "3.12"}, "python3.12", ".venv"),
    # Ubuntu 24.04: python3 is 3.12, no python3.12 name of its own here.
    ({"python3": "3.12"}, "python3", ".venv"),
    ({"python3.11": None, "python3.12": None, "python3.13": "3.13"}, "python3.13", ".venv"),
    # A python3.11 name that is another version is not the legacy toolchain's Python.
    ({"python3.11": "3.10", "python3": "3.12"}, "python3", ".venv"),
    # Only Python 3.11 runs: the legacy toolchain, JAX 0.10.2.
    ({"python3.11": "3.11", "python3": "3.11"}, "python3.11", ".venv311"),
], ids=["both", "pyenv-shim-of-3.11", "python3-is-3.12", "only-3.13-runs", "misnamed",
        "only-3.11-runs"])
def test_the_first_python_that_runs_makes_the_venv(tmp_path, pythons, interpreter, venv):
    line = _venv_line(_dry_run(tmp_path, pythons))
    assert line == (f"test -x {venv}/bin/python || {tmp_path / 'bin' / interpreter} "
                    f"-m venv {venv}"), line


def test_no_python_that_runs_stops_with_what_to_install(tmp_path):
    output = _dry_run(tmp_path, {"python3.11": None, "python3.12": None, "python3": "3.10"})
    assert "no Python 3.12 or later (python3.12, python3.13 or python3) runs on this PATH" in output
    assert "make PYTHON=/path/to/python" in output


def test_a_named_toolchain_takes_its_own_python(tmp_path):
    pythons = {"python3.11": "3.11", "python3.12": "3.12"}
    line = _venv_line(_dry_run(tmp_path, pythons, "TOOLCHAIN=legacy"))
    assert line == f"test -x .venv311/bin/python || {tmp_path / 'bin' / 'python3.11'} -m venv .venv311"
    line = _venv_line(_dry_run(tmp_path / "again", pythons, "PYTHON=python3.11"))
    assert line == "test -x .venv311/bin/python || python3.11 -m venv .venv311"


def test_today_s_toolchain_finds_a_pyenv_version_pyenv_has_not_chosen(tmp_path):
    # A CI machine as this project's: pyenv chose 3.11, so the python3.12 shim does not run,
    # but 3.12 is installed beside it. `make` takes that version's own python.
    root = tmp_path / "pyenv"
    own = root / "versions" / "3.12.1" / "bin" / "python3.12"
    own.parent.mkdir(parents=True)
    own.write_text(FAKE_PYTHON.format(version="3.12", ensurepip=0))
    own.chmod(0o755)
    pythons = {"python3.11": "3.11", "python3.12": None, "python3": "3.11"}
    pyenv = f'#!/bin/bash\n[ "$1" = root ] && echo {root}\n'
    assert _venv_line(_dry_run(tmp_path, pythons, pyenv=pyenv)) == (
        f"test -x .venv/bin/python || {own} -m venv .venv")
    # `make TOOLCHAIN=legacy` takes the python3.11 that pyenv chose.
    assert _venv_line(_dry_run(tmp_path / "again", pythons, "TOOLCHAIN=legacy", pyenv=pyenv)
                      ).endswith("python3.11 -m venv .venv311")


def test_a_venv_of_the_other_toolchain_stops_make_with_what_to_do(tmp_path):
    # A checkout set up before the primary toolchain became 3.12's: its .venv holds 3.11.
    pythons = {"python3.11": "3.11", "python3.12": "3.12"}
    output = _dry_run(tmp_path, pythons, venv="3.11")
    assert ".venv holds Python 3.11, not the current toolchain's" in output, output
    assert "rm -rf .venv" in output and " -m venv " not in output
    # Its own toolchain's venv is taken as it is.
    assert "holds Python" not in _dry_run(tmp_path / "again", pythons, venv="3.12")
