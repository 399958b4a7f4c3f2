"""Visible tests + the task's self-check for each notebook; writes checks/results/<id>.txt.
usage: run_all.py ID [ID...]   (ID = correct, wrong_01, ...)"""
import sys, os, json, io, contextlib
HERE = os.path.dirname(os.path.abspath(__file__)); OUT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import common, check_broadcast, check_dce, check_fold
CHECKS = {"broadcast_transpose": check_broadcast, "dce": check_dce, "fold_constants": check_fold}
os.makedirs(f"{HERE}/results", exist_ok=True)


def task_of(vid):
    if vid == "correct":
        return None
    return open(f"{HERE}/variants/{vid}.py").readline().split(":", 1)[1].strip()


for vid in sys.argv[1:]:
    nb = f"{OUT}/{vid}.ipynb"
    task = task_of(vid)
    lines = [f"# {vid} (task cell: {task or 'all'})"]
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        vis = common.visible(nb)
    lines.append("visible: " + json.dumps(vis))
    for cid, mod in CHECKS.items():
        if task is not None and cid != task:
            continue
        try:
            n, fails = mod.run(nb)
            if any(f and f.startswith("(stopped") for f in fails):
                lines.append(f"{cid}: differs from JAX (stopped early, MAXFAIL)")
            else:
                lines.append(f"{cid}: {n - len(fails)}/{n} right")
            extra = sum(1 for f in fails if f is None)
            lines += ["  " + f for f in fails if f is not None]
            if extra:
                lines.append(f"  (+{extra} more cases returning a non-ndarray, not listed)")
        except Exception as e:
            lines.append(f"{cid}: check crashed {type(e).__name__}: {e}")
    open(f"{HERE}/results/{vid}.txt", "w").write("\n".join(lines) + "\n")
    print("\n".join(lines[:12]), flush=True)
