"""List error outputs of executed notebooks (policy refusals show up here)."""
import json, sys
for p in sys.argv[1:]:
    nb = json.load(open(p))
    errs = []
    for c in nb["cells"]:
        for o in c.get("outputs", []):
            if o.get("output_type") == "error":
                errs.append(f"{c.get('id')}: {o.get('ename')}: {o.get('evalue')[:300]}")
            elif o.get("output_type") == "stream" and "refus" in "".join(o.get("text", "")).lower():
                errs.append(f"{c.get('id')}: stream: {''.join(o['text'])[:300]}")
    print(p, "OK (no errors)" if not errs else "")
    for e in errs:
        print("   ", e)
