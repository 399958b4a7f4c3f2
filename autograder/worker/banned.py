"""Banned calls: a rule the task teaches may not be delegated to JAX's own version of it.

A JVP rule that returns ``jax.jvp`` of the ``jax.numpy`` equivalent, a transpose rule built on
``jax.linear_transpose``, a batching rule that calls ``jax.vmap``: each passes every check and
teaches nothing. :attr:`autograder.spec.Task.banned` names, per task, the dotted JAX names that do
the task's work; :func:`refusals` finds them in a cell's text, and autograder.worker.policy refuses the
cell (it is not run, the feedback names the line and the call).

What counts as a use, decided from the text alone (the cell policy has already made every
attribute read visible: ``getattr`` only with a string literal, no ``vars``, ``__dict__`` or
``attrgetter``):

- an attribute, a ``getattr`` name or a ``from ... import`` name equal to the *last component* of
  a banned name, whatever the object or module: ``jax.jvp``, ``J.jvp`` after ``import jax as J``,
  ``jx.jvp`` after ``jx = jax``, ``ad.jvp``, ``getattr(jax, "jvp")``, ``from jax import jvp as j``.
  Tracking which object a name holds would need the values, which only exist when the cell runs;
  the names banned are JAX's transformation names, which a student's own objects seldom use for
  attributes, and a refusal names the line, so a clash costs a rename;
- an ``import`` or ``from`` of a banned module path or anything below it
  (``import jax.experimental.jet``);
- not a bare name: a bare ``jvp`` is one the notebook defined (ps2's and ps4's books provide their
  own ``jvp``, ``vmap`` and ``grad``), since every way to bind JAX's under a bare name is one of
  the above.

The rule registries (``ad.primitive_jvps`` ...) are banned where reading one would hand the task to
another primitive's rule (``ad.primitive_jvps[lax.mul_p]``); writing an entry, as each task cell
registers its rule, is not a read of JAX's rule and stays allowed.

Only the transformation rules ban anything (JVP, transpose, batching, derivative). ps1's impl,
abstract evaluation and lowering ban nothing: ``jax.eval_shape`` and ``mlir.lower_fun`` are not
transformations of the rule, the checks already fail a lowering through a callback, and a mutant
that uses both must lose its points there, by its checks. ps3 fixes bugs with any JAX it likes,
ps4's jaxpr passes have no JAX counterpart on the book's jaxprs, ps5's kernels none at all.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping

# Whatever differentiates the jax.numpy equivalent: each gives a JVP (a Jacobian times a tangent).
DERIVATIVES = (
    "jax.jvp", "jax.linearize", "jax.vjp", "jax.grad", "jax.value_and_grad", "jax.jacfwd",
    "jax.jacrev", "jax.jacobian", "jax.hessian", "jax.fwd_and_bwd", "jax.experimental.jet",
    "jax.interpreters.ad.jvp", "jax.interpreters.ad.linearize",
)
# A transpose is a VJP of a linear map, so every derivative above gives one too.
TRANSPOSES = (*DERIVATIVES, "jax.linear_transpose")
# jax.custom_batching.custom_vmap stays allowed: it is how ps5 asks for a rule of one's own.
BATCHING = ("jax.vmap", "jax.numpy.vectorize", "jax.custom_batching.sequential_vmap")
# ps1 registers its rules in JAX's own tables; reading another primitive's entry delegates.
PS1_JVP = (*DERIVATIVES, "jax.interpreters.ad.primitive_jvps", "jax.interpreters.ad.defbilinear",
           "jax.interpreters.ad.deflinear", "jax.interpreters.ad.deflinear2")
PS1_TRANSPOSE = (*TRANSPOSES, "jax.interpreters.ad.primitive_transposes",
                 "jax.interpreters.ad.get_primitive_transpose")
PS1_BATCH = (*BATCHING, "jax.interpreters.batching.primitive_batchers",
             "jax.interpreters.batching.fancy_primitive_batchers",
             "jax.interpreters.batching.axis_primitive_batchers")


def refusals(source: str | ast.AST, bans: Mapping[str, Iterable[str]],
             task: str | None = None) -> list[str]:
    """One message per banned use in the cell, in line order.

    ``bans`` maps task ids to their banned names (``Task.banned``); ``task`` is the task whose
    cell this is, or None for a cell the student added. Every banned name of the assignment is
    refused in every student cell: a helper defined in another cell would otherwise delegate.
    """
    tasks_of: dict[str, list[str]] = {}
    for task_id, names in bans.items():
        for name in names:
            tasks_of.setdefault(name, []).append(task_id)
    if not tasks_of:
        return []
    if isinstance(source, str):
        try:
            tree = ast.parse(source)
        except SyntaxError:
            return []  # the cell policy refuses it and says why
    else:
        tree = source
    messages = []
    for line, name in sorted(set(_uses(tree, tuple(tasks_of)))):
        owners = tasks_of[name]
        if task in owners:
            why = f"in the cell of {task} (the task re-implements it: write the rule yourself)"
        else:
            where = f"in the cell of {task}" if task else "in a cell you added"
            verb = "re-implements" if len(owners) == 1 else "re-implement"
            why = (f"{where} ({', '.join(owners)} {verb} it, and a rule could reach it through "
                   "any cell: write the rule yourself)")
        messages.append(f"line {line}: {name} may not be called {why}")
    return messages


def _uses(tree: ast.AST, banned: tuple[str, ...]) -> Iterable[tuple[int, str]]:
    """(line, banned name) for every use of a banned name in ``tree``."""
    last = {}
    for name in banned:
        last.setdefault(name.rsplit(".", 1)[-1], []).append(name)
    # a.b[k] = v and del a.b[k] write the table a.b: registering a rule, not reading JAX's.
    written = {id(node.value) for node in ast.walk(tree)
               if isinstance(node, ast.Subscript) and not isinstance(node.ctx, ast.Load)}
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Attribute) and node.attr in last and id(node) not in written:
            yield line, _which(last[node.attr], _dotted(node))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id == "getattr" and len(node.args) > 1
              and isinstance(node.args[1], ast.Constant) and node.args[1].value in last):
            yield line, _which(last[node.args[1].value], None)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                hit = _module_hit(alias.name, banned)
                if hit:
                    yield line, hit
        elif isinstance(node, ast.ImportFrom) and not node.level:
            module = node.module or ""
            hit = _module_hit(module, banned)
            if hit:
                yield line, hit
                continue
            for alias in node.names:
                full = f"{module}.{alias.name}"
                hit = _module_hit(full, banned)
                if hit:
                    yield line, hit
                elif alias.name in last:
                    yield line, _which(last[alias.name], full)


def _module_hit(path: str, banned: tuple[str, ...]) -> str | None:
    return next((b for b in banned if path == b or path.startswith(b + ".")), None)


def _dotted(node: ast.AST) -> str | None:
    """``a.b.c`` for a chain of attributes on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def _which(candidates: list[str], written: str | None) -> str:
    """The banned name the student most likely meant: the one whose path ends as written
    (``ad.jvp`` is jax.interpreters.ad.jvp), else the first listed (``J.jvp`` is jax.jvp)."""
    if written:
        for name in candidates:
            if name == written or name.endswith("." + written):
                return name
    return candidates[0]
