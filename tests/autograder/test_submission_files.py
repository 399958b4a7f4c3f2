"""Submissions are regular files (autograder.worker.submission): links, FIFOs, devices, directories
and oversized files are refused with a clear message, and nothing blocks; so are the files beside
the notebook that the grader reads."""

from __future__ import annotations

import json
import os
import stat

import pytest

from autograder.grade import late, resume
from autograder.worker.normalise import NotebookError
from autograder.worker.submission import BESIDE_LIMIT, read, read_beside


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


# The other files of a submission folder the grader reads (timestamp.txt; submission_secret.txt
# for `feedback`) are the student's too: a link to the course's secret, a FIFO or /dev/zero
# there would be shown back in the feedback, stall the run or read without end.
def test_files_beside_the_notebook_are_read_by_the_same_rules(layout, tmp_path):
    folder = layout("mallory").parent
    assert read_beside(folder, "timestamp.txt") is None
    (folder / "timestamp.txt").write_text("2026-11-20 12:00:00 UTC")
    assert read_beside(folder, "timestamp.txt") == b"2026-11-20 12:00:00 UTC"
    secret = tmp_path / ".autograder_secret"
    secret.write_text("SECRET-of-the-course")
    (folder / "timestamp.txt").unlink()
    (folder / "timestamp.txt").symlink_to(secret)
    with pytest.raises(NotebookError, match="^timestamp.txt is a symbolic link$"):
        read_beside(folder, "timestamp.txt")
    (folder / "timestamp.txt").unlink()
    os.mkfifo(folder / "timestamp.txt")
    with pytest.raises(NotebookError, match="is a FIFO"):
        read_beside(folder, "timestamp.txt")
    (folder / "timestamp.txt").unlink()
    (folder / "timestamp.txt").write_bytes(b"0" * (BESIDE_LIMIT + 1))
    with pytest.raises(NotebookError, match=f"timestamp.txt is larger than {BESIDE_LIMIT} bytes"):
        read_beside(folder, "timestamp.txt")


@pytest.mark.parametrize("kind", ["secret", "fifo", "zero"])
def test_a_hostile_timestamp_is_unreadable_not_shown_and_never_blocks(layout, tmp_path, kind):
    folder = layout("mallory").parent
    (folder / "ps.ipynb").write_text("{}")
    stamp = folder / "timestamp.txt"
    if kind == "secret":
        (tmp_path / ".autograder_secret").write_text("SECRET-of-the-course")
        stamp.symlink_to("../../../.autograder_secret")
    elif kind == "fifo":
        os.mkfifo(stamp)
    else:
        stamp.symlink_to("/dev/zero")
    policy = late.Policy(late.parse_time("2030-01-01 00:00"), 3, 0.1)
    found = late.lateness(policy, folder)
    assert found["late_penalty"] == 0.0 and "unreadable" in found["late_note"]
    assert "SECRET" not in json.dumps(found)
    assert resume.student_digest("run", folder / "ps.ipynb", policy) is not None
