"""Hidden checks of ps4_core (grader side only).

Inputs are drawn at grading time: broadcast shapes (new axes, stretched axes, rank 0 to 3) and
random programs with dead code or constant parts (programs.py). Expectations come from real JAX
on the same programs, in float64 like the NumPy-based core: gradients through
``lax.broadcast_in_dim``, ``jax.linear_transpose`` of it, the equations JAX's own dead-code
elimination keeps, and the equations of JAX's jaxpr that depend on the non-constant input.

Each check runs one case of every one of its input classes on every grading (``{"cases": ...}``):
- broadcast_transpose.new_axes: a scalar x; x of rank >= 1 with some new axes.
- broadcast_transpose.stretched: stretched size-one axes only (some); every axis of x of size one
  and stretched; new axes and stretched axes together.
- broadcast_transpose.direct and .jit: all five above, and the identity (nothing new, nothing
  stretched).
- dce.structure: no dead chain; an input returned as it is; an input no output needs with the
  constant needed; a dead chain; a jit equation of two outputs and a cond equation of two
  outputs, each with only its second output read. dce.chains: dead chains, with each of the three
  others; a jit equation and a cond equation (two outputs each) that no output needs.
  dce.values: an unused input and a needed constant, with and without a dead chain.
- fold_constants.*: one and two constants, each with only a kept output and with a folded output
  too; .literals and .consts always fold a literal. .structure also: float32 constants and input
  (no literal); a jit equation of two outputs over constants; a cond equation of two outputs over
  constants (its predicate a comparison). .consts also: a comparison of constants (a bool value)
  read by a kept select; a jit equation of two outputs over constants.

The course's core has no other primitive a jaxpr can hold (exp, log, div, maximum and matmul of
ps2 have no abstract evaluation rule, so they cannot be staged). JAX names some equations
otherwise: its ``jit`` is the core's ``xla_call``, ``gt``/``lt`` are ``greater``/``less``,
``select_n`` is ``select``, and its ``cond`` reads an int32 index converted from the bool
predicate (a ``convert_element_type`` the core does not need); the expectations are written in
the core's names (``_core_names``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax._src.interpreters import partial_eval as pe  # grader side: JAX's own DCE
from jax.extend.core import Literal

from autograder.assignments.ps4_core import programs
from autograder.spec import Assignment, Check, Outcome, Task, Verdict
from autograder.worker import banned, judge

X64 = (("jax_enable_x64", True),)
RTOL, ATOL = 1e-7, 1e-9
FLOAT32 = (1e-5, 1e-6)  # a float32 program's values, folded by NumPy, evaluated by XLA

TASKS = (
    Task("ps4.broadcast_transpose", "broadcast_transpose, the transpose rule of broadcast",
         banned=banned.TRANSPOSES),
    Task("ps4.dce", "dce_jaxpr, dead-code elimination"),
    Task("ps4.fold_constants", "fold_constants, constant folding"),
)


# --- Judges ----------------------------------------------------------------------------------
def typed(expected: dict, outcome: Outcome) -> Verdict:
    """A cotangent (or a list of them) against JAX's: values, shape, dtype and weak type."""
    failed = judge.raised(outcome)
    if failed:
        return failed
    rtol, atol = expected["tolerance"]
    want, got = expected["cts"], outcome.value
    if not isinstance(want, list):
        want, got = [want], [got]
    if not isinstance(got, list) or len(got) != len(want):
        return Verdict(False, f"the rule must return a list of {len(want)} cotangent")
    for w, g in zip(want, got):
        if not isinstance(g, dict) or set(g) != {"value", "weak"}:
            return Verdict(False, "the probe did not get a result")
        verdict = judge.close(w["value"], Outcome(value=g["value"]), rtol=rtol, atol=atol)
        if not verdict.passed:
            return verdict
        if g["weak"] is not w["weak"]:
            return Verdict(False, "a Python scalar where JAX gives an array (a weak type)")
    return Verdict(True)


