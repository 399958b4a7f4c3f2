"""What the student's process does to the grader's code, detected; every detection fails checks.

Three mechanisms, all set up in the student's process before its first cell runs:

* :class:`Guard` snapshots the namespaces the probes and the harness rely on (JAX's and NumPy's
  modules and every class they define, JAX's rule registries, ``sys.modules``, ``builtins``, the
  autograder's own modules and classes). ``restore()`` puts back whatever was changed and names
  it; the grader fails every check the change could have reached. JAX's registries may change
  only for the assignment's own primitives (``Assignment.extra["own_primitives"]``). What can
  be rewritten in place without rebinding anything is compared by content: the attributes of
  the channel's JSON encoder and decoder, which every reply passes through, and every function
  of the autograder's modules and of the probes (see below).
* The grader's functions are compared by what they hold, not by which containers hold it: the
  identity of each default, keyword default, globals and builtins, and of the *contents* of each
  closure cell (``cell_contents`` can be assigned without any audit event), recursively through
  closed-over functions (a probe made by ``each_case`` closes over the probe itself). Their code
  is kept where it is not run: at start each function's code object is copied (nested code
  included) into a pristine copy that no frame ever executes and nothing hands out; before each
  check the function gets a fresh copy of it. Why this design and not a comparison alone: on
  CPython 3.11+ the interpreter runs ``code._co_code_adaptive`` (rewritten as it specialises,
  holding inline caches that a specialised instruction trusts), while ``co_code`` is a cached,
  de-specialised copy, so a digest of ``co_code`` or ``marshal`` or ``dis`` never sees the live
  bytes being overwritten; and the live bytes cannot be compared as they are, since
  specialisation changes them legitimately. So the live bytes are compared where they can be
  (every instruction mapped back to the one it specialises, its argument, against the copy
  taken at start: a rewrite is reported, and the check fails) and, what the comparison cannot
  judge (the inline caches), is replaced before every check by the fresh copy, so what a probe
  runs is always the code the grader shipped. Re-importing each probe fresh was the
  alternative; it would run the probes' module again (its imports, its tables) per check, and
  the course's files are hidden from this process anyway: the copy is made before they are.
* :func:`install_tripwire` adds an audit hook (PEP 578). Audit hooks cannot be removed from Python
  and see every way code reaches into the interpreter: walking the heap (``gc``), frames
  (``sys._getframe``, ``tb_frame``, ``gi_frame``), native memory (``ctypes``), trace and profile
  hooks, ``__code__``/``__defaults__`` writes, new code objects, ``/proc/*/mem``. When code that
  is not the Python install's, the virtualenv's or the course's own (that is, the notebook's
  code) triggers one, the hook ends the process at once with a status naming the kind; the
  grader fails every check not yet answered. ``ctypes`` is the exception: once the hook is
  armed (just before the first cell), any ``ctypes`` event (``dlopen``, ``dlsym``, a foreign
  call, ``from_address``, ``string_at``, a buffer ...) ends the process, *whoever* makes it: a
  library's own ``ctypes`` use (``jax.ffi.pycapsule``, a kernel loaded by a course helper) is
  native code reached from a cell as much as the cell's own. What the grader's side needs of
  ``ctypes`` (the sandbox's mounts and limits, JAX's plugins, the kernels' own process) happens
  before the hook is armed or in another process. The hook acts before the operation happens, so the
  notebook never holds the object it reached for.
* :func:`make_quiet_check` (before and after every probe): no thread the notebook started is
  alive, no trace or profile hook is set, no signal handler or interval timer of the notebook's
  is armed, so nothing of the notebook's runs between the harness's own steps.

The state of all three lives in closures created before student code runs, bound to the
built-ins they need, so rebinding a module global, a builtin or a class attribute cannot switch
them off; reaching the closures themselves needs the heap or frames, which the tripwire ends.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import signal
import sys
import threading
import types
from collections.abc import Callable
from typing import Any

_MODULES = (
    "jax", "jax.numpy", "jax.lax", "jax.test_util", "jax.extend", "jax.extend.core",
    "jax.interpreters.ad", "jax.interpreters.batching", "jax.interpreters.mlir",
    "jax._src.interpreters.ad", "jax._src.interpreters.batching", "jax._src.interpreters.mlir",
    "jax._src.interpreters.partial_eval", "jax._src.interpreters.pxla", "jax._src.dispatch",
    "jax._src.core", "jax._src.api", "jax._src.array", "jax._src.pjit", "jax._src.config",
    "jax._src.numpy.lax_numpy", "jax._src.lax.lax", "jax._src.tree_util", "jax.tree_util",
    "numpy", "numpy.testing", "numpy.linalg", "ml_dtypes",
    "builtins", "os", "posix", "sys", "io", "json", "struct", "hmac", "hashlib", "signal",
    "traceback", "threading", "_thread", "gc", "select", "socket", "pickle",
    "IPython.core.interactiveshell", "autograder.student.plain", "autograder.student.channel",
    "autograder.student.guard", "autograder.student.sandbox", "autograder.student.probe_helpers",
)
# Every class these packages define (in modules loaded when the guard is made) is snapshotted:
# class attributes can be rebound without any audit event.
# (jaxlib's compiled classes fill some attributes lazily, and cannot be patched from Python.)
_CLASS_PACKAGES = ("jax", "numpy", "ml_dtypes", "autograder", "IPython.core", "jaxcourse.kernels")
# (module, attribute) of dicts keyed by Primitive.
_REGISTRIES = (
    ("jax._src.interpreters.ad", "primitive_jvps"),
    ("jax._src.interpreters.ad", "primitive_transposes"),
    ("jax._src.interpreters.batching", "fancy_primitive_batchers"),
    ("jax._src.interpreters.mlir", "_lowerings"),
)
# Modules whose dicts keyed by primitive are JAX's rule tables: every such dict is guarded
# (JVP, transpose, batching, partial evaluation, DCE, lowering rules, and whatever table a release
# adds), found when the guard starts rather than listed by hand.
_RULE_MODULES = ("jax._src.interpreters.ad", "jax._src.interpreters.batching",
                 "jax._src.interpreters.partial_eval", "jax._src.interpreters.mlir",
                 "jax._src.core", "jax._src.dispatch")
_MISSING = object()


def _rule_tables() -> list[tuple[str, str]]:
    """(module, attribute) of every non-empty dict keyed by primitives in ``_RULE_MODULES``, and
    the ``_REGISTRIES`` named by hand."""
    from jax._src.core import Primitive

    found = []
    for module_name in _RULE_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        for attr, value in list(vars(module).items()):
            if (type(value) is dict and value
                    and all(isinstance(k, Primitive) for k in list(value)[:50])):
                found.append((module_name, attr))
    for module_name, attr in _REGISTRIES:
        try:
            getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError):
            continue
        if (module_name, attr) not in found:
            found.append((module_name, attr))
    return found
# Interpreter bookkeeping that changes on its own while code runs.
_HARMLESS = {
    "sys": frozenset(("last_type", "last_value", "last_traceback", "last_exc", "displayhook",
                      "stdout", "stderr", "ps1", "ps2", "exc_info", "excepthook")),
    "builtins": frozenset(("_", "__IPYTHON__", "get_ipython", "display")),
}


class Guard:
    """``Guard(own, extra_modules).restore()`` -> sorted names of what had been changed."""

    def __init__(self, own_primitives: tuple[str, ...] = (), extra_modules: tuple[str, ...] = ()):
        self.restore: Callable[[], list[str]] = _make_restore(frozenset(own_primitives),
                                                              tuple(extra_modules))


def _make_restore(own: frozenset, extra_modules: tuple[str, ...]) -> Callable[[], list[str]]:
    dicts: list[tuple[str, dict, dict, frozenset]] = []
    for name in extra_modules + _MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        harmless = _HARMLESS.get(name, frozenset())
        dicts.append((name, vars(module), dict(vars(module)), harmless))
    classes: list[tuple[str, Any, dict]] = []
    seen: set[int] = set()
    for name, module in list(sys.modules.items()):
        if module is None or not any(name == p or name.startswith(p + ".")
                                     for p in _CLASS_PACKAGES):
            continue
        for value in list(vars(module).values()):
            if (isinstance(value, type) and id(value) not in seen
                    and getattr(value, "__module__", None) == name
                    and value.__flags__ & (1 << 9)):  # heap types: the others are immutable
                seen.add(id(value))
                classes.append((f"{name}.{value.__qualname__}", value, dict(vars(value))))
    registries: list[tuple[str, dict, dict]] = []
    for module_name, attr in _rule_tables():
        table = getattr(importlib.import_module(module_name), attr)
        registries.append((f"{module_name}.{attr}", table, dict(table)))
    # A primitive's own rules (``sin_p.def_impl``, ``def_abstract_eval``) live on the object,
    # not in a table: every primitive a table knows, its attributes as they were.
    seen_primitives: set[int] = set()
    # The primitives that existed when the guard started. A rule added later for a primitive
    # made later is JAX's own lazy registration (custom_vjp's vjp_node[jit] gets a transpose and a
    # DCE rule when first differentiated) or the notebook's; for a known primitive it is a change.
    known: set[int] = {id(key) for _, table, _ in registries for key in table}
    # The tables named by hand stay strict: no rule there for a primitive not the notebook's own.
    strict = frozenset(f"{m}.{a}" for m, a in _REGISTRIES)
    for _, table, _ in registries:
        for key in list(table):
            name = getattr(key, "name", None)
            if id(key) in seen_primitives or name in own or not hasattr(key, "__dict__"):
                continue
            seen_primitives.add(id(key))
            # Checked and put back as a module's namespace is (the first loop of restore).
            dicts.append((f"primitive {name}", vars(key), dict(vars(key)), frozenset()))
    from jax._src.interpreters import mlir

    platform_tables = mlir._platform_specific_lowerings
    for platform, table in list(platform_tables.items()):
        registries.append((f"{platform} lowerings", table, dict(table)))
    platforms = frozenset(platform_tables)
    modules_live, modules_snap = sys.modules, dict(sys.modules)
    trusted = {m for m in _MODULES if m.startswith("autograder")} | set(extra_modules)
    functions = _trusted_functions(dicts, classes, frozenset(trusted))
    from autograder.student import channel

    for label, obj in (("channel encoder", channel.ENCODER), ("channel decoder", channel.DECODER)):
        dicts.append((label, vars(obj), dict(vars(obj)), frozenset()))
    # Everything the closure calls is bound here, before student code can rebind any of it.
    _setattr, _delattr, _vars, _getattr, _ModuleType = (setattr, delattr, vars, getattr,
                                                        types.ModuleType)
    _isinstance, _str, _sorted, _set, _repr, _id = isinstance, str, sorted, set, repr, id
    _fingerprint, _rewritten, _fresh = _function_fingerprint, _rewritten_in_place, _fresh_code
    _unrun = _as_given
    missing = _MISSING

    def restore() -> list[str]:
        changed: list[str] = []
        for label, live, snap, harmless in dicts:
            for key, old in snap.items():
                if live.get(key, missing) is not old:
                    live[key] = old
                    if key not in harmless:
                        changed.append(label + "." + _str(key))
            if len(live) != len(snap):
                for key in [k for k in live if k not in snap]:
                    value = live.pop(key)
                    # Importing a submodule binds it in its parent: harmless.
                    if _isinstance(value, _ModuleType) or key in harmless:
                        live[key] = value
                    elif not (_isinstance(key, _str) and key.startswith("__")):
                        changed.append(label + "." + _str(key) + " (added)")
        for label, cls, snap in classes:
            live = _vars(cls)
            if len(live) == len(snap):
                same = True
                for key, old in snap.items():
                    if live.get(key, missing) is not old:
                        same = False
                        break
                if same:
                    continue
            for key in _set(live) | _set(snap):
                old, new = snap.get(key, missing), live.get(key, missing)
                if old is new:
                    continue
                changed.append(label + "." + _str(key))
                try:
                    if old is missing:
                        _delattr(cls, key)
                    else:
                        _setattr(cls, key, old)
                except (AttributeError, TypeError):
                    pass
        for label, table, snap in registries:
            if len(table) == len(snap) and all(table.get(k, missing) is v
                                               for k, v in snap.items()):
                continue
            for key in _set(table) | _set(snap):
                if _getattr(key, "name", None) in own:
                    continue
                old, new = snap.get(key, missing), table.get(key, missing)
                if old is new or (old is missing and _id(key) not in known
                                  and label not in strict):
                    continue
                changed.append(label + "[" + _str(_getattr(key, "name", "?")) + "]")
                if old is missing:
                    del table[key]
                else:
                    table[key] = old
        for platform in _set(platform_tables) - platforms:
            table = platform_tables[platform]
            for key in [k for k in table if _getattr(k, "name", None) not in own]:
                changed.append(platform + " lowerings[" + _str(_getattr(key, "name", "?")) + "]")
                del table[key]
        for name, module in modules_snap.items():
            if modules_live.get(name, missing) is not module:
                changed.append("sys.modules[" + _repr(name) + "]")
                modules_live[name] = module
        for label, fn, print_, pristine, shape, bound in functions:
            live = fn.__code__
            if _fingerprint(fn) != print_:
                # Its code, its constants, its globals, defaults or closure's contents: the
                # check fails whatever is put back.
                changed.append(label + " (rewritten in place)")
            if live is bound[0] and _unrun(live, pristine):
                continue  # byte for byte the copy it was given, caches included
            if live is not bound[0] or _rewritten(live, shape):
                changed.append(label + " (rewritten in place)")
            # What runs next is a copy no frame has run (see the module's docstring).
            bound[0] = fn.__code__ = _fresh(pristine)
        return _sorted(_set(changed))

    return restore


def _fresh_code(code: types.CodeType) -> types.CodeType:
    """A new code object built from ``code``'s de-specialised bytes, nested code included: its
    live instructions are its own, unspecialised, caches empty."""
    consts = tuple(_fresh_code(c) if type(c) is types.CodeType else c for c in code.co_consts)
    return code.replace(co_consts=consts)


def _deopt_table() -> Any:
    import dis
    import opcode

    import numpy as np

    deopt = np.array([dis._deoptop(op) for op in range(256)], np.uint8)
    caches = np.array(opcode._inline_cache_entries, np.int64)
    return np, deopt, caches


_NP, _DEOPT, _CACHES = _deopt_table()


def _code_shape(code: types.CodeType) -> tuple:
    """Where each instruction starts in the running bytes, and each one's base opcode and
    argument, for ``code`` and each nested code: what :func:`_rewritten_in_place` compares."""
    raw = code.co_code
    starts, offset = [], 0
    while offset < len(raw):
        starts.append(offset)
        offset += 2 + 2 * int(_CACHES[raw[offset]])
    index = _NP.array(starts, _NP.int64)
    ops = _NP.frombuffer(raw, _NP.uint8)
    nested = tuple(_code_shape(c) for c in code.co_consts if type(c) is types.CodeType)
    return index, ops[index].copy(), ops[index + 1].copy(), nested


def _rewritten_in_place(code: types.CodeType, shape: tuple) -> bool:
    """Whether the instructions the interpreter runs (``_co_code_adaptive``, specialisations
    mapped back) differ from ``shape``'s, for ``code`` or any nested code."""
    index, ops, args, nested = shape
    live = _NP.frombuffer(getattr(code, "_co_code_adaptive", code.co_code), _NP.uint8)
    if live.shape[0] <= (index[-1] + 1 if len(index) else -1):
        return True
    if not (_NP.array_equal(_DEOPT[live[index]], ops) and _NP.array_equal(live[index + 1], args)):
        return True
    inner = [c for c in code.co_consts if type(c) is types.CodeType]
    return len(inner) != len(nested) or any(_rewritten_in_place(c, s)
                                            for c, s in zip(inner, nested))


