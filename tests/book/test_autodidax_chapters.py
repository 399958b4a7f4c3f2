"""The Part II chapters run top to bottom, cleanly, on the pinned JAX.

Each chapter is executed as the book build executes it: only cells tagged `raises-exception` may
raise, and nothing may print a warning (JAX deprecation warnings included). The code blocks the
chapters show are read from jaxcourse/autodidax, so the included names must exist there.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import jupytext
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "book" / "autodidax").glob("*.md"))
TOC = (ROOT / "_toc.yml").read_text()


def test_every_chapter_is_in_the_toc():
    assert CHAPTERS
    for chapter in CHAPTERS:
        assert f"file: book/autodidax/{chapter.stem}\n" in TOC, chapter.name


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_literalincludes_point_at_existing_code(chapter):
    text = chapter.read_text()
    blocks = re.findall(r"```\{literalinclude\} (\S+)\n((?::\S+:.*\n)*)", text)
    assert blocks, "the chapter shows no code from the module"
    for path, options in blocks:
        source = (chapter.parent / path).resolve().read_text()
        for key, value in re.findall(r":(\S+): (.*)", options):
            value = value.strip().strip('"')
            if key in ("start-at", "end-before"):
                assert value in source, (path, key, value)
            elif key == "pyobject":
                assert re.search(rf"^(def|class) {value}\b", source, re.MULTILINE), (path, value)


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_executes_without_warnings(chapter, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    notebook = jupytext.read(chapter)
    NotebookClient(notebook, timeout=600, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(chapter.parent)}}).execute()
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        tagged = "raises-exception" in cell.metadata.get("tags", [])
        errors = [o for o in cell.outputs if o.output_type == "error"]
        assert bool(errors) == tagged, (cell.source[:200], [e.ename for e in errors])
        for out in cell.outputs:
            if out.output_type == "stream" and out.name == "stderr":
                assert "Warning" not in out.text, (cell.source[:200], out.text)
