"""Submissions are regular files (autograder.worker.submission): links, FIFOs, devices, directories
and oversized files are refused with a clear message, and nothing blocks."""

from __future__ import annotations

import os
import stat

import pytest

from autograder.worker.normalise import NotebookError
from autograder.worker.submission import read


@pytest.fixture
def layout(tmp_path):
    def path(student: str) -> os.PathLike:
        folder = tmp_path / "submitted" / student / "ps"
        folder.mkdir(parents=True)
        return folder / "ps.ipynb"
    return path


def test_regular_file_is_read(layout):
    p = layout("alice")
    p.write_bytes(b'{"cells": []}')
    assert read(p) == b'{"cells": []}'


def test_symlink_to_another_students_notebook_is_refused(layout):
    other = layout("bob")
    other.write_text("{}")
    p = layout("mallory")
    p.symlink_to(other)
    with pytest.raises(NotebookError, match="ps.ipynb is a symbolic link"):
        read(p)


def test_symlinked_assignment_folder_is_refused(layout, tmp_path):
    other = layout("bob")
    other.write_text("{}")
    student = tmp_path / "submitted" / "mallory"
    student.mkdir()
    (student / "ps").symlink_to(other.parent)
    with pytest.raises(NotebookError, match="ps is a symbolic link"):
        read(student / "ps" / "ps.ipynb")


def test_fifo_is_refused_without_blocking(layout):
    p = layout("mallory")
    os.mkfifo(p)
    with pytest.raises(NotebookError, match=r"is a FIFO \(named pipe\), not a regular file"):
        read(p)


def test_directory_named_like_a_notebook_is_refused(layout):
    p = layout("mallory")
    p.mkdir()
    with pytest.raises(NotebookError, match="is a directory, not a regular file"):
        read(p)


def test_device_is_refused(layout):
    p = layout("mallory")
    try:
        os.mknod(p, stat.S_IFCHR | 0o600, os.makedev(1, 3))  # /dev/null's numbers
    except PermissionError:
        pytest.skip("creating a device node needs root")
    with pytest.raises(NotebookError, match="is a character device"):
        read(p)


def test_oversized_file_is_refused_before_reading(layout):
    p = layout("mallory")
    with open(p, "wb") as f:
        f.truncate(2 << 20)
    with pytest.raises(NotebookError, match="larger than 1 MiB"):
        read(p, limit=1 << 20)


def test_missing_file_says_so(layout):
    with pytest.raises(NotebookError, match="cannot be read"):
        read(layout("nobody"))