def report(expected: dict, outcome: Outcome) -> Verdict:
    """A dict of exact facts (equation names, counts) and ``values`` compared with tolerance."""
    failed = judge.raised(outcome)
    if failed:
        return failed
    got = outcome.value
    if not isinstance(got, dict):
        return Verdict(False, "the probe did not get a result")
    what = {"prims": "the equations left are not the right ones (or not in order)",
            "argument_unchanged": "the jaxpr passed in (or its constants) was changed",
            "n_in": "the input binders changed", "n_const": "the wrong constants are kept",
            "n_constvars": "the constvars do not match the constants returned",
            "consts_typed": "a constvar's type is not the shape and dtype of its constant"}
    for key, message in what.items():
        if key in expected and got.get(key) != expected[key]:
            return Verdict(False, message)
    rtol, atol = expected.get("tolerance", (RTOL, ATOL))
    return judge.close(expected["values"], Outcome(value=got.get("values")), rtol=rtol,
                       atol=atol)


def each(judge_one):
    """Judge every case of the check's case matrix (judge.judge_each): the first case that
    fails fails the check, and the message says which class it was."""
    return judge.judge_each(judge_one, failure="case {number} of {count} ({name}): {message}")


def _broadcast_class(case) -> str:
    return {"rank0": "a scalar broadcast", "new": "new axes only",
            "identity": "no new axis, nothing stretched",
            "stretch": "some size-one axes stretched", "stretch_all": "every axis stretched",
            "mixed": "new axes and stretched axes",
            "size_one": "size-one axes that stay size one, new ones among them",
            "empty": "an axis of size zero"}[case["kind"]] + f", {np.dtype(case['x'].dtype)}"


def _dce_class(case) -> str:
    if case.get("case") or case.get("classes"):
        return case.get("case") or case["classes"][0]
    program = case["program"]
    return (f"a program of {len(program['steps'])} steps and {len(program['outs'])} "
            f"output(s)")


def _fold_class(case) -> str:
    if case.get("case") or case.get("classes"):
        return case.get("case") or case["classes"][0]
    return f"a program over {len(case['consts'])} constant(s)"


# --- Input makers ----------------------------------------------------------------------------
# Every check runs each of its input classes on every grading (``{"cases": [...]}``, one case
# per class, drawn at random within its class), so that a grade depends on the code, not on
# which class a seed happened to draw.
def _broadcast_case(rng, kind: str, dtype) -> dict:
    """One broadcast of class ``kind``, its arrays of ``dtype``:

    - ``"rank0"``: x is a scalar, every axis of the result is new;
    - ``"new"``: some (not all) axes are new, none stretched;
    - ``"identity"``: no new axis, nothing stretched (the cotangent passes through);
    - ``"stretch"``: no new axis, some size-one axes of x stretched (not all);
    - ``"stretch_all"``: no new axis, every axis of x has size one and is stretched;
    - ``"mixed"``: new axes (the first axis among them) and stretched size-one axes at once
      (rank 2 or 3);
    - ``"size_one"``: axes of size one in the result, a new one and one of x's (not stretched);
    - ``"empty"``: an axis of size zero, of x's or new.
    """
    out_rank = int(rng.integers(2 if kind in ("mixed", "new", "size_one") else 1, 4))
    shape = [int(d) for d in rng.integers(2, 5, size=out_rank)]
    if kind == "rank0":
        n_new = out_rank
    elif kind in ("new", "mixed", "size_one"):
        n_new = int(rng.integers(1, out_rank))
    else:
        n_new = int(rng.integers(0, out_rank)) if kind == "empty" else 0
    axes = sorted(int(a) for a in rng.choice(out_rank, size=n_new, replace=False))
    if kind == "mixed" and 0 not in axes:
        # A new axis before every stretched one, every time: summing a stretched axis at its
        # position in x instead of in the result breaks only then.
        axes = sorted([0, *axes[1:]])
    kept = [i for i in range(out_rank) if i not in axes]
    if kind == "size_one":
        shape[axes[0]] = 1
        shape[kept[int(rng.integers(len(kept)))]] = 1
    elif kind == "empty":
        shape[int(rng.integers(out_rank))] = 0
    x_shape = [shape[i] for i in kept]
    if kind == "stretch_all":
        x_shape = [1] * len(kept)
    elif kind in ("stretch", "mixed"):
        most = len(kept) - 1 if kind == "stretch" and len(kept) > 1 else len(kept)
        for j in rng.choice(len(kept), size=int(rng.integers(1, most + 1)), replace=False):
            x_shape[int(j)] = 1

    def draw(size):
        return rng.uniform(-2.0, 2.0, size=size).astype(dtype)

    case = {"shape": shape, "axes": axes, "x": draw(x_shape), "w": draw(shape),
            "ct": draw(shape), "kind": kind}
    return {**case, "classes": [_broadcast_class(case)]}


