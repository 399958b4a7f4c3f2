"""Load a notebook's setup + solution cells into a fresh namespace (no test cells)."""
import json, sys, os, traceback
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
SOLUTION_IDS = ["broadcast_transpose", "dce", "fold_constants"]
TEST_IDS = {"broadcast_transpose": "test_broadcast_transpose", "dce": "test_dce",
            "fold_constants": "test_fold_constants"}


def cells(nb_path):
    nb = json.load(open(nb_path))
    return {c.get("id"): "".join(c["source"]) for c in nb["cells"]}


def load(nb_path, upto=None):
    src = cells(nb_path)
    ns = {"__name__": "__main__"}
    exec(compile(src["setup"], "setup", "exec"), ns)
    for cid in SOLUTION_IDS:
        exec(compile(src[cid], cid, "exec"), ns)
    return ns, src


def visible(nb_path):
    """Run setup, then each solution cell followed by its test cell, as the notebook does."""
    src = cells(nb_path)
    ns = {"__name__": "__main__"}
    exec(compile(src["setup"], "setup", "exec"), ns)
    res = {}
    for cid in SOLUTION_IDS:
        try:
            exec(compile(src[cid], cid, "exec"), ns)
            exec(compile(src[TEST_IDS[cid]], TEST_IDS[cid], "exec"), ns)
            res[cid] = "pass"
        except Exception as e:
            res[cid] = f"FAIL {type(e).__name__}: {str(e)[:120]}"
    return res
