"""What the newest JAX the index offers would change in the course: one report, before a term.

    .venv/bin/python scripts/check_newest_jax.py [--jax VERSION] [--out DIR] [--report FILE]
                                                 [--skip STEP ...]
    make check-newest-jax            # the same, after `make book` (the pinned build it compares to)

In a throwaway virtual environment (``DIR/venv``, default ``_build/newest-jax``, removed first)
it installs that JAX and jaxlib (the newest release ``pip index versions jax`` names, or
``--jax``) with every other pin of requirements.txt, holding every other package at its
constraints-py312.txt version where pip can (it says which moved), and the course from this
checkout (PYTHONPATH, not an editable install: nothing is written outside DIR). Then, each step
on that JAX:

- ``kernels``: Part V's kernels compiled against its FFI headers (``make kernels`` into DIR);
- ``book``: the English book built with its own execution cache (every chapter executed, warnings
  are errors, as ``make book``), each executed chapter's printed output compared with the
  pinned build's (``_build/jupyter_execute``, from ``make book``), and every warning a
  cell printed;
- ``demo``: the demo classes graded (``python -m autograder demo``) and compared, check by check,
  with every toolchain's record (tests/fixtures/toolchains/, scripts/record_demo_checks.py);
- ``drift``: the names the course runs or prints that this JAX deprecates or removed
  (tests/test_jax_drift.py's scan);
- ``tests``: the fast tier of the tests (``-m "not slow"``, as ``make test-fast``).

The report (``DIR/report.md``, or ``--report``) starts with one line per step, "no change" or
what moved, then the details. Exit status 0 when it could be written, whatever moved: what moved
is the report's to say (README, "Before a term: the newest JAX").
"""

from __future__ import annotations

import argparse
import datetime
import difflib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PINNED_BUILD = ROOT / "_build"
RECORDS = ROOT / "tests" / "fixtures" / "toolchains"
STEPS = ("kernels", "book", "demo", "drift", "tests")
ANSI = re.compile(r"\x1b\[[0-9;]*m")
# What differs on every run of the same JAX: an object's address (``Var(id=1403...)``, ``at
# 0x7f...``). Every other digit is compared as it is: a changed one is what the report is for.
ADDRESS = re.compile(r"(id=|0x)[0-9a-f]{6,}")
SHOWN = 16  # diff lines shown per chapter


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(cmd: list[str], env: dict, log: Path, timeout: float = 3600) -> tuple[int, float]:
    """``cmd`` with its output into ``log``: (exit status, seconds)."""
    started = time.monotonic()
    with log.open("w", encoding="utf-8") as out:
        done = subprocess.run(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                              stdin=subprocess.DEVNULL, timeout=timeout, check=False)
    return done.returncode, time.monotonic() - started


def pins(path: Path) -> dict[str, str]:
    found = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        name, sep, version = line.partition("==")
        if sep and not name.startswith("#"):
            found[name.strip().lower().replace("_", "-")] = version.strip()
    return found


def newest_jax(python: Path) -> str:
    """The newest release of jax the configured index offers."""
    shown = subprocess.run([str(python), "-m", "pip", "index", "versions", "jax",
                            "--disable-pip-version-check"], capture_output=True, text=True,
                           check=True).stdout
    match = re.search(r"^jax \(([^)]+)\)", shown, re.MULTILINE)
    if match is None:
        raise SystemExit(f"pip index versions jax said: {shown!r}")
    return match[1]


def make_venv(out: Path, version: str | None) -> tuple[Path, str, list[str]]:
    """DIR/venv with that JAX and the other pins: (its python, the JAX, notes on the install)."""
    venv = out / "venv"
    subprocess.run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", str(venv)],
                   check=True)
    python = venv / "bin" / "python"
    version = version or newest_jax(python)
    requirements, constraints = out / "requirements.txt", out / "constraints.txt"
    requirements.write_text(re.sub(r"^(jax|jaxlib)==.*$", rf"\1=={version}",
                                   (ROOT / "requirements.txt").read_text(),
                                   flags=re.MULTILINE))
    constraints.write_text("".join(line for line in
                                   (ROOT / "constraints-py312.txt").read_text().splitlines(True)
                                   if not re.match(r"(jax|jaxlib)==", line)))
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
           "-r", str(requirements)]
    notes = []
    if run([*pip, "-c", str(constraints)], os.environ.copy(), out / "pip.log")[0] != 0:
        notes.append("pip could not hold every other package at its constraints-py312.txt "
                     f"version with JAX {version} (DIR/pip.log); installed without them")
        if run(pip, os.environ.copy(), out / "pip-unconstrained.log")[0] != 0:
            raise SystemExit(f"pip cannot install JAX {version} with requirements.txt: "
                             f"{out / 'pip-unconstrained.log'}")
    # The cell policy in the environment's kernels, as `make setup` installs it.
    config = venv / "etc" / "ipython" / "ipython_kernel_config.py"
    config.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "scripts" / "ipython_kernel_config.py", config)
    (venv / ".installed").touch()  # the Makefile's stamp: `make kernels` takes the venv as set up
    return python, version, notes


