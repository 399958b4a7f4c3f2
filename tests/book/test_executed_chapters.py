"""Every chapter in _toc.yml was executed by the book build, and each cell did what the text says.

The book build (``make book``, which ``make test`` runs first) leaves one notebook per chapter in
``_build/jupyter_execute/``. These tests read them; they never execute anything. When a chapter
came from the execution cache, myst-nb 1.4 writes the notebook there *without* its outputs (it
writes the notebook it read, not the one merged with the cache), so the outputs are then taken
from jupyter-cache itself, matched against the chapter's current source: a chapter edited since
the last build has no match and fails as "not executed".

Convention for cells that must fail: the cell is tagged ``raises-exception`` and its first line is
``# raises: ExceptionName``. The cell's error output must name exactly that exception.

Every error is shown one way (jaxcourse/error_display.py, installed in each kernel by the book
build): a short traceback of the reader's own frames ending in ``Name: message``. No output of
any kind shows a path of the build machine, a memory address, or IPython's mode-switch lines.
"""

from __future__ import annotations

import functools
import os
import re
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest
import yaml
from jupyter_cache import get_cache
from jupyter_cache.readers import get_reader

ROOT = Path(__file__).resolve().parents[2]
# The second toolchain's tier (scripts/test_legacy.sh) builds the English book into a folder of its
# own, with an execution cache of its own too (one cache for both toolchains would hand each the
# other's outputs: jupyter-cache keys a chapter by its code, not by its JAX): jaxcourse/legacy_book.py.
# JAXCOURSE_BOOK_BUILD names that folder, which holds its jupyter_execute and .jupyter_cache.
LEGACY_BUILD = os.environ.get("JAXCOURSE_BOOK_BUILD")
EXECUTED = (Path(LEGACY_BUILD) if LEGACY_BUILD else ROOT / "_build") / "jupyter_execute"
# Set to 1 to skip (loudly) when the book has not been built, e.g. for a quick unit-test run.
SKIP_ENV = "JAXCOURSE_SKIP_EXECUTED_CHAPTERS"
RAISES_TAG = "raises-exception"
RAISES_LINE = re.compile(r"#\s*raises:\s*([A-Za-z_][\w.]*)\s*$")
FORBIDDEN = ("DeprecationWarning",)
ANSI = re.compile(r"\x1b\[[0-9;]*m")
# What a reader must never see in an output: where the build ran, and IPython's notices of a
# change of exception reporting mode (%xmode), which belong to no chapter's lesson.
BUILD_PATHS = tuple(
    dict.fromkeys(
        str(path)
        for path in (
            ROOT,
            ROOT.resolve(),
            Path(sys.prefix),
            Path(sys.prefix).resolve(),
            Path(sys.base_prefix),
            Path(tempfile.gettempdir()) / "ipykernel_",
        )
    )
)
NOT_IN_ANY_OUTPUT = re.compile(
    "|".join(
        [
            *(re.escape(path) for path in BUILD_PATHS),
            r"[\w./-]*/(?:site|dist)-packages/",
            r"Exception reporting mode",
            r"\bxmode\b",
        ]
    )
)
MEMORY_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]{6,}")
# The one form of an error output (jaxcourse.error_display): optionally a traceback of frames,
# each a "Cell, line N" / "Earlier cell, line N" / "File repo/path.py, line N, in f" line with its
# source line under it, or "[N frames in package]"; then "Name: message".
TRACEBACK_HEAD = "Traceback (most recent call last):"
FRAME_LINE = re.compile(
    r"  (?:(?:Earlier cell|Cell), line \d+(?:, in \S+)?"
    r"|File (?!/)\S+, line \d+, in \S+"
    r"|\[\d+ frames? in \w+(?:, \d+ frames? in \w+)*\])"
)
MAX_ERROR_LINES = 40


def toc_files(node) -> list[str]:
    """Every ``root`` and ``file`` entry of a _toc.yml tree, in reading order."""
    found = []
    if isinstance(node, dict):
        for key in ("root", "file"):
            if isinstance(node.get(key), str):
                found.append(node[key])
        for value in node.values():
            if isinstance(value, (list, dict)):
                found.extend(toc_files(value))
    elif isinstance(node, list):
        for item in node:
            found.extend(toc_files(item))
    return found


def source_of(entry: str) -> Path:
    for candidate in (ROOT / entry, ROOT / f"{entry}.md", ROOT / f"{entry}.ipynb"):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"_toc.yml lists {entry!r}, which has no .md or .ipynb source")


def is_notebook(source: Path) -> bool:
    """A chapter with code: an .ipynb, or MyST markdown with code cells."""
    return source.suffix == ".ipynb" or "```{code-cell}" in source.read_text(encoding="utf-8")


TOC = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
CHAPTERS = [entry for entry in toc_files(TOC) if is_notebook(source_of(entry))]


CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
CACHE = (Path(LEGACY_BUILD) / ".jupyter_cache" if LEGACY_BUILD
         else ROOT / CONFIG.get("execute", {}).get("cache", "_build/.jupyter_cache"))