def _as_given(live: types.CodeType, pristine: types.CodeType) -> bool:
    """Whether ``live`` (a fresh copy of ``pristine``) is still byte for byte as it was made,
    nested code included: never run since (or run without being specialised), never written."""
    if getattr(live, "_co_code_adaptive", None) != getattr(pristine, "_co_code_adaptive", None):
        return False
    for mine, theirs in zip(live.co_consts, pristine.co_consts):
        if type(mine) is types.CodeType and not (type(theirs) is types.CodeType
                                                  and _as_given(mine, theirs)):
            return False
    return len(live.co_consts) == len(pristine.co_consts)


def _code_digest(code: types.CodeType) -> bytes:
    """A digest of what the code does: its bytecode (``co_code`` is the unspecialised form,
    stable while it runs), its names and its constants, nested code included. Not ``marshal``:
    its output depends on reference counts."""
    digest = hashlib.sha256(code.co_code)
    digest.update(repr((code.co_names, code.co_varnames, code.co_freevars,
                        code.co_cellvars)).encode("utf-8", "surrogatepass"))
    for const in code.co_consts:
        digest.update(_code_digest(const) if type(const) is types.CodeType
                      else repr(const).encode("utf-8", "surrogatepass"))
    return digest.digest()


def _function_fingerprint(fn: types.FunctionType, depth: int = 0) -> tuple:
    # Identities where an object may hold arrays (defaults): `==` on those is not a bool.
    code, kwdefaults = fn.__code__, fn.__kwdefaults__ or {}
    return (_code_digest(code), id(fn.__globals__), id(fn.__builtins__),
            tuple(id(d) for d in fn.__defaults__ or ()),
            tuple((k, id(v)) for k, v in kwdefaults.items()),
            tuple(_cell_fingerprint(cell, depth) for cell in fn.__closure__ or ()))