NEW_AXES = ("rank0", "new")
STRETCHED = ("stretch", "stretch_all", "mixed")
EVERY_BROADCAST = ("rank0", "new", "identity", "stretch", "stretch_all", "mixed", "size_one",
                   "empty")
# Every class in both float dtypes of the course (float32, float64): the cotangent keeps x's.
DTYPES = (np.float64, np.float32)


def _broadcasts(kinds, every_dtype=True):
    """Each kind in each dtype; without ``every_dtype``, the dtypes taken in turn (under jit,
    where each case costs a compilation: both dtypes are still drawn on every grading)."""
    def make(rng):
        if not every_dtype:
            return {"cases": [_broadcast_case(rng, kind, DTYPES[k % 2])
                              for k, kind in enumerate(kinds)]}
        return {"cases": [_broadcast_case(rng, kind, dtype) for kind in kinds
                          for dtype in DTYPES]}

    return make


def _dead_code_case(rng, chains: bool, signature: bool = False, input_out: bool = False,
                    dead_const: bool = False):
    """With ``signature``, the outputs never need one of the two inputs and always need the
    constant (programs.draw_dead_code), so the binders a pass keeps are always put to the test.
    With ``input_out``, an input is also returned as it is (an output no equation computes)."""
    n = int(rng.integers(2, 5))
    program = programs.draw_dead_code(rng, 3, chains=chains, signature=signature,
                                      dead_const=dead_const)
    if input_out:
        program = {**program, "outs": [*program["outs"], int(rng.integers(2))]}
    named = (("dead code in chains" if chains else "dead code")
             + (", the outputs never need one input" if signature else "")
             + (", an input returned as it is" if input_out else "")
             + (", the constant read by dead code only" if dead_const else ""))
    return {"program": program, "args": [rng.uniform(-2.0, 2.0, size=n) for _ in range(2)],
            "const": rng.uniform(-2.0, 2.0, size=n), "classes": [named]}


_CALL_NAMES = {"jit2": "a jit equation", "cond2": "a cond equation"}
_READ_NAMES = {"second": "of two outputs, only the second read",
               "none": "of two outputs, neither read"}


def _multi_out_case(rng, call: str, read: str):
    n = int(rng.integers(2, 5))
    return {"program": programs.draw_multi_out(rng, call, read),
            "args": [rng.uniform(-2.0, 2.0, size=n) for _ in range(2)],
            "const": rng.uniform(-2.0, 2.0, size=n),
            "case": f"{_CALL_NAMES[call]} {_READ_NAMES[read]}"}


def _dead_code(*classes):
    """One case per ``(chains, signature, input_out[, dead_const])`` in ``classes``, or per
    ``(call, read)`` (programs.draw_multi_out: an equation of two outputs)."""
    def make(rng):
        return {"cases": [_multi_out_case(rng, *c) if isinstance(c[0], str)
                          else _dead_code_case(rng, *c) for c in classes]}

    return make


# The program features of constant folding (programs.draw_foldable's keywords), by class name.
FOLD_FEATURES = {"literal_only": "an equation of literals only",
                 "scalar": "a rank-0 constant and folded rank-0 values",
                 "both_kinds": "original and folded constants both still read",
                 "const_out": "a constant returned as it is",
                 "repeated": "a variable read twice by one equation"}


def _foldable_case(rng, literals: bool, n_consts: int, folded_out: bool, **features):
    n = int(rng.integers(2, 5))
    program = programs.draw_foldable(rng, n_consts, literals=literals, folded_out=folded_out,
                                     **features)
    named = ", ".join([f"{n_consts} constant{'s' if n_consts > 1 else ''}"]
                      + (["literals"] if literals else [])
                      + (["a folded value among the outputs"] if folded_out else [])
                      + [FOLD_FEATURES[k] for k, on in features.items() if on])
    consts = [np.asarray(rng.uniform(-2.0, 2.0, size=n if rank else ()))
              for rank in program["const_ranks"]]
    return {"program": program, "consts": consts, "x": rng.uniform(-2.0, 2.0, size=n),
            "lits": [float(v) for v in rng.uniform(-2.0, 2.0, size=program["n_lits"])],
            "classes": [named]}


