"""Assemble ../catalogue.md from the descriptions below and results/<id>.txt."""
import json, os, re
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.dirname(HERE)
man = json.load(open(f"{OUT}/manifest.json"))
D = {
 "correct": "reference: sum ct over the new axes and the stretched size-1 axes with `reduce_sum`, re-insert the stretched axes with `broadcast`; DCE one backward liveness pass; folding one forward pass, then fresh constvars for still-read folded results",
 "wrong_01": "sums over the new `axes` only: forgets the stretched size-one axes of x",
 "wrong_02": "sums new and stretched axes but never puts the stretched size-one axes back (ct has the wrong rank)",
 "wrong_03": "NumPy `np.sum(..., keepdims=True)` instead of the wrappers: right eagerly, breaks when the cotangent is a tracer (jit)",
 "wrong_04": "finds the stretched axes by comparing `x.shape[j]` with `shape[j]` (x's index used as a result index; off when new axes come first)",
 "wrong_05": "returns `reduce_sum`'s result directly when no axis was stretched: for rank-0 x that is a NumPy scalar (np.float32/np.float64), not an ndarray; values, shapes, dtypes all right (see ambiguity 1)",
 "wrong_06": "accumulates into `np.zeros(x_shape)` (float64): float32 x gets a float64 cotangent",
 "wrong_07": "stretched axes detected by `x_dim < out_dim`: misses a size-1 axis stretched to size 0",
 "wrong_08": "assumes NumPy-style broadcasting: new axes are the leading ones (ignores `axes`)",
 "wrong_09": "restores the size-one axes with `np.reshape`: right eagerly, fails under jit",
 "wrong_26": "sums the stretched axes first, then the new axes with their original positions (indices shifted after the first reduction)",
 "wrong_10": "drops only equations whose results nobody reads at all (one level): chains of dead equations survive",
 "wrong_11": "an equation is live when its FIRST output is read: a jit/cond equation whose second output alone is read is dropped",
 "wrong_12": "an equation is live only when ALL its outputs are read: jit/cond equations with one output read are dropped",
 "wrong_13": "also cleans the jaxprs inside jit/cond equations, by assigning `inner.eqns = ...` (mutates the argument's inner jaxprs)",
 "wrong_14": "also drops the unused in_binders and constvars",
 "wrong_15": "DFS from the outputs via a producer map, guarding Lits and in_binders but not constvars: KeyError on closed-over constants",
 "wrong_16": "marks only the first two inputs of a live equation (binary-op thinking): a jit/cond equation with 3+ inputs loses producers",
 "wrong_27": "keeps every equation with a tuple/Jaxpr param 'to be safe' (meant for calls): keeps jit/cond with no output read, and broadcast/transpose/reduce_sum whose params are tuples",
 "wrong_17": "turns rank-0 folded results into `Lit`s instead of constvars",
 "wrong_18": "an equation is foldable only if it has at least one Var input: all-literal equations are never folded",
 "wrong_19": "rewrites inputs with `inputs.index(old)`: only the first read of a folded var in an equation is renamed",
 "wrong_20": "a new constvar per READ of a folded result, not per result (duplicates)",
 "wrong_21": "renames the kept equations' inputs in place (`e.inputs[i] = ...`): the argument changes",
 "wrong_22": "`constvars, values = jaxpr.constvars, consts` then appends folded results: mutates the argument's constvars and the caller's consts list",
 "wrong_23": "'still read' looks only at kept equations, not at the outputs: a constant or folded result returned as output gets no constvar",
 "wrong_24": "`bind(eqn.primitive, *values)` without `**eqn.params`: fails on equations with params (broadcast, reduce_sum, jit, cond)",
 "wrong_25": "records only the first output of a folded equation: 2-output jit/cond over constants lose their second result",
 "alt_01": "two steps: reduce the new axes, then compare x's shape with the remaining shape (`!=`) and reduce+re-broadcast those",
 "alt_02": "walks the result axes last to first, one `reduce_sum` per axis, re-inserting each stretched axis at once with `broadcast`",
 "alt_03": "dict from x's axes to result axes, one `reduce_sum` over the union, then `broadcast` back",
 "alt_04": "fix-point: repeatedly drop equations nobody reads (among the remaining ones) until nothing changes",
 "alt_05": "explicit stack DFS from the outputs over a producer-index map, then filter in original order",
 "alt_06": "boolean mask by index, backward loop, `set.isdisjoint`, list copies",
 "alt_07": "classify foldable equations first, then evaluate them all at once with `eval_jaxpr` on a sub-jaxpr (bind inside)",
 "alt_08": "for/else over inputs, fresh constvar made at fold time, `eqn._replace(inputs=...)`, unused ones dropped at the end",
 "alt_09": "helper functions, ordered list of every constant, filtered by a 'wanted' set at the end",
 "short_01": "hard-codes the visible tests' cases (shape (2,3)/(4,2), axes (0,)), zeros elsewhere",
 "short_02": "delegates to JAX: `getattr(jax, \"linear_transpose\")` of `lax.broadcast_in_dim` on `np.asarray(ct)`",
 "short_03": "returns zeros of x's shape and dtype (shape/dtype/array-ness right, values wrong)",
 "short_04": "'DCE' that drops every `sin`/`cos` equation (what the visible test removes)",
 "short_05": "special-cases the visible test's program (`sin, mul, mul`), computing with NumPy; returns the argument unchanged otherwise",
 "short_06": "delegates to the course's partial evaluator (`partial_eval_flat` with constants known, inputs unknown): re-traces the program",
}
HONEST = {
 "short_01": "0 on ps4.broadcast_transpose; full on ps4.dce and ps4.fold_constants",
 "short_02": "0 on ps4.broadcast_transpose (delegation; the policy refuses the cell even through getattr); full on the others",
 "short_03": "0 on ps4.broadcast_transpose; full on the others",
 "short_04": "0 on ps4.dce; full on the others",
 "short_05": "0 on ps4.fold_constants; full on the others",
 "short_06": "0 on ps4.fold_constants (skips the pass it teaches; the policy refuses the import); full on the others",
}


