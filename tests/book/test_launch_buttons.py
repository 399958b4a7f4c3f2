"""Launch buttons: drawn on notebook chapters when ``_config.yml`` names the book's repository,
absent otherwise (jaxcourse/launch_buttons.py).

The course's own ``_config.yml`` names none, so the built book has no launch button (Jupyter
Book's default repository would send readers to jupyter-book itself). A one-page book that
names a repository, built by the real ``jupyter-book build`` with the course's extension, gets a
Binder button whose link opens that page's source in that repository.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from jaxcourse.launch_buttons import launch_options, named_repository

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
BINDER = "https://mybinder.org/v2/gh/"


def test_the_course_config_names_no_repository_and_keeps_binder_configured():
    assert named_repository(ROOT / "_config.yml") is None
    options = launch_options({"launch_buttons": {"binderhub_url": "https://mybinder.org"}}, None)
    assert options["launch_buttons"] == {}
    kept = launch_options({"launch_buttons": {"binderhub_url": "https://mybinder.org"}},
                          "https://github.com/org/repo")
    assert kept["launch_buttons"] == {"binderhub_url": "https://mybinder.org"}


@pytest.mark.parametrize("text, url", [
    ("repository:\n  url: https://github.com/org/repo\n", "https://github.com/org/repo"),
    ("repository:\n  url: '  '\n", None),
    ("repository: {}\n", None),
    ("title: x\n", None),
    ("", None),
])
def test_named_repository_reads_only_a_url_of_the_book_s_own(tmp_path, text, url):
    (tmp_path / "_config.yml").write_text(text, encoding="utf-8")
    assert named_repository(tmp_path / "_config.yml") == url


def test_built_pages_have_no_launch_button():
    pages = sorted(HTML.glob("book/**/*.html"))
    if not pages:
        pytest.skip("the book has not been built (make book)")
    with_button = [p.relative_to(HTML) for p in pages if BINDER in p.read_text(encoding="utf-8")]
    assert with_button == []


PAGE = """\
---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# A chapter

```{code-cell} python
print(1 + 1)
```
"""


def _build(book: Path, repository: str | None) -> str:
    config = textwrap.dedent("""\
        title: one page
        execute:
          execute_notebooks: "off"
        launch_buttons:
          binderhub_url: https://mybinder.org
          notebook_interface: jupyterlab
        sphinx:
          extra_extensions:
            - jaxcourse.launch_buttons
        """)
    if repository:
        config += f"repository:\n  url: {repository}\n  branch: main\n"
    book.mkdir()
    (book / "_config.yml").write_text(config, encoding="utf-8")
    (book / "_toc.yml").write_text("format: jb-book\nroot: chapter\n", encoding="utf-8")
    (book / "chapter.md").write_text(PAGE, encoding="utf-8")
    run = subprocess.run([str(Path(sys.executable).parent / "jupyter-book"), "build", str(book)],
                         capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return (book / "_build" / "html" / "chapter.html").read_text(encoding="utf-8")


def test_a_book_that_names_its_repository_gets_a_binder_button_and_one_that_does_not_none(
        tmp_path):
    named = _build(tmp_path / "named", "https://github.com/example-org/jax-course")
    assert (f"{BINDER}example-org/jax-course/main?urlpath=lab/tree/chapter.md"
            in named.replace("&amp;", "&"))
    unnamed = _build(tmp_path / "unnamed", None)
    assert BINDER not in unnamed
    assert "mybinder.org" not in unnamed
