"""Every chapter in _toc.yml was executed by the book build, and each cell did what the text says.

The book build (``make book``, which ``make test`` runs first) leaves one notebook per chapter in
``_build/jupyter_execute/``. These tests read them; they never execute anything. When a chapter
came from the execution cache, myst-nb 1.4 writes the notebook there *without* its outputs (it
writes the notebook it read, not the one merged with the cache), so the outputs are then taken
from jupyter-cache itself, matched against the chapter's current source: a chapter edited since
the last build has no match and fails as "not executed".

Convention for cells that must fail: the cell is tagged ``raises-exception`` and its first line is
``# raises: ExceptionName``. The cell's error output must name exactly that exception.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

import nbformat
import pytest
import yaml
from jupyter_cache import get_cache
from jupyter_cache.readers import get_reader

ROOT = Path(__file__).resolve().parents[2]
EXECUTED = ROOT / "_build" / "jupyter_execute"
# Set to 1 to skip (loudly) when the book has not been built, e.g. for a quick unit-test run.
SKIP_ENV = "JAXCOURSE_SKIP_EXECUTED_CHAPTERS"
RAISES_TAG = "raises-exception"
RAISES_LINE = re.compile(r"#\s*raises:\s*([A-Za-z_][\w.]*)\s*$")
FORBIDDEN = ("DeprecationWarning",)


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
CACHE = ROOT / CONFIG.get("execute", {}).get("cache", "_build/.jupyter_cache")


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
