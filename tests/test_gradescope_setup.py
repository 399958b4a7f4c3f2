"""The bundle's ``setup.sh`` run as Gradescope runs it (bash, from another folder, the bundle
unzipped into ROOT/source; ``AUTOGRADER_ROOT`` stands for /autograder): it picks the Makefile's
toolchain from the Pythons on the PATH, calls apt-get only where there is none, and leaves a
``source/.venv`` that grades a reference submission to full marks through ``run_autograder``.

The choice of toolchain is proved with fake interpreters that record their calls (no install, a
second each); the install itself once, for real, with the toolchain this machine's PATH picks
(legacy where no Python 3.12 or later runs from the PATH, as on CI, whose pyenv has 3.11 chosen
and leaves `make` to find its 3.12 itself): about 2 min here, most of it pip's; the current
toolchain's with python3.11 hidden only with ``--stability``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from autograder.instructor.gradescope import build_bundle, unpack
from autograder.instructor.release import names
from jaxcourse.versions import PINNED_JAX

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENTS = names(root=ROOT)
# The cheapest class to grade (tests/test_dask_cluster.py).
NAME = "ps4_core" if "ps4_core" in ASSIGNMENTS else ASSIGNMENTS[0]
MESSAGE = "found no Python 3.11 or 3.12"

# A Python that records each call in $FAKE_LOG as `NAME ARGS`, says it is VERSION, may lack
# ensurepip, and whose `-m venv .venv` leaves a .venv/bin/python that is itself.
FAKE_PYTHON = """#!/bin/bash
echo "${{0##*/}} $*" >> "$FAKE_LOG"
case "$*" in
  *version_info*) echo {version} ;;
  "-c import ensurepip") exit {ensurepip} ;;
  "-m venv .venv") mkdir -p .venv/bin && cp "$0" .venv/bin/python ;;
