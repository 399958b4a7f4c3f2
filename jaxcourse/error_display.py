"""How the book shows an exception: its type and message, and only the frames a reader wrote.

The book build starts each chapter's kernel with :mod:`jaxcourse.book_kernel`, which calls
:func:`install`. From then on an exception that escapes a cell is shown as::

    Traceback (most recent call last):
      Cell, line 3
        square_add(2.0, 10.0)
      File jaxcourse/multiply_add.py, line 37, in square_add
        return multiply_add(a, a, b)
      File jaxcourse/multiply_add.py, line 31, in multiply_add
        return multiply_add_p.bind(x, y, z)
      [4 frames in jax]
    NotImplementedError: Evaluation rule for 'multiply_add' not implemented

Frames of the chapter's own cells and of this repository are shown with paths relative to it;
runs of frames inside installed packages (JAX's internals) are folded into one line naming the
package. No absolute path of the build machine reaches the page, and memory addresses in
reprs (``<function <lambda> at 0x7f...>``) are dropped, so the text is the same on every build.
"""

from __future__ import annotations

import linecache
import re
import sys
import traceback
from pathlib import Path
from types import TracebackType

REPO = Path(__file__).resolve().parents[1]
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
# Absolute paths inside an installed package: ".../site-packages/jax/_src/core.py".
_PACKAGE_PATH = re.compile(r"(?:/[^\s'\"():,]*)?/(?:site|dist)-packages/([^\s'\"():,]+)")
# The files ipykernel compiles each cell into: "/tmp/ipykernel_123/456789.py".
_CELL_PATH = re.compile(r"/[^\s'\"():,]*/ipykernel_\d+/\d+\.py")
# A traceback that JAX pastes into a message (the hash error of a static argument), down to the
# last line, which names the error it reports.
_EMBEDDED_TRACEBACK = re.compile(r"Traceback \(most recent call last\):\n(?:[ \t]+.*\n)+")
# A message longer than this is cut, with a note saying how much was left out.
MAX_MESSAGE_CHARS = 1200


def _package_of(filename: str) -> str | None:
    """The installed package a file belongs to, or None for a file of the reader's own."""
    parts = Path(filename).parts
    for marker in ("site-packages", "dist-packages"):
        if marker in parts:
            rest = parts[parts.index(marker) + 1 :]
            return rest[0].removesuffix(".py") if rest else marker
    if filename.startswith(("<frozen ", sys.base_prefix)):
        return "python"
    return None


def _is_cell(filename: str) -> bool:
    return bool(_CELL_PATH.fullmatch(filename)) or filename.startswith("<ipython-input")


def _shown_path(filename: str) -> str:
    path = Path(filename)
    try:
        return str(path.resolve().relative_to(REPO))
    except ValueError:
        return path.name


def clean_text(text: str) -> str:
    """A message or repr with build paths made relative and memory addresses dropped."""
    text = _EMBEDDED_TRACEBACK.sub("", text)
    text = _CELL_PATH.sub("<cell>", text)
    text = _PACKAGE_PATH.sub(lambda m: m.group(1), text)
    text = text.replace(str(REPO) + "/", "")
    return _ADDRESS.sub("", text)


def _message(value: BaseException) -> str:
    text = str(value).rstrip()
    for note in getattr(value, "__notes__", None) or ():
        text += f"\n{note}"
    text = clean_text(text)
    if len(text) > MAX_MESSAGE_CHARS:
        cut = text.rfind("\n", 0, MAX_MESSAGE_CHARS)
        cut = cut if cut > MAX_MESSAGE_CHARS // 2 else MAX_MESSAGE_CHARS
        text = f"{text[:cut]}\n[... {len(text) - cut} more characters of the message ...]"
    return text


def frame_lines(tb: TracebackType | None, current_cell: str | None = None) -> list[str]:
    """The traceback's frames as text: the reader's own in full, installed packages folded.

    ``current_cell`` is the file of the cell that raised (its frames say "Cell"; those of an
    earlier cell, "Earlier cell"). Frames that ask to be hidden (``__tracebackhide__``, as
    IPython honours it) are left out.
    """
    lines: list[str] = []
    folded: dict[str, int] = {}

    def flush() -> None:
        if folded:
            counts = ", ".join(
                f"{n} frame{'s' if n > 1 else ''} in {package}" for package, n in folded.items()
            )
            lines.append(f"  [{counts}]")
            folded.clear()

    for frame, lineno in traceback.walk_tb(tb):
        code = frame.f_code
        filename = code.co_filename
        package = _package_of(filename)
        if package is not None:
            folded[package] = folded.get(package, 0) + 1
            continue
        if frame.f_locals.get("__tracebackhide__"):
            continue
        flush()
        if _is_cell(filename):
            cell = "Cell" if current_cell in (None, filename) else "Earlier cell"
            where = f"{cell}, line {lineno}"
            if code.co_name != "<module>":
                where += f", in {code.co_name}"
        else:
            where = f"File {_shown_path(filename)}, line {lineno}, in {code.co_name}"
        lines.append(f"  {where}")
        source = linecache.getline(filename, lineno, frame.f_globals).strip()
        if source:
            lines.append(f"    {source}")
    flush()
    return lines


def format_exception(
    etype: type[BaseException], value: BaseException, tb, current_cell: str | None = None
) -> list[str]:
    """The lines the book shows for one exception (no chained causes: the last one is the news)."""
    frames = frame_lines(tb, current_cell)
    head = ["Traceback (most recent call last):", *frames] if frames else []
    name = etype.__name__
    return [*head, f"{name}: {_message(value)}" if str(value) else name]


def _show(shell, etype, value, tb, tb_offset=None):
    # Skip the frame of IPython's own run_code, as its standard reports do.
    if tb is not None and _package_of(tb.tb_frame.f_code.co_filename) == "IPython":
        tb = tb.tb_next
    # The first frame left is the cell's own module code.
    current_cell = tb.tb_frame.f_code.co_filename if tb is not None else None
    lines = format_exception(etype, value, tb, current_cell)
    # _showtraceback is what ipykernel publishes as the cell's error output (ename, evalue,
    # traceback); the message is passed cleaned, so evalue carries no build path either.
    shell._showtraceback(etype, _message(value), ["\n".join(lines)])


def install(shell=None) -> None:
    """Make the running IPython show every exception from a cell the book's way."""
    if shell is None:
        from IPython import get_ipython

        shell = get_ipython()
    if shell is not None:
        shell.set_custom_exc((Exception,), _show)
