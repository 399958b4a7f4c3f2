"""Compiling a kernel's source text and registering it with XLA, from a notebook.

Problem set 5 keeps its C++ and CUDA sources in Python strings, so that the whole assignment is
one notebook. :func:`cpu_kernel` compiles a C++ source with g++ against the XLA FFI headers that
ship with jaxlib, loads the library and registers one handler symbol for the CPU; it returns the
target name to pass to ``jax.ffi.ffi_call``. The name ends with a hash of the source: XLA refuses
a second, different handler under a name it already holds, so an edited and re-run cell gets a
new name instead of an error. :func:`compile_library` is the compiling step alone (the grader uses
it for the CUDA source, with nvcc).

Compiler errors come back as :class:`KernelBuildError`, whose message is the compiler's own
output (trimmed); the compiler runs with a time limit and the source with a size limit. Where the
environment variable ``JAXCOURSE_KERNEL_CACHE`` names a folder (the test suite sets it; the
grader's sandbox clears the environment), a source already compiled there is not compiled again.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import jax

MAX_SOURCE_BYTES = 100_000
MAX_MESSAGE_CHARS = 4_000
COMPILE_TIMEOUT_S = 120.0
_SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_registered: dict[tuple[str, str], str] = {}
_libraries: list[ctypes.CDLL] = []  # kept alive: XLA calls into them
_built: dict[str, Path] = {}  # (compiler, source) digest -> the library this process built


class KernelBuildError(RuntimeError):
    """The source did not compile (the message is the compiler's output) or could not load."""


def nvcc_path() -> str | None:
    """nvcc on PATH or in CUDA's usual install folder; None where there is none."""
    return shutil.which("nvcc") or next(
        (p for p in ("/usr/local/cuda/bin/nvcc", "/usr/local/bin/nvcc") if os.access(p, os.X_OK)),
        None)


def _command(compiler: str, source: Path, library: Path) -> list[str]:
    include = ["-isystem", jax.ffi.include_dir()]
    if compiler == "nvcc":
        nvcc = nvcc_path()
        if nvcc is None:
            raise KernelBuildError("nvcc was not found: the CUDA toolkit is not installed here")
        return [nvcc, "-std=c++17", "-O2", "-arch=sm_90", "-Xcompiler", "-fPIC", "-shared",
                *include, str(source), "-o", str(library)]
    return ["g++", "-std=c++17", "-O2", "-fPIC", "-shared", "-Wall", "-Wno-return-type",
            *include, str(source), "-o", str(library)]


def compile_library(source: str, *, compiler: str = "g++", name: str = "kernel",
                    timeout_s: float = COMPILE_TIMEOUT_S) -> Path:
    """Compile ``source`` into a shared library in a fresh temporary folder; its path. A source
    this process has compiled before with the same compiler is not compiled again."""
    if not isinstance(source, str):
        raise TypeError(f"the kernel's source must be a str, not {type(source).__name__}")
    if len(source.encode()) > MAX_SOURCE_BYTES:
        raise KernelBuildError(f"the source is longer than {MAX_SOURCE_BYTES} bytes")
    if compiler not in ("g++", "nvcc"):
        raise ValueError("compiler must be 'g++' or 'nvcc'")
    cache = os.environ.get("JAXCOURSE_KERNEL_CACHE")
    if cache:  # the test suite's: one compile per distinct source across its processes
        digest = hashlib.sha256(f"{jax.__version__}\0{compiler}\0{name}\0{source}".encode()).hexdigest()[:20]
        cached = Path(cache) / digest / f"lib{name}.so"
        if cached.is_file():
            return cached
    built = hashlib.sha256(f"{compiler}\0{source}".encode()).hexdigest()
    if built in _built and _built[built].is_file():  # a notebook's test cell, then the grader
        return _built[built]
    folder = Path(tempfile.mkdtemp(prefix="kernel-"))
    suffix = ".cu" if compiler == "nvcc" else ".cc"
    path = folder / f"{name}{suffix}"
    path.write_text(source)
    library = folder / f"lib{name}.so"
    try:
        done = subprocess.run(_command(compiler, path, library), capture_output=True, text=True,
                              timeout=timeout_s, cwd=folder, check=False)
    except subprocess.TimeoutExpired:
        raise KernelBuildError(f"{compiler} did not finish within {timeout_s:g} s") from None
    if done.returncode != 0 or not library.is_file():
        output = (done.stderr or done.stdout).replace(str(folder) + "/", "")
        if len(output) > MAX_MESSAGE_CHARS:
            output = output[:MAX_MESSAGE_CHARS] + "\n[... compiler output cut]"
        raise KernelBuildError(f"{compiler} failed (exit status {done.returncode}):\n{output}")
    if cache:
        cached.parent.mkdir(parents=True, exist_ok=True)
        partial = cached.with_suffix(f".{os.getpid()}.tmp")
        shutil.copyfile(library, partial)
        partial.replace(cached)
        library = cached
    _built[built] = library
    return library


def ptx(source: str, *, timeout_s: float = COMPILE_TIMEOUT_S) -> str:
    """The PTX (device code, as text) nvcc makes of a CUDA source: what a grader can read of a
    kernel where no GPU runs it."""
    if not isinstance(source, str) or len(source.encode()) > MAX_SOURCE_BYTES:
        raise KernelBuildError(f"the source must be a str of at most {MAX_SOURCE_BYTES} bytes")
    nvcc = nvcc_path()
    if nvcc is None:
        raise KernelBuildError("nvcc was not found: the CUDA toolkit is not installed here")
    cache = os.environ.get("JAXCOURSE_KERNEL_CACHE")
    if cache:
        key = hashlib.sha256(f"{jax.__version__}\0ptx\0{source}".encode()).hexdigest()[:20]
        cached = Path(cache) / key / "kernel.ptx"
        if cached.is_file():
            return cached.read_text()
    text = _ptx(nvcc, source, timeout_s)
    if cache:
        cached.parent.mkdir(parents=True, exist_ok=True)
        partial = cached.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(text)
        partial.replace(cached)
    return text


def _ptx(nvcc: str, source: str, timeout_s: float) -> str:
    with tempfile.TemporaryDirectory(prefix="kernel-") as folder:
        path, out = Path(folder) / "kernel.cu", Path(folder) / "kernel.ptx"
        path.write_text(source)
        command = [nvcc, "-std=c++17", "-O2", "-arch=sm_90", "-ptx", "-isystem",
                   jax.ffi.include_dir(), str(path), "-o", str(out)]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s,
                                  cwd=folder, check=False)
        except subprocess.TimeoutExpired:
            raise KernelBuildError(f"nvcc did not finish within {timeout_s:g} s") from None
        if done.returncode != 0 or not out.is_file():
            output = (done.stderr or done.stdout).replace(folder + "/", "")[:MAX_MESSAGE_CHARS]
            raise KernelBuildError(f"nvcc -ptx failed (exit status {done.returncode}):\n{output}")
        return out.read_text()


