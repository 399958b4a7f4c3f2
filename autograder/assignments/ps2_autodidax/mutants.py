"""Realistic wrong solutions of ps2_autodidax, for the tests and the demo class.

``MUTANTS[name] = (description, {solution grade_id: replacement cell source})``: a mutant is the
reference solution with those cells replaced. Each replacement is the reference cell as a student
would have written it (no solution markers) with one mistake edited in, so mutants follow the
source when it changes; an edit that no longer applies fails loudly. ``TASK[name]`` is the task
that must lose points.
"""

from __future__ import annotations

from pathlib import Path

import jupytext

SOURCE = Path(__file__).resolve().parents[3] / "solutions" / "ps2_autodidax" / "ps2_autodidax.md"

# name: (description, grade_id, task, text in the reference cell, its wrong replacement)
EDITS = {
    "cos_jvp_wrong_sign": (
        "the JVP of cos forgets the minus sign of -sin",
        "jvp_rules", "ps2.jvp_rules",
        "return [cos(x)], [neg(sin(x)) * dx]", "return [cos(x)], [sin(x) * dx]"),
    "mul_jvp_missing_term": (
        "the JVP of mul keeps only dx * y (no product rule)",
        "jvp_rules", "ps2.jvp_rules",
        "return [x * y], [dx * y + x * dy]", "return [x * y], [dx * y]"),
    "sin_jvp_with_numpy": (
        "the JVP of sin computes cos with NumPy, which works once but not on tracers",
        "jvp_rules", "ps2.jvp_rules",
        "return [sin(x)], [cos(x) * dx]", "return [np.sin(x)], [np.cos(x) * dx]"),
    "greater_jvp_passes_tangent": (
        "the JVP of greater passes the first operand's tangent through instead of zero",
        "jvp_rules", "ps2.jvp_rules",
        "out = greater(*primals)\n    return [out], [zeros_like(out)]",
        "out = greater(*primals)\n    return [out], [tangents[0]]"),
    "process_primitive_drops_params": (
        "JVPTrace.process_primitive calls the rule without its params (reduce_sum's axis)",
        "jvp_trace", "ps2.jvp_trace",
        "jvp_rules[primitive](primals, tangents, **params)",
        "jvp_rules[primitive](primals, tangents)"),
    "jvp_flat_ignores_levels": (
        ("jvp_flat reads the tangent of any JVPTracer it gets back, instead of raising outputs to "
        "its own trace with full_raise (a full_raise that ignores levels)"),
        "jvp", "ps2.jvp",
        "tracers_out = [full_raise(trace, out) for out in f(*tracers_in)]",
        ("tracers_out = [out if isinstance(out, JVPTracer) else trace.pure(out)\n"
        "                       for out in f(*tracers_in)]")),
    "tree_flatten_unsorted_dicts": (
        ("tree_flatten walks dicts in insertion order instead of through the registry "
        "(which sorts the keys)"),
        "pytree", "ps2.pytree",
        "    metadata, children = node_type.to_iterable(x)\n",
        ("    if type(x) is dict:\n"
        "        metadata, children = tuple(x), list(x.values())\n"
        "    else:\n"
        "        metadata, children = node_type.to_iterable(x)\n")),
    "tree_unflatten_reverses_leaves": (
        "tree_unflatten takes the leaves from the end of the list, losing their order",
        "pytree", "ps2.pytree",
        ("    remaining = iter(leaves)\n\n    def rebuild(td):\n        if td is leaf:\n"
        "            return next(remaining)"),
        ("    remaining = list(leaves)\n\n    def rebuild(td):\n        if td is leaf:\n"
        "            return remaining.pop()")),
    "reduce_sum_batching_keeps_axis": (
        "the reduce_sum batching rule returns the input's batch axis as the output's",
        "vmap_rules", "ps2.vmap_rules",
        "[bdim - len([a for a in axis if a < bdim])]", "[bdim]"),
    "binop_batching_no_broadcast": (
        ("the binary batching rule leaves an unmapped operand as it is (NumPy broadcasting "
        "only lines it up when the batch axis is in front)"),
        "vmap_rules", "ps2.vmap_rules",
        ("    x = move_batch_axis(axis_size, x_bdim, target, x)\n"
        "    y = move_batch_axis(axis_size, y_bdim, target, y)\n"),
        ("    if x_bdim is not not_mapped and y_bdim is not not_mapped:\n"
        "        y = move_batch_axis(axis_size, y_bdim, target, y)\n")),
    "unop_batching_axis_zero": (
        "the unary batching rule always reports batch axis 0",
        "vmap_rules", "ps2.vmap_rules",
        "return [op(vals_in[0])], [dims_in[0]]", "return [op(vals_in[0])], [0]"),
    "vmap_flat_keeps_batch_axes": (
        ("vmap_flat returns the outputs without moving their batch axes to 0 (or broadcasting "
        "unmapped ones)"),
        "vmap", "ps2.vmap",
        "return [move_batch_axis(axis_size, bd, 0, v) for v, bd in zip(vals_out, bdims_out)]",
        "return vals_out"),
    "jacfwd_transposed": (
        "jacfwd returns vmap's stack as it is: the transpose of the Jacobian",
        "jacfwd", "ps2.jacfwd",
        "    return transpose(stacked, [*range(n_in, np.ndim(stacked)), *range(n_in)])",
        "    return stacked"),
}


def reference_cells() -> dict[str, str]:
    """Each solution cell of the source as a student would have written it."""
    cells = {}
    for cell in jupytext.read(SOURCE).cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and meta.get("solution"):
            lines = [line for line in cell.source.splitlines()
                     if line.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION")
                     and "raise NotImplementedError(" not in line]
            cells[meta["grade_id"]] = "\n".join(lines) + "\n"
    return cells


def _mutants() -> dict[str, tuple[str, dict[str, str]]]:
    cells = reference_cells()
    out = {}
    for name, (description, grade_id, _, old, new) in EDITS.items():
        source = cells[grade_id]
        if source.count(old) != 1:
            raise ValueError(f"mutant {name}: the edit no longer applies to cell {grade_id}")
        out[name] = (description, {grade_id: source.replace(old, new)})
    return out


MUTANTS = _mutants()
TASK = {name: edit[2] for name, edit in EDITS.items()}

# The few wrong students of the demo class, and the cells a partial student has done.
DEMO = ("cos_jvp_wrong_sign", "jvp_flat_ignores_levels", "jacfwd_transposed")
PARTIAL = ("jvp_rules", "jvp_trace", "pytree")
