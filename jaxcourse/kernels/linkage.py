"""What a student's kernel library may link: its undefined symbols, against a short allowlist.

A kernel computes its result from the buffers XLA hands it; the only functions it needs from
outside its own library are the C and C++ runtime's maths, memory and string helpers (what g++
emits for ``std::string``, ``std::to_string``, exceptions, static initialisers and the stack
protector) and output for debugging. Everything else is refused, by name, before the library is
ever loaded: the Python C API (``Py*``, ``_Py*``: a kernel that calls back into the Python that
loaded it can compute with NumPy or JAX instead of itself), loading code (``dlopen``,
``dlsym``), processes, threads, files, sockets, memory mappings and raw system calls; and so is
a system call the library's own instructions make (inline ``syscall``: objdump's disassembly),
which names no symbol. What no symbol check can see is code that reads memory: the kernel runs
in a process that holds an interpreter, and a kernel that finds it there (from an address it has,
through the loader's tables) can call it; only a kernel process without Python closes that.

The list is read from the library's dynamic symbol table (``nm -D -u``, binutils): the symbols
the dynamic linker must resolve from other libraries when the kernel is loaded. A symbol the
library defines itself is its own code and needs nothing from outside.

This file is also the first half of the script the kernel's own process runs
(jaxcourse.kernels.build starts it as ``python -I -c TEXT``, TEXT this file and isolated.py), so
that process checks the library again before it loads it: it imports nothing but the standard
library, and has no ``from __future__`` import.
"""

import re
import subprocess

# Exact C names: libm's functions (each with its float and long double twins, below), memory
# and strings, allocation, ending the process, formatting and output to stdout/stderr (only
# those streams: no call that opens a file is allowed), the C++ ABI's and unwinder's helpers.
_MATHS = (
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "pow", "sqrt", "cbrt", "hypot",
    "sin", "cos", "tan", "sincos", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh",
    "asinh", "acosh", "atanh", "erf", "erfc", "tgamma", "lgamma", "fabs", "fmax", "fmin", "fma",
    "fdim", "fmod", "remainder", "floor", "ceil", "round", "lround", "llround", "trunc", "rint",
    "lrint", "llrint", "nearbyint", "ldexp", "frexp", "modf", "scalbn", "ilogb", "logb",
    "copysign", "nextafter", "nan",
)
_RUNTIME = (
    "memcpy", "memmove", "memset", "memcmp", "memchr", "strlen", "strnlen", "strcmp", "strncmp",
    "strchr", "strrchr", "strstr", "strcpy", "strncpy", "strcat", "strncat", "strtod", "strtof",
    "strtol", "strtoll", "strtoul", "strtoull", "atoi", "atof", "qsort", "bsearch", "abs",
    "labs", "malloc", "calloc", "realloc", "free", "aligned_alloc", "posix_memalign",
    "abort", "__assert_fail", "__stack_chk_fail", "__stack_chk_guard", "__errno_location",
    "printf", "puts", "putchar", "snprintf", "vsnprintf", "sprintf", "vsprintf", "fprintf",
    "vfprintf", "fputs", "fputc", "putc", "fwrite", "fflush", "stdout", "stderr",
    "__gxx_personality_v0", "_Unwind_Resume", "__gmon_start__", "_ITM_registerTMCloneTable",
    "_ITM_deregisterTMCloneTable", "__dso_handle",
)
_ALLOWED = frozenset(
    (*_RUNTIME, *_MATHS, *(m + "f" for m in _MATHS), *(m + "l" for m in _MATHS)))
# Patterns: glibc's fortified twins of the functions above (``__memcpy_chk``, ``__printf_chk``),
# the C++ ABI (``__cxa_*``), operator new and delete, and the standard C++ library's own
# namespace (mangled ``std::``, its vtables and type information): strings, streams into
# memory, exceptions, locales, the throw helpers.
_ALLOWED_PATTERN = re.compile(
    r"__(?:mem\w+|str\w+|v?s?n?printf|v?fprintf|fwrite)_chk|__cxa_\w+|_Zn[wa]\w+|_Zd[la]\w+"
    r"|_ZN?K?S[tsoida]\w*|_ZT[VTIS]N?K?S[tsoida]\w*|_ZT[VIS]N10__cxxabiv\w+")
# Parts of std:: that reach outside the kernel's buffers: files, threads, the file system,
# processes, the system's random device.
_STD_REFUSED = re.compile(
    r"filebuf|fstream|__basic_file|filesystem|thread|random_device")