def cpu_kernel(source: str, *, symbol: str, prefix: str = "kernel") -> str:
    """Compile ``source`` with g++, register its handler ``symbol`` for the CPU; the target name.

    The same source and symbol are compiled once per process."""
    if not isinstance(symbol, str) or not _SYMBOL.fullmatch(symbol):
        raise ValueError(f"symbol must be a C identifier, not {symbol!r}")
    if not isinstance(prefix, str) or not _SYMBOL.fullmatch(prefix):
        raise ValueError(f"prefix must be a C identifier, not {prefix!r}")
    digest = hashlib.sha256(source.encode() if isinstance(source, str) else b"").hexdigest()[:12]
    key = (digest, symbol)
    if key in _registered:
        return _registered[key]
    library = ctypes.cdll.LoadLibrary(str(compile_library(source, name=prefix)))
    try:
        handler = getattr(library, symbol)
    except AttributeError:
        raise KernelBuildError(f"the library has no symbol {symbol!r}: define it with "
                               "XLA_FFI_DEFINE_HANDLER_SYMBOL") from None
    target = f"{prefix}_{digest}"
    jax.ffi.register_ffi_target(target, jax.ffi.pycapsule(handler), platform="cpu")
    _libraries.append(library)
    _registered[key] = target
    return target


def cuda_kernel(source: str, *, symbol: str, prefix: str = "kernel") -> str:
    """The CUDA twin of :func:`cpu_kernel`: the target name the CUDA handler has, registered
    (after compiling it with nvcc) only where jaxlib has a CUDA backend. Elsewhere the name is
    still what lowering for ``cuda`` puts in the program, and nothing is compiled."""
    digest = hashlib.sha256(source.encode() if isinstance(source, str) else b"").hexdigest()[:12]
    target = f"{prefix}_cuda_{digest}"
    key = (digest, f"cuda:{symbol}")
    if key in _registered:
        return _registered[key]
    if not any(device.platform == "gpu" for device in jax.devices()):
        return target
    library = ctypes.cdll.LoadLibrary(str(compile_library(source, compiler="nvcc",
                                                          name=prefix)))
    jax.ffi.register_ffi_target(target, jax.ffi.pycapsule(getattr(library, symbol)),
                                platform="CUDA")
    _libraries.append(library)
    _registered[key] = target
    return target
