# ruff: noqa: ISC004  (the C++ edits are written as adjacent string literals, line by line)
"""Realistic wrong solutions of ps5_kernels, for the tests and the demo class.

``MUTANTS[name] = (description, {solution grade_id: replacement cell source})``: a mutant is the
reference solution with that cell replaced, built by one text edit of the reference cell, so
mutants follow the source when it changes; an edit that no longer applies fails loudly.
``TASK[name]`` is the task that must lose points. ``GPU_MUTANTS`` lose points only on checks that
need a GPU (a race between threads). ``CRASH_MUTANTS`` abort the process that runs them, so only
the sandboxed command grades them. ``ALTERNATIVES`` are correct solutions written differently,
each must earn every point. ``HOSTILE`` are kernel cells of native code that attacks the grader;
graded only by the sandboxed command. ``DEMO``: the mutants the demo class hands in.
"""

from __future__ import annotations

from pathlib import Path

from autograder.assignments import edits

SOURCE = Path(__file__).resolve().parents[3] / "solutions" / "ps5_kernels" / "ps5_kernels.md"

KERNEL, FFI, VMAP, GRAD, CUDA = "ps5.kernel", "ps5.ffi_call", "ps5.vmap", "ps5.grad", "ps5.cuda"

_SUM = "    for (int64_t j = 0; j < n; ++j) sum += w[j] * std::exp(row[j] / t - top);\n"
_Y = "    y[r] = static_cast<T>(n == 0 ? top : t * (top + std::log(sum)));\n"
# One pass over a row with a running maximum: the sum is rescaled whenever the maximum grows.
_ONLINE = (
    "    for (int64_t j = 0; j < n; ++j) {\n"
    "      const double v = row[j] / t;\n"
    "      if (v > top) {\n"
    "        sum = sum * std::exp(top - v) + w[j];\n"
    "        top = v;\n"
    "      } else {\n"
    "        sum += w[j] * std::exp(v - top);\n"
    "      }\n"
    "    }\n")
_W_CHECK = ("  if (static_cast<int64_t>(w.element_count()) != *n) {\n"
            "    return ffi::Error::InvalidArgument(\"lse: w must hold n = \" + std::to_string(*n) "
            "+ \" weights\");\n  }\n")
_FFI_CALL = "    y = ffi_call(TARGET, rows, vmap_method=vmap_method)(x, w, t=np.float32(t))\n"

