"""What a student's kernel library may link (jaxcourse.kernels.linkage), on small libraries.

Plain C++ (no FFI headers, so each compiles in well under a second): a kernel's maths, strings
and exceptions pass; the Python C API, loading code, files, processes and std::thread are refused
by name. ps5's reference kernel, its correct alternatives and its wrong solutions are checked the
same way whenever they are graded (tests/assignments/test_ps5_sandbox.py and the contract tests).
"""

from __future__ import annotations

import subprocess

import pytest

from jaxcourse.kernels.linkage import refusal_message, refused_symbols

HONEST = """
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>
extern "C" double Kernel(const double* x, long n) {
  std::vector<double> copy(x, x + n);
  std::string name = "lse " + std::to_string(n);
  if (n < 0) throw std::invalid_argument(name);
  double top = -INFINITY, sum = 0;
  for (double v : copy) top = std::fmax(top, v);
  for (double v : copy) sum += std::exp(v - top);
  return top + std::log(sum) + std::strlen(name.c_str()) * 0.0;
}
"""
HOSTILE = {
    "PyRun_SimpleString": 'extern "C" int PyRun_SimpleString(const char*);\n'
                          'extern "C" int K() { return PyRun_SimpleString("1"); }',
    "dlsym": '#include <dlfcn.h>\nextern "C" void* K() { return dlsym(nullptr, "x"); }',
    "fopen": '#include <cstdio>\nextern "C" void* K() { return std::fopen("/etc/passwd", "r"); }',
    "fork": '#include <unistd.h>\nextern "C" int K() { return fork(); }',
    "syscall": '#include <unistd.h>\nextern "C" long K() { return syscall(39); }',
    "_ZNSt6thread": '#include <thread>\nextern "C" void K() { std::thread([] {}).join(); }',
}
# System calls made by the library's own instructions: no symbol to refuse, the function named.
TRAPS = {
    "syscall": 'extern "C" long K(long fd) {\n  long r;\n'
               '  asm volatile("syscall" : "=a"(r) : "a"(3L), "D"(fd) : "rcx", "r11", "memory");\n'
               '  return r;\n}',
    "int_0x80": 'extern "C" long K(long fd) {\n  long r;\n'
                '  asm volatile("int $0x80" : "=a"(r) : "a"(6L), "b"(fd) : "memory");\n'
                '  return r;\n}',
}


def _library(tmp_path, source: str):
    path = tmp_path / "k.cc"
    path.write_text(source)
    out = tmp_path / "libk.so"
    subprocess.run(["g++", "-std=c++17", "-O2", "-fPIC", "-shared", str(path), "-o", str(out)],
                   check=True, capture_output=True, timeout=120)
    return out


def test_a_kernel_s_maths_strings_and_exceptions_pass(tmp_path):
    assert refused_symbols(str(_library(tmp_path, HONEST))) == []


@pytest.mark.parametrize("symbol", sorted(HOSTILE))
def test_what_a_kernel_may_not_call_is_refused_by_name(tmp_path, symbol):
    refused = refused_symbols(str(_library(tmp_path, HOSTILE[symbol])))
    assert any(name.startswith(symbol) for name, _ in refused), refused
    assert symbol in refusal_message(refused)


@pytest.mark.parametrize("trap", sorted(TRAPS))
def test_a_system_call_instruction_is_refused_naming_its_function(tmp_path, trap):
    refused = refused_symbols(str(_library(tmp_path, TRAPS[trap])))
    assert refused == [("K", "a system call instruction in the kernel's own code")], refused
    assert "K (a system call instruction" in refusal_message(refused)
