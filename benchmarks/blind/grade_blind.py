"""Grade a blind set with the real command and tabulate it.

    python grade_blind.py grade ASSIGNMENT SECRET [--twice]   # one run (ids <id>, and <id>_b with --twice)
    python grade_blind.py table ASSIGNMENT                     # every run so far

Blind set: $BLIND_ROOT/blind_<ASSIGNMENT>/<id>.ipynb with manifest.json {id: {task, kind}}.
Runs in $GRADING/<ASSIGNMENT>/<SECRET>/ with the checkout $GR (its .venv, its checks).
Defaults: BLIND_ROOT=/work, GRADING=/work/grading, GR=/work/gr (a frozen clone, so the checks
graded are the ones measured, whatever main does meanwhile). `--workers` comes from $WORKERS (2).
"""
import csv
import importlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

GR = Path(os.environ.get("GR", "/work/gr"))
BLIND_ROOT = Path(os.environ.get("BLIND_ROOT", "/work"))
GRADING = Path(os.environ.get("GRADING", "/work/grading"))
WORKERS = os.environ.get("WORKERS", "2")
PY = GR / ".venv/bin/python"


def manifest(a):
    return json.loads((BLIND_ROOT / f"blind_{a}" / "manifest.json").read_text())


def grade(a, secret, twice):
    base = GRADING / a / secret
    shutil.rmtree(base, ignore_errors=True)
    for vid in manifest(a):
        src = BLIND_ROOT / f"blind_{a}" / f"{vid}.ipynb"
        for sid in ([vid, vid + "_b"] if twice else [vid]):
            dst = base / "submitted" / sid / a / f"{a}.ipynb"
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, dst)
    env = dict(os.environ, PATH=f"{GR / '.venv/bin'}:{os.environ['PATH']}")
    with open(base / "grade.log", "w") as log:
        done = subprocess.run([str(PY), "-m", "autograder", "grade", a, str(base / "submitted"),
                               "--out", str(base / "out"), "--seed", secret, "--workers", WORKERS,
                               "--db", f"sqlite:///{base / 'gb.db'}", "--no-progress"],
                              check=False, cwd=GR, env=env, stdout=log,
                              stderr=subprocess.STDOUT)
    print(a, secret, "exit", done.returncode)


def task_of(a):
    sys.path.insert(0, str(GR))
    from autograder.assignments import REGISTRY
    spec = importlib.import_module(REGISTRY[a]).ASSIGNMENT
    return {c.id: c.task for c in spec.checks}


def verdict(kind, runs_):
    if kind != "wrong":
        return "FAILS"
    # its task's checks that ran all passed, and some did not run: only a GPU can tell
    return "SURVIVES (its task's GPU checks not run)" if any(r[6] for r in runs_) else "SURVIVES"


def table(a):
    tasks = task_of(a)
    runs = sorted(p for p in (GRADING / a).glob("*/out/grades.csv"))
    rows = {}
    for grades in runs:
        secret = grades.parent.parent.name
        for row in csv.DictReader(grades.open()):
            sid = row["student_id"]
            vid = sid.removesuffix("_b")
            res = json.loads((grades.parent / "results" / f"{sid}.json").read_text())
            own = manifest(a)[vid]["task"]
            mine = [t for t in res["tests"] if tasks.get(t["name"].split(":")[0]) == own]
            # A check left `not-run` (it needs a GPU the machine lacks) is out of the maximum,
            # as in the grade itself: counting its points as lost made every ps5.cuda variant
            # look caught on a CPU grader, and every correct one look short of 6 points.
            ran = [t for t in mine if t["status"] != "not-run"]
            got = sum(t["points"] for t in ran)
            most = sum(t["max_points"] for t in ran)
            gpu_only = len(ran) < len(mine)
            rows.setdefault(vid, []).append(
                (f"{secret}{'/b' if sid.endswith('_b') else ''}", float(row["score"]),
                 float(row["max_score"]), got, most, row["status"], gpu_only))
    m = manifest(a)
    summary = {"wrong": [0, 0], "alt": [0, 0], "short": [0, 0], "correct": [0, 0]}
    lines = []
    for vid, runs_ in sorted(rows.items()):
        kind = m[vid]["kind"]
        if kind == "wrong":
            ok = all(r[3] < r[4] for r in runs_)  # lost points on its own task in every run
        elif kind in ("alt", "correct"):
            ok = all(r[1] == r[2] for r in runs_)
        else:  # shortcut: nothing on its own task (its honest part elsewhere)
            ok = all(r[3] == 0 for r in runs_)
        summary[kind][0] += ok
        summary[kind][1] += 1
        moved = len({r[1] for r in runs_}) > 1
        lines.append(f"| {vid} | {kind} | {m[vid]['task']} | "
                     + " ".join(f"{r[0]}:{r[1]:g}/{r[2]:g} own {r[3]:g}/{r[4]:g} {r[5]}"
                                for r in runs_)
                     + f" | {'ok' if ok else verdict(kind, runs_)}"
                     + (" MOVED" if moved else "") + " |")
    print("\n".join(lines))
    print({k: f"{v[0]} of {v[1]}" for k, v in summary.items()},
          "runs:", [p.parent.parent.name for p in runs])


if __name__ == "__main__":
    if sys.argv[1] == "grade":
        grade(sys.argv[2], sys.argv[3], "--twice" in sys.argv)
    else:
        table(sys.argv[2])
