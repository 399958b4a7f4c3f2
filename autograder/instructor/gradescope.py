"""A Gradescope autograder bundle for one assignment: ``python -m autograder gradescope ...``.

Gradescope unzips the bundle into ``/autograder/source``, runs ``setup.sh`` once when it builds
the image, then ``run_autograder`` for each submission, which must leave
``/autograder/results/results.json``. Ours grades the one submitted notebook with the same
``grade`` command as a local class (same sandbox, same checks, the course's secret from the
bundle, so a re-run gives the same grade) and converts its results with
``autograder.instructor.exports.write_gradescope``.

``setup.sh`` picks the toolchain as the Makefile does: the primary one (Python 3.12 or later,
``requirements.txt`` with ``constraints-py312.txt``: the JAX the book teaches) from a
``python3.12``, a ``python3.13``, or a ``python3`` of 3.12 or later as on Ubuntu 24.04; else the
legacy one (Python 3.11, ``requirements.txt`` without its jax and jaxlib pins, with
``constraints.txt``: JAX 0.10.2) from a ``python3.11``. Only an image with neither gets one from
apt-get (python3.12, else python3.11), and only a Python without ``ensurepip`` (Debian's split)
gets its ``-venv`` package. It installs the course into ``source/.venv``, which
``run_autograder`` runs. tests/test_gradescope_setup.py runs it as Gradescope does.

The bundle carries what grading that one assignment needs (``bundle_files``): the engine, that
assignment's checks, probes and reproducers (and the modules of its folder they import), the
course's package its checks import, its release notebook, what ``setup.sh`` reads (both
toolchains' pins, ``pyproject.toml``) and the secret; never the solutions, the other
assignments, or what only the tests and the demo use: the wrong solutions and correct
alternatives (``mutants.py``, ``alternatives.py``), the contract value built from them
(``assignment.py``) and the demo's modules. It is the instructor's upload, not something students
see. The submitted notebook is chosen as the local grader chooses
(``stage_submission``): Jupyter's ``.ipynb_checkpoints`` and other hidden folders never count.
"""

from __future__ import annotations

import shutil
import stat
import zipfile
from pathlib import Path

from autograder.course import check_assignment, course_secret

SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once, as root, in /autograder/source, when it builds the autograder image.
# AUTOGRADER_ROOT exists for local tests (tests/test_gradescope_setup.py). The toolchain is the
# Makefile's choice: current (Python 3.12 or later, the JAX the book teaches, constraints-py312.txt)
# from a python3.12, a python3.13 or a python3 of 3.12 or later (Ubuntu 24.04); legacy (Python
# 3.11, JAX 0.10.2, constraints.txt) from a python3.11 otherwise. apt-get runs only where the
# image has neither, or where the Python lacks ensurepip (Debian's python3.X-venv).
set -euo pipefail
root="${AUTOGRADER_ROOT:-/autograder}"
cd "$root/source"
version() { "$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null; }
# The first that runs: a pyenv shim of a version not chosen is on the PATH but runs nothing.
pick() {
  if [ "$(version python3.12)" = 3.12 ]; then python=python3.12
  elif [ "$(version python3.13)" = 3.13 ]; then python=python3.13
  elif [[ "$(version python3)" =~ ^3\\.(1[2-9]|[2-9][0-9])$ ]]; then python=python3
  elif [ "$(version python3.11)" = 3.11 ]; then python=python3.11
  else return 1
  fi
}
if ! pick; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  apt-get install -y python3.12 python3.12-venv || apt-get install -y python3.11 python3.11-venv \\
    || true
  if ! pick; then
    echo "setup.sh: found no Python 3.11 or 3.12 (python3.11, python3.12 or a python3 that is" \\
      "3.12 or later) on the PATH, and apt-get installed neither; the course needs one." >&2
    exit 1
  fi
fi
v="$(version "$python")"
if ! "$python" -c 'import ensurepip' 2>/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  apt-get install -y "python$v-venv"
fi
"$python" -m venv .venv
if [ "$v" = 3.11 ]; then
  # requirements.txt pins the JAX of Python 3.12 and later: on 3.11, constraints.txt decides
  # jax and jaxlib (0.10.2).
  requirements=.venv/requirements-legacy.txt constraints=constraints.txt
  sed -E 's/^(jax|jaxlib)==.*/\\1/' requirements.txt > "$requirements"
else
  requirements=requirements.txt constraints=constraints-py312.txt
fi
echo "setup.sh: Python $v ($(command -v "$python")), $constraints" >&2
.venv/bin/python -m pip install --disable-pip-version-check --quiet \\
  -r "$requirements" -c "$constraints"
.venv/bin/python -m pip install --disable-pip-version-check --quiet \\
  --no-deps --no-build-isolation -e .
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for each submission. AUTOGRADER_ROOT and PYTHON exist for local tests.
set -euo pipefail
root="${{AUTOGRADER_ROOT:-/autograder}}"
source="$root/source"
python="${{PYTHON:-$source/.venv/bin/python}}"
export PATH="$(dirname "$python"):$PATH"
student="$("$python" -c 'import json, sys
users = json.load(open(sys.argv[1])).get("users") or [{{}}]
print(users[0].get("id") or users[0].get("sid") or "student")' "$root/submission_metadata.json")"
work="$(mktemp -d)"
cd "$source"
"$python" -c 'import sys
from pathlib import Path
from autograder.instructor.gradescope import stage_submission
stage_submission(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3])' \
  "$root/submission" "$work/submitted/$student/{assignment}" "{notebook}"