FOLD_SPECIAL = {"float32": "float32 constants and input",
                "jit2": "a jit equation of two outputs over constants",
                "cond2": "a cond equation of two outputs over constants",
                "compare": "a comparison of constants read by a kept select"}


def _fold_special_case(rng, kind: str):
    n = int(rng.integers(2, 5))
    dtype = np.float32 if kind == "float32" else np.float64
    if kind == "float32":  # no literal: the core types x * 2.0 as float64, JAX as float32
        program = programs.draw_foldable(rng, 2, literals=False,
                                         ops=("sin", "cos", "neg", "add", "mul"))
    else:
        program = programs.draw_fold_special(rng, kind)
    return {"program": program,
            "consts": [rng.uniform(-2.0, 2.0, size=n).astype(dtype) for _ in range(2)],
            "x": rng.uniform(-2.0, 2.0, size=n).astype(dtype), "case": FOLD_SPECIAL[kind]}


def _foldable(literals: bool, special=(), features=()):
    """One case per number of constants (one, two) and per kind of outputs (only a kept
    equation's, or also a folded value's), one per kind in ``special`` (FOLD_SPECIAL), and one
    per ``(n_consts, folded_out, features)`` in ``features`` (FOLD_FEATURES)."""
    def make(rng):
        return {"cases": [_foldable_case(rng, literals, n_consts, folded_out)
                          for n_consts in (1, 2) for folded_out in (False, True)]
                + [_fold_special_case(rng, kind) for kind in special]
                + [_foldable_case(rng, literals, n_consts, folded_out,
                                  **dict.fromkeys(on, True))
                   for n_consts, folded_out, on in features]}

    return make


# --- Expectations (real JAX) -----------------------------------------------------------------
def _np(x):
    """A JAX value as a NumPy array of its own dtype."""
    return np.asarray(x)


def _cotangent(ct) -> dict:
    return {"value": np.asarray(ct), "weak": bool(ct.weak_type)}


def _tolerance(dtype) -> tuple[float, float]:
    return FLOAT32 if np.dtype(dtype) == np.float32 else (RTOL, ATOL)


def _kept(inputs):
    return [i for i in range(len(inputs["shape"])) if i not in inputs["axes"]]


def _jax_loss(inputs):
    shape, w = tuple(inputs["shape"]), jnp.asarray(inputs["w"])

    def loss(x):
        return jnp.sum(jnp.sin(lax.broadcast_in_dim(x, shape, tuple(_kept(inputs)))) * w)

    return loss


def expect_broadcast_grad(inputs):
    x = jnp.asarray(inputs["x"])
    # Under jax.jit: one compilation per case, where eager JAX compiles each operation apart.
    return {"cts": _cotangent(jax.jit(jax.grad(_jax_loss(inputs)))(x)),
            "tolerance": _tolerance(x.dtype)}


def expect_broadcast_direct(inputs):
    x = jnp.asarray(inputs["x"])
    transposed = jax.linear_transpose(
        lambda v: lax.broadcast_in_dim(v, tuple(inputs["shape"]), tuple(_kept(inputs))), x)
    (ct,) = transposed(jnp.asarray(inputs["ct"], dtype=x.dtype))
    return {"cts": [_cotangent(ct)], "tolerance": _tolerance(x.dtype)}


# JAX's names of the equations the core names otherwise (see the module's docstring).
_CORE_NAMES = {"jit": "xla_call", "pjit": "xla_call", "gt": "greater", "lt": "less",
               "select_n": "select"}


def _core_names(eqns) -> list[str]:
    """The primitives of JAX's ``eqns`` as the core names them, without the conversions of a
    bool predicate to cond's int32 index, which the core has no equation for."""
    return [_CORE_NAMES.get(str(eqn.primitive), str(eqn.primitive)) for eqn in eqns
            if not (str(eqn.primitive) == "convert_element_type"
                    and eqn.invars[0].aval.dtype == jnp.bool_)]