def moved_packages(python: Path) -> list[str]:
    frozen = subprocess.run([str(python), "-m", "pip", "freeze", "--exclude-editable"],
                            capture_output=True, text=True, check=True).stdout
    here = {name: version for name, _, version in
            (line.partition("==") for line in frozen.splitlines()) if version}
    here = {name.lower().replace("_", "-"): v for name, v in here.items()}
    pinned = pins(ROOT / "constraints-py312.txt")
    return [f"{name}: {pinned.get(name, 'not installed')} -> {here.get(name, 'not installed')}"
            for name in sorted(set(here) | set(pinned)) if here.get(name) != pinned.get(name)]


# --- the book -------------------------------------------------------------------------------

BUILD_BOOK = """
import sys
from pathlib import Path
from jaxcourse.i18n_site import build_book
out = Path(sys.argv[1])
sys.exit(build_book("html", out / "html", out / ".doctrees",
                    {"nb_execution_cache_path": str(out / ".jupyter_cache")},
                    warningiserror=True))
"""


def _outputs(cell: dict) -> str:
    """A cell's printed output as text: its stdout, its stderr (each whole: how the kernel cut a
    stream into messages varies from run to run), then its results, figures and error."""
    streams = {"stdout": "", "stderr": ""}
    shown = []
    for out in cell.get("outputs", []):
        kind = out.get("output_type")
        if kind == "stream":
            streams[out["name"]] = streams.get(out["name"], "") + "".join(out["text"])
        elif kind in ("execute_result", "display_data"):
            data = out.get("data", {})
            shown.append("".join(data.get("text/plain", "")) if "text/plain" in data
                         else f"({', '.join(sorted(data))})")
        elif kind == "error":
            shown.append(f"[error] {out['ename']}: {out['evalue']}")
    text = "\n".join([*(f"[{name}] {text}" for name, text in streams.items() if text), *shown])
    return ADDRESS.sub(r"\1...", ANSI.sub("", text))


def _chapters(executed: Path) -> dict[str, list[dict]]:
    return {str(p.relative_to(executed)): json.loads(p.read_text(encoding="utf-8"))["cells"]
            for p in sorted(executed.rglob("*.ipynb"))}


def _printed(cells: list[dict]) -> list[str]:
    """A chapter's printed output, its code cells' one after the other: a stream's last lines can
    reach a busy kernel's client after its cell has ended and be shown under the next cell, so
    the report compares the chapter's whole output, not cell by cell."""
    return "\n".join(_outputs(c) for c in cells if c["cell_type"] == "code").splitlines()


def compare_book(pinned: Path, newest: Path) -> dict:
    """Chapters missing from either build, the chapters whose printed output changed (as a diff,
    and whether only digits moved), the cells that printed a warning."""
    before, after = _chapters(pinned), _chapters(newest)
    changed, warned = [], []
    for chapter in sorted(set(before) & set(after)):
        was, now = _printed(before[chapter]), _printed(after[chapter])
        if was != now:
            diff = list(difflib.unified_diff(was, now, "pinned", "newest", lineterm="", n=0))[2:]
            digits = [re.sub(r"\d", "0", line) for line in was] == [
                re.sub(r"\d", "0", line) for line in now]
            changed.append((chapter, digits, diff))
        code = [c for c in after[chapter] if c["cell_type"] == "code"]
        for number, cell in enumerate(code):
            for out in cell.get("outputs", []):
                if out.get("output_type") == "stream" and out["name"] == "stderr" and re.search(
                        r"Warning|deprecat", "".join(out["text"]), re.IGNORECASE):
                    warned.append((chapter, number, ANSI.sub("", "".join(out["text"])).strip()))
    return {"missing": sorted(set(before) - set(after)), "new": sorted(set(after) - set(before)),
            "changed": changed, "warned": warned}


