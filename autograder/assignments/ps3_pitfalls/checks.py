"""Hidden checks of ps3_pitfalls (grader side). Each check runs the student's fix under the
transformation that exposes its pitfall; expectations come from real JAX on inputs drawn here."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from autograder import judge
from autograder.spec import Assignment, Check, Outcome, Task, Verdict

NAME = "ps3_pitfalls"

TASKS = (
    Task("ps3.pure", "shift(x, offset): a pure function that jit can cache"),
    Task("ps3.loop", "relax(x, steps): the Python loop as lax.fori_loop or lax.scan"),
    Task("ps3.method", "Scaler: a pytree class whose jitted method sees mutations"),
    Task("ps3.placement", "commit_to(x, device): an array committed to a device"),
    Task("ps3.divide", "divide(x, y): traceable under jit, grad and vmap"),
    Task("ps3.safe_log", "safe_log(x): log with a finite gradient where x <= 0"),
    Task("ps3.log_or_y", "log_or_y(x, y): log(x) or y, with finite gradients"),
    Task("ps3.smooth_step", "smooth_step(x, temperature): a step with a usable gradient"),
    Task("ps3.benchmark", "benchmark(f, *args, repeats): steady-state seconds per call"),
    Task("ps3.donate", "sgd_step(params, grads, lr): an update that donates params"),
    Task("ps3.debug_print", "traced_sqrt(x): prints its input on every jitted call"),
    Task("ps3.callback", "ranks(x): a NumPy routine called through pure_callback"),
)


# Reference computations, in real JAX, on the grader's side. --------------------------------------


def _relax_reference(x: np.ndarray, steps: int) -> np.ndarray:
    x = jnp.asarray(x)
    for _ in range(steps):
        x = x + 0.25 * (jnp.roll(x, 1) - 2.0 * x + jnp.roll(x, -1))
    return np.asarray(x)


def _divide_reference(x, y):
    ok = y >= 1.0
    return jnp.where(ok, x / jnp.where(ok, y, 1.0), 0.0)


def _safe_log_reference(x):
    return jnp.where(x > 0.0, jnp.log(jnp.where(x > 0.0, x, 1.0)), 0.0)


def _log_or_y_reference(x, y):
    return jnp.where(x > 0.0, jnp.log(jnp.where(x > 0.0, x, 1.0)), y)


def _smooth_step_reference(x, temperature):
    return jax.nn.sigmoid(x / temperature)


def _grads(fn, argnums: tuple[int, ...], *args) -> tuple[np.ndarray, ...]:
    return tuple(np.asarray(g) for g in jax.vmap(jax.grad(fn, argnums=argnums))(*args))


# Input generators. ------------------------------------------------------------------------------


def _vector(rng: np.random.Generator, n: int, low: float, high: float) -> list[float]:
    return [float(v) for v in rng.uniform(low, high, n).astype(np.float32)]


def _inputs_pure(rng):
    return {"x": _vector(rng, int(rng.integers(3, 7)), -2, 2),
            "offsets": [float(v) for v in rng.choice(np.arange(-20, 21), 3, replace=False)]}


def _inputs_loop_values(rng):
    return {"x": _vector(rng, 16, -1, 1), "steps": int(rng.integers(5, 40))}


def _inputs_loop_size(rng):
    return {"x": _vector(rng, 16, -1, 1), "step_counts": [int(rng.integers(8, 16)), 200]}


def _inputs_method(rng):
    return {"y": _vector(rng, int(rng.integers(2, 6)), -3, 3),
            "factors": [float(v) for v in rng.choice(np.arange(2, 30), 3, replace=False)]}


def _edge_points(rng, edges: list[float], n: int, low: float, high: float) -> list[float]:
    return [*edges, *_vector(rng, n, low, high)]


def _inputs_divide(rng):
    y = _edge_points(rng, [0.0, 0.5, 1.0, -1.0, 2.5], 5, -3, 5)
    return {"x": _vector(rng, len(y), -4, 4), "y": y}


def _inputs_log(rng):
    x = _edge_points(rng, [0.0, -1.0, 1.0, 1e-3], 6, -3, 5)
    return {"x": x, "y": _vector(rng, len(x), -5, 5)}


def _inputs_smooth_step(rng):
    temperature = float(np.float32(rng.uniform(0.2, 2.0)))
    far = [s * 100.0 * temperature for s in (-2.0, -1.0, 1.0, 2.0)]
    return {"x": _edge_points(rng, [0.0, *far], 6, -4, 4), "temperature": temperature}


def _inputs_benchmark(rng):
    return {"compile_s": 100.0, "compute_s": float(rng.uniform(0.5, 2.0)), "transfer_s": 10.0,
            "dispatch_s": 1e-3, "repeats": int(rng.integers(3, 8)),
            "shapes": [[int(rng.integers(2, 5))] * 2, [int(rng.integers(2, 5))]]}


def _inputs_donate(rng):
    shapes = {"b": (int(rng.integers(2, 5)),), "w": (3, int(rng.integers(2, 5)))}

    def tree():
        return {k: rng.normal(size=s).astype(np.float32).tolist() for k, s in shapes.items()}

    return {"params": tree(), "grads": tree(), "lr": float(rng.choice([0.1, 0.05, 0.5]))}


def _inputs_debug_print(rng):
    a, b = (float(v) for v in rng.choice(np.arange(2, 30), 2, replace=False) ** 2)
    return {"values": [a, b, a]}


def _inputs_callback(rng):
    n = int(rng.integers(3, 7))
    return {"batch": [rng.permutation(n).astype(np.float32).tolist() for _ in range(3)]}


# Judges that need more than closeness. ----------------------------------------------------------


def _judge_loop_size(expected: Any, outcome: Outcome) -> Verdict:
    if outcome.raised:
        return Verdict(False, f"making the jaxpr raised {outcome.raised}: {outcome.message}")
    small, large = outcome.value
    if large > small:
        return Verdict(False, f"the jaxpr has {small} equations for a few steps and {large} for "
                              "200 steps: the loop is still unrolled by Python while tracing")
    if large > expected:
        return Verdict(False, f"the jaxpr has {large} equations, more than a loop body needs")
    return Verdict(True)


def _judge_pytree(expected: dict, outcome: Outcome) -> Verdict:
    if outcome.raised:
        return Verdict(False, f"jit of a function taking a Scaler raised {outcome.raised}: "
                              f"{outcome.message}")
    got = outcome.value
    if got["leaves"] != expected["leaves"]:
        return Verdict(False, f"the pytree has {got['leaves']} array leaves; only factor should "
                              "be a child (dynamic)")
    first, after_factor, after_enabled = got["compilations"]
    if after_factor != first:
        return Verdict(False, "a new factor triggered a recompilation: factor must be dynamic")
    if after_enabled == after_factor:
        return Verdict(False, "a different enabled flag did not recompile: enabled must be "
                              "static (auxiliary data)")
    return judge.close(expected["values"], Outcome(value=got["values"]))


def _judge_placement(expected: dict, outcome: Outcome) -> Verdict:
    if failed := judge.raised(outcome):
        return failed
    got = outcome.value
    if got["on_device"] is not True:
        return Verdict(False, "the array is not on the requested device")
    if got["committed"] is not True:
        return Verdict(False, "the array is not committed: JAX may still move it")
    return judge.close(expected, Outcome(value=got["values"]))


def _judge_benchmark(expected: float, outcome: Outcome) -> Verdict:
    if failed := judge.raised(outcome):
        return failed
    got = outcome.value
    if got["calls"] < 2:
        return Verdict(False, "the function was called fewer than twice")
    if got["waits"] == 0:
        return Verdict(False, "no result was waited for with block_until_ready: the time "
                              "measures dispatch, not computation")
    ratio = got["seconds"] / expected
    if 0.95 <= ratio <= 1.05:
        return Verdict(True)
    if got["host_arguments"] > 0 and ratio > 1.05:
        return Verdict(False, "the arguments are copied to the device inside the timed calls")
    if ratio > 1.05:
        return Verdict(False, "the reported time includes compilation, or is not per call")
    return Verdict(False, "the reported time is too small: results were not all waited for, "
                          "or the time is divided by too much")


def _judge_donate(expected: dict, outcome: Outcome) -> Verdict:
    if failed := judge.raised(outcome):
        return failed
    got = outcome.value
    if not all(got["params_deleted"]):
        return Verdict(False, "the params buffers were not donated (they are still alive)")
    if any(got["grads_deleted"]):
        return Verdict(False, "the grads buffers were donated too; the caller still needs them")
    return Verdict(True)


def _judge_debug_print(expected: dict, outcome: Outcome) -> Verdict:
    if failed := judge.raised(outcome):
        return failed
    lines = [ln for ln in outcome.value["text"].splitlines() if ln.strip()]
    if len(lines) != len(expected["printed"]):
        return Verdict(False, f"{len(expected['printed'])} jitted calls printed {len(lines)} "
                              "lines; each call should print one")
    for i, (line, number) in enumerate(zip(lines, expected["printed"], strict=True)):
        if number not in line:
            return Verdict(False, f"line {i + 1} printed does not show the value of that call")
    return judge.close(expected["values"], Outcome(value=outcome.value["values"]))


# The checks. ------------------------------------------------------------------------------------


def _check(id_, task, description, points, cell, inputs, expect, judge_fn=judge.close, blame="",
           probe=""):
    # The probe is named after the check id (ps3.loop.size -> probe_loop_size) unless shared.
    return Check(id=id_, task=task, description=description, points=points, grade_cell=cell,
                 probe=probe or "probe_" + id_.removeprefix("ps3.").replace(".", "_"),
                 make_inputs=inputs, expect=expect, judge=judge_fn, blame=blame)


def _f32(v):
    return np.asarray(v, np.float32)


CHECKS = (
    _check("ps3.pure.jit", "ps3.pure", "jit(shift) with a new offset on every call", 2,
           "test_pure", _inputs_pure,
           lambda i: [_f32(i["x"]) + np.float32(o) for o in i["offsets"]],
           blame="shift must take everything it uses as arguments; a global is read only once, "
                 "while jit traces"),
    _check("ps3.loop.values", "ps3.loop", "jit(relax) matches the unrolled loop", 1,
           "test_loop", _inputs_loop_values,
           lambda i: _relax_reference(_f32(i["x"]), i["steps"]),
           blame="relax: the loop body or the number of iterations differs from relax_unrolled"),
    _check("ps3.loop.size", "ps3.loop", "the jaxpr of relax does not grow with steps", 2,
           "test_loop", _inputs_loop_size, lambda i: 40, _judge_loop_size,
           blame="relax: use lax.fori_loop or lax.scan so the body is traced once"),
    _check("ps3.method.mutation", "ps3.method", "Scaler.apply after mutating both fields", 2,
           "test_method", _inputs_method,
           lambda i: [_f32(i["y"]) * np.float32(i["factors"][0]),
                      _f32(i["y"]) * np.float32(i["factors"][1]), _f32(i["y"]),
                      _f32(i["y"]) * np.float32(i["factors"][2])],
           blame="Scaler: a static self is looked up by identity, so a mutated object reuses "
                 "the stale compiled method"),
    _check("ps3.method.pytree", "ps3.method", "Scaler as a pytree: factor dynamic, enabled static",
           2, "test_method", _inputs_method,
           lambda i: {"leaves": 1, "values": [
               _f32(i["y"]) * np.float32(i["factors"][0]),
               _f32(i["y"]) * np.float32(i["factors"][1]), _f32(i["y"])]},
           _judge_pytree,
           blame="Scaler: tree_flatten must return factor as the child and enabled as aux data"),
    _check("ps3.placement.host", "ps3.placement", "commit_to(a NumPy array, device)", 1,
           "test_placement", lambda rng: {"x": _vector(rng, int(rng.integers(2, 6)), -5, 5)},
           lambda i: _f32(i["x"]), _judge_placement,
           blame="commit_to: jax.device_put with a device commits; default_device does not"),
    _check("ps3.placement.uncommitted", "ps3.placement",
           "commit_to(an uncommitted JAX array, device)", 1, "test_placement",
           lambda rng: {"x": _vector(rng, int(rng.integers(2, 6)), -5, 5)},
           lambda i: _f32(i["x"]), _judge_placement,
           blame="commit_to: an array already on the device is still uncommitted until "
                 "device_put names the device"),
    _check("ps3.divide.jit", "ps3.divide", "jit(divide) on arrays", 1, "test_divide",
           _inputs_divide, lambda i: np.asarray(_divide_reference(_f32(i["x"]), _f32(i["y"]))),
           blame="divide: Python if/else needs a concrete y; select with jnp.where"),
    _check("ps3.divide.grad", "ps3.divide", "jit(vmap(grad(divide))) in x and y, y = 0 included",
           1, "test_divide", _inputs_divide,
           lambda i: _grads(_divide_reference, (0, 1), _f32(i["x"]), _f32(i["y"])),
           blame="divide: the branch not taken must not divide by zero (inner jnp.where)"),
    _check("ps3.safe_log.values", "ps3.safe_log", "jit(safe_log) including x <= 0", 1,
           "test_safe_log", _inputs_log,
           lambda i: np.asarray(_safe_log_reference(_f32(i["x"]))),
           blame="safe_log: log(x) where x > 0, else 0"),
    _check("ps3.safe_log.grad", "ps3.safe_log", "jit(vmap(grad(safe_log))) at 0 and below", 1,
           "test_safe_log", _inputs_log,
           lambda i: _grads(_safe_log_reference, (0,), _f32(i["x"]))[0],
           blame="safe_log: the outer where alone still differentiates log at 0; guard its input"),
    _check("ps3.log_or_y.values", "ps3.log_or_y", "jit(log_or_y) including x <= 0", 1,
           "test_log_or_y", _inputs_log,
           lambda i: np.asarray(_log_or_y_reference(_f32(i["x"]), _f32(i["y"]))),
           blame="log_or_y: the outer where must still choose y where x <= 0"),
    _check("ps3.log_or_y.grad", "ps3.log_or_y", "jit(vmap(grad(log_or_y))) in x and y", 1,
           "test_log_or_y", _inputs_log,
           lambda i: _grads(_log_or_y_reference, (0, 1), _f32(i["x"]), _f32(i["y"])),
           blame="log_or_y: guard the input of log with an inner where"),
    _check("ps3.smooth_step.values", "ps3.smooth_step", "jit(smooth_step) values", 1,
           "test_smooth_step", _inputs_smooth_step,
           lambda i: np.asarray(_smooth_step_reference(_f32(i["x"]), np.float32(i["temperature"]))),
           blame="smooth_step: sigmoid of x divided by the temperature"),
    _check("ps3.smooth_step.grad", "ps3.smooth_step",
           "jit(vmap(grad(smooth_step))), also far from 0", 1, "test_smooth_step",
           _inputs_smooth_step,
           lambda i: np.asarray(jax.vmap(jax.grad(_smooth_step_reference), (0, None))(
               _f32(i["x"]), np.float32(i["temperature"]))),
           blame="smooth_step: a comparison has zero gradient, and 1 / (1 + exp(-z)) overflows "
                 "for very negative z; use jax.nn.sigmoid"),
    _check("ps3.benchmark.simulated", "ps3.benchmark",
           "benchmark on an instrumented function with a simulated clock", 3, "test_benchmark",
           _inputs_benchmark, lambda i: i["compute_s"] + i["dispatch_s"], _judge_benchmark,
           blame="benchmark: device_put the arguments, call once untimed, then time repeats "
                 "calls with time.perf_counter and wait for the results",
           probe="probe_benchmark"),
    _check("ps3.donate.values", "ps3.donate", "sgd_step computes params - lr * grads", 1,
           "test_donate", _inputs_donate,
           lambda i: {k: _f32(p) - np.float32(i["lr"]) * _f32(i["grads"][k])
                      for k, p in sorted(i["params"].items())},
           lambda e, o: judge.close(e, Outcome(value=o.value["new"])) if not o.raised
           else judge.close(e, o),
           blame="sgd_step: params - lr * grads, leaf by leaf", probe="probe_donate"),
    _check("ps3.donate.buffers", "ps3.donate", "params buffers consumed, grads kept", 2,
           "test_donate", _inputs_donate, lambda i: None, _judge_donate,
           blame="sgd_step: jit with donate_argnums (or donate_argnames) for params only",
           probe="probe_donate"),
    _check("ps3.debug_print.runtime", "ps3.debug_print", "jit(traced_sqrt) prints on every call",
           2, "test_debug_print", _inputs_debug_print,
           lambda i: {"printed": [str(v) for v in i["values"]],
                      "values": [np.sqrt(np.float32(v)) for v in i["values"]]},
           _judge_debug_print,
           blame="traced_sqrt: print runs only while tracing; jax.debug.print runs every call "
                 "(with a format string, not an f-string)",
           probe="probe_debug_print"),
    _check("ps3.callback.jit", "ps3.callback", "jit(ranks)", 1, "test_callback",
           _inputs_callback,
           lambda i: np.asarray(jnp.argsort(jnp.argsort(_f32(i["batch"][0])))).astype(np.int32),
           blame="ranks: NumPy cannot read a tracer; call host_ranks with jax.pure_callback"),
    _check("ps3.callback.vmap", "ps3.callback", "vmap(ranks) and jit(vmap(ranks))", 1,
           "test_callback", _inputs_callback,
           lambda i: [np.asarray(jnp.argsort(jnp.argsort(_f32(i["batch"]), axis=1), axis=1))
                      .astype(np.int32)] * 2,
           blame="ranks: pure_callback needs a vmap_method to be batched"),
)

ASSIGNMENT = Assignment(name=NAME, notebook=f"{NAME}.ipynb", tasks=TASKS, checks=CHECKS,
                        extra={"allowed_imports": ("time",)})  # the benchmark task times code
