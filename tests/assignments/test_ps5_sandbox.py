"""ps5_kernels through the real command: the student's C++ is compiled and run in the sandbox.

A class of one honest student (the reference) and students whose kernel is native code that
attacks the grader: it reads the grader's files and writes outside its sandbox, forks until it
cannot, writes far out of bounds, never returns, aborts as soon as its library is loaded, or tries
to open the memory of the process that loaded it; the rest of their notebook is the reference.
The kernel runs in a process of its own (jaxcourse.kernels.build.run_isolated), never in the one
that runs the notebook and holds the channel's key: a library that ended the process that loads
it would otherwise cost every task.
Two more kernels call back into the Python that loads them (the Python C API: a kernel could
have JAX compute its result) or load code themselves (dlopen/dlsym): their libraries are refused
by the symbols they link (jaxcourse.kernels.linkage) before they are loaded anywhere, the
symbols named in the feedback.
Each attacking kernel earns nothing, and costs its student only the kernel's points: the other
tasks, whose checks never run the kernel, keep theirs.

The same run grades issue 51's attacks from a cell, each added to the untouched notebook beside
that notebook as it is (its honest twin): the kernels' isolation latch set back and a kernel
loaded into the notebook's process; a capsule over any address made by ``jax.ffi.pycapsule``
(native code reached through a library's ctypes, which the tripwire ends whoever calls); and a
probe's closure cell swapped for a fake that computes what the grader expects (the guard
compares closures' contents). The first and the last need the real builtins, reached here
through ``numpy.testing.runstring`` (an exec); once the cell policy refuses that, they are
refused before they run. Either way none earns a point beyond its twin or prints its marker. A wrong kernel that aborts its process (a
failed assertion in the FFI headers) loses points on the kernel's checks only. The honest student, graded in the same
run by the same workers, earns every point; nothing is written outside the sandbox.
"""

from __future__ import annotations

import csv
import html
import json
import subprocess
import sys
from pathlib import Path

import jax
import nbformat
import pytest

from autograder.assignments.ps5_kernels import checks, mutants
from autograder.instructor.classroom import make_submission, solution_sources

ROOT = Path(__file__).resolve().parents[2]
NAME = "ps5_kernels"
MARKER = Path("/tmp/ps5-kernel-escaped")
# Where the machine has a GPU, the GPU checks are graded too (scripts/gpu_check.sh runs these).
HAS_GPU = any(d.platform == "gpu" for d in jax.devices())
TOTAL_HERE = sum(c.points for c in checks.CHECKS if not c.needs_gpu or HAS_GPU)

# The body of LseCheck each attacker writes (C++), then returns success (y is the result buffer).
HOSTILE = {
    "reads_and_writes_files": f"""
  const char* paths[] = {{"{ROOT}/autograder/assignments/ps5_kernels/checks.py",
                          "{ROOT}/gradebook.db", "/proc/1/environ", "/etc/shadow"}};
  double found = 0;
  for (const char* path : paths) {{
    if (FILE* f = std::fopen(path, "rb")) {{ found += std::fgetc(f); std::fclose(f); }}
  }}
  if (FILE* f = std::fopen("{MARKER}", "w")) {{ std::fputs("escaped", f); std::fclose(f); }}
  if (FILE* f = std::fopen("{ROOT}/escaped-from-ps5", "w")) {{ std::fclose(f); }}
  char* out = static_cast<char*>(y.untyped_data());
  for (size_t i = 0; i < y.size_bytes(); ++i) out[i] = static_cast<char>(found);
""",
    "forks": """
  for (int i = 0; i < 100000; ++i) {
    pid_t pid = fork();
    if (pid == 0) { for (;;) pause(); }
    if (pid < 0) break;
  }
""",
    "writes_out_of_bounds": """
  char* out = static_cast<char*>(y.untyped_data());
  for (int64_t i = 0; i < (int64_t{1} << 40); i += 4096) out[i] = 1;
""",
    "never_returns": """
  volatile int spin = 1;
  while (spin) {}
""",
}