# Why a symbol is refused, by what it is (the first that matches); else "not a kernel's".
_REFUSED = (
    (re.compile(r"_?Py\w*"), "the Python C API"),
    (re.compile(r"dl[a-z_]*|_dl_\w+|__libc_dl\w+"), "loading code"),
    (re.compile(r"fork|vfork|_?exec\w*|system|posix_spawn\w*|popen|clone\w*|kill|raise|wait\w*"
                r"|getppid|getpid|ptrace|prctl|pause"), "a process call"),
    (re.compile(r"pthread_\w+|thrd_\w+|sched_\w+"), "a thread call"),
    (re.compile(r"f?open\w*|creat\w*|fdopen|freopen|tmpfile\w*|unlink\w*|remove|rename\w*"
                r"|f?read\w*|f?write\w*|f?getc|fgets|fscanf|f?stat\w*|mkdir\w*|opendir"
                r"|readdir\w*|chdir|chmod|chown|truncate|f?sync|lseek\w*|close\w*|dup\w*"
                r"|ioctl|fcntl\w*|pipe\w*|getenv|setenv|putenv"), "a file call"),
    (re.compile(r"socket\w*|connect|bind|listen|accept\w*|send\w*|recv\w*|gethostby\w+"
                r"|getaddrinfo"), "a network call"),
    (re.compile(r"mmap\w*|munmap|mprotect|mremap|madvise|brk|sbrk|shm\w+"),
     "a memory mapping call"),
    (re.compile(r"syscall|_?_?ioperm|iopl|signal|sigaction|setjmp|longjmp|__sigsetjmp"),
     "a system call"),
)


def undefined_symbols(library: str, nm: str = "nm") -> list[str]:
    """The symbols ``library`` needs from other libraries, without their version suffix."""
    listed = subprocess.run([nm, "-D", "-u", str(library)], capture_output=True, text=True,
                            timeout=60, check=False)
    if listed.returncode != 0:
        raise RuntimeError(f"nm could not read the library: {listed.stderr.strip()[:500]}")
    names = (line.split()[-1].split("@")[0] for line in listed.stdout.splitlines()
             if line.strip())
    return sorted(set(names))


def _allowed(name: str) -> bool:
    if name in _ALLOWED:
        return True
    return bool(_ALLOWED_PATTERN.fullmatch(name)) and not _STD_REFUSED.search(name)


# A system call made by the library's own instructions names no symbol: `syscall`, `sysenter`
# and `int $0x80` as objdump decodes them (x86-64; `svc` on arm64).
_TRAP = re.compile(r"^\s*[0-9a-f]+:\s+(syscall|sysenter|int\s+\$0x80|svc\s+#?0x0|svc\s+#0)\b",
                   re.MULTILINE)
_FUNCTION = re.compile(r"^[0-9a-f]+ <([^>]+)>:$", re.MULTILINE)


def system_call_instructions(library: str, objdump: str = "objdump") -> list[str]:
    """The functions of ``library`` whose own code holds a system call instruction."""
    try:
        listed = subprocess.run([objdump, "-d", "--no-show-raw-insn", str(library)],
                                capture_output=True, text=True, timeout=120, check=False)
    except FileNotFoundError:
        raise RuntimeError(f"{objdump} not found: the library cannot be checked") from None
    if listed.returncode != 0:
        raise RuntimeError(f"objdump could not read the library: {listed.stderr.strip()[:500]}")
    found = []
    starts = [(m.start(), m[1]) for m in _FUNCTION.finditer(listed.stdout)]
    for trap in _TRAP.finditer(listed.stdout):
        owner = next((name for start, name in reversed(starts) if start < trap.start()), "?")
        if owner not in found:
            found.append(owner)
    return found


def refused_symbols(library: str, nm: str = "nm") -> list[tuple[str, str]]:
    """(symbol, what it is) for each symbol of ``library`` a kernel may not link, and each of
    its functions that makes a system call itself (objdump beside ``nm``, binutils both)."""
    objdump = nm[:-2] + "objdump" if nm.endswith("nm") else "objdump"
    refused = [(name, "a system call instruction in the kernel's own code")
               for name in system_call_instructions(library, objdump)]
    for name in undefined_symbols(library, nm):
        if _allowed(name):
            continue
        why = next((why for pattern, why in _REFUSED if pattern.fullmatch(name)),
                   "not among the C and C++ runtime's maths, memory and string functions")
        refused.append((name, why))
    return refused


def refusal_message(refused: list[tuple[str, str]]) -> str:
    """What the student reads: the symbols named, the rule said."""
    named = "; ".join(f"{name} ({why})" for name, why in refused[:8])
    more = f"; and {len(refused) - 8} more" if len(refused) > 8 else ""
    return (f"the kernel's library calls {named}{more}. A kernel may call only the C and C++ "
            "runtime's maths, memory and string functions and print to stdout or stderr "
            "(jaxcourse.kernels.linkage): it computes its result from the buffers it is given")