# name: (description, grade_id, task, text in the reference cell, its wrong replacement)
EDITS = {
    "kernel_drops_odd_tail": (
        "the sum runs over pairs of elements and drops the last element of an odd row",
        "kernel", KERNEL, _SUM,
        "    for (int64_t j = 0; j + 1 < n; j += 2)\n"
        "      sum += w[j] * std::exp(row[j] / t - top) + w[j + 1] * std::exp(row[j + 1] / t - top);\n"),
    "kernel_unshifted_exp": (
        "the exponential is taken of x / t itself, without subtracting the row's maximum",
        "kernel", KERNEL, _SUM + _Y,
        "    for (int64_t j = 0; j < n; ++j) sum += w[j] * std::exp(row[j] / t);\n"
        "    y[r] = static_cast<T>(n == 0 ? top : t * std::log(sum));\n"),
    "kernel_ignores_t": (
        "the temperature is never used: every row is a plain weighted log-sum-exp (t = 1)",
        "kernel", KERNEL,
        "    for (int64_t j = 0; j < n; ++j) top = std::fmax(top, row[j] / t);\n" + "    double sum = 0.0;\n" + _SUM + _Y,
        "    for (int64_t j = 0; j < n; ++j) top = std::fmax(top, static_cast<double>(row[j]));\n"
        "    double sum = 0.0;\n"
        "    for (int64_t j = 0; j < n; ++j) sum += w[j] * std::exp(row[j] - top);\n"
        "    y[r] = static_cast<T>(n == 0 ? top : top + std::log(sum));\n"),
    "kernel_last_row_missed": (
        "the loop over rows stops one row early (r < rows - 1): the last row is never written",
        "kernel", KERNEL, "for (int64_t r = 0; r < rows; ++r, row += n) {",
        "for (int64_t r = 0; r < rows - 1; ++r, row += n) {"),
    "kernel_rows_from_first_axis": (
        "the number of rows is taken from x's first axis, as if x always had rank 2",
        "kernel", KERNEL,
        "  *rows = static_cast<int64_t>(y.element_count());\n",
        "  *rows = x.dimensions().size() > 1 ? x.dimensions()[0] : 1;\n"),
    "kernel_w_rank_one_only": (
        "w must have rank 1: the leading unit axes that expand_dims adds are refused",
        "kernel", KERNEL,
        "  if (static_cast<int64_t>(w.element_count()) != *n) {\n",
        "  if (w.dimensions().size() != 1 || w.dimensions()[0] != *n) {\n"),
    "kernel_no_size_check": (
        "the handler never checks that w holds n weights: a wrong w is read past its end or "
        "in part",
        "kernel", KERNEL, _W_CHECK, ""),
    "kernel_float_result": (
        "each row's result is kept in a float before it is stored, losing float64's digits",
        "kernel", KERNEL, _Y,
        "    const float result = n == 0 ? top : t * (top + std::log(sum));\n"
        "    y[r] = static_cast<T>(result);\n"),
    "kernel_t_zero_accepted": (
        "the temperature is refused only when negative: t = 0 divides by zero instead",
        "kernel", KERNEL, "  if (!(t > 0.0f)) return", "  if (t < 0.0f) return"),
    "kernel_refuses_out_of_range": (
        "a w of the wrong size is refused with an OUT_OF_RANGE error, not the InvalidArgument "
        "the task asks for",
        "kernel", KERNEL,
        "    return ffi::Error::InvalidArgument(\"lse: w must hold n = \"",
        "    return ffi::Error(ffi::ErrorCode::kOutOfRange, \"lse: w must hold n = \""),
    "kernel_running_max_from_zero": (
        "one pass with a running maximum that starts at 0, not -inf (an empty row is handled "
        "apart): a row wholly far below zero underflows to log(0)",
        "kernel", KERNEL,
        "    double top = -std::numeric_limits<double>::infinity();\n"
        "    for (int64_t j = 0; j < n; ++j) top = std::fmax(top, row[j] / t);\n"
        "    double sum = 0.0;\n" + _SUM + _Y,
        "    double top = 0.0, sum = 0.0;\n" + _ONLINE
        + "    y[r] = static_cast<T>(n == 0 ? -INFINITY : t * (top + std::log(sum)));\n"),
    "ffi_always_float32": (
        "the kernel always runs in float32, float64 included",
        "ffi_call", FFI,
        "    kernel_dtype = jnp.float64 if result_dtype == jnp.float64 else jnp.float32\n",
        "    kernel_dtype = jnp.float32\n"),
    "ffi_narrow_to_kernel": (
        "float16 and bfloat16 arrays are handed to the kernel, which takes float32 and float64 only",
        "ffi_call", FFI,
        "    kernel_dtype = jnp.float64 if result_dtype == jnp.float64 else jnp.float32\n",
        "    kernel_dtype = result_dtype\n"),
    "ffi_not_cast_back": (
        "the result keeps the kernel's dtype: float32 where x and w were bfloat16",
        "ffi_call", FFI, "    return y.astype(result_dtype)\n", "    return y\n"),
    "ffi_dtype_of_x": (
        "the dtype is x's alone: a wider w is rounded to x's dtype instead of promoting",
        "ffi_call", FFI,
        "    result_dtype = jnp.promote_types(x_dtype, w_dtype)\n",
        "    result_dtype = x_dtype\n"),
    "ffi_no_int_check": (
        "integer and boolean arrays are converted silently instead of raising a TypeError",
        "ffi_call", FFI,
        "    if not (jnp.issubdtype(x_dtype, jnp.floating) and jnp.issubdtype(w_dtype, jnp.floating)):\n"
        "        raise TypeError(f\"lse_ffi takes floating-point x and w, not {x_dtype} and {w_dtype}\")\n",
        ""),
    "ffi_t_python_float": (
        "t is passed as a Python float, a float64 attribute the handler does not bind",
        "ffi_call", FFI, "(x, w, t=np.float32(t))", "(x, w, t=t)"),
    "ffi_jnp_instead_of_kernel": (
        "lse_ffi computes the value in jax.numpy and never calls the kernel",
        "ffi_call", FFI, _FFI_CALL,
        "    y = t * jax.nn.logsumexp(x / t, axis=-1, b=jnp.reshape(w, (-1,)))\n"),
    "ffi_fixed_vmap_method": (
        "vmap_method is not passed on: every call is made sequential",
        "ffi_call", FFI, "vmap_method=vmap_method)", 'vmap_method="sequential")'),
    "ffi_result_keeps_last_axis": (
        "the result is declared with x's whole shape instead of dropping the last axis",
        "ffi_call", FFI, "jax.ShapeDtypeStruct(x.shape[:-1], kernel_dtype)",
        "jax.ShapeDtypeStruct(x.shape, kernel_dtype)"),
    "vmap_sequential": (
        "the batch is handed to ffi_call's sequential method: a loop of kernel calls",
        "vmap", VMAP, "    return _batchable(float(t))(x, w)\n",
        '    return lse_ffi(x, w, t, vmap_method="sequential")\n'),
    "vmap_expand_dims_only": (
        "vmap_method='expand_dims' and no rule: a batched w reaches the kernel as a matrix",
        "vmap", VMAP, "    return _batchable(float(t))(x, w)\n",
        '    return lse_ffi(x, w, t, vmap_method="expand_dims")\n'),
    "vmap_rule_ignores_batched_w": (
        "the batching rule assumes w is never batched",
        "vmap", VMAP,
        "        if w_batched:\n"
        "            # A weight is a shift of x by t * log(w): one call with unit weights does the "
        "batch.\n"
        "            shift = t * jnp.log(w).reshape(axis_size, *([1] * (x.ndim - 2)), -1)\n"
        "            return f(x + shift, jnp.ones(x.shape[-1], x.dtype)), True\n", ""),
    "vmap_shift_without_t": (
        "a batched weight shifts x by log(w), forgetting the factor t",
        "vmap", VMAP, "            shift = t * jnp.log(w)", "            shift = jnp.log(w)"),
    "grad_forgets_w_term": (
        "the JVP has the term of dx only: w's tangent is dropped",
        "grad", GRAD,
        "jnp.sum(w_row * p * dx, axis=-1) + t * jnp.sum(p * dw_row, axis=-1)",
        "jnp.sum(w_row * p * dx, axis=-1)"),
    "grad_exp_without_t": (
        "the weights p are computed as exp(x - y), without dividing by t",
        "grad", GRAD, "p = jnp.exp((x - y[..., None]) / t)", "p = jnp.exp(x - y[..., None])"),
    "grad_w_term_without_t": (
        "the term of dw misses its factor t",
        "grad", GRAD, "+ t * jnp.sum(p * dw_row, axis=-1)", "+ jnp.sum(p * dw_row, axis=-1)"),
    "grad_tangent_in_float64": (
        "the JVP computes p in float64 whatever x's dtype: a float32 x gets a float64 tangent",
        "grad", GRAD, "p = jnp.exp((x - y[..., None]) / t)",
        "p = jnp.exp((x.astype(jnp.float64) - y[..., None]) / t)"),
    "grad_forward_in_jnp": (
        "lse is jax.numpy's logsumexp: differentiable, but the kernel is never called",
        "grad", GRAD, "    return _lse_jvp(x, w, float(t))\n",
        "    return t * jax.nn.logsumexp(x / t, axis=-1, b=jnp.reshape(w, (-1,)))\n"),
    "cuda_not_global": (
        "the kernel function is not declared __global__, so it cannot be launched",
        "cuda", CUDA, "__global__ void LseRowsKernel(", "void LseRowsKernel("),
    "cuda_wrong_symbol": (
        "the handler symbol is not the LseCuda the notebook registers",
        "cuda", CUDA, "XLA_FFI_DEFINE_HANDLER_SYMBOL(LseCuda,",
        "XLA_FFI_DEFINE_HANDLER_SYMBOL(LseCudaHandler,"),
    "cuda_cpu_only": (
        "lse_any always calls the C++ kernel: a GPU would run a CPU target",
        "cuda", CUDA,
        "    return lax.platform_dependent(x, w, cpu=lambda x, w: lse_ffi(x, w, t), "
        "cuda=on_cuda)\n", "    return lse_ffi(x, w, t)\n"),
    "cuda_t_python_float": (
        "the CUDA call passes t as a Python float, a float64 attribute",
        "cuda", CUDA, "        return call(x, w, t=np.float32(t))\n",
        "        return call(x, w, t=t)\n"),
    "cuda_operands_swapped": (
        "the CUDA call gets w first and x second: the kernel reads the weights as rows",
        "cuda", CUDA, "        return call(x, w, t=np.float32(t))\n",
        "        return call(w, x, t=np.float32(t))\n"),
    "cuda_cpu_branch_wrong_t": (
        "lse_any's CPU branch runs the C++ kernel at t = 1, not the t it was given",
        "cuda", CUDA, "cpu=lambda x, w: lse_ffi(x, w, t)", "cpu=lambda x, w: lse_ffi(x, w, 1.0)"),
    "vmap_weights_in_default_dtype": (
        "the w-batched rule's unit weights take JAX's default dtype, not x's: a float32 call "
        "batched over w returns float64",
        "vmap", VMAP, "jnp.ones(x.shape[-1], x.dtype)", "jnp.ones(x.shape[-1])"),
}

