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

A CPU kernel's library is checked before it is loaded anywhere: it may link only what a kernel
needs (jaxcourse.kernels.linkage); a library calling the Python C API, ``dlopen``, processes,
threads or files is refused with those symbols named.

After :func:`isolate_kernels` (the grader calls it in each student's process, before the first
cell), no library is loaded into this process any more: :func:`cpu_kernel` and
:func:`cuda_kernel` compile and check the exported symbol, and the kernel runs only through
:func:`run_isolated`, in a fresh interpreter of its own (``jaxcourse.kernels.isolated``) that
inherits no descriptor, no environment and none of this process's memory. So native code never
shares a process with anything the grader keeps in the student's process (the channel's key,
the probes), and a kernel that crashes, hangs or scribbles over its memory ends only that
interpreter, which the next call replaces. That choice is not a module global a cell could set
back: it lives in the closure of :func:`isolate_kernels` and :func:`kernels_isolated`, latched
once, before any cell runs; the grader's guard compares that closure's contents before each
probe, and its tripwire ends the process at any ``ctypes`` call once the cells have started,
whoever makes it, so a library could not be loaded here even with the latch undone.
"""

from __future__ import annotations

import atexit
import ctypes
import hashlib
import io
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import jax
import numpy as np

from jaxcourse.kernels import isolated, linkage
from jaxcourse.kernels.isolated import HEADER, frame, read_frame

MAX_SOURCE_BYTES = 100_000
MAX_MESSAGE_CHARS = 4_000
COMPILE_TIMEOUT_S = 120.0
_SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_registered: dict[tuple[str, str], str] = {}
# Each name cuda_kernel returned -> (its source's digest, the handler symbol it was asked for),
# on a GPU or not: where nothing is compiled, what the name stands for is still known.
_cuda_requests: dict[str, tuple[str, str]] = {}
_libraries: list[ctypes.CDLL] = []  # kept alive: XLA calls into them
_built: dict[str, Path] = {}  # (compiler, source) digest -> the library this process built
_isolated_targets: dict[str, tuple[str, str, str]] = {}  # target -> (library, symbol, platform)
_children: dict[str, _Child] = {}
_refused: dict[str, str] = {}  # target -> why its library may not be loaded (its symbols named)
# Found now: the kernel's process runs with an empty environment, no PATH.
_NM = shutil.which("nm") or "/usr/bin/nm"
START_TIMEOUT_S = 60.0  # a fresh interpreter importing JAX, on a loaded machine
CALL_TIMEOUT_S = 10.0  # one call on a grader's small arrays; longer means it never returns
MAX_CHILDREN = 2
# The child is a fresh interpreter (-I: no environment, no user site, not the current folder)
# running the text of jaxcourse/kernels/linkage.py, then isolated.py's, read now: the grader's
# sandbox hides the course's files from the student's process, which imported this module
# before they were hidden.
_CHILD = Path(linkage.__file__).read_text() + "\n\n" + Path(isolated.__file__).read_text()


class KernelBuildError(RuntimeError):
    """The source did not compile (the message is the compiler's output) or could not load."""


class KernelRunError(RuntimeError):
    """The kernel's own process crashed, did not answer in time, or answered nonsense."""


class KernelCallError(RuntimeError):
    """The call raised in the kernel's process (an ``ffi::Error`` the kernel returned, say);
    ``kind`` is the name of the exception raised there."""

    def __init__(self, kind: str, message: str):
        super().__init__(f"{kind}: {message}")
        self.kind = kind


def _isolation_latch():
    isolated_now = False

    def isolate_kernels() -> None:
        """From now on, load no kernel library into this process (see the module's docstring).
        There is no way back: a student's cell may call this too, and gains nothing by it."""
        nonlocal isolated_now
        isolated_now = True

    def kernels_isolated() -> bool:
        """Whether :func:`isolate_kernels` was called in this process."""
        return isolated_now

    return isolate_kernels, kernels_isolated


isolate_kernels, kernels_isolated = _isolation_latch()


def _check_links(library: Path, target: str) -> None:
    """Refuse a library that links what a kernel may not call: isolated, its calls fail (so
    only the kernel's own checks do); else it is never loaded."""
    refused = linkage.refused_symbols(str(library), _NM)
    if not refused:
        _refused.pop(target, None)
        return
    message = linkage.refusal_message(refused)
    if not kernels_isolated():
        raise KernelBuildError(message)
    _refused[target] = message


def _exported(library: Path) -> set[str]:
    nm = shutil.which("nm") or "nm"
    listed = subprocess.run([nm, "-D", "--defined-only", str(library)], capture_output=True,
                            text=True, timeout=60, check=False)
    return set(re.findall(r"\s[TWi]\s+(\w+)$", listed.stdout, flags=re.MULTILINE))


def _record(target: str, library: Path, symbol: str, platform: str) -> str:
    if symbol not in _exported(library):
        raise KernelBuildError(f"the library has no symbol {symbol!r}: define it with "
                               "XLA_FFI_DEFINE_HANDLER_SYMBOL")
    _isolated_targets[target] = (str(library), symbol, platform)
    return target


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
    digest = source_digest(source if isinstance(source, str) else "")
    target = f"{prefix}_{digest}"
    if kernels_isolated():
        built = compile_library(source, name=prefix)
        _check_links(built, target)
        return _record(target, built, symbol, "cpu")
    key = (digest, symbol)
    if key in _registered:
        return _registered[key]
    built = compile_library(source, name=prefix)
    _check_links(built, target)
    library = ctypes.cdll.LoadLibrary(str(built))
    try:
        handler = getattr(library, symbol)
    except AttributeError:
        raise KernelBuildError(f"the library has no symbol {symbol!r}: define it with "
                               "XLA_FFI_DEFINE_HANDLER_SYMBOL") from None
    jax.ffi.register_ffi_target(target, jax.ffi.pycapsule(handler), platform="cpu")
    _libraries.append(library)
    _registered[key] = target
    return target


def cuda_kernel(source: str, *, symbol: str, prefix: str = "kernel") -> str:
    """The CUDA twin of :func:`cpu_kernel`: the target name the CUDA handler has, registered
    (after compiling it with nvcc) only where jaxlib has a CUDA backend. Elsewhere the name is
    still what lowering for ``cuda`` puts in the program, and nothing is compiled."""
    digest = source_digest(source if isinstance(source, str) else "")
    target = f"{prefix}_cuda_{digest}"
    _cuda_requests[target] = (digest, symbol)
    key = (digest, f"cuda:{symbol}")
    if key in _registered:
        return _registered[key]
    if not any(device.platform == "gpu" for device in jax.devices()):
        return target
    if kernels_isolated():
        return _record(target, compile_library(source, compiler="nvcc", name=prefix), symbol,
                       "CUDA")
    library = ctypes.cdll.LoadLibrary(str(compile_library(source, compiler="nvcc",
                                                          name=prefix)))
    jax.ffi.register_ffi_target(target, jax.ffi.pycapsule(getattr(library, symbol)),
                                platform="CUDA")
    _libraries.append(library)
    _registered[key] = target
    return target


def cuda_request(target: str) -> tuple[str, str] | None:
    """For a name :func:`cuda_kernel` returned in this process, (the digest of the source it was
    given, the handler symbol it was asked for); None for any other name."""
    return _cuda_requests.get(target)


def source_digest(source: str) -> str:
    """The digest that names a kernel's target: the first 12 hex digits of the source's SHA-256."""
    return hashlib.sha256(source.encode()).hexdigest()[:12]


# --- running a kernel in a process of its own ----------------------------------------------
def run_isolated(target: str, operands, result: jax.ShapeDtypeStruct, attributes: dict, *,
                 repeats: int = 0, timeout_s: float = CALL_TIMEOUT_S
                 ) -> tuple[np.ndarray, float | None]:
    """``jax.jit(jax.ffi.ffi_call(target, result))(*operands, **attributes)`` computed in the
    kernel's own process (started on first use, replaced after a crash or a hang); the value and,
    where ``repeats`` > 0, the best of that many timed calls in seconds. ``attributes`` hold NumPy
    scalars. A call the kernel refused raises :class:`KernelCallError`; a crash, a hang or a
    malformed answer :class:`KernelRunError`."""
    if target not in _isolated_targets:
        raise KernelRunError(f"no kernel library was built for {target!r} in this process")
    if target in _refused:
        raise KernelRunError(_refused[target])
    operands = [np.ascontiguousarray(o) for o in operands]
    header = {"dtypes": [o.dtype.name for o in operands], "shapes": [list(o.shape) for o in operands],
              "result": [list(result.shape), np.dtype(result.dtype).name],
              "attributes": {k: [np.asarray(v).dtype.name, np.asarray(v).item()]
                             for k, v in attributes.items()},
              "repeats": int(repeats)}
    child = _children.get(target) or _Child.start(target, *_isolated_targets[target])
    try:
        reply, buffers = child.ask(frame(header, [o.tobytes() for o in operands]),
                                   timeout_s + 10.0 * repeats, result)
    except KernelRunError:
        child.stop()
        raise
    if not reply.get("ok"):
        raise KernelCallError(str(reply.get("error"))[:100], str(reply.get("message"))[:2000])
    dtype = np.dtype(result.dtype)
    if reply.get("dtype") != dtype.name or reply.get("shape") != list(result.shape):
        child.stop()
        raise KernelRunError("the kernel's process answered with a value of another shape")
    value = np.frombuffer(buffers[0], dtype=dtype).reshape(result.shape).copy()
    seconds = reply.get("seconds")
    return value, (float(seconds) if isinstance(seconds, (int, float)) else None)


class _Child:
    def __init__(self, target: str, process: subprocess.Popen, errors):
        self.target, self.process, self.errors = target, process, errors

    @classmethod
    def start(cls, target: str, library: str, symbol: str, platform: str) -> _Child:
        while len(_children) >= MAX_CHILDREN:
            next(iter(_children.values())).stop()
        env = {"JAX_PLATFORMS": "cuda" if platform == "CUDA" else "cpu",
               "XLA_PYTHON_CLIENT_PREALLOCATE": "false"}  # several may share one GPU
        errors = tempfile.TemporaryFile()  # noqa: SIM115 - closed by stop(); what it printed
        process = subprocess.Popen(
            [sys.executable, "-I", "-c", _CHILD, library, symbol, target, platform, _NM], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors, env=env,
            close_fds=True)
        os.set_blocking(process.stdin.fileno(), False)
        child = cls(target, process, errors)
        _children[target] = child
        try:
            child.ask(b"", START_TIMEOUT_S, None)
        except KernelRunError as err:
            child.stop()
            raise KernelRunError(f"the kernel's library did not load: {err}") from None
        return child

    def ask(self, request: bytes, timeout_s: float, result) -> tuple[dict, list[bytes]]:
        deadline = time.monotonic() + timeout_s
        out, inp = self.process.stdout.fileno(), self.process.stdin.fileno()
        sent = 0
        while sent < len(request):
            _wait(inp, deadline, timeout_s, write=True, child=self)
            try:
                sent += os.write(inp, request[sent:sent + (1 << 20)])
            except BrokenPipeError:
                raise KernelRunError(self._ended()) from None
        limit = 1 << 16
        if result is not None:
            limit += int(np.prod(result.shape)) * np.dtype(result.dtype).itemsize
        head = _read(out, HEADER.size, deadline, timeout_s, self)
        (size,) = HEADER.unpack(head)
        if size > limit:
            raise KernelRunError("the kernel's process answered with more than was asked")
        body = _read(out, size, deadline, timeout_s, self)
        try:
            parsed = read_frame(io.BytesIO(head + body))
        except (ValueError, TypeError, AttributeError):  # UnicodeDecodeError is a ValueError
            parsed = None
        if parsed is None or not isinstance(parsed[0], dict):
            raise KernelRunError("the kernel's process answered with something that is not a "
                                 "reply (did the kernel write to its standard output?)")
        return parsed

    def _ended(self) -> str:
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return "the kernel's process stopped answering"
        if code < 0:
            try:
                how = f"was ended by {signal.Signals(-code).name}"
            except ValueError:
                how = f"was ended by signal {-code}"
        else:
            how = f"exited with status {code}"
        return f"the kernel's process {how}{self._printed()}"

    def _printed(self) -> str:
        """The end of what the process printed (an assertion's message, say), if anything."""
        try:
            self.errors.seek(0, os.SEEK_END)
            size = self.errors.tell()
            self.errors.seek(max(0, size - 1500))
            text = self.errors.read().decode("utf-8", "replace").strip()
        except (OSError, ValueError):
            return ""
        return f"; it printed:\n{text}" if text else ""

    def stop(self) -> None:
        _children.pop(self.target, None)
        if self.process.poll() is None:
            self.process.kill()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        for stream in (self.process.stdin, self.process.stdout, self.errors):
            try:
                stream.close()
            except OSError:
                pass


def _wait(fd: int, deadline: float, timeout_s: float, *, write: bool, child: _Child) -> None:
    left = max(deadline - time.monotonic(), 0.0)
    ready = (select.select([], [fd], [], left)[1] if write
             else select.select([fd], [], [], left)[0])
    if not ready:
        if child.process.poll() is not None:
            raise KernelRunError(child._ended())
        raise KernelRunError(f"the kernel's process did not answer within {timeout_s:g} s "
                             "(a kernel that never returns?)")


def _read(fd: int, n: int, deadline: float, timeout_s: float, child: _Child) -> bytes:
    chunks = []
    while n:
        _wait(fd, deadline, timeout_s, write=False, child=child)
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            raise KernelRunError(child._ended())
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


@atexit.register
def _stop_children() -> None:
    for child in list(_children.values()):
        child.stop()
