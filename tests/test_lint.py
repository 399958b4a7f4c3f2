"""The code base stays ruff-clean (line width 100; rules in pyproject.toml)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_is_clean():
    ruff = Path(sys.executable).with_name("ruff")
    result = subprocess.run([str(ruff), "check", "."], check=False, cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
