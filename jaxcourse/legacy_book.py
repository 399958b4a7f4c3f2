"""The English book built on the second toolchain (Python 3.11, JAX 0.10.2), every chapter executed.

    python -m jaxcourse.legacy_book       # scripts/test_legacy.sh runs it, with .venv311's Python

The same Sphinx configuration as ``make book`` (jaxcourse.i18n_site.build_book), into
``_build/legacy/html``, with an execution cache of its own, ``_build/legacy/.jupyter_cache``: the
book's cache keys a chapter by its code alone, so sharing it would hand this build the primary
toolchain's outputs instead of executing anything. myst-nb leaves the executed notebooks in
``_build/legacy/jupyter_execute``, which tests/book/test_executed_chapters.py then reads
(``JAXCOURSE_BOOK_BUILD=_build/legacy``). Warnings are errors, and a cell that raises without the
``raises-exception`` tag fails the build, as in ``make book``.
"""

from __future__ import annotations

import sys

from jaxcourse.i18n_site import BUILD, build_book

LEGACY_BUILD = BUILD / "legacy"


def main() -> int:
    overrides = {"nb_execution_cache_path": str(LEGACY_BUILD / ".jupyter_cache")}
    return build_book("html", LEGACY_BUILD / "html", LEGACY_BUILD / ".doctrees", overrides,
                      warningiserror=True)


if __name__ == "__main__":
    sys.exit(main())
