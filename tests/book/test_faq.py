"""Part III (FAQ pitfalls): the chapter list, the shared measuring tools, and the built output."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest
from jax import lax

from jaxcourse.faq_tools import compile_seconds, count_equations, seconds_per_call

ROOT = Path(__file__).resolve().parents[2]
FAQ = ROOT / "book" / "faq"
EXECUTED = ROOT / "_build" / "jupyter_execute" / "book" / "faq"


def _toc_faq_files() -> list[str]:
    return re.findall(r"file: book/faq/(\w+)", (ROOT / "_toc.yml").read_text())


def test_every_faq_chapter_is_in_the_toc_and_the_index_table():
    on_disk = sorted(p.stem for p in FAQ.glob("*.md"))
    assert sorted(_toc_faq_files()) == on_disk
    index = (FAQ / "index.md").read_text()
    linked = set(re.findall(r"\]\((\w+)\.md\)", index))
    assert linked == set(on_disk) - {"index"}


def test_index_names_every_ps3_task_id():
    from autograder.assignments.ps3_pitfalls.checks import ASSIGNMENT

    index = (FAQ / "index.md").read_text()
    for task in ASSIGNMENT.tasks:
        assert f"`{task.id}`" in index, task.id


def test_failing_cells_are_tagged_and_explained():
    # Every raises-exception cell must be followed by prose naming the error it raises.
    for chapter in FAQ.glob("*.md"):
        text = chapter.read_text()
        pattern = r":tags: \[raises-exception\].*?```\n\n(.{0,200})"
        for match in re.finditer(pattern, text, re.DOTALL):
            assert re.search(r"`\w*(Error|Exception)", match.group(1)), (chapter.name, match[1])


def _unrolled(x, n):
    for _ in range(n):
        x = x + 0.001 * jnp.cos(x)
    return x


def _fori(x, n):
    return lax.fori_loop(0, n, lambda i, x: x + 0.001 * jnp.cos(x), x)


def test_count_equations_sees_unrolling_and_loop_bodies():
    x = jnp.ones(3)
    small = count_equations(jax.make_jaxpr(_unrolled, static_argnums=1)(x, 5))
    large = count_equations(jax.make_jaxpr(_unrolled, static_argnums=1)(x, 50))
    assert (small, large) == (15, 150)
    looped = [count_equations(jax.make_jaxpr(_fori, static_argnums=1)(x, n)) for n in (5, 50)]
    # The loop body is counted (it is nested), but only once.
    assert looped[0] == looped[1] > 3


def test_compile_seconds_is_positive_and_uncached():
    x = jnp.ones(3)
    assert compile_seconds(_fori, x, 10, static_argnums=(1,)) > 0


class _Result:
    def __init__(self):
        self.waited = 0

    def block_until_ready(self):
        self.waited += 1
        return self


def test_seconds_per_call_warms_up_and_waits_for_every_result():
    results = []

    def fn():
        results.append(_Result())
        return results[-1]

    assert seconds_per_call(fn, repeats=2, number=3) >= 0
    assert len(results) == 1 + 2 * 3
    assert all(r.waited == 1 for r in results)


def _executed() -> list[Path]:
    notebooks = sorted(EXECUTED.glob("*.ipynb"))
    if not notebooks:
        pytest.skip("the book has not been built (make book)")
    return notebooks


def test_built_chapters_have_no_deprecation_warnings_and_only_tagged_errors():
    for path in _executed():
        nb = json.loads(path.read_text())
        for cell in nb["cells"]:
            if cell["cell_type"] != "code":
                continue
            tags = cell.get("metadata", {}).get("tags", [])
            for out in cell.get("outputs", []):
                text = "".join(out.get("text", ""))
                assert "DeprecationWarning" not in text, path.name
                if out["output_type"] == "error":
                    assert "raises-exception" in tags, (path.name, out["ename"])


def test_built_plots_have_alt_text():
    # The three timing/gradient figures are images with alt text in the cell metadata.
    with_images = {}
    for path in _executed():
        nb = json.loads(path.read_text())
        for cell in nb["cells"]:
            if any("image/png" in o.get("data", {}) for o in cell.get("outputs", [])):
                alt = cell["metadata"].get("mystnb", {}).get("image", {}).get("alt", "")
                assert len(alt) > 40, path.name
                with_images[path.stem] = alt
    assert {"compile_time", "benchmarking", "step_gradients"} <= set(with_images)