def expect_dce(inputs):
    const = jnp.asarray(inputs["const"])
    f = programs.build(inputs["program"], programs.theirs())
    closed = jax.make_jaxpr(lambda x, y: f(x, y, const))(*inputs["args"])
    smaller, _ = pe.dce_jaxpr(closed.jaxpr, [True] * len(closed.jaxpr.outvars),
                              instantiate=True)
    return {"prims": _core_names(smaller.eqns),
            "argument_unchanged": True,
            "n_in": 2, "n_const": len(closed.jaxpr.constvars),
            "values": [_np(v) for v in f(*inputs["args"], const)]}


def expect_fold(inputs):
    consts, x = inputs["consts"], inputs["x"]
    lits = [np.float64(v) for v in inputs.get("lits", [])]  # NumPy scalars: JAX stages literals
    f = programs.build(inputs["program"], programs.theirs())
    jaxpr = jax.make_jaxpr(lambda *args: f(*args, *lits))(*consts, x).jaxpr
    n = len(consts)
    constant = set(jaxpr.invars[:n])
    kept = []
    for eqn in jaxpr.eqns:
        if all(isinstance(v, Literal) or v in constant for v in eqn.invars):
            constant.update(eqn.outvars)
        else:
            kept.append(eqn)
    read = [v for eqn in kept for v in eqn.invars] + list(jaxpr.outvars)
    used = {v for v in read if not isinstance(v, Literal) and v in constant}
    expected = {"prims": _core_names(kept), "n_const": len(used),
                "n_constvars": len(used), "n_in": 1, "consts_typed": True,
                "argument_unchanged": True, "values": [_np(v) for v in f(*consts, x, *lits)]}
    if np.asarray(x).dtype == np.float32:  # NumPy's float32 and XLA's round differently
        expected["tolerance"] = FLOAT32
    return expected


def _check(id, task, cell, points, description, probe, make, expect, judge_=report, blame=""):
    return Check(id=id, task=task, description=description, points=points, grade_cell=cell,
                 probe=probe, make_inputs=make, expect=expect, judge=judge_, blame=blame,
                 jax_config=X64, timeout_s=60.0)


BT, DCE, FOLD = "ps4.broadcast_transpose", "ps4.dce", "ps4.fold_constants"
GRAD = judge.expect_each(expect_broadcast_grad, _broadcast_class)
DIRECT = judge.expect_each(expect_broadcast_direct, _broadcast_class)
DCE_ALL = judge.expect_each(expect_dce, _dce_class)
FOLD_ALL = judge.expect_each(expect_fold, _fold_class)
# Input classes (one case each, every grading), as (chains, signature, input_out[, dead_const])
# for dce.
# (call, read) for an equation of two outputs (programs.draw_multi_out).
DCE_STRUCTURE = ((False, False, False), (False, False, True), (False, True, False),
                 (True, False, False), ("jit2", "second"), ("cond2", "second"))
DCE_CHAINS = ((True, False, False), (True, False, True), (True, True, False),
              ("jit2", "none"), ("cond2", "none"))
DCE_VALUES = ((True, True, False), (False, True, False), (True, False, False, True))
FOLD_STRUCTURE = ("float32", "jit2", "cond2")  # FOLD_SPECIAL, besides the four random ones
FOLD_CONSTS = ("compare", "jit2")
# (n_consts, folded_out, FOLD_FEATURES on): every feature in each check, once at least.
FOLD_STRUCTURE_FEATURES = ((1, False, ("literal_only", "scalar")),
                           (2, True, ("both_kinds", "const_out", "repeated")))
FOLD_LITERAL_FEATURES = ((1, False, ("literal_only",)),
                         (2, False, ("literal_only", "scalar", "repeated", "both_kinds")))
FOLD_CONSTS_FEATURES = ((2, False, ("both_kinds",)),
                        (1, True, ("both_kinds", "const_out", "scalar")),
                        (2, True, ("literal_only", "const_out", "repeated")))