def _cell_fingerprint(cell: types.CellType, depth: int) -> tuple:
    """The cell and what it holds (the grader's closures are not rebound with ``nonlocal``
    after start: a change of contents is a change); a closed-over function, its own print."""
    try:
        value = cell.cell_contents
    except ValueError:  # empty: a name bound later in the enclosing function
        return (id(cell), None)
    if type(value) is types.FunctionType and depth < 4:
        return (id(cell), id(value), _function_fingerprint(value, depth + 1))
    return (id(cell), id(value))


def _trusted_functions(dicts: list, classes: list, modules: frozenset) -> list:
    """(label, function, fingerprint) of every function the autograder's modules and the probes
    define, at module level or in their classes (methods, static and class methods, property
    accessors)."""
    found: list[tuple] = []
    seen: set[int] = set()

    def add(label: str, value: Any) -> None:
        for fn in (value, getattr(value, "__func__", None), getattr(value, "fget", None),
                   getattr(value, "fset", None)):
            if type(fn) is types.FunctionType and id(fn) not in seen:
                seen.add(id(fn))
                code = fn.__code__
                # (label, function, its print, its pristine code, the shape of its running
                # bytes, [the code it was last given]), see the module's docstring.
                found.append((label, fn, _function_fingerprint(fn), _fresh_code(code),
                              _code_shape(code), [code]))
                for cell in fn.__closure__ or ():  # each_case's wrapper closes over the probe
                    try:
                        add(label + ".<closed over>", cell.cell_contents)
                    except ValueError:
                        continue

    for name, _, snap, _ in dicts:
        if name in modules:
            for key, value in snap.items():
                if getattr(value, "__module__", None) == name:
                    add(f"{name}.{key}", value)
    for label, cls, snap in classes:
        if cls.__module__.startswith("autograder") or cls.__module__ in modules:
            for key, value in snap.items():
                add(f"{label}.{key}", value)
    return found


