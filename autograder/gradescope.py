"""A Gradescope autograder bundle for one assignment: ``python -m autograder gradescope ...``.

Gradescope unzips the bundle into ``/autograder/source``, runs ``setup.sh`` once when it builds
the image, then ``run_autograder`` for each submission, which must leave
``/autograder/results/results.json``. Ours grades the one submitted notebook with the same
``grade`` command as a local class (same sandbox, same checks, the course's secret from the
bundle, so a re-run gives the same grade) and converts its results with
``autograder.exports.write_gradescope``. The bundle holds the course's code and the secret, never
the solutions: it is the instructor's upload, not something students see.
"""

from __future__ import annotations

import shutil
import stat
import zipfile
from pathlib import Path

SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image.
set -euo pipefail
cd /autograder/source
apt-get update
apt-get install -y python3.11 python3.11-venv
python3.11 -m venv .venv
.venv/bin/python -m pip install --quiet -r requirements.txt -c constraints.txt
.venv/bin/python -m pip install --quiet --no-deps --no-build-isolation -e .
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
mkdir -p "$work/submitted/$student/{assignment}"
notebook="$(find "$root/submission" -maxdepth 2 -name '*.ipynb' -type f | sort | head -n 1)"
if [ -n "$notebook" ]; then
  cp "$notebook" "$work/submitted/$student/{assignment}/"
fi
cd "$source"
"$python" -m autograder grade {assignment} "$work/submitted" --out "$work/out" \\
  --root "$source" --db "sqlite:///$work/gradebook.db" --workers 1 --no-progress
"$python" -m autograder export gradescope "$work/out" "$student" \\
  --dest "$root/results/results.json"
"""

# What the bundle carries: the course's packages, the assignment's release notebook and the pins.
_CARRIED = ("autograder", "jaxcourse", "pyproject.toml", "requirements.txt", "constraints.txt")


def build_bundle(*, assignment: str, root: Path, dest: Path) -> Path:
    """Write ``dest`` (a .zip) holding setup.sh, run_autograder and the course's source."""
    from autograder.grading import course_secret, load_assignment

    root, dest = Path(root), Path(dest)
    load_assignment(assignment, "autograder.assignments")  # a UsageError for a wrong name
    release = root / "assignments" / assignment
    secret = course_secret(root, None)
    dest.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in (("setup.sh", SETUP_SH),
                           ("run_autograder", RUN_AUTOGRADER.format(assignment=assignment))):
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFREG | 0o755) << 16
            z.writestr(info, text)
        z.writestr(".autograder_secret", secret.decode() + "\n")
        for item in _CARRIED:
            _add(z, root / item, root)
        _add(z, release, root)
    return dest


def _add(z: zipfile.ZipFile, path: Path, root: Path) -> None:
    if path.is_file():
        z.write(path, path.relative_to(root).as_posix())
        return
    for child in sorted(path.rglob("*")):
        if child.is_file() and "__pycache__" not in child.parts:
            z.write(child, child.relative_to(root).as_posix())


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
