"""Realistic wrong solutions of ps2_autodidax, for the tests and the demo class.

``MUTANTS[name] = (description, {solution grade_id: replacement cell source})``: a mutant is the
reference solution with those cells replaced. Each replacement is the reference cell as a student
would have written it (no solution markers) with one mistake edited in, so mutants follow the
source when it changes; an edit that no longer applies fails loudly. ``TASK[name]`` is the task
that must lose points. ``ALTERNATIVES`` (kept in alternatives.py) are correct solutions written
differently, same format; each must earn every point.
"""

from __future__ import annotations

from pathlib import Path

from autograder.assignments import edits
from autograder.assignments.ps2_autodidax.alternatives import ALTERNATIVES  # noqa: F401

SOURCE = Path(__file__).resolve().parents[3] / "solutions" / "ps2_autodidax" / "ps2_autodidax.md"

# name: (description, grade_id, task, text in the reference cell, its wrong replacement)
EDITS = {
    # --- ps2.jvp_rules ------------------------------------------------------------------------
    "exp_jvp_forgets_dx": (
        "the JVP of exp returns exp(x) as the tangent, without the input tangent",
        "jvp_rules", "ps2.jvp_rules", "return [out], [out * dx]", "return [out], [out]"),
    "exp_jvp_with_numpy": (
        "the JVP of exp computes with NumPy, which works once but not on tracers",
        "jvp_rules", "ps2.jvp_rules",
        "    out = exp(x)\n    return [out], [out * dx]",
        "    out = np.exp(x)\n    return [out], [out * dx]"),
    "log_jvp_times_x": (
        "the JVP of log multiplies the tangent by x instead of dividing",
        "jvp_rules", "ps2.jvp_rules", "return [log(x)], [div(dx, x)]", "return [log(x)], [dx * x]"),
    "log_jvp_divides_by_log": (
        "the JVP of log divides the tangent by log(x) instead of x",
        "jvp_rules", "ps2.jvp_rules", "return [log(x)], [div(dx, x)]",
        "out = log(x)\n    return [out], [div(dx, out)]"),
    "div_jvp_forgets_dy": (
        "the JVP of div ignores the divisor's tangent",
        "jvp_rules", "ps2.jvp_rules", "return [out], [div(dx + neg(out * dy), y)]",
        "return [out], [div(dx, y)]"),
    "div_jvp_sign": (
        "the JVP of div adds the divisor's term instead of subtracting it",
        "jvp_rules", "ps2.jvp_rules", "return [out], [div(dx + neg(out * dy), y)]",
        "return [out], [div(dx + out * dy, y)]"),
    "div_jvp_no_square": (
        "the JVP of div divides the divisor's term by y once, not y squared",
        "jvp_rules", "ps2.jvp_rules", "return [out], [div(dx + neg(out * dy), y)]",
        "return [out], [div(dx, y) + neg(x * dy)]"),
    "div_jvp_python_division": (
        "the JVP of div uses Python's / (NumPy's), which tracers do not support",
        "jvp_rules", "ps2.jvp_rules", "return [out], [div(dx + neg(out * dy), y)]",
        "return [out], [(dx + neg(out * dy)) / y]"),
    "max_jvp_ties_to_y": (
        "the JVP of maximum gives a tie the second operand's tangent",
        "jvp_rules", "ps2.jvp_rules",
        "return [maximum(x, y)], [dx * (0.5 + 0.5 * s) + dy * (0.5 + neg(0.5 * s))]",
        ("wins = greater(x, y) * 1.0\n"
        "    return [maximum(x, y)], [dx * wins + dy * (1.0 + neg(wins))]")),
    "max_jvp_ties_sum": (
        "the JVP of maximum adds both tangents at a tie instead of averaging them",
        "jvp_rules", "ps2.jvp_rules",
        "return [maximum(x, y)], [dx * (0.5 + 0.5 * s) + dy * (0.5 + neg(0.5 * s))]",
        ("tie = 1.0 + neg(greater(x, y) * 1.0) + neg(less(x, y) * 1.0)\n"
        "    return [maximum(x, y)], [dx * (greater(x, y) * 1.0 + tie)"
        " + dy * (less(x, y) * 1.0 + tie)]")),
    "max_jvp_numpy_where": (
        "the JVP of maximum picks tangents with np.where (ties to y, and no tracers)",
        "jvp_rules", "ps2.jvp_rules",
        "return [maximum(x, y)], [dx * (0.5 + 0.5 * s) + dy * (0.5 + neg(0.5 * s))]",
        "return [maximum(x, y)], [np.where(np.greater(x, y), dx, dy)]"),
    # --- ps2.matmul ---------------------------------------------------------------------------
    "matmul_jvp_one_term": (
        "the JVP of matmul keeps only dx @ y (no product rule)",
        "matmul", "ps2.matmul", "return [matmul(x, y)], [matmul(dx, y) + matmul(x, dy)]",
        "return [matmul(x, y)], [matmul(dx, y)]"),
    "matmul_jvp_operands_swapped": (
        "the JVP of matmul writes the second term as dy @ x",
        "matmul", "ps2.matmul", "return [matmul(x, y)], [matmul(dx, y) + matmul(x, dy)]",
        ("return [matmul(x, y)], [matmul(dx, y) + transpose(matmul(transpose(dy, (1, 0)), "
        "transpose(x, (1, 0))), (1, 0))]")),
    "matmul_jvp_with_numpy": (
        "the JVP of matmul computes with NumPy's matmul, which works once but not on tracers",
        "matmul", "ps2.matmul", "return [matmul(x, y)], [matmul(dx, y) + matmul(x, dy)]",
        "return [np.matmul(x, y)], [np.matmul(dx, y) + np.matmul(x, dy)]"),
    "matmul_batch_no_broadcast": (
        "the batching rule of matmul moves mapped operands but leaves an unmapped one as it is",
        "matmul", "ps2.matmul",
        ("    x = move_batch_axis(axis_size, x_bdim, 0, x)\n"
        "    y = move_batch_axis(axis_size, y_bdim, 0, y)\n"),
        ("    if x_bdim is not not_mapped:\n        x = move_batch_axis(axis_size, x_bdim, 0, x)\n"
        "    if y_bdim is not not_mapped:\n        y = move_batch_axis(axis_size, y_bdim, 0, y)\n")),
    "matmul_batch_assumes_front": (
        "the batching rule of matmul assumes both batch axes are already in front",
        "matmul", "ps2.matmul",
        ("    x = move_batch_axis(axis_size, x_bdim, 0, x)\n"
        "    y = move_batch_axis(axis_size, y_bdim, 0, y)\n"), ""),
    "matmul_batch_to_last_axis": (
        "the batching rule of matmul moves the batch axes last, where matmul reads matrix axes",
        "matmul", "ps2.matmul",
        ("    x = move_batch_axis(axis_size, x_bdim, 0, x)\n"
        "    y = move_batch_axis(axis_size, y_bdim, 0, y)\n"
        "    return [matmul(x, y)], [0]"),
        ("    x = move_batch_axis(axis_size, x_bdim, np.ndim(x) - (x_bdim is not not_mapped), x)\n"
        "    y = move_batch_axis(axis_size, y_bdim, np.ndim(y) - (y_bdim is not not_mapped), y)\n"
        "    return [matmul(x, y)], [np.ndim(x) - 1]")),
    "matmul_batch_reports_x_axis": (
        "the batching rule of matmul moves the batch axes to 0 but reports x's old batch axis",
        "matmul", "ps2.matmul", "return [matmul(x, y)], [0]",
        "return [matmul(x, y)], [0 if x_bdim is not_mapped else x_bdim]"),
    "matmul_batch_same_axis_shortcut": (
        ("the batching rule of matmul multiplies at once when both batch axes are at one "
         "position, taking it for a stack axis: right unless it is a matrix axis"),
        "matmul", "ps2.matmul",
        "    x = move_batch_axis(axis_size, x_bdim, 0, x)\n",
        ("    if x_bdim == y_bdim:\n        return [matmul(x, y)], [x_bdim]\n"
         "    x = move_batch_axis(axis_size, x_bdim, 0, x)\n")),
    "matmul_batch_unmapped_at_other_axis": (
        ("the batching rule of matmul broadcasts an unmapped operand at the other's batch axis "
         "and multiplies there: right only where that axis is a stack axis"),
        "matmul", "ps2.matmul",
        "    x = move_batch_axis(axis_size, x_bdim, 0, x)\n",
        ("    if x_bdim is not_mapped or y_bdim is not_mapped:\n"
         "        axis = y_bdim if x_bdim is not_mapped else x_bdim\n"
         "        x = move_batch_axis(axis_size, x_bdim, axis, x)\n"
         "        y = move_batch_axis(axis_size, y_bdim, axis, y)\n"
         "        return [matmul(x, y)], [axis]\n"
         "    x = move_batch_axis(axis_size, x_bdim, 0, x)\n")),
    "matmul_batch_with_numpy": (
        "the batching rule of matmul moves axes with NumPy, which fails on tracers below it",
        "matmul", "ps2.matmul",
        ("    x = move_batch_axis(axis_size, x_bdim, 0, x)\n"
        "    y = move_batch_axis(axis_size, y_bdim, 0, y)\n"),
        ("    x = np.moveaxis(x, x_bdim, 0) if x_bdim is not not_mapped else "
        "np.broadcast_to(x, (axis_size, *np.shape(x)))\n"
        "    y = np.moveaxis(y, y_bdim, 0) if y_bdim is not not_mapped else "
        "np.broadcast_to(y, (axis_size, *np.shape(y)))\n")),
    # --- ps2.shape_rules ----------------------------------------------------------------------
    "transpose_batch_perm_unshifted": (
        "the batching rule of transpose does not shift the member axes past the batch axis",
        "shape_rules", "ps2.shape_rules", "[bdim] + [p + (p >= bdim) for p in perm]",
        "[bdim] + list(perm)"),
    "transpose_batch_assumes_front": (
        "the batching rule of transpose assumes the batch axis is axis 0",
        "shape_rules", "ps2.shape_rules", "[bdim] + [p + (p >= bdim) for p in perm]",
        "[0] + [p + 1 for p in perm]"),
    "transpose_batch_keeps_bdim": (
        "the batching rule of transpose moves the batch axis to 0 but reports the old one",
        "shape_rules", "ps2.shape_rules",
        "return [transpose(x, [bdim] + [p + (p >= bdim) for p in perm])], [0]",
        "return [transpose(x, [bdim] + [p + (p >= bdim) for p in perm])], [bdim]"),
    "transpose_batch_with_numpy": (
        "the batching rule of transpose calls np.transpose, which fails on an outer tracer",
        "shape_rules", "ps2.shape_rules",
        "return [transpose(x, [bdim] + [p + (p >= bdim) for p in perm])], [0]",
        "return [np.transpose(x, [bdim] + [p + (p >= bdim) for p in perm])], [0]"),
    "broadcast_batch_axes_unshifted": (
        "the batching rule of broadcast puts the batch axis in front but does not shift axes",
        "shape_rules", "ps2.shape_rules", "[a + 1 for a in axes]", "list(axes)"),
    "broadcast_batch_assumes_front": (
        "the batching rule of broadcast assumes the batch axis is axis 0",
        "shape_rules", "ps2.shape_rules",
        ("    x = move_batch_axis(axis_size, bdim, 0, x)\n"
        "    return [broadcast(x, (axis_size, *shape), [a + 1 for a in axes])], [0]"),
        "    return [broadcast(x, (axis_size, *shape), [a + 1 for a in axes])], [0]"),
    "broadcast_batch_batch_last_reports_0": (
        "the batching rule of broadcast appends the batch axis last but reports axis 0",
        "shape_rules", "ps2.shape_rules",
        ("    x = move_batch_axis(axis_size, bdim, 0, x)\n"
        "    return [broadcast(x, (axis_size, *shape), [a + 1 for a in axes])], [0]"),
        ("    x = move_batch_axis(axis_size, bdim, np.ndim(x) - 1, x)\n"
        "    return [broadcast(x, (*shape, axis_size), axes)], [0]")),
    # --- ps2.out_axes -------------------------------------------------------------------------
    "in_axes_default_one": (
        "vmap_axes defaults in_axes to 1, not the task's 0 (a mutation-run survivor)",
        "out_axes", "ps2.out_axes", "def vmap_axes(f, in_axes=0, out_axes=0):",
        "def vmap_axes(f, in_axes=1, out_axes=0):"),
    "out_axes_ignored": (
        "vmap_axes always puts the output batch axis first, whatever out_axes says",
        "out_axes", "ps2.out_axes",
        "moved.append(move_batch_axis(size, bdim, in_range(target, rank), val))",
        "moved.append(move_batch_axis(size, bdim, 0, val))"),
    "out_axes_negative_member_rank": (
        "vmap_axes counts a negative out_axes from the end of one member, not the batched output",
        "out_axes", "ps2.out_axes", "rank = np.ndim(val) + (bdim is not_mapped)",
        "rank = np.ndim(val) + (bdim is not_mapped) - 1\n                rank = max(rank, 1)"),
    "in_axes_prefix_one_leaf": (
        "vmap_axes lets an int in in_axes stand for one leaf only, not a whole subtree",
        "out_axes", "ps2.out_axes", "return [prefix] * len(tree_flatten(tree)[0])",
        "return [prefix]"),
    "in_axes_negative_unnormalised": (
        "vmap_axes boxes arguments with a negative batch axis as given",
        "out_axes", "ps2.out_axes",
        "axes = [None if ax is None else in_range(ax, np.ndim(x))",
        "axes = [None if ax is None else (in_range(ax, np.ndim(x)) and ax)"),
    "out_axes_none_broadcasts": (
        "vmap_axes treats out_axes None like 0 (broadcasting unmapped outputs, never raising)",
        "out_axes", "ps2.out_axes", "if target is None:", "if target is None and False:"),
    "out_axes_none_never_raises": (
        "vmap_axes returns a mapped output as it is when its out_axes is None",
        "out_axes", "ps2.out_axes",
        ("                if bdim is not not_mapped:\n"
        "                    raise ValueError(\"an output with out_axes None depends on a mapped "
        "input\")\n"), ""),
    "in_axes_out_of_range_wraps": (
        "vmap_axes wraps an axis beyond the rank around instead of raising",
        "out_axes", "ps2.out_axes", "    if not -rank <= axis < rank:",
        "    if rank == 0:"),
    "in_axes_zip_truncates": (
        "vmap_axes pairs axes with arguments by zip, so a tuple or list of the wrong length passes",
        "out_axes", "ps2.out_axes",
        "    if meta != prefix_meta or len(children) != len(prefix_children):",
        "    if meta != prefix_meta:"),
    "axes_negative_unchecked": (
        "vmap_axes checks only the upper bound of an axis: a negative one too far wraps around",
        "out_axes", "ps2.out_axes", "    if not -rank <= axis < rank:", "    if not axis < rank:"),
    "out_axes_unmapped_not_broadcast": (
        "vmap_axes returns an unmapped output without a batch axis even when out_axes is an int",
        "out_axes", "ps2.out_axes",
        "            if target is None:\n",
        "            if target is None or bdim is not_mapped:\n"),
    "in_axes_tuple_only_top": (
        "vmap_axes accepts in_axes only as one int or one entry per argument, not as nested trees",
        "out_axes", "ps2.out_axes",
        "    if prefix is None or isinstance(prefix, int):\n",
        ("    if not isinstance(tree, tuple) and not (prefix is None or isinstance(prefix, int)):\n"
        "        raise ValueError('in_axes must be an int or None for each argument')\n"
        "    if prefix is None or isinstance(prefix, int):\n")),
}


def reference_cells() -> dict[str, str]:
    """Each solution cell of the source as a student would have written it."""
    return edits.reference_cells(SOURCE)




MUTANTS = edits.apply_edits(reference_cells(), EDITS)
TASK = {name: edit[2] for name, edit in EDITS.items()}

# The few wrong students of the demo class, and the cells a partial student has done.
DEMO = ("div_jvp_sign", "matmul_batch_no_broadcast", "out_axes_ignored")
PARTIAL = ("jvp_rules", "matmul")
