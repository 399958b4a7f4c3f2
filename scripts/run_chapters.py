"""Execute the book's chapters as the build does, without Sphinx, and print one line each.

    python scripts/run_chapters.py [--jobs N] [CHAPTER.md ...]

For a machine where the book's toolchain is not installed (the GPU machine of
scripts/gpu_check.sh): each chapter is read with jupytext and run by nbclient in its own folder;
only cells tagged ``raises-exception`` may raise, and no cell may print a warning to stderr.
Exit status 1 when any chapter breaks one of those rules.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(chapter: str) -> tuple[str, float, list[str]]:
    import jupytext
    from nbclient import NotebookClient

    path = Path(chapter)
    started = time.monotonic()
    problems: list[str] = []
    head = path.read_text().split("\n---", 1)[0] if path.read_text().startswith("---") else ""
    if "kernelspec:" not in head:
        return chapter, 0.0, ["(no code: not executed)"]
    notebook = jupytext.read(path, fmt="md:myst")
    try:
        NotebookClient(notebook, timeout=900, kernel_name="python3", allow_errors=True,
                       resources={"metadata": {"path": str(path.parent)}}).execute()
    except Exception as err:  # noqa: BLE001 - reported, the other chapters go on
        problems.append(f"did not finish: {type(err).__name__}: {str(err)[:300]}")
    for number, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        tagged = "raises-exception" in cell.metadata.get("tags", [])
        errors = [o for o in cell.get("outputs", []) if o.output_type == "error"]
        first = cell.source.strip().splitlines()[0][:60] if cell.source.strip() else ""
        if errors and not tagged:
            err = errors[0]
            problems.append(f"cell {number} ({first}) raised {err.ename}: {err.evalue[:300]}")
        elif tagged and not errors:
            problems.append(f"cell {number} ({first}) is tagged raises-exception but did not raise")
        for out in cell.get("outputs", []):
            if out.output_type == "stream" and out.name == "stderr" and "Warning" in out.text:
                problems.append(f"cell {number} ({first}) warned: {out.text.strip()[:300]}")
    return chapter, time.monotonic() - started, problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chapters", nargs="*", type=Path)
    parser.add_argument("--jobs", type=int, default=4)
    args = parser.parse_args()
    chapters = args.chapters or sorted((ROOT / "book").rglob("*.md"))
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    failed = 0
    with ProcessPoolExecutor(args.jobs) as pool:
        for chapter, seconds, problems in pool.map(run, [str(c) for c in chapters]):
            name = Path(chapter).resolve().relative_to(ROOT)
            ok = not problems or problems == ["(no code: not executed)"]
            failed += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {seconds:6.1f} s  {name}", flush=True)
            for problem in problems:
                print(f"       {problem}", flush=True)
    print(f"{len(chapters) - failed} of {len(chapters)} chapters ran cleanly")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