def from_cache(entry: str) -> dict:
    source = source_of(entry)
    # The reader myst-nb itself uses, so the cache key (the code cells) is computed the same way.
    name = "myst_nb_md" if source.suffix == ".md" else "nbformat"
    reader = get_reader({"type": "plugin", "name": name})
    notebook = reader(str(source))
    try:
        _, merged = get_cache(str(CACHE)).merge_match_into_notebook(notebook)
    except KeyError:
        pytest.fail(f"{entry}: no executed copy of its current source in {CACHE}")
    return merged


def executed(entry: str) -> dict:
    if not EXECUTED.is_dir():
        if os.environ.get(SKIP_ENV) == "1":
            pytest.skip(f"{EXECUTED} is absent and {SKIP_ENV}=1: executed chapters not checked")
        pytest.fail(f"{EXECUTED} is absent: build the book first (`make book`)")
    path = EXECUTED / Path(entry).with_suffix(".ipynb")
    assert path.is_file(), f"{entry} is in _toc.yml but was not executed (no {path})"
    return _load_executed(entry, path)


@functools.cache
def _load_executed(entry: str, path: Path) -> dict:
    notebook = nbformat.read(path, as_version=4)
    if any(cell.get("execution_count") for cell in code_cells(notebook)):
        return notebook
    return from_cache(entry)


def code_cells(notebook: dict) -> list[dict]:
    return [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]


def source_text(cell: dict) -> str:
    source = cell["source"]
    return source if isinstance(source, str) else "".join(source)


def output_text(output: dict) -> str:
    """All the text an output shows the reader (error outputs included)."""
    if output["output_type"] == "stream":
        text = output["text"]
        return text if isinstance(text, str) else "".join(text)
    if output["output_type"] == "error":
        return "\n".join([output["ename"], output["evalue"], *output["traceback"]])
    parts = []
    for mime, data in output.get("data", {}).items():
        if mime.startswith("text/"):
            parts.append(data if isinstance(data, str) else "".join(data))
    return "\n".join(parts)


def declared_exception(cell: dict) -> str | None:
    lines = source_text(cell).strip().splitlines()
    match = RAISES_LINE.match(lines[0].strip()) if lines else None
    return match.group(1) if match else None


def cell_label(entry: str, index: int, cell: dict) -> str:
    first = source_text(cell).strip().splitlines()[:1]
    return f"{entry}, code cell {index}: {first[0] if first else '(empty)'}"


def test_the_toc_lists_chapters_with_code():
    assert CHAPTERS, "no chapter with code cells found in _toc.yml"


def test_the_build_runs_each_chapter_as_its_download_runs():
    """A reader runs a chapter's downloaded notebook (`Notebook (.ipynb)`, the same code cells:
    tests/browser/test_site.py) in a folder of their own. The build executes each chapter in an
    empty temporary folder (jupyter-book's `run_in_temp`, myst-nb's `nb_execution_in_temp`), so
    the chapters executed here are that run: one that reads or imports a file beside its source
    fails the build, as it would fail the reader."""
    assert CONFIG["execute"].get("run_in_temp") is True, CONFIG["execute"]


@pytest.mark.parametrize("entry", CHAPTERS)
def test_every_code_cell_was_executed(entry):
    for index, cell in enumerate(code_cells(executed(entry))):
        if source_text(cell).strip():
            label = cell_label(entry, index, cell)
            assert cell.get("execution_count") is not None, f"{label}: not executed"


@pytest.mark.parametrize("entry", CHAPTERS)
def test_only_raises_exception_cells_fail(entry):
    for index, cell in enumerate(code_cells(executed(entry))):
        if RAISES_TAG in cell.get("metadata", {}).get("tags", []):
            continue
        errors = [o for o in cell.get("outputs", []) if o["output_type"] == "error"]
        label = cell_label(entry, index, cell)
        assert not errors, f"{label}: raised {errors[0]['ename']}: {errors[0]['evalue']}"
        assert declared_exception(cell) is None, f"{label}: says `# raises:` but lacks the tag"


@pytest.mark.parametrize("entry", CHAPTERS)
def test_raises_exception_cells_raise_what_they_declare(entry):
    for index, cell in enumerate(code_cells(executed(entry))):
        if RAISES_TAG not in cell.get("metadata", {}).get("tags", []):
            continue
        label = cell_label(entry, index, cell)
        declared = declared_exception(cell)
        assert declared, f"{label}: tagged {RAISES_TAG} without a first line `# raises: Name`"
        errors = [o for o in cell.get("outputs", []) if o["output_type"] == "error"]
        assert len(errors) == 1, f"{label}: expected one {declared}, got {len(errors)} errors"
        raised = errors[0]["ename"]
        # A declared dotted name (jax.errors.X) matches the bare class name in the output.
        assert raised == declared.rsplit(".", 1)[-1], f"{label}: declared {declared}, got {raised}"