def book_problems(log: Path) -> list[str]:
    """The build's warnings and errors (a chapter that raised is one), from its log."""
    lines = ANSI.sub("", log.read_text(encoding="utf-8", errors="replace")).splitlines()
    return [line for line in lines if re.search(r"(WARNING|ERROR|CRITICAL):", line)
            and "Kernel is running over TCP" not in line]


# --- the report -----------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jax", help="this release instead of the newest the index offers")
    parser.add_argument("--out", type=Path, default=PINNED_BUILD / "newest-jax")
    parser.add_argument("--report", type=Path, help="default: OUT/report.md")
    parser.add_argument("--skip", nargs="*", choices=STEPS, default=[],
                        help="steps not run (the report says so)")
    args = parser.parse_args()
    # The JAX of the pinned build: the one this script runs on (.venv's, which `make book` uses).
    pinned = metadata.version("jax")
    out = args.out.resolve()
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    started = time.monotonic()
    python, version, notes = make_venv(out, args.jax)
    env = dict(os.environ, PYTHONPATH=str(ROOT), JAXCOURSE_KERNELS=str(out / "kernels"),
               PATH=f"{python.parent}{os.pathsep}{os.environ['PATH']}")
    env.pop("VIRTUAL_ENV", None)
    summary: list[str] = []
    details: list[str] = []
    report = args.report or out / "report.md"
    report.parent.mkdir(parents=True, exist_ok=True)
    command = " ".join(["scripts/check_newest_jax.py", *sys.argv[1:]])

    def step(name: str, line: str, body: list[str]) -> None:
        summary.append(f"- **{name}**: {line}")
        details.extend([f"## {name}", "", *body, ""])
        print(f"check-newest-jax: {name}: {line} ({time.monotonic() - started:.0f} s)",
              flush=True)
        # Written after every step, so that a run stopped half-way still says what it found.
        head = [f"# JAX {version} against the pinned {pinned}", "",
                (f"{datetime.date.today().isoformat()}, `{command}` (Python "
                 f"{sys.version.split()[0]}, {time.monotonic() - started:.0f} s so far). Each "
                 "line says what moved; the sections below give the details."), ""]
        report.write_text("\n".join(head + summary + [""] + details), encoding="utf-8")

    moved = [m for m in moved_packages(python) if not m.startswith(("jax:", "jaxlib:"))]
    step("install", "no other package moved" if not moved else f"{len(moved)} packages moved",
         [*notes, *(f"- {m}" for m in moved)] or ["Every other package at its pinned version."])

    for skipped in args.skip:
        step(skipped, "not run (--skip)", ["Left out of this run."])
    if "kernels" not in args.skip:
        status, _ = run(["make", "--no-print-directory", "kernels", f"VENV={out / 'venv'}",
                         f"STAMP={out / 'venv' / '.installed'}", f"KERNEL_OUT={out / 'kernels'}"], env,
                        out / "kernels.log")
        built = [name for name in ("librms_norm.so", "librms_norm_cuda.so")
                 if (out / "kernels" / name).exists()]
        step("kernels", f"failed (exit {status})" if status else
             "both build" if len(built) == 2 else
             f"{', '.join(built)} builds (no nvcc here: the CUDA one was not compiled)",
             [(f"`make kernels` against JAX {version}'s FFI headers: exit {status}, "
              f"log `{out / 'kernels.log'}`.")])

    if "book" not in args.skip:
        status, seconds = run([str(python), "-c", BUILD_BOOK, str(out)], env, out / "book.log")
        problems = book_problems(out / "book.log")
        found = compare_book(PINNED_BUILD / "jupyter_execute", out / "jupyter_execute")
        body = [(f"Built in {seconds:.0f} s, exit status {status} (warnings are errors); "
                f"compared with the pinned build (JAX {pinned}, `_build/jupyter_execute`, "
                "from `make book`)."), ""]
        body += ["### The build's warnings and errors", "",
                 *(f"- `{p[:300]}`" for p in problems[:60])] if problems else ["No warning."]
        body += ["", f"### Chapters not executed: {len(found['missing'])}", "",
                 *(f"- {c}" for c in found["missing"])]
        body += ["", f"### Warnings printed by a cell: {len(found['warned'])}", "",
                 *(f"- {c}, cell {n}: `{text[:300]}`" for c, n, text in found["warned"])]
        body += ["", (f"### Chapters whose printed output changed: {len(found['changed'])} "
                 f"({sum(d for _, d, _ in found['changed'])} in their digits only)"), ""]
        for chapter, digits, diff in found["changed"]:
            body += [f"- {chapter}" + (" (digits only)" if digits else ""),
                     "", "  ```diff", *(f"  {line}" for line in diff[:SHOWN]),
                     *(["  ..."] if len(diff) > SHOWN else []), "  ```"]
        moved_book = status != 0 or problems or found["missing"] or found["warned"]
        step("book", (f"exit {status}, {len(problems)} warnings or errors, "
                      f"{len(found['missing'])} chapters not executed, "
                      f"{len(found['warned'])} cells warned, " if moved_book else
                      "every chapter executed with no warning, ")
             + f"{len(found['changed'])} chapters print something else", body)

    if "demo" not in args.skip:
        record = _load("record_demo_checks", ROOT / "scripts" / "record_demo_checks.py")
        status, seconds = run([str(python), "-m", "autograder", "demo", "--out",
                               str(out / "demo")], env, out / "demo.log")
        here = record.per_check(out / "demo")
        body = [(f"Graded in {seconds:.0f} s, exit status {status}: "
                f"{sum(len(c) for s in here.values() for c in s.values())} results.")]
        worst = 0
        for path in sorted(RECORDS.glob("*.json")):
            there = json.loads(path.read_text(encoding="utf-8"))
            differ = [f"{a}/{s}/{c}: {there.get(a, {}).get(s, {}).get(c)} on {path.stem}, "
                      f"{here.get(a, {}).get(s, {}).get(c)} here"
                      for a in sorted(set(here) | set(there))
                      for s in sorted(set(here.get(a, {})) | set(there.get(a, {})))
                      for c in sorted(set(here.get(a, {}).get(s, {}))
                                      | set(there.get(a, {}).get(s, {})))
                      if here.get(a, {}).get(s, {}).get(c) != there.get(a, {}).get(s, {}).get(c)]
            worst = max(worst, len(differ))
            body += ["", f"Against `{path.relative_to(ROOT)}`: {len(differ)} checks differ",
                     *(f"- {d}" for d in differ[:40])]
        step("demo", "every check grades as recorded on both toolchains" if not worst and status
             == 0 else f"exit {status}; up to {worst} checks differ from a record", body)

    if "drift" not in args.skip:
        probe = ("import json, sys; sys.path.insert(0, 'tests'); import test_jax_drift as d; "
                 "print(json.dumps({n: [w, sorted(set(p))[:5]] "
                 "for n, (w, p) in d.objections(d.uses()).items()}))")
        done = subprocess.run([str(python), "-c", probe], cwd=ROOT, env=env, capture_output=True,
                              text=True, check=False)
        if done.returncode == 0:
            bad = json.loads(done.stdout.strip().splitlines()[-1])
            step("drift", "no name deprecated or removed" if not bad else
                 f"{len(bad)} deprecated or removed",
                 [f"- `{name}`: {why}; used in {', '.join(places)}"
                  for name, (why, places) in bad.items()] or ["None."])
        else:
            step("drift", "the scan itself failed", ["```", done.stderr[-3000:], "```"])

    if "tests" not in args.skip:
        status, seconds = run([str(python), "-m", "pytest", "-p", "no:cacheprovider", "-m",
                               "not slow", "-n", "2", "--dist", "loadfile", "-q", "-rfE",
                               "--no-header"], env, out / "tests.log", timeout=7200)
        lines = ANSI.sub("", (out / "tests.log").read_text(errors="replace")).splitlines()
        failed = [line for line in lines if line.startswith(("FAILED ", "ERROR "))]
        last = next((line.strip("= ") for line in reversed(lines) if " in " in line), "?")
        step("tests", f"{last}" if status else f"{last}: all passed",
             [(f"The fast tier in {seconds:.0f} s, exit status {status} "
              f"(log `{out / 'tests.log'}`)."), *(f"- `{f[:300]}`" for f in failed)])

    print(f"check-newest-jax: the report is {report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