esac
"""
# A python that does not run: pyenv's shim of a version pyenv has not chosen.
BROKEN = """#!/bin/bash
echo "pyenv: ${0##*/}: command not found" >&2
exit 127
"""
# An apt-get that records its arguments (one call a line) and then runs ACTION.
FAKE_APT_GET = """#!/bin/bash
echo "$*" >> "$APT_LOG"
{action}
"""
# What the fakes need of the system, and nothing that could be a Python.
TOOLS = ("bash", "mkdir", "cp", "sed")


def _script(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o755)
    return path


def _bundle(tmp_path: Path) -> Path:
    """ROOT/source as Gradescope leaves it; returns ROOT (Gradescope's /autograder)."""
    autograder = tmp_path / "autograder"
    unpack(build_bundle(assignment=NAME, root=ROOT, dest=tmp_path / "bundle.zip"),
           autograder / "source")
    return autograder


def _setup(autograder: Path, path: str, tmp_path: Path, *, timeout: float,
           **env: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": path, "AUTOGRADER_ROOT": str(autograder),
           "APT_LOG": str(tmp_path / "apt.log"), "FAKE_LOG": str(tmp_path / "python.log"), **env}
    for name in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME"):
        env.pop(name, None)
    # Gradescope runs it with bash, from its own folder; ours must not depend on the cwd.
    return subprocess.run([shutil.which("bash"), str(autograder / "source" / "setup.sh")],
                          cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def _shims(folder: Path, pythons: dict[str, tuple[str, int]], apt_action: str) -> Path:
    """A PATH of one folder: the TOOLS, an apt-get running ``apt_action``, and a fake Python
    for each name -> (version, exit status of `import ensurepip`); one of version None does not
    run."""
    folder.mkdir(parents=True)
    for tool in TOOLS:
        (folder / tool).symlink_to(shutil.which(tool))
    for name, (version, ensurepip) in pythons.items():
        _script(folder / name, FAKE_PYTHON.format(version=version, ensurepip=ensurepip)
                if version else BROKEN)
    _script(folder / "apt-get", FAKE_APT_GET.format(action=apt_action))
    return folder


PIP = "-m pip install --disable-pip-version-check --quiet"
LEGACY = f"{PIP} -r .venv/requirements-legacy.txt -c constraints.txt"
CURRENT = f"{PIP} -r requirements.txt -c constraints-py312.txt"
EDITABLE = f"{PIP} --no-deps --no-build-isolation -e ."
# An apt-get that installs python3.11 (as a fake) and has no python3.12 package, as Ubuntu 22.04.
INSTALLS_311 = """case "$*" in
  *python3.12*) exit 100 ;;
  "install -y python3.11 python3.11-venv") cp "$APT_PYTHON" "${0%/*}/python3.11" ;;
esac"""


@pytest.mark.parametrize(("pythons", "apt_action", "chosen", "pip", "apt"), [
    # A python3.12 on the PATH: the primary toolchain, whatever else is there.
    ({"python3.11": ("3.11", 0), "python3.12": ("3.12", 0), "python3": ("3.12", 0)}, "exit 97",
     "python3.12", CURRENT, []),
    # Only a python3.11 (a python3 of 3.11 beside it): the legacy toolchain.
    ({"python3.11": ("3.11", 0), "python3": ("3.11", 0)}, "exit 97", "python3.11", LEGACY, []),
    # Ubuntu 24.04: no python3.11; its python3 is 3.12. The current toolchain, no apt-get.
    ({"python3": ("3.12", 0)}, "exit 97", "python3", CURRENT, []),
    ({"python3.12": ("3.12", 0), "python3": ("3.10", 0)}, "exit 97", "python3.12", CURRENT, []),
    # A python3.11 that does not run (pyenv's shim, here) is none.
    ({"python3.11": (None, 0), "python3": ("3.12", 0)}, "exit 97", "python3", CURRENT, []),
    # Debian's python3.12 without python3.12-venv: its -venv package, then on.
    ({"python3.12": ("3.12", 1)}, "exit 0", "python3.12", CURRENT,
     ["update", "install -y python3.12-venv"]),
    # Only an older python3: apt-get, which has no python3.12 but a python3.11.
    ({"python3": ("3.10", 0)}, INSTALLS_311, "python3.11", LEGACY,
     ["update", "install -y python3.12 python3.12-venv", "install -y python3.11 python3.11-venv"]),
], ids=["both", "python3.11", "ubuntu-24.04-python3", "python3.12", "broken-python3.11",
        "no-ensurepip", "apt-python3.11"])
def test_setup_picks_the_makefiles_toolchain(tmp_path, pythons, apt_action, chosen, pip, apt):
    autograder = _bundle(tmp_path)
    shims = _shims(tmp_path / "shims", pythons, apt_action)
    fake_311 = _script(tmp_path / "python3.11.fake", FAKE_PYTHON.format(version="3.11",
                                                                        ensurepip=0))
    run = _setup(autograder, str(shims), tmp_path, timeout=60, APT_PYTHON=str(fake_311))
    assert run.returncode == 0, run.stdout + run.stderr
    assert _lines(tmp_path / "apt.log") == apt
    calls = _lines(tmp_path / "python.log")
    assert f"{chosen} -m venv .venv" in calls, calls
    # Every call but the probes of `python3` (its version) goes to the chosen one or the venv's.
    assert {c.split()[0] for c in calls} <= {chosen, "python", "python3"}, calls
    assert [c.partition(" ")[2] for c in calls if c.startswith("python ")] == [pip, EDITABLE]
    # What pip reads is in the bundle (bundle_files carries it) or written by setup.sh.
    source = autograder / "source"
    words = pip.split()
    for flag in ("-r", "-c"):
        assert (source / words[words.index(flag) + 1]).is_file(), words
    assert (source / "pyproject.toml").is_file()
    if pip is LEGACY:
        # The legacy toolchain: requirements.txt without its JAX pins, the constraints decide.
        legacy = (autograder / "source" / ".venv" / "requirements-legacy.txt").read_text()
        pinned = (autograder / "source" / "requirements.txt").read_text()
        assert legacy == pinned.replace(f"jax=={PINNED_JAX}\n", "jax\n").replace(
            f"jaxlib=={PINNED_JAX}\n", "jaxlib\n")
        assert {"jax", "jaxlib"} <= set(legacy.splitlines())


def test_setup_without_a_python_asks_apt_get_then_stops_with_a_clear_message(tmp_path):
    """An image with no Python 3.11 or 3.12 and an apt-get that installs nothing: setup.sh asks
    apt-get for python3.12 (it "succeeds"), finds none, and exits 1 saying why."""
    autograder = _bundle(tmp_path)
    shims = _shims(tmp_path / "shims", {}, "exit 0")
    run = _setup(autograder, str(shims), tmp_path, timeout=60)
    assert run.returncode == 1, run.stdout + run.stderr
    assert MESSAGE in run.stderr
    assert _lines(tmp_path / "apt.log") == ["update", "install -y python3.12 python3.12-venv"]
    assert not (autograder / "source" / ".venv").exists()


PROBE = ("import sys, jax, nbgrader, autograder; "
         "print('%d.%d' % sys.version_info[:2], jax.__version__, autograder.__file__)")
BASE = "import sys; print('%d.%d' % sys.version_info[:2], sys._base_executable)"


def _runs_as(name: str, versions: tuple[str, ...]) -> bool:
    """Whether ``name`` on this PATH runs and is one of ``versions`` (``3.12``)."""
    if not shutil.which(name):
        return False
    run = subprocess.run([name, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                         capture_output=True, text=True, timeout=60, check=False)
    return run.returncode == 0 and run.stdout.strip() in versions


def _python312() -> str | None:
    """A Python 3.12 interpreter (not a venv's): a python3.12 on the PATH that runs (pyenv's shim
    may not), else the one under the primary toolchain's venv (``make``)."""
    for candidate in (shutil.which("python3.12"), ROOT / ".venv" / "bin" / "python"):
        if not candidate or not Path(candidate).exists():
            continue
        run = subprocess.run([str(candidate), "-c", BASE], capture_output=True, text=True,
                             timeout=60, check=False)
        version, _, executable = run.stdout.strip().partition(" ")
        if run.returncode == 0 and version == "3.12":
            return executable
    return None


def _without_python311(folder: Path, python312: str) -> str:
    """A PATH of one folder: a link to each command of this PATH (the first of its name) but
    every python3.11 and the bare python and python3, and python3.12 -> ``python312``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "python3.12").symlink_to(python312)
    for directory in os.environ["PATH"].split(os.pathsep):
        if not Path(directory).is_dir():
            continue
        for command in Path(directory).iterdir():
            name = command.name
            if (name.startswith("python3.11") or name in ("python", "python3")
                    or (folder / name).exists() or (folder / name).is_symlink()):
                continue
            (folder / name).symlink_to(command)
    return str(folder)


# pip installs the whole pinned tree, then run_autograder grades one notebook: about 2 min here
# for legacy, 2.5 min for current, on 2 busy cores with pip's cache cold (less where `make` has
# just warmed it). `path`: the toolchain this machine's PATH picks (legacy where no Python 3.12 or
# later runs from it, as here and on CI);
# `current`: python3.11 hidden, a python3.12 on the PATH, as on Ubuntu 24.04 (a second install,
# opt-in: `--stability`).
@pytest.mark.slow
@pytest.mark.timeout(1500)
@pytest.mark.parametrize("toolchain", ["path", pytest.param("current", marks=pytest.mark.stability)])
def test_setup_installs_a_venv_that_grades_a_reference_submission_to_full_marks(tmp_path,
                                                                               toolchain):
    import nbformat
    from gradescope_run import run_autograder

    from autograder.instructor.classroom import make_submission, solution_sources

    autograder = _bundle(tmp_path)
    shims = _shims(tmp_path / "shims", {}, "exit 97")
    if toolchain == "current":
        python312 = _python312()
        if python312 is None:
            pytest.skip("no Python 3.12 here")
        path = _without_python311(shims, python312)
        legacy = False
    else:
        path = f"{shims}{os.pathsep}{os.environ['PATH']}"
        # setup.sh's rule: current where a python3.12, a python3.13 or a python3 of 3.12 or later
        # runs (pyenv's shims of versions it has not chosen do not), legacy otherwise.
        legacy = not any(_runs_as(name, versions) for name, versions in (
            ("python3.12", ("3.12",)), ("python3.13", ("3.13",)),
            ("python3", tuple(f"3.{minor}" for minor in range(12, 100)))))
    run = _setup(autograder, path, tmp_path, timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    # This machine has a Python: setup.sh never reached for apt-get.
    assert not (tmp_path / "apt.log").exists()
    python = autograder / "source" / ".venv" / "bin" / "python"
    check = subprocess.run(
        [str(python), "-I", "-c", PROBE], cwd=tmp_path / "shims", capture_output=True,
        text=True, timeout=300, check=False)
    assert check.returncode == 0, check.stderr
    version, jax_version, module = check.stdout.split()
    assert (version == "3.11") == legacy, check.stdout
    pins = "constraints.txt" if legacy else "constraints-py312.txt"
    assert f"jax=={jax_version}" in (ROOT / pins).read_text().splitlines(), check.stdout
    # The course installed from the bundle (editable), not from this checkout.
    assert Path(module).resolve().is_relative_to((autograder / "source").resolve()), module

    submission = autograder / "submission"
    submission.mkdir()
    nbformat.write(make_submission(NAME, solution_sources(NAME, root=ROOT), root=ROOT),
                   submission / f"{NAME}.ipynb")
    # run_autograder as on Gradescope: no PYTHON, so the venv setup.sh made.
    data = run_autograder(autograder, "reference", timeout=600, python=None)
    assert data["tests"] and all(t["status"] == "passed" for t in data["tests"]), data["output"]
    full = sum(t["max_score"] for t in data["tests"])
    assert full > 0 and data["score"] == pytest.approx(full), data["output"]