@pytest.mark.parametrize("entry", CHAPTERS)
def test_no_warnings_or_stray_tracebacks_in_outputs(entry):
    for index, cell in enumerate(code_cells(executed(entry))):
        label = cell_label(entry, index, cell)
        for output in cell.get("outputs", []):
            text = output_text(output)
            for word in FORBIDDEN:
                assert word not in text, f"{label}: output mentions {word}"
            if output["output_type"] != "error":
                # Tracebacks belong in the error output of a raises-exception cell only.
                assert "Traceback" not in text, f"{label}: a traceback printed as output"


def all_outputs():
    for entry in CHAPTERS:
        for index, cell in enumerate(code_cells(executed(entry))):
            for output in cell.get("outputs", []):
                yield entry, index, cell, output


@pytest.mark.parametrize("entry", CHAPTERS)
def test_no_build_paths_or_mode_lines_in_outputs(entry):
    for index, cell in enumerate(code_cells(executed(entry))):
        label = cell_label(entry, index, cell)
        for output in cell.get("outputs", []):
            found = NOT_IN_ANY_OUTPUT.search(ANSI.sub("", output_text(output)))
            assert not found, f"{label}: an output shows {found.group(0)!r}"


def check_error_output(output: dict) -> list[str]:
    """What is wrong with an error output's form (empty: it is the book's one form)."""
    problems = []
    text = ANSI.sub("", "\n".join(output["traceback"]))
    lines = text.splitlines()
    ename, evalue = output["ename"], output["evalue"]
    if MEMORY_ADDRESS.search(text) or MEMORY_ADDRESS.search(evalue):
        problems.append("it shows a memory address")
    if len(lines) > MAX_ERROR_LINES:
        problems.append(f"it is {len(lines)} lines long")
    last = f"{ename}: {evalue}" if evalue else ename
    before = text[: len(text) - len(last)]
    if not text.endswith(last) or (before and not before.endswith("\n")):
        problems.append(f"it does not end in '{ename}: <its message>'")
        return problems
    frames = before.splitlines()
    if frames:
        if frames[0] != TRACEBACK_HEAD:
            problems.append(f"its traceback starts {frames[0]!r}")
        body = frames[1:]
        index = 0
        while index < len(body):
            if not FRAME_LINE.fullmatch(body[index]):
                problems.append(f"its frame line {body[index]!r} is not in the book's form")
                break
            # A frame of code is followed by its source line, indented under it.
            has_source = index + 1 < len(body) and body[index + 1].startswith("    ")
            index += 2 if has_source else 1
    return problems


@pytest.mark.parametrize("entry", CHAPTERS)
def test_errors_are_shown_one_way(entry):
    for index, cell in enumerate(code_cells(executed(entry))):
        label = cell_label(entry, index, cell)
        for output in cell.get("outputs", []):
            if output["output_type"] == "error":
                problems = check_error_output(output)
                assert not problems, f"{label}: its error output: {'; '.join(problems)}"


IPYTHON_VERBOSE_ERROR = {
    "output_type": "error",
    "ename": "TracerBoolConversionError",
    "evalue": "Attempted boolean conversion of traced array with shape bool[].",
    "traceback": [
        "\x1b[0;31m---------------------------------------------------------------------\x1b[0m",
        "\x1b[0;31mTracerBoolConversionError\x1b[0m  Traceback (most recent call last)",
        "Cell \x1b[0;32mIn[6], line 2\x1b[0m\n----> 2 jax.jit(relu_ish_jax)(3.0)",
        "File \x1b[0;32m/venv/lib/python3.11/site-packages/jax/_src/core.py:1961\x1b[0m",
        (
            "\x1b[0;31mTracerBoolConversionError\x1b[0m: Attempted boolean conversion of traced "
            "array with shape bool[]."
        ),
    ],
}
BOOK_ERROR = {
    "output_type": "error",
    "ename": "NotImplementedError",
    "evalue": "Evaluation rule for 'multiply_add' not implemented",
    "traceback": [
        (
            "Traceback (most recent call last):\n"
            "  Cell, line 3\n"
            "    square_add(2.0, 10.0)\n"
            "  File jaxcourse/multiply_add.py, line 37, in square_add\n"
            "    return multiply_add(a, a, b)\n"
            "  [4 frames in jax]\n"
            "NotImplementedError: Evaluation rule for 'multiply_add' not implemented"
        )
    ],
}


def test_the_error_form_check_rejects_other_forms():
    """The check above is not vacuous: IPython's own reports and walls of text fail it."""
    assert check_error_output(BOOK_ERROR) == []
    assert check_error_output(IPYTHON_VERBOSE_ERROR)
    minimal = dict(BOOK_ERROR, traceback=["Exception reporting mode: Minimal"])
    assert check_error_output(minimal)
    wall = dict(BOOK_ERROR, evalue="PyTreeDef(to_iterable=<function <lambda> at 0x7fb8bb5b72e0>)")
    wall["traceback"] = [f"NotImplementedError: {wall['evalue']}"]
    assert check_error_output(wall) == ["it shows a memory address"]
    absolute = f"  File {sys.prefix}/lib/jax/_src/core.py, line 1, in f"
    assert NOT_IN_ANY_OUTPUT.search(absolute)
    assert NOT_IN_ANY_OUTPUT.search("Exception reporting mode: Minimal")