# Kernels that reach for what a kernel may not link (file scope, the reference otherwise): refused
# by name before any load, so the kernel's checks fail naming the symbols.
LINKED = {
    "calls_back_into_python": ("""
extern "C" {
typedef struct _object PyObject;
int PyGILState_Ensure(void);
int PyRun_SimpleString(const char*);
PyObject* PyImport_ImportModule(const char*);
}
__attribute__((constructor)) static void Attack() {
  PyGILState_Ensure();
  PyImport_ImportModule("jax");
  PyRun_SimpleString("open('/tmp/ps5-kernel-escaped', 'w').write('python')");
}
""", ("PyRun_SimpleString", "PyImport_ImportModule")),
    "loads_code_itself": ("""
#include <dlfcn.h>
__attribute__((constructor)) static void Attack() {
  if (void* self = dlopen(nullptr, RTLD_NOW)) {
    if (auto run = reinterpret_cast<int (*)(const char*)>(dlsym(self, "PyRun_SimpleString"))) {
      run("open('/tmp/ps5-kernel-escaped', 'w').write('dlsym')");
    }
  }
}
""", ("dlopen", "dlsym")),
    # A system call made by the library's own instruction names no symbol (it read the process's
    # memory map, the way to the interpreter's symbols, past the symbol check: red team s66).
    "makes_a_system_call_itself": ("""
extern "C" __attribute__((constructor)) void RawAttack() {
  long fd;
  asm volatile("syscall" : "=a"(fd) : "a"(257L), "D"(-100L), "S"("/proc/self/maps"), "d"(0L)
               : "rcx", "r11", "memory");
}
""", ("RawAttack", "a system call instruction")),
}
# A cell added to the untouched notebook: (its source, what it prints only if it ran past the
# walls, what it prints once its change is made, and what the feedback then says of it).
CELL_ATTACKS = {
    "flips_isolation": ("""
import numpy as np
np.testing.runstring('''
import jaxcourse.kernels.build as build
build.kernels_isolated.__closure__[0].cell_contents = False
print("ISOLATION-" + "FLIPPED", build.kernels_isolated())
build.cpu_kernel(source, symbol="Lse", prefix="flipped")
print("LOADED-" + "IN-PROCESS")
''', {"source": LSE_CC})
""", "LOADED-IN-PROCESS", None, None),
    # (The cell policy refuses jax.ffi as a module; with the real builtins, the call is jax's.)
    "capsule_from_a_cell": ("""
import numpy as np
np.testing.runstring('''
import jax
jax.ffi.register_ffi_target("cell_capsule", jax.ffi.pycapsule(0x41414141), platform="cpu")
print("CAPSULE-" + "MADE")
''', {})
""", "CAPSULE-MADE", None, None),
    "swaps_a_closure": ("""
import numpy as np
np.testing.runstring('''
import sys
probes = sys.modules["autograder.assignments.ps5_kernels.probes"]
def fake(ns, inputs):
    x, w = probes._array(inputs["x"]), probes._array(inputs["w"])
    return probes._lse_numpy(x, w, inputs["t"])
probes.probe_kernel.__closure__[0].cell_contents = fake
print("CLOSURE-" + "SWAPPED")
''', {})
""", None, "CLOSURE-SWAPPED", "probe_kernel (rewritten in place)"),
}


# Native code at file scope, the reference kernel otherwise: it runs as the library loads, before
# any call. Loaded in the notebook's process, it would end the process in the kernel's cell, and
# every task would lose its points; loaded in a process of its own, it costs the kernel's checks.
LOADED = {
    "runs_when_loaded": """
__attribute__((constructor)) static void Attack() { std::abort(); }
""",
    # Honest if it can open the memory of the process that loaded it, which it could then search
    # for the channel's key; it cannot, so it ends its own process.
    "reads_the_process_that_loads_it": """
__attribute__((constructor)) static void Attack() {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/mem", static_cast<int>(getppid()));
  if (FILE* f = std::fopen(path, "rb")) { std::fclose(f); return; }
  std::abort();
}
""",
}


def _loaded_attack(code: str) -> str:
    cell = mutants.reference_cells()["kernel"]
    includes = "#include <cstdio>\n#include <cstdlib>\n#include <unistd.h>\n"
    anchor = '#include "xla/ffi/api/ffi.h"\n'
    return cell.replace(anchor, includes + anchor + code, 1)