"$python" -m autograder grade {assignment} "$work/submitted" --out "$work/out" \\
  --root "$source" --db "sqlite:///$work/gradebook.db" --workers 1 --no-progress
"$python" -m autograder export gradescope "$work/out" "$student" \\
  --dest "$root/results/results.json"
"""

# What grading needs besides the assignment's own folder: the engine, the course's package
# (checks and probes import it), the pins of both toolchains and pyproject.toml (setup.sh reads
# them). Not the modules that build demo classes.
_CARRIED = ("autograder", "jaxcourse", "pyproject.toml", "requirements.txt", "constraints.txt",
            "constraints-py312.txt")
_LEFT_OUT = ("autograder/instructor/classroom.py", "autograder/instructor/demo.py",
             "autograder/assignments/edits.py")
# In an assignment's folder, what only the tests and the demo import (autograder/README.md): wrong
# solutions, correct alternatives, and the contract value that imports both.
TESTS_ONLY = ("mutants.py", "alternatives.py", "assignment.py")
# Folders Jupyter, macOS archives and editors leave beside a notebook.
_IGNORED_FOLDERS = ("__MACOSX", "__pycache__")


def stage_submission(submission: Path, folder: Path, notebook: str) -> list[Path]:
    """Copy the submitted notebook(s) into ``folder`` (SUBMITTED/<student>/<assignment>/) so
    that the local grader's rule picks the same one it would pick from a class: the notebook
    named ``notebook`` if there is one, else the only notebook; never one under a hidden folder
    (``.ipynb_checkpoints/<name>-checkpoint.ipynb``). Nested folders (an uploaded zip) count;
    the shallowest file of a name wins."""
    folder.mkdir(parents=True, exist_ok=True)
    found: dict[str, Path] = {}
    candidates = sorted(Path(submission).rglob("*.ipynb"),
                        key=lambda p: (len(p.relative_to(submission).parts), str(p)))
    for path in candidates:
        parts = path.relative_to(submission).parts
        if any(part.startswith(".") or part in _IGNORED_FOLDERS for part in parts):
            continue
        if path.is_file() and not path.is_symlink():
            found.setdefault(path.name, path)
    chosen = [found[notebook]] if notebook in found else list(found.values())
    for path in chosen:
        (folder / path.name).write_bytes(path.read_bytes())
    return [folder / p.name for p in chosen]


def bundle_files(assignment: str, root: Path) -> list[tuple[Path, str]]:
    """(file, name in the bundle) of everything the bundle carries for ``assignment``."""
    root = Path(root)
    files = []
    for item in (*_CARRIED, f"assignments/{assignment}"):
        path = root / item
        for child in [path] if path.is_file() else sorted(path.rglob("*")):
            name = child.relative_to(root).as_posix()
            if not child.is_file() or "__pycache__" in child.parts or name in _LEFT_OUT:
                continue
            parts = child.relative_to(root).parts
            # Of the assignments' modules, only this assignment's grading ones.
            if parts[:2] == ("autograder", "assignments") and len(parts) > 3 and (
                    parts[2] != assignment or parts[-1] in TESTS_ONLY):
                continue
            files.append((child, name))
    return files


def build_bundle(*, assignment: str, root: Path, dest: Path) -> Path:
    """Write ``dest`` (a .zip) holding setup.sh, run_autograder and the course's source."""
    root, dest = Path(root), Path(dest)
    # The assignment's name only, not its checks: building a bundle never imports JAX. Its
    # notebook is assignments/NAME/NAME.ipynb (the contract; tests/contract/test_registry.py).
    check_assignment(assignment, "autograder.assignments")
    secret = course_secret(root, None)
    dest.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in (("setup.sh", SETUP_SH),
                           ("run_autograder", RUN_AUTOGRADER.format(assignment=assignment,
                                                             notebook=f"{assignment}.ipynb"))):
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFREG | 0o755) << 16
            z.writestr(info, text)
        z.writestr(".autograder_secret", secret.decode() + "\n")
        for path, name in bundle_files(assignment, root):
            z.write(path, name)
    return dest


def unpack(bundle: Path, dest: Path) -> Path:
    """Unzip a bundle as Gradescope does (executable bits kept); for local tests."""
    shutil.rmtree(dest, ignore_errors=True)
    with zipfile.ZipFile(bundle) as z:
        for info in z.infolist():
            target = Path(z.extract(info, dest))
            mode = info.external_attr >> 16
            if mode & 0o111:
                target.chmod(target.stat().st_mode | 0o755)
    return dest