# What the tripwire saw, by exit status offset (the grader turns the status into the message).
TRIPWIRE_KINDS = (
    "walked the interpreter's heap (gc)",
    "reached into the interpreter's frames",
    "used ctypes to reach native memory",
    "set a trace or profile hook",
    "added an audit hook",
    "rewrote a function or code object it did not write",
    "opened a process's memory",
)
_EVENT_KIND = {
    "gc.get_objects": 0, "gc.get_referrers": 0, "gc.get_referents": 0,
    "sys._getframe": 1, "sys._current_frames": 1, "object.__getattr__": 1,
    "sys.settrace": 3, "sys.setprofile": 3,
    "sys.addaudithook": 4,
    "object.__setattr__": 5, "object.__delattr__": 5, "code.__new__": 5, "function.__new__": 5,
    "compile": 5,
    "open": 6,
}


# Library modules that hand frames to their caller (inspect.currentframe, traceback.walk_stack):
# what they do counts as their caller's.
_FRAME_HANDERS = ("/inspect.py", "/traceback.py", "/logging/__init__.py")


def install_tripwire(trusted: tuple[str, ...], exit_base: int, own_globals: dict) -> None:
    """Audit hook ending the process with ``exit_base + kind`` when the notebook's code (code
    whose file is under none of the ``trusted`` path prefixes) reaches into the interpreter.
    ``own_globals``: the namespace the cells run in (their own functions' attributes are
    theirs to set)."""
    getframe, exit_now = sys._getframe, os._exit
    kinds, busy = dict(_EVENT_KIND), []
    is_str, is_bytes, is_function = str, bytes, types.FunctionType
    trusted, handers = tuple(trusted), _FRAME_HANDERS

    def is_student(frame: Any) -> bool:
        filename = frame.f_code.co_filename
        return not (type(filename) is is_str and filename.startswith(trusted))

    def hook(event: str, args: tuple) -> None:
        kind = kinds.get(event)
        if kind is None:
            if event.startswith("ctypes."):  # whoever calls (see the module's docstring)
                exit_now(exit_base + 2)
            return
        if busy:
            return
        busy.append(1)
        try:
            frame = getframe(1)
            if not is_student(frame):
                # A library asked; for frames, a library that hands them on counts as its caller.
                if kind != 1 or not frame.f_code.co_filename.endswith(handers):
                    return
                up = frame.f_back
                if up is None or not is_student(up):
                    return
            if kind == 6:  # open: only a process's memory
                path = args[0] if args else ""
                if type(path) is is_bytes:
                    path = path.decode("utf-8", "replace")
                if not (type(path) is is_str and path.startswith("/proc/")
                        and path.endswith("/mem")):
                    return
            elif event == "compile":
                # Student code naming its code after a trusted file would pass as trusted.
                name = args[1] if len(args) > 1 else ""
                if type(name) is is_bytes:
                    name = name.decode("utf-8", "replace")
                if not (type(name) is is_str and name.startswith(trusted)):
                    return
            elif event in ("object.__setattr__", "object.__delattr__"):
                # A notebook may set attributes of its own functions (functools.wraps does).
                target = args[0] if args else None
                if type(target) is is_function and target.__globals__ is own_globals:
                    return
            exit_now(exit_base + kind)
        finally:
            busy.clear()

    sys.addaudithook(hook)


