"""Banned calls (autograder.worker.banned): a rule that hands its work to JAX's own transformation of
the jax.numpy equivalent is refused before it runs, its task earns nothing and the feedback
names the refused call; every reference solution, correct alternative and realistic wrong
solution is left alone, and each task's text names the calls it bans.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from test_policy import _reference_cells, _tables

from autograder.assignments import course
from autograder.instructor.classroom import make_submission, solution_sources
from autograder.instructor.release import release_path
from autograder.worker import banned
from autograder.worker.normalise import normalise, read_release
from autograder.worker.policy import allowed_imports, apply, check_source, refusal_of_task

ROOT = Path(__file__).resolve().parents[2]


def _assignment(name: str):
    return importlib.import_module(f"autograder.assignments.{name}.checks").ASSIGNMENT


def _bans(name: str) -> dict[str, tuple[str, ...]]:
    return {t.id: t.banned for t in _assignment(name).tasks if t.banned}


# The registry's assignments whose tasks ban calls (every one but ps3's fix-the-bug programs).
BANNING = [name for name in course() if _bans(name)]


def _task(name: str, grade_id: str) -> str | None:
    return next((t.id for t in _assignment(name).tasks if t.id.split(".", 1)[-1] == grade_id),
                None)


# A rule of each task that hands its work to JAX: (assignment, grade_id, source, refused name).
DELEGATING = {
    "ps1.jvp": ("ps1_primitives", "jvp", '''
def weighted_sum_value_and_jvp(primals, tangents, *, axis):
    tangents = tuple(ad.instantiate_zeros(t) for t in tangents)
    return jax.jvp(lambda x, w: jnp.tensordot(x, w, axes=([axis], [0])), primals, tangents)


ad.primitive_jvps[weighted_sum_p] = weighted_sum_value_and_jvp
''', "jax.jvp"),
    "ps1.transpose": ("ps1_primitives", "transpose", '''
def weighted_sum_transpose(ct, x, w, *, axis):
    if ad.is_undefined_primal(x):
        f = lambda a: jnp.tensordot(a, w, axes=([axis], [0]))
        return jax.linear_transpose(f, jax.ShapeDtypeStruct(x.aval.shape, x.aval.dtype))(ct)[0], None
    f = lambda b: jnp.tensordot(x, b, axes=([axis], [0]))
    return None, jax.linear_transpose(f, jax.ShapeDtypeStruct(w.aval.shape, w.aval.dtype))(ct)[0]


ad.primitive_transposes[weighted_sum_p] = weighted_sum_transpose
''', "jax.linear_transpose"),
    "ps1.batch": ("ps1_primitives", "batch", '''
def weighted_sum_batch(args, batch_axes, *, axis):
    f = lambda x, w: jnp.tensordot(x, w, axes=([axis], [0]))
    return jax.vmap(f, in_axes=tuple(batch_axes))(*args), 0


batching.primitive_batchers[weighted_sum_p] = weighted_sum_batch
''', "jax.vmap"),
    "ps2.jvp_rules": ("ps2_autodidax", "jvp_rules", '''
import jax
import jax.numpy as jnp


def exp_jvp(primals, tangents):
    out, tangent = jax.jvp(jnp.exp, tuple(primals), tuple(tangents))
    return [np.asarray(out)], [np.asarray(tangent)]


jvp_rules[exp_p] = exp_jvp
''', "jax.jvp"),
    "ps2.matmul": ("ps2_autodidax", "matmul", '''
from jax import vmap as jax_vmap


def matmul_batch(axis_size, vals_in, dims_in):
    in_axes = tuple(None if d is not_mapped else d for d in dims_in)
    return [np.asarray(jax_vmap(lambda a, b: a @ b, in_axes)(*vals_in))], [0]


vmap_rules[matmul_p] = matmul_batch
''', "jax.vmap"),
    "ps2.shape_rules": ("ps2_autodidax", "shape_rules", '''
import jax as J


def transpose_batch(axis_size, vals_in, dims_in, *, perm):
    (x,), (bdim,) = vals_in, dims_in
    return [np.asarray(J.vmap(lambda a: a.transpose(perm), in_axes=bdim)(x))], [0]


vmap_rules[transpose_p] = transpose_batch
''', "jax.vmap"),
    "ps2.out_axes": ("ps2_autodidax", "out_axes", '''
import jax


def vmap_axes(f, in_axes=0, out_axes=0):
    return getattr(jax, "vmap")(f, in_axes=in_axes, out_axes=out_axes)
''', "jax.vmap"),
    "ps4.broadcast_transpose": ("ps4_core", "broadcast_transpose", '''
def broadcast_transpose(cts, x, *, shape, axes):
    (ct,) = cts
    _, pullback = jax.vjp(lambda v: jax.numpy.broadcast_to(
        jax.numpy.expand_dims(v, axes), shape), np.zeros(x.aval.shape))
    return [np.asarray(pullback(ct)[0])]


transpose_rules[broadcast_p] = broadcast_transpose
''', "jax.vjp"),
    "ps5.vmap": ("ps5_kernels", "vmap", '''
def lse_vmappable(x, w, t):
    return lse_ffi(x, w, t, vmap_method="broadcast_all")


def lse_batched(xs, ws, t):
    return jax.vmap(lambda x, w: lse_ffi(x, w, t, vmap_method="sequential"))(xs, ws)
''', "jax.vmap"),
    "ps5.grad": ("ps5_kernels", "grad", '''
def _reference(x, w, t):
    return t * jax.nn.logsumexp(x / t, axis=-1, b=jnp.reshape(w, (-1,)))


@functools.partial(jax.custom_jvp, nondiff_argnums=(2,))
def lse(x, w, t):
    return lse_ffi(x, w, t)


@lse.defjvp
def _lse_rule(t, primals, tangents):
    return lse(*primals, t), jax.jvp(lambda x, w: _reference(x, w, t), primals, tangents)[1]
''', "jax.jvp"),
}


@pytest.mark.parametrize("task", sorted(DELEGATING))
def test_a_delegating_rule_passes_the_policy_but_not_the_ban(task):
    name, grade_id, source, refused = DELEGATING[task]
    assert _task(name, grade_id) == task
    # The cell policy alone would run it: only the ban stands between it and full marks.
    assert check_source(source, allowed_imports(_assignment(name)))[1] == []
    messages = banned.refusals(source, _bans(name), task)
    assert messages, task
    assert any(f": {refused} may not be called in the cell of {task} (the task re-implements "
               "it: write the rule yourself)" in m for m in messages), messages
    assert all(m.startswith("line ") for m in messages)


# Every spelling of jax.jvp in ps1's JVP cell, and the line the refusal names.
SPELLINGS = {
    "attribute": ("y = jax.jvp(f, p, t)", "line 1: jax.jvp"),
    "from import": ("from jax import jvp", "line 1: jax.jvp"),
    "from import as": ("import math\nfrom jax import jvp as j", "line 2: jax.jvp"),
    "module alias": ("import jax as J\ny = J.jvp(f, p, t)", "line 2: jax.jvp"),
    "assigned alias": ("jx = jax\ny = jx.jvp(f, p, t)", "line 2: jax.jvp"),
    "getattr": ('y = getattr(jax, "jvp")(f, p, t)', "line 1: jax.jvp"),
    "ad's own jvp": ("y = ad.jvp(f)", "line 1: jax.interpreters.ad.jvp"),
    "inside a rule": ("def rule(p, t):\n    return jax.linearize(f, *p)", "line 2: jax.linearize"),
    "submodule import": ("import jax.experimental.jet", "line 1: jax.experimental.jet"),
    "submodule from": ("from jax.experimental.jet import jet as j", "line 1: jax.experimental.jet"),
    "another primitive's rule": ("r = ad.primitive_jvps[lax.mul_p]",
                                 "line 1: jax.interpreters.ad.primitive_jvps"),
    "a rule built by JAX": ("ad.defbilinear(weighted_sum_p, f, g)",
                            "line 1: jax.interpreters.ad.defbilinear"),
}


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_every_spelling_of_a_banned_call_is_refused(spelling):
    source, start = SPELLINGS[spelling]
    messages = banned.refusals(source, _bans("ps1_primitives"), "ps1.jvp")
    assert [m for m in messages if m.startswith(start + " may not be called")], messages


ALLOWED_IN_PS1_JVP = {
    "registering the rule": "ad.primitive_jvps[weighted_sum_p] = weighted_sum_value_and_jvp",
    "the primitive itself": "y = weighted_sum_p.bind(x, w, axis=0) + weighted_sum(x, w, axis=0)",
    "symbolic zeros": "z = ad.instantiate_zeros(ad.Zero.from_primal_value(x))",
    "a bare name of one's own": "def jvp(f):\n    return f\n\n\ny = jvp(abs)",
    "the name in a string": 'print("jax.jvp is not used here")',
    "custom rules": "f = jax.custom_jvp(g)\nf.defjvp(rule)\nh = jax.custom_batching.custom_vmap(g)",
}


@pytest.mark.parametrize("case", sorted(ALLOWED_IN_PS1_JVP))
def test_what_a_rule_needs_is_not_refused(case):
    assert banned.refusals(ALLOWED_IN_PS1_JVP[case], _bans("ps1_primitives"), "ps1.jvp") == []


def test_other_cells_are_refused_too_naming_the_task():
    bans = _bans("ps1_primitives")
    helper = "def helper(f, p, t):\n    return jax.jvp(f, p, t)"
    (added,) = banned.refusals(helper, bans, None)
    assert added.startswith("line 2: jax.jvp may not be called in a cell you added (ps1.jvp")
    (other,) = banned.refusals(helper, bans, "ps1.impl")
    assert other.startswith("line 2: jax.jvp may not be called in the cell of ps1.impl (ps1.jvp")
    assert banned.refusals("def f(:", bans, None) == []  # the cell policy reports syntax
    assert banned.refusals("y = jax.vmap(f)", {}, None) == []


def test_every_rule_task_of_ps1_ps2_ps4_ps5_bans_its_transformation():
    want = {"ps1.jvp": "jax.jvp", "ps1.transpose": "jax.linear_transpose",
            "ps1.batch": "jax.vmap", "ps2.jvp_rules": "jax.jvp", "ps2.matmul": "jax.vmap",
            "ps2.shape_rules": "jax.vmap", "ps2.out_axes": "jax.vmap",
            "ps4.broadcast_transpose": "jax.linear_transpose", "ps5.vmap": "jax.vmap",
            "ps5.grad": "jax.grad"}
    for task, name in want.items():
        assignment = next(n for n in BANNING if n.startswith(task.split(".")[0] + "_"))
        assert name in _bans(assignment)[task], task
    assert set(course()) - set(BANNING) == {"ps3_pitfalls"}
    # What a correct solution needs stays allowed.
    assert not any(n.endswith((".custom_jvp", ".custom_vjp", ".custom_vmap"))
                   for names in _bans("ps5_kernels").values() for n in names)


# -- what must pass ------------------------------------------------------------------------------


def _cases() -> list[tuple[str, str, str]]:
    found = [(name, f"reference:{grade_id}", source)
             for name, grade_id, source in _reference_cells()]
    for table in ("ALTERNATIVES", "CORRECT", "MUTANTS"):
        found += _tables(table)
    return found


@pytest.mark.parametrize(("assignment", "label", "source"), _cases(),
                         ids=lambda v: v if len(str(v)) < 60 else "")
def test_reference_alternatives_and_mutants_use_no_banned_call(assignment, label, source):
    """Correct solutions must keep full marks, and a wrong one must lose its points on its own
    task, not by a refusal."""
    task = _task(assignment, label.rsplit(":", 1)[-1])
    assert banned.refusals(source, _bans(assignment), task) == [], label


def test_the_tables_include_ps1_correct_solutions():
    labels = [label for _, label, _ in _cases()]
    assert any(label.startswith("mutants.py:") for label in labels)
    assert sum("ps1_primitives" == a for a, _, _ in _tables("CORRECT")) >= 8


# -- the policy on real notebooks -----------------------------------------------------------------


def _graded_notebook(name: str, fills: dict[str, str], added: str | None = None):
    nb = make_submission(name, {**solution_sources(name, root=ROOT), **fills}, root=ROOT)
    if added is not None:
        nb.cells.append(nbformat.v4.new_code_cell(added))
    data = nbformat.writes(nb).encode()
    notebook = normalise(data, read_release(release_path(name, root=ROOT)))
    return apply(notebook, _assignment(name))


@pytest.mark.parametrize("assignment", BANNING)
def test_reference_notebook_runs_every_cell(assignment):
    notebook = _graded_notebook(assignment, {})
    assert notebook.notes == ()
    assert all(c.run for c in notebook.cells if c.role == "solution")


@pytest.mark.parametrize("task", sorted(DELEGATING))
def test_policy_refuses_the_delegating_cell_of_a_real_notebook(task):
    name, grade_id, source, refused = DELEGATING[task]
    notebook = _graded_notebook(name, {grade_id: source})
    (cell,) = [c for c in notebook.cells if c.grade_id == grade_id]
    assert not cell.run and f"{refused} may not be called in the cell of {task}" in cell.note
    assert f"{refused} may not be called" in refusal_of_task(notebook, task)
    # The other cells still run: the refusal costs this task alone.
    assert all(c.run for c in notebook.cells if c.role == "solution" and c.grade_id != grade_id)


def test_policy_refuses_a_helper_in_an_added_cell():
    helper = "def tangent_of(f, primals, tangents):\n    return jax.jvp(f, primals, tangents)[1]\n"
    notebook = _graded_notebook("ps1_primitives", {}, added=helper)
    (cell,) = [c for c in notebook.cells if c.role == "student"]
    assert not cell.run and "jax.jvp may not be called in a cell you added" in cell.note
    assert any(n.startswith("an added cell was not run") for n in notebook.notes)


# -- the task text --------------------------------------------------------------------------------


@pytest.mark.parametrize("assignment", BANNING)
def test_each_task_text_names_the_calls_it_bans(assignment):
    nb = nbformat.read(release_path(assignment, root=ROOT), as_version=4)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    for task, names in _bans(assignment).items():
        section = text.split(f"## Task `{task}`", 1)[1].split("## Task `", 1)[0]
        for name in names:
            assert f"{name.rsplit('.', 1)[-1]}`" in section, (task, name)


# -- end to end ---------------------------------------------------------------------------------


def test_real_command_gives_a_delegating_jvp_rule_nothing(tmp_path):
    """ps1 through `python -m autograder grade`: the JVP rule that calls jax.jvp earns 0 on every
    ps1.jvp check, each naming the refused call."""
    name, grade_id, source, _ = DELEGATING["ps1.jvp"]
    nb = make_submission(name, {**solution_sources(name, root=ROOT), grade_id: source}, root=ROOT)
    path = tmp_path / "submitted" / "delegator" / name / f"{name}.ipynb"
    path.parent.mkdir(parents=True)
    nbformat.write(nb, path)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    run = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", name, str(tmp_path / "submitted"), "--out",
         str(tmp_path / "out"), "--seed", "0", "--workers", "1", "--no-progress",
         "--db", f"sqlite:///{tmp_path / 'gradebook.db'}"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900, check=False)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    result = json.loads((tmp_path / "out" / "results" / "delegator.json").read_text())
    task_of = {c.id: c.task for c in _assignment(name).checks}
    jvp = [t for t in result["tests"] if task_of[t["name"].split(":")[0]] == "ps1.jvp"]
    assert jvp and all(t["points"] == 0 for t in jvp)
    for test in jvp:
        assert "Your cell for this task was not run: line 4: jax.jvp may not be called in the " \
               "cell of ps1.jvp" in test["message"], test