# Wrong solutions whose kernel aborts the process (a failed assertion in the FFI headers), which
# only the real, sandboxed command survives: tests/assignments/test_ps5_sandbox.py grades them.
CRASH_EDITS = {
    "kernel_no_dtype_check": (
        "the dtypes of w and y are never compared with x's: a float64 w is read as float32",
        "kernel", KERNEL,
        "  if (w.element_type() != x.element_type() || y.element_type() != x.element_type()) {\n"
        "    return ffi::Error::InvalidArgument(\"lse: x, w and y differ in dtype\");\n  }\n", ""),
}

GPU_EDITS = {
    "cuda_race_in_reduction": (
        "the tree reduction reads partial sums without __syncthreads() between its steps",
        "cuda", CUDA,
        "    if (lane < half) shared[lane] += shared[lane + half];\n"
        "    __syncthreads();\n",
        "    if (lane < half) shared[lane] += shared[lane + half];\n"),
}


def reference_cells() -> dict[str, str]:
    """Each solution cell of the source as a student would have written it."""
    return edits.reference_cells(SOURCE, keep_stub_raise=True)




MUTANTS = edits.apply_edits(reference_cells(), EDITS)
TASK = {name: edit[2] for name, edit in EDITS.items()}
GPU_MUTANTS = edits.apply_edits(reference_cells(), GPU_EDITS)
CRASH_MUTANTS = edits.apply_edits(reference_cells(), CRASH_EDITS)
DEMO = ("kernel_drops_odd_tail", "vmap_sequential", "grad_forgets_w_term")
PARTIAL = ("kernel", "ffi_call")

