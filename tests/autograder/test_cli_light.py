"""Commands that do not grade start without JAX (issue 27): `export`, `release`'s parser,
`gradescope` (building a bundle), `--help`; and `grade --help` shows every limit's default
(issue 30)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile

from engine_helpers import REPO

from autograder.assignments import course

EXPORT_WITHOUT_JAX = """
import sys
from pathlib import Path
from autograder import cli
out = Path(sys.argv[1])
(out / "results").mkdir()
(out / "grades.csv").write_text("student_id,assignment,score,max_score,status,message\\n"
                                "alice,ps1_primitives,3,5,graded,3 of 5 checks passed\\n")
assert cli.main(["export", "canvas", str(out), "--dest", str(out / "canvas.csv")]) == 0
for args in (["--help"], ["export", "--help"], ["release", "--help"], ["grade", "--help"]):
    try:
        cli.main(args)
    except SystemExit:
        pass
heavy = sorted(m for m in ("jax", "jaxlib", "IPython", "autograder.worker.runner",
                           "autograder.student.sandbox")
               if m in sys.modules)
print("HEAVY", heavy)
"""


def test_export_and_help_never_import_jax_or_the_sandbox(tmp_path):
    proc = subprocess.run([sys.executable, "-c", EXPORT_WITHOUT_JAX, str(tmp_path)], cwd=REPO,
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "HEAVY []" in proc.stdout, proc.stdout[-2000:]
    assert "alice" in (tmp_path / "canvas.csv").read_text()


def test_grade_help_shows_the_defaults_of_the_limits():
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade", "--help"], cwd=REPO,
                          capture_output=True, text=True, timeout=120, check=False)
    text = " ".join(proc.stdout.split())
    for option, default in (("--cell-timeout", "60.0"), ("--notebook-timeout", "600.0"),
                            ("--memory-mb", "3072")):
        assert option in text and f"(default: {default})" in text, text


def test_an_unknown_assignment_lists_the_valid_names():
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade", "ps9", str(REPO),
                           "--out", str(REPO / "_build" / "unused")], cwd=REPO,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 2
    assert f"the assignments are: {', '.join(course())};" in proc.stderr


BUNDLE_WITHOUT_JAX = """
import sys
from autograder import cli
root, out = sys.argv[1], sys.argv[2]
assert cli.main(["gradescope", "ps1_primitives", "--root", root, "--out", out]) == 0
assert cli.main(["gradescope", "ps9", "--root", root, "--out", out + ".no"]) == 2
heavy = sorted(m for m in ("jax", "jaxlib", "IPython", "autograder.worker.runner",
                           "autograder.student.sandbox", "autograder.grade.grading")
               if m in sys.modules)
print("HEAVY", heavy)
"""


def test_building_a_gradescope_bundle_never_imports_jax(tmp_path):
    root = tmp_path / "course"
    ignore = shutil.ignore_patterns("__pycache__")
    for folder in ("autograder", "jaxcourse", "assignments/ps1_primitives"):
        shutil.copytree(REPO / folder, root / folder, ignore=ignore)
    for name in ("pyproject.toml", "requirements.txt", "constraints.txt"):
        shutil.copy(REPO / name, root / name)
    (root / ".autograder_secret").write_text("light\n")
    proc = subprocess.run([sys.executable, "-c", BUNDLE_WITHOUT_JAX, str(root),
                           str(tmp_path / "bundle.zip")], cwd=REPO,
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "HEAVY []" in proc.stdout, proc.stdout[-2000:]
    assert "unknown assignment 'ps9'" in proc.stderr
    with zipfile.ZipFile(tmp_path / "bundle.zip") as z:
        assert "ps1_primitives.ipynb" in z.read("run_autograder").decode()
        assert z.read(".autograder_secret") == b"light\n"