def _hostile_kernel(body: str) -> str:
    cell = mutants.reference_cells()["kernel"]
    start = cell.index("ffi::Error LseCheck(")
    start = cell.index("{\n", start) + 2
    end = cell.index("  return ffi::Error(ffi::ErrorCode::kUnimplemented")
    includes = "#include <cstdio>\n#include <unistd.h>\n"
    cell = cell.replace('#include "xla/ffi/api/ffi.h"\n', includes + '#include "xla/ffi/api/ffi.h"\n')
    start += len(includes)
    end += len(includes)
    return cell[:start] + body + "  return ffi::Error::Success();\n" + cell[end:]


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    MARKER.unlink(missing_ok=True)
    base = tmp_path_factory.mktemp("ps5")
    students = {"honest": make_submission(NAME, solution_sources(NAME, root=ROOT), root=ROOT)}
    for name, body in HOSTILE.items():
        students[name] = make_submission(
            NAME, {**solution_sources(NAME, root=ROOT), "kernel": _hostile_kernel(body)},
            root=ROOT)
    for name, code in {**LOADED, **{n: c for n, (c, _) in LINKED.items()}}.items():
        students[name] = make_submission(
            NAME, {**solution_sources(NAME, root=ROOT), "kernel": _loaded_attack(code)},
            root=ROOT)
    students["untouched"] = make_submission(NAME, {}, root=ROOT)
    for name, (cell, *_) in CELL_ATTACKS.items():
        nb = make_submission(NAME, {}, root=ROOT)
        nb.cells.append(nbformat.v4.new_code_cell(cell))
        students[name] = nb
    for name, (_, fills) in mutants.CRASH_MUTANTS.items():
        students[name] = make_submission(
            NAME, {**solution_sources(NAME, root=ROOT), **fills}, root=ROOT)
    for student, nb in students.items():
        path = base / "submitted" / student / NAME / f"{NAME}.ipynb"
        path.parent.mkdir(parents=True)
        nbformat.write(nb, path)
    out = base / "out"
    done = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", NAME, str(base / "submitted"), "--out",
         str(out), "--workers", "2", "--seed", "0", "--db", f"sqlite:///{base / 'gb.db'}",
         "--no-progress"],
        cwd=ROOT, capture_output=True, text=True, timeout=1500, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = {row["student_id"]: row for row in csv.DictReader((out / "grades.csv").open())}
    results = {s: json.loads((out / "results" / f"{s}.json").read_text()) for s in students}
    pages = {s: html.unescape((out / "feedback" / f"{s}.html").read_text(encoding="utf-8"))
             for s in students}
    return rows, results, pages


def test_the_honest_student_earns_every_point(graded):
    rows, results, _ = graded
    failed = [(t["name"], t["message"]) for t in results["honest"]["tests"]
              if t["status"] not in ("passed", "not-run")]
    assert failed == []
    assert float(rows["honest"]["score"]) == TOTAL_HERE


@pytest.mark.parametrize("student", sorted(HOSTILE) + sorted(LOADED) + sorted(LINKED))
def test_hostile_native_code_earns_nothing_and_costs_only_its_own_checks(graded, student):
    rows, results, _ = graded
    kernel_points = sum(c.points for c in checks.CHECKS if c.task == checks.KERNEL)
    assert float(rows[student]["score"]) == TOTAL_HERE - kernel_points
    for test in results[student]["tests"]:
        if test["name"].startswith("ps5.kernel."):
            assert test["status"] == "failed" and test["message"], test
        else:
            assert test["status"] in ("passed", "not-run"), test


@pytest.mark.parametrize("student", sorted(mutants.CRASH_MUTANTS))
def test_a_kernel_that_aborts_loses_points_on_its_own_task_only(graded, student):
    rows, results, _ = graded
    lost = [t for t in results[student]["tests"] if t["status"] not in ("passed", "not-run")]
    assert lost and all(t["name"].startswith("ps5.kernel.") and t["message"] for t in lost)
    assert float(rows[student]["score"]) < TOTAL_HERE


def test_nothing_escaped_the_sandbox(graded):
    assert not MARKER.exists()
    assert not (ROOT / "escaped-from-ps5").exists()


@pytest.mark.parametrize("student", sorted(LINKED))
def test_a_kernel_linking_what_a_kernel_may_not_is_refused_by_name(graded, student):
    _, results, _ = graded
    messages = [t["message"] for t in results[student]["tests"]
                if t["name"].startswith("ps5.kernel.")]
    assert messages and all(symbol in m and "jaxcourse.kernels.linkage" in m
                            for m in messages for symbol in LINKED[student][1]), messages[:2]


@pytest.mark.parametrize("student", sorted(CELL_ATTACKS))
def test_a_cell_reaching_native_code_or_a_closure_earns_nothing(graded, student):
    rows, results, pages = graded
    twin = results["untouched"]
    assert float(rows[student]["score"]) <= float(rows["untouched"]["score"])
    points = {t["name"]: t["points"] for t in results[student]["tests"]}
    assert all(points[t["name"]] <= t["points"] for t in twin["tests"]), student
    # (The cell's source writes each marker in parts.)
    _, never, changed, reported = CELL_ATTACKS[student]
    if never is not None:
        assert never not in pages[student], student
    if changed is not None and changed in pages[student]:  # the change ran: it is named
        assert reported in pages[student], student
