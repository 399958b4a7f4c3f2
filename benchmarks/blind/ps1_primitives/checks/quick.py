"""Quick self-check of one variant: runs its notebook's setup and solution cells, then the visible
test cells (pass/fail each), then the variant's witness (src/<id>.py, section '# %% witness'): the
recorded input where it differs from real JAX. usage: python checks/quick.py ID"""
import json, re, sys, pathlib
ROOT = pathlib.Path(__file__).resolve().parents[1]
vid = sys.argv[1]
nb = json.load(open(ROOT / f"{vid}.ipynb"))
ns = {"__name__": "__main__"}
vis = {}
for c in nb["cells"]:
    if c["cell_type"] != "code":
        continue
    src = "".join(c["source"])
    try:
        exec(compile(src, c["id"], "exec"), ns)
        if c["id"].startswith("test_"):
            vis[c["id"]] = "pass"
    except Exception as e:
        vis[c["id"]] = f"FAIL {type(e).__name__}: {str(e)[:120]}"
wit = None
srcfile = ROOT / "src" / f"{vid}.py"
if srcfile.exists() and "# %% witness" in srcfile.read_text():
    code = srcfile.read_text().split("# %% witness\n", 1)[1]
    try:
        exec(code, ns)
        wit = ns.get("result") or "NO DIFFERENCE FOUND"
    except Exception as e:
        wit = f"raises {type(e).__name__}: {str(e)[:160]}"
fails = {k: v for k, v in vis.items() if v != "pass"}
print(json.dumps({"id": vid, "visible_pass": not fails, "visible_fail": fails, "witness": wit}))
