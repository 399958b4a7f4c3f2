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


def read(path: Path, *, limit: int = MAX_NOTEBOOK_BYTES) -> bytes:
    """The bytes of the submitted notebook at ``path``; :class:`NotebookError` saying why when
    it is not a regular file of at most ``limit`` bytes reached without symbolic links."""
    path = Path(path)
    parts = [path.parent.parent, path.parent.name, path.name]
    fds: list[int] = []
    try:
        fds.append(_open(str(parts[0]), os.O_RDONLY | os.O_DIRECTORY, None, parts[0]))
        fds.append(_open(parts[1], os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, fds[-1],
                         path.parent))
        fd = _open(parts[2], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY, fds[-1],
                   path)
        fds.append(fd)
        info = os.fstat(fd)
        for test, kind in _KINDS:
            if test(info.st_mode):
                raise NotebookError(f"{path.name} is {kind}, not a regular file")
        if not stat.S_ISREG(info.st_mode):
            raise NotebookError(f"{path.name} is not a regular file")
        if info.st_size > limit:
            raise NotebookError(f"the notebook is larger than {limit >> 20} MiB")
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:  # it grew while being read
                raise NotebookError(f"the notebook is larger than {limit >> 20} MiB")
        return b"".join(chunks)
    finally:
        for fd in fds:
            os.close(fd)


def _open(name: str, flags: int, dir_fd: int | None, shown: Path) -> int:
    try:
        return os.open(name, flags, dir_fd=dir_fd)
    except OSError as err:
        if err.errno == errno.ELOOP or (err.errno == errno.ENOTDIR and os.path.islink(shown)):
            raise NotebookError(f"{shown.name} is a symbolic link; submit the notebook itself"
                                ) from None
        if err.errno == errno.ENOTDIR:
            raise NotebookError(f"{shown.name} is not a directory") from None
        raise NotebookError(f"{shown.name} cannot be read ({os.strerror(err.errno)})") from None
