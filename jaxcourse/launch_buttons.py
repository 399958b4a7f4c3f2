"""Launch buttons (Binder) on the chapters that are notebooks, only where ``_config.yml`` names
the book's repository.

sphinx-book-theme draws a "Launch on Binder" button on every notebook page once
``launch_buttons.binderhub_url`` is set, and builds its link from ``repository.url``. Jupyter
Book fills in a default repository (its own, executablebooks/jupyter-book) when ``_config.yml``
names none, so the theme alone would send readers to the wrong project. This extension reads
``_config.yml`` itself: without a ``repository.url`` of the book's own, the launch buttons are
switched off (nothing is drawn); with one, the theme draws them as configured. A course that
publishes its repository adds

    repository:
      url: https://github.com/ORG/REPO
      branch: main

to ``_config.yml``; Binder then installs ``requirements.txt`` from that repository and opens the
chapter's MyST source, which jupytext (in the requirements) opens as a notebook.
"""

from __future__ import annotations

from pathlib import Path

import yaml


def named_repository(config_yml: Path) -> str | None:
    """The ``repository.url`` that ``config_yml`` itself names, or None."""
    data = yaml.safe_load(config_yml.read_text(encoding="utf-8")) or {}
    url = (data.get("repository") or {}).get("url")
    return url.strip() if isinstance(url, str) and url.strip() else None


def launch_options(theme_options: dict, repository: str | None) -> dict:
    """The theme options with the launch buttons kept only when a repository is named."""
    options = dict(theme_options)
    if repository is None:
        options["launch_buttons"] = {}
    return options


def _config_inited(app, config) -> None:
    config_yml = Path(app.srcdir) / "_config.yml"
    repository = named_repository(config_yml) if config_yml.is_file() else None
    config.html_theme_options = launch_options(config.html_theme_options or {}, repository)


def setup(app):
    app.connect("config-inited", _config_inited)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