def result(vid):
    p = f"{HERE}/results/{vid}.txt"
    if not os.path.exists(p):
        return "(not run)", "?"
    lines = open(p).read().splitlines()
    vis = json.loads(lines[1][len("visible: "):])
    cid = {"ps4.broadcast_transpose": "broadcast_transpose", "ps4.dce": "dce",
           "ps4.fold_constants": "fold_constants"}.get(man[vid]["task"])
    passes = all(v == "pass" for v in vis.values())
    vis_txt = "yes" if passes else "no (" + ", ".join(k for k, v in vis.items() if v != "pass") + ")"
    ex = f"{OUT}/executed/{vid}.ipynb"
    if os.path.exists(ex):
        nb = json.load(open(ex))
        refused = [c["id"] for c in nb["cells"] for o in c.get("outputs", [])
                   if o.get("output_type") == "error" and o.get("ename") == "CellRefused"]
        if refused:
            vis_txt = f"no: cell {', '.join(refused)} refused by the cell policy under nbconvert (without the policy: {vis_txt})"
        else:
            vis_txt += " (nbconvert run under the policy: no refusal)"
    else:
        vis_txt += " (not run under nbconvert)"
    summary = [l for l in lines[2:] if not l.startswith("  ")]
    details = [l.strip() for l in lines[2:] if l.startswith("  ") and "not an ndarray" not in l
               and not l.strip().startswith("(")]
    nd = [l.strip() for l in lines[2:] if "not an ndarray" in l]
    if all(re.search(r": (\d+)/\1 right", s) for s in summary):
        return "right on all " + ", ".join(s.split(": ")[1].replace(" right", "") for s in summary) + " cases", vis_txt
    first = details[:2] if details else nd[:1]
    return "; ".join(first).replace("|", "/"), vis_txt


rows = ["| id | task id | kind | what it does | self-check: the input where it differs and how (or \"right on all N cases\") | passes visible tests? |",
        "| --- | --- | --- | --- | --- | --- |"]
for vid in sorted(man, key=lambda v: (["correct", "wrong", "alt", "short"].index(man[v]["kind"]), man[v]["task"], v)):
    r, vis = result(vid)
    what = D[vid] + (f" — honest part: {HONEST[vid]}" if vid in HONEST else "")
    rows.append(f"| {vid} | {man[vid]['task']} | {man[vid]['kind']} | {what} | {r} | {vis} |")
tail = open(f"{HERE}/catalogue_tail.md").read() if os.path.exists(f"{HERE}/catalogue_tail.md") else ""
open(f"{OUT}/catalogue.md", "w").write("# ps4_core blind set (blind2)\n\n" + "\n".join(rows) + "\n\n" + tail)
print("\n".join(rows))