CHECKS = (
    _check("ps4.broadcast_transpose.new_axes", BT, "test_broadcast_transpose", 3,
           "grad through broadcast with new axes only: a scalar x, and x of rank 1 or more",
           "probe_broadcast_grad", _broadcasts(NEW_AXES), GRAD, each(typed),
           blame="Each element of x was copied along the new axes: its cotangent is the sum of "
                 "the cotangents over those axes."),
    _check("ps4.broadcast_transpose.stretched", BT, "test_broadcast_transpose", 3,
           "grad through broadcast that also stretches size-one axes of x: some of them, all "
           "of them, and together with new axes", "probe_broadcast_grad",
           _broadcasts(STRETCHED), GRAD, each(typed),
           blame="A size-one axis of x stretched to a longer one must be summed too, and kept "
                 "with size one: the cotangent has x's shape."),
    _check("ps4.broadcast_transpose.direct", BT, "test_broadcast_transpose", 2,
           "the rule called on its own, against jax.linear_transpose, on every kind of "
           "broadcast (scalar, new axes, none, stretched, both)",
           "probe_broadcast_direct", _broadcasts(EVERY_BROADCAST), DIRECT, each(typed),
           blame="The rule returns a list holding one cotangent, of the operand's shape."),
    _check("ps4.broadcast_transpose.jit", BT, "test_broadcast_transpose", 2,
           "grad through broadcast under jit, where the cotangent is a tracer, on every kind "
           "of broadcast", "probe_broadcast_grad_jit", _broadcasts(EVERY_BROADCAST, every_dtype=False), GRAD,
           each(typed),
           blame="Under jit the cotangent is a staging tracer: compute with reduce_sum and "
                 "broadcast, not NumPy."),
    _check("ps4.dce.structure", DCE, "test_dce", 4,
           "the equations left on random programs, against JAX's own dead-code elimination "
           "(an input returned as it is, an input no output needs, jit and cond equations of "
           "two outputs)",
           "probe_dce", _dead_code(*DCE_STRUCTURE), DCE_ALL, each(report),
           blame="Keep exactly the equations an output needs, directly or through others, in "
                 "their order, with the same binders and outputs."),
    _check("ps4.dce.chains", DCE, "test_dce", 4,
           "programs with chains of dead equations feeding each other, and dead jit and cond "
           "equations",
           "probe_dce", _dead_code(*DCE_CHAINS), DCE_ALL, each(report),
           blame="An equation read only by dead equations is dead too: walk backwards from the "
                 "outputs."),
    _check("ps4.dce.values", DCE, "test_dce", 2,
           "the smaller jaxpr type-checks and computes what JAX computes, argument unchanged, "
           "binders kept when an input is needed by no output",
           "probe_dce", _dead_code(*DCE_VALUES), DCE_ALL, each(report),
           blame="Return a new Jaxpr with the constvars, in_binders and outs of the argument, "
                 "even an input no kept equation reads; do not change the argument."),
    _check("ps4.fold_constants.structure", FOLD, "test_fold_constants", 4,
           "the equations left on random programs over one or two constants and one input, "
           "float32 ones, and jit and cond equations over constants",
           "probe_fold", _foldable(literals=False, special=FOLD_STRUCTURE,
                                   features=FOLD_STRUCTURE_FEATURES), FOLD_ALL,
           each(report),
           blame="Fold every equation whose inputs are all constants, including results folded "
                 "before it; keep the others in order."),
    _check("ps4.fold_constants.literals", FOLD, "test_fold_constants", 3,
           "constants combined with literals (x * 2.0) fold too",
           "probe_fold", _foldable(literals=True, features=FOLD_LITERAL_FEATURES), FOLD_ALL,
           each(report),
           blame="A literal is a constant: an equation reading constants and literals folds."),
    _check("ps4.fold_constants.consts", FOLD, "test_fold_constants", 3,
           "only the constants still read are kept, the jaxpr type-checks and computes what JAX "
           "computes, a folded output included", "probe_fold",
           _foldable(literals=True, special=FOLD_CONSTS, features=FOLD_CONSTS_FEATURES),
           FOLD_ALL, each(report),
           blame="Keep one constvar per constant still read by a kept equation or an output, "
                 "with its value at the same position."),
)

ASSIGNMENT = Assignment(name="ps4_core", notebook="ps4_core.ipynb", tasks=TASKS, checks=CHECKS)
