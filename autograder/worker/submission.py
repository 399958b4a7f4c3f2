"""Reading a submitted notebook: a regular file, read without following links or blocking.

A submission is ``SUBMITTED/<student>/<assignment>/<notebook>.ipynb``. Each of the last three
components is opened relative to the one before with ``O_NOFOLLOW`` (the student's folder, the
assignment folder, the notebook), the notebook with ``O_NONBLOCK`` too, then checked with
``fstat`` on the open descriptor, so a symlink to another student's notebook, a FIFO, a device
or a directory named ``*.ipynb`` is refused with a clear message and nothing can stall the run.
The size is bounded before reading.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from autograder.worker.normalise import MAX_NOTEBOOK_BYTES, NotebookError

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))


def read(path: Path, *, limit: int = MAX_NOTEBOOK_BYTES, what: str = "the notebook") -> bytes:
    """The bytes of the submitted notebook at ``path``; :class:`NotebookError` saying why when
    it is not a regular file of at most ``limit`` bytes reached without symbolic links. Every
    other file of the submission folder the grader reads (``timestamp.txt``, the secret
    ``feedback`` copies) is read here too, ``what`` naming it: a student may put a link to the
    course's secret, a FIFO or ``/dev/zero`` there as well as a notebook."""
    path = Path(path)
    parts = [path.parent.parent, path.parent.name, path.name]
    fds: list[int] = []
    try:
        fds.append(_open(str(parts[0]), os.O_RDONLY | os.O_DIRECTORY, None, parts[0]))
        fds.append(_open(parts[1], os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, fds[-1],
                         path.parent))
        fd = _open(parts[2], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY, fds[-1],
                   path, "; submit the notebook itself" if what == "the notebook" else "")
        fds.append(fd)
        info = os.fstat(fd)
        for test, kind in _KINDS:
            if test(info.st_mode):
                raise NotebookError(f"{path.name} is {kind}, not a regular file")
        if not stat.S_ISREG(info.st_mode):
            raise NotebookError(f"{path.name} is not a regular file")
        if info.st_size > limit:
            raise NotebookError(f"{what} is larger than {_size(limit)}")
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:  # it grew while being read
                raise NotebookError(f"{what} is larger than {_size(limit)}")
        return b"".join(chunks)
    finally:
        for fd in fds:
            os.close(fd)


def _size(limit: int) -> str:
    return f"{limit >> 20} MiB" if limit >= 1 << 20 else f"{limit} bytes"


def _open(name: str, flags: int, dir_fd: int | None, shown: Path,
          hint: str = "; submit the notebook itself") -> int:
    try:
        return os.open(name, flags, dir_fd=dir_fd)
    except OSError as err:
        if err.errno == errno.ELOOP or (err.errno == errno.ENOTDIR and os.path.islink(shown)):
            raise NotebookError(f"{shown.name} is a symbolic link{hint}") from None
        if err.errno == errno.ENOTDIR:
            raise NotebookError(f"{shown.name} is not a directory") from None
        raise NotebookError(f"{shown.name} cannot be read ({os.strerror(err.errno)})") from None


# nbgrader writes a timestamp of some 30 bytes and a secret of 32; anything larger is not theirs.
BESIDE_LIMIT = 4096


def read_beside(folder: Path, name: str, *, limit: int = BESIDE_LIMIT) -> bytes | None:
    """The bytes of the file ``name`` in the submission folder ``folder`` (``read``'s rules),
    None when there is none; :class:`NotebookError` when it is there but not a small regular
    file reached without links."""
    try:
        os.lstat(Path(folder) / name)
    except FileNotFoundError:
        return None
    except OSError:
        pass  # read says why
    return read(Path(folder) / name, limit=limit, what=name)
