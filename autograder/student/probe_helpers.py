"""What every assignment's probes share: code that runs in the student's process.

Imported by the probes, so by the sandbox's fork server before any notebook is seen, and guarded
like them: :mod:`autograder.student.guard` lists this module, so rebinding one of its names, or
rewriting one of its functions in place, fails the checks. Nothing here compares anything: the
probes return plain data and the grader judges it (:mod:`autograder.worker.judge`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

# The module of everything the notebook's cells define: IPython's user namespace, the Jupyter
# kernel nbgrader runs, and the in-process runs all execute the cells as ``__main__``.
NOTEBOOK = "__main__"
# Whose functions a notebook must not hand in as its own, at any layer of a wrapper: the course's
# package (the book's worked answers), the grader's, JAX's (the transformations the tasks rebuild).
_NOT_THE_NOTEBOOKS = ("jaxcourse", "autograder", "jax", "jaxlib")
# Layers of wrappers own() looks through; an object nested deeper is not taken for the notebook's.
_DEPTH = 16


def module_of(obj: Any) -> str:
    """The module that defined ``obj``, seen through ``functools.partial``; "" if none is named."""
    for _ in range(_DEPTH):
        if not isinstance(obj, functools.partial):
            break
        obj = obj.func
    module = getattr(obj, "__module__", None)
    return module if type(module) is str else ""


def _layers(obj: Any) -> list[Any]:
    """``obj`` and what it wraps, outermost first, partials skipped: each ``functools.partial``'s
    function, then each ``__wrapped__`` (set by functools.wraps, jax.jit, jax.custom_jvp and
    custom_vjp, lru_cache: they copy the wrapped function's ``__module__``, a partial's or
    jax.jit's of a partial says ``functools``)."""
    found: list[Any] = []
    for _ in range(_DEPTH):
        if isinstance(obj, functools.partial):
            obj = obj.func
            continue
        found.append(obj)
        inner = getattr(obj, "__wrapped__", None)
        if inner is None:
            return found
        obj = inner
    raise ImportError("wrapped too many times to tell where it was written")


def own(ns: dict, name: str) -> Callable[..., Any]:
    """``ns[name]``, a function the notebook's own cells wrote; raises otherwise.

    The rule, checked in this order (the message says which part failed):

    1. ``name`` is bound in the notebook's namespace (else ``NameError``).
    2. Looked at through every ``functools.partial`` and every ``__wrapped__`` (what
       ``functools.wraps``, ``jax.jit``, ``jax.custom_jvp``/``custom_vjp`` and ``lru_cache``
       leave), no layer comes from the course's package, the grader's or JAX's (``jaxcourse``,
       ``autograder``, ``jax``, ``jaxlib``): not one of the book's answers or JAX's own function
       imported under the task's name, not a partial or a wrapper of one (else ``ImportError``
       naming the module).
    3. It is callable (else ``TypeError``).
    4. The innermost function, the one that computes, was defined in the notebook (its module is
       ``__main__``): not a builtin, not NumPy's or ``math``'s or any library's, not a partial or
       a ``jax.jit`` of one (else ``ImportError``). A class the notebook defines counts, with its
       instances and their methods; so do ``jax.jit``, ``jax.custom_vjp``, ``functools.partial``
       and ``lru_cache`` of a notebook function.

    This is the union of what the three assignments that ask for named functions used to refuse
    (ps2 and ps4: the course's and the grader's modules, through one partial; ps5: the course's,
    JAX's and the grader's, partials not looked through), plus 2's other layers and rule 4. It
    is a first filter: a notebook function that only calls the library is the notebook's, and
    the checks (banned calls, counted rule calls, measured values) judge what it does.
    """
    if name not in ns:
        raise NameError(f"{name} is not defined")
    obj = ns[name]
    layers = _layers(obj)
    for layer in layers:
        origin = module_of(layer)
        if origin.startswith(_NOT_THE_NOTEBOOKS):
            raise ImportError(f"{name} comes from {origin}, not from your notebook")
    if not callable(obj):
        raise TypeError(f"{name} is not a function")
    origin = module_of(layers[-1])
    if origin != NOTEBOOK:
        where = f"comes from {origin}" if origin else "was not written"
        raise ImportError(f"{name} {where}, not from your notebook")
    return obj


def each_case(probe: Callable[[dict, dict], Any]) -> Callable[[dict, dict], Any]:
    """``probe`` run on every case of a check's case matrix: for inputs ``{"cases": [...], ...}``
    the result is ``{"cases": [one result per case, in order]}``; inputs without ``"cases"`` (one
    case, as a reproducer asks) go to ``probe`` as they are. The grader's side is
    :func:`autograder.worker.judge.expect_each` and :func:`autograder.worker.judge.judge_each`.

    The wrapper keeps the probe's name and module (``functools.wraps``), so the guard fingerprints
    it with the probes of the assignment it is bound in."""

    @functools.wraps(probe)
    def run(ns: dict, inputs: dict) -> Any:
        if "cases" not in inputs:
            return probe(ns, inputs)
        return {"cases": [probe(ns, case) for case in inputs["cases"]]}

    return run
