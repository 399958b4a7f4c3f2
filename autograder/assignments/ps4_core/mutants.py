"""Realistic wrong solutions of ps4_core, for the tests and the demo class.

``MUTANTS[name] = (description, {solution grade_id: replacement cell source})``: a mutant is the
reference solution with that cell replaced. Each replacement is the reference cell as a student
would have written it (no solution markers) with one mistake edited in, so mutants follow the
source when it changes; an edit that no longer applies fails loudly. ``TASK[name]`` is the task
that must lose points. ``ALTERNATIVES`` are correct solutions written differently from the
reference, same format; each must earn every point. ``DEMO``: the mutants the demo class hands in.
``BLIND``, ``BLIND_TASK`` and ``BLIND_ALTERNATIVES``: the same, for the blind set of 2026-12-07
(``blind_2026_12_07.yml``), written whole by an author who never read the checks.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from autograder.assignments import edits

SOURCE = Path(__file__).resolve().parents[3] / "solutions" / "ps4_core" / "ps4_core.md"

BT, DCE, FOLD = "ps4.broadcast_transpose", "ps4.dce", "ps4.fold_constants"

# name: (description, grade_id, task, text in the reference cell, its wrong replacement)
EDITS = {
    "bt_identity": (
        "the cotangent is passed through unchanged, as if broadcast were the identity",
        "broadcast_transpose", BT, "    return [ct_x]", "    return [ct]"),
    "bt_sum_everything": (
        "the cotangent is summed over every axis, down to a scalar",
        "broadcast_transpose", BT, "    return [ct_x]", "    return [reduce_sum(ct)]"),
    "bt_ignores_stretching": (
        "only the new axes are summed; stretched size-one axes of x are forgotten",
        "broadcast_transpose", BT,
        "summed_axes = sorted(set(axes) | {kept[j] for j in stretched})",
        "summed_axes = sorted(axes)"),
    "bt_stretched_at_x_positions": (
        ("stretched axes are summed at their positions in x, not in the result: right until "
         "new axes come before them"),
        "broadcast_transpose", BT,
        "summed_axes = sorted(set(axes) | {kept[j] for j in stretched})",
        "summed_axes = sorted(set(axes) | set(stretched))"),
    "bt_drops_size_one_axes": (
        "stretched axes are summed away but not put back with size one",
        "broadcast_transpose", BT,
        "    if stretched:\n        ct_x = broadcast(ct_x, in_shape, stretched)\n", ""),
    "bt_sums_kept_axes": (
        "the sum runs over the axes that come from x instead of the new ones",
        "broadcast_transpose", BT,
        "summed_axes = sorted(set(axes) | {kept[j] for j in stretched})",
        "summed_axes = sorted(kept)"),
    "bt_numpy_sum": (
        "the sum is taken with NumPy, which works eagerly but not on a tracer under jit",
        "broadcast_transpose", BT,
        "ct_x = reduce_sum(ct, tuple(summed_axes)) if summed_axes else ct",
        "ct_x = np.sum(ct, axis=tuple(summed_axes)) if summed_axes else ct"),
    "bt_not_a_list": (
        "the rule returns the cotangent itself instead of a list of one cotangent",
        "broadcast_transpose", BT, "    return [ct_x]", "    return ct_x"),
    "dce_keeps_everything": (
        "dce_jaxpr returns a copy with every equation",
        "dce", DCE, "kept[::-1], jaxpr.outs)", "list(jaxpr.eqns), jaxpr.outs)"),
    "dce_one_level": (
        ("an equation is kept when anything reads its result, dead equations included (one "
         "pass, not transitive)"),
        "dce", DCE,
        "    live = {out for out in jaxpr.outs if isinstance(out, Var)}\n",
        ("    live = {out for out in jaxpr.outs if isinstance(out, Var)}\n"
         "    live |= {x for e in jaxpr.eqns for x in e.inputs if isinstance(x, Var)}\n")),
    "dce_forgets_outputs": (
        "only equation inputs count as uses, so equations feeding the outputs directly are lost",
        "dce", DCE,
        "    live = {out for out in jaxpr.outs if isinstance(out, Var)}\n",
        "    live = {x for e in jaxpr.eqns for x in e.inputs if isinstance(x, Var)}\n"),
    "dce_in_place": (
        "dce_jaxpr removes the equations from the jaxpr it was given and returns it",
        "dce", DCE,
        "    return Jaxpr(jaxpr.constvars, jaxpr.in_binders, kept[::-1], jaxpr.outs)",
        "    jaxpr.eqns[:] = kept[::-1]\n    return jaxpr"),
    "dce_reversed_order": (
        "the equations are collected walking backwards and never put back in order",
        "dce", DCE, "kept[::-1], jaxpr.outs)", "kept, jaxpr.outs)"),
    "dce_drops_unused_inputs": (
        "input binders nothing reads are removed too, which changes the jaxpr's signature",
        "dce", DCE,
        "    return Jaxpr(jaxpr.constvars, jaxpr.in_binders, kept[::-1], jaxpr.outs)",
        ("    ins = [v for v in jaxpr.in_binders if v in live]\n"
         "    return Jaxpr(jaxpr.constvars, ins, kept[::-1], jaxpr.outs)")),
    "dce_drops_constvars": (
        "the new jaxpr gets no constvars",
        "dce", DCE,
        "    return Jaxpr(jaxpr.constvars, jaxpr.in_binders, kept[::-1], jaxpr.outs)",
        "    return Jaxpr([], jaxpr.in_binders, kept[::-1], jaxpr.outs)"),
    "dce_first_output_only": (
        ("an equation is live when its first output is read: an equation of several outputs "
         "(jit, cond) read only through a later one is dropped"),
        "dce", DCE, "        if any(v in live for v in eqn.out_binders):",
        "        if eqn.out_binders[0] in live:"),
    "dce_keeps_calls": (
        "equations holding a jaxpr (jit, cond) are always kept, as if they had effects",
        "dce", DCE, "        if any(v in live for v in eqn.out_binders):",
        ("        if any(v in live for v in eqn.out_binders) or any(\n"
         "                k in eqn.params for k in (\"jaxpr\", \"branches\")):")),
    "fold_nothing": (
        "fold_constants returns the jaxpr and the constants as they were",
        "fold_constants", FOLD, "    known = dict(zip(jaxpr.constvars, consts))\n",
        "    return jaxpr, list(consts)\n    known = dict(zip(jaxpr.constvars, consts))\n"),
    "fold_ignores_literals": (
        "an equation with a literal input is never folded",
        "fold_constants", FOLD,
        "        if all(isinstance(x, Lit) or x in known for x in eqn.inputs):",
        "        if all(not isinstance(x, Lit) and x in known for x in eqn.inputs):"),
    "fold_not_transitive": (
        "only equations reading the original constants fold, not those reading folded results",
        "fold_constants", FOLD,
        "        if all(isinstance(x, Lit) or x in known for x in eqn.inputs):",
        ("        if all(isinstance(x, Lit) or x in jaxpr.constvars for x in eqn.inputs):")),
    "fold_keeps_unused_consts": (
        "every original constant stays a constvar, even when no kept equation reads it",
        "fold_constants", FOLD,
        "    new_vars, new_consts, renamed = [], [], {}\n",
        ("    new_vars, new_consts = list(jaxpr.constvars), list(consts)\n"
         "    renamed = {v: v for v in jaxpr.constvars}\n")),
    "fold_any_constant_input": (
        "an equation folds as soon as one of its inputs is constant",
        "fold_constants", FOLD,
        "        if all(isinstance(x, Lit) or x in known for x in eqn.inputs):",
        "        if any(isinstance(x, Lit) or x in known for x in eqn.inputs):"),
    "fold_outputs_not_renamed": (
        "outputs that were folded still name the removed variables",
        "fold_constants", FOLD,
        "eqns, [rename(x) for x in jaxpr.outs]), new_consts",
        "eqns, list(jaxpr.outs)), new_consts"),
    "fold_literal_arrays": (
        "folded results are written into the program as literals, arrays included",
        "fold_constants", FOLD,
        ("            renamed[atom] = var\n            new_vars.append(var)\n"
         "            new_consts.append(val)\n"),
        ("            if atom not in jaxpr.constvars:\n"
         "                renamed[atom] = Lit(val)\n                continue\n"
         "            renamed[atom] = var\n            new_vars.append(var)\n"
         "            new_consts.append(val)\n")),
    "fold_drops_params": (
        "folded equations are bound again without their params (a mutation-run survivor)",
        "fold_constants", FOLD, "for x in eqn.inputs], **eqn.params)", "for x in eqn.inputs])"),
    "fold_scalar_constvars": (
        "every new constvar is typed a scalar (add and mul broadcast, so typecheck passes)",
        "fold_constants", FOLD, "ShapedArray(np.shape(val),", "ShapedArray(np.shape(None),"),
    "fold_first_output_only": (
        ("a folded equation's value is its first output alone: the other outputs of a jit or "
         "cond equation are never known"),
        "fold_constants", FOLD, "            known.update(zip(eqn.out_binders, outs))",
        "            known[eqn.out_binders[0]] = outs[0]"),
    "fold_constvars_float64": (
        "every new constvar is typed float64, the dtype of the visible test's constants",
        "fold_constants", FOLD, "np.result_type(val)))", "np.float64))"),
}


def reference_cells() -> dict[str, str]:
    """Each solution cell of the source as a student would have written it."""
    return edits.reference_cells(SOURCE)




MUTANTS = edits.apply_edits(reference_cells(), EDITS)
TASK = {name: edit[2] for name, edit in EDITS.items()}

DEMO = ("bt_ignores_stretching", "dce_one_level", "fold_ignores_literals")
PARTIAL = ("broadcast_transpose",)

_REGISTER = "\n\ntranspose_rules[broadcast_p] = broadcast_transpose\n"

ALTERNATIVES: dict[str, tuple[str, dict[str, str]]] = {
    name: ("a correct solution in another form", fills) for name, fills in {
        "bt_axis_by_axis": {"broadcast_transpose": '''
def broadcast_transpose(cts, x, *, shape, axes):
    ct = cts[0]
    # Undo the stretching first, axis by axis from the last, keeping each summed axis.
    positions = [i for i in range(len(shape)) if i not in axes]
    for j in reversed(range(len(x.aval.shape))):
        i = positions[j]
        if x.aval.shape[j] == 1 and shape[i] != 1:
            summed = reduce_sum(ct, (i,))
            kept_shape = list(summed.shape if hasattr(summed, "shape") else np.shape(summed))
            kept_shape.insert(i, 1)
            ct = broadcast(summed, tuple(kept_shape), (i,))
    # Then remove the new axes, from the last one down so that positions stay valid.
    for i in sorted(axes, reverse=True):
        ct = reduce_sum(ct, (i,))
    return [ct]
''' + _REGISTER},
        "bt_with_helper": {"broadcast_transpose": '''
def summed_positions(in_shape, shape, axes):
    from_x = [i for i in range(len(shape)) if i not in axes]
    stretched = tuple(i for d, i in zip(in_shape, from_x) if d == 1 and shape[i] != 1)
    return tuple(sorted(tuple(axes) + stretched)), stretched


def broadcast_transpose(cts, x, *, shape, axes):
    (ct,) = cts
    positions, stretched = summed_positions(x.aval.shape, shape, axes)
    if not positions:
        return [ct]
    total = reduce_sum(ct, positions)
    if len(stretched) == 0:
        return [total]
    from_x = [i for i in range(len(shape)) if i not in axes]
    ones = [from_x.index(i) for i in stretched]
    return [broadcast(total, x.aval.shape, ones)]
''' + _REGISTER},
        "dce_fixed_point": {"dce": '''
def dce_jaxpr(jaxpr):
    eqns = list(jaxpr.eqns)
    while True:
        read = {x for e in eqns for x in e.inputs} | set(jaxpr.outs)
        alive = [e for e in eqns if any(v in read for v in e.out_binders)]
        if len(alive) == len(eqns):
            return Jaxpr(list(jaxpr.constvars), list(jaxpr.in_binders), alive, list(jaxpr.outs))
        eqns = alive
'''},
        "dce_marks_indices": {"dce": '''
def dce_jaxpr(jaxpr):
    producer = {}
    for index, eqn in enumerate(jaxpr.eqns):
        for v in eqn.out_binders:
            producer[v] = index
    needed = set()
    stack = [producer[x] for x in jaxpr.outs if isinstance(x, Var) and x in producer]
    while stack:
        index = stack.pop()
        if index in needed:
            continue
        needed.add(index)
        for x in jaxpr.eqns[index].inputs:
            if isinstance(x, Var) and x in producer:
                stack.append(producer[x])
    eqns = [jaxpr.eqns[i] for i in sorted(needed)]
    return Jaxpr(jaxpr.constvars, jaxpr.in_binders, eqns, jaxpr.outs)
'''},
        "fold_two_passes": {"fold_constants": '''
def fold_constants(jaxpr, consts):
    # First decide what is constant, then compute it with eval_jaxpr on a small jaxpr.
    constant = set(jaxpr.constvars)
    folded, kept = [], []
    for eqn in jaxpr.eqns:
        if all(isinstance(x, Lit) or x in constant for x in eqn.inputs):
            folded.append(eqn)
            constant.update(eqn.out_binders)
        else:
            kept.append(eqn)
    reads = []
    for eqn in kept:
        reads.extend(eqn.inputs)
    reads.extend(jaxpr.outs)
    needed = []
    for atom in reads:
        if isinstance(atom, Var) and atom in constant and atom not in needed:
            needed.append(atom)
    values = eval_jaxpr(Jaxpr([], list(jaxpr.constvars), folded, needed), [], consts)
    return Jaxpr(needed, jaxpr.in_binders, kept, jaxpr.outs), list(values)
'''},
        "fold_env_dict": {"fold_constants": '''
def fold_constants(jaxpr, consts):
    env = {v: c for v, c in zip(jaxpr.constvars, consts)}

    def is_const(atom):
        return isinstance(atom, Lit) or atom in env

    def read(atom):
        return atom.val if isinstance(atom, Lit) else env[atom]

    rest = []
    for eqn in jaxpr.eqns:
        if all(is_const(a) for a in eqn.inputs):
            for v, val in zip(eqn.out_binders, bind(eqn.primitive, *map(read, eqn.inputs),
                                                    **eqn.params)):
                env[v] = val
        else:
            rest.append(eqn)
    order = {}
    for atom in [a for e in rest for a in e.inputs] + list(jaxpr.outs):
        if isinstance(atom, Var) and atom in env and atom not in order:
            order[atom] = len(order)
    constvars = sorted(order, key=order.get)
    return Jaxpr(constvars, jaxpr.in_binders, rest, jaxpr.outs), [env[v] for v in constvars]
'''},
    }.items()
}


def _blind(path: Path) -> tuple[dict, dict, dict]:
    """The blind set's wrong solutions (name -> (description, cells)), their tasks, and its
    alternatives, from the file its cells were copied into verbatim."""
    found = yaml.safe_load(path.read_text(encoding="utf-8"))
    wrong = {f"blind_{name}": (w["description"], {w["cell"]: w["source"]})
             for name, w in found["wrong"].items()}
    tasks = {f"blind_{name}": w["task"] for name, w in found["wrong"].items()}
    correct = {f"blind_{name}": (a["description"], {a["cell"]: a["source"]})
               for name, a in found["alternatives"].items()}
    return wrong, tasks, correct


BLIND, BLIND_TASK, BLIND_ALTERNATIVES = _blind(Path(__file__).with_name("blind_2026_12_07.yml"))