def make_quiet_check(user_ns: dict) -> Callable[[], list[str]]:
    """A function listing (and stopping where it can) what of the notebook's could still run
    on its own: threads, trace/profile hooks, signal handlers, interval timers."""
    gettrace, getprofile, settrace, setprofile = (sys.gettrace, sys.getprofile, sys.settrace,
                                                  sys.setprofile)
    current_frames, main_ident = sys._current_frames, threading.main_thread().ident
    get_ident = threading.get_ident
    thread_module = vars(threading)
    handlers = {}
    for sig in (signal.SIGALRM, signal.SIGVTALRM, signal.SIGPROF, signal.SIGUSR1,
                signal.SIGUSR2, signal.SIGCHLD, signal.SIGIO, signal.SIGTERM, signal.SIGINT,
                signal.SIGHUP, signal.SIGPIPE, signal.SIGXCPU, signal.SIGURG, signal.SIGWINCH):
        handlers[sig] = signal.getsignal(sig)
    getsignal, setsignal = signal.getsignal, signal.signal
    getitimer, setitimer = signal.getitimer, signal.setitimer
    # Interval timers (alarm() included) not armed already when the check is made.
    timers = tuple(which for which in (signal.ITIMER_REAL, signal.ITIMER_VIRTUAL,
                                       signal.ITIMER_PROF) if not getitimer(which)[0])
    threads_before = frozenset(sys._current_frames())
    _len, _str = len, str

    def quiet() -> list[str]:
        found: list[str] = []
        me = get_ident()
        others = [t for t in current_frames() if t != me and t != main_ident
                  and t not in threads_before]
        if others:
            found.append(_str(_len(others)) + " thread(s) started by the notebook still running")
        if gettrace() is not None or getprofile() is not None:
            found.append("a trace or profile hook")
            settrace(None)
            setprofile(None)
        if (thread_module.get("_trace_hook") is not None
                or thread_module.get("_profile_hook") is not None):
            found.append("a trace or profile hook for new threads")
            thread_module["_trace_hook"] = thread_module["_profile_hook"] = None
        for sig, handler in handlers.items():
            if getsignal(sig) is not handler:
                found.append("a handler for signal " + _str(int(sig)))
                setsignal(sig, handler)
        for which in timers:
            if getitimer(which)[0]:
                setitimer(which, 0)
                found.append("an interval timer or alarm")
        return found

    return quiet
