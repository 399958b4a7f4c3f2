"""The sandbox keeps visible every folder the interpreter's links pass through
(runner.python_paths): a virtualenv made from a linked Python (a shim folder, /opt/.../bin) would
otherwise start its ps5 kernel processes from a ``bin/python`` that leads nowhere inside the
sandbox (FileNotFoundError on every kernel check, as a clone set up with only such a Python on
the PATH showed)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from autograder.worker import runner


def test_every_folder_on_the_interpreters_links_is_kept(tmp_path, monkeypatch):
    shim, venv_bin = tmp_path / "shim", tmp_path / "venv" / "bin"
    shim.mkdir()
    venv_bin.mkdir(parents=True)
    real = Path(os.path.realpath(sys.executable))
    (shim / "python3").symlink_to(real)
    (venv_bin / "python").symlink_to("../../shim/python3")  # relative, as venv may write it
    monkeypatch.setattr(sys, "executable", str(venv_bin / "python"))
    kept = runner.python_paths()
    for folder in (shim, real.parent.resolve(), Path(sys.prefix).resolve(),
                   Path(sys.base_prefix).resolve()):
        assert str(folder) in kept, (folder, kept)
    assert str(tmp_path) not in kept  # the folders themselves, nothing above them


def test_a_loop_of_links_ends(tmp_path, monkeypatch):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    monkeypatch.setattr(sys, "executable", str(tmp_path / "a"))
    assert str(tmp_path) in runner.python_paths()