# name: (grade_id, text in the reference cell, its replacement): correct, written differently.
_ALTERNATIVE_EDITS = {
    "kernel_one_pass": (
        "kernel",
        "    double top = -std::numeric_limits<double>::infinity();\n"
        "    for (int64_t j = 0; j < n; ++j) top = std::fmax(top, row[j] / t);\n"
        "    double sum = 0.0;\n" + _SUM,
        "    double top = -INFINITY, sum = 0.0;\n" + _ONLINE),
    "vmap_map_over_weights": (
        "vmap",
        "            # A weight is a shift of x by t * log(w): one call with unit weights does the "
        "batch.\n"
        "            shift = t * jnp.log(w).reshape(axis_size, *([1] * (x.ndim - 2)), -1)\n"
        "            return f(x + shift, jnp.ones(x.shape[-1], x.dtype)), True\n",
        "            return jax.lax.map(lambda xw: f(xw[0], xw[1]), (x, w)), True\n"),
    "grad_softmax_form": (
        "grad",
        "    p = jnp.exp((x - y[..., None]) / t)\n"
        "    w_row = jnp.reshape(w, (-1,))\n"
        "    dw_row = jnp.reshape(dw, (-1,))\n"
        "    return y, jnp.sum(w_row * p * dx, axis=-1) + t * jnp.sum(p * dw_row, axis=-1)\n",
        "    w_row, dw_row = w.reshape(-1), dw.reshape(-1)\n"
        "    probs = jax.nn.softmax(x / t + jnp.log(w_row), axis=-1)\n"
        "    return y, jnp.sum(probs * (dx + t * dw_row / w_row), axis=-1)\n"),
}


def _alternatives() -> dict[str, tuple[str, dict[str, str]]]:
    cells = reference_cells()
    out = {}
    for name, (grade_id, old, new) in _ALTERNATIVE_EDITS.items():
        if cells[grade_id].count(old) != 1:
            raise ValueError(f"alternative {name}: the edit no longer applies to {grade_id}")
        out[name] = ("a correct solution in another form",
                     {grade_id: cells[grade_id].replace(old, new)})
    return out


ALTERNATIVES = _alternatives()
