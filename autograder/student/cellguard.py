"""The cell policy's runtime half: the guards that approved student code calls as it runs.

The grader (autograder.worker.policy) checks each student cell before it runs and rewrites what it
cannot decide statically into calls of these guards: every attribute read goes through
``_getattr_``, every subscript read through ``_getitem_``, every attribute or item write through
``_write_``, every import through ``_import_``/``_import_from_``, and ``getattr``/``setattr``/
``hasattr``/``delattr`` with a literal name through their guarded twins. :func:`install` puts
them in the namespace the cells run in, with builtins that hold no way to run a string as code.

What the guards add to the static check: no module object outside the allow-list is ever
handed to student code or usable by it (``typing.sys``, a module found in some library's
globals), a few library functions that run strings as code, unpickle, load native code, read
attributes by name or lay arrays over foreign memory are refused or wrapped, ``str.format``
fields cannot reach attributes starting with ``_``, ``functools.wraps``/``update_wrapper`` copy
only from functions onto the notebook's own functions, and a class made at run time
(``type(name, bases, namespace)``, ``dataclasses.make_dataclass``) may define only the dunders
a class body may: the cells' ``type`` is :class:`CellType`, and no metaclass is handed over.

Imported by the sandbox (fork server preload); holds no grader state, no answer and no key.
"""

from __future__ import annotations

import _string
import builtins
import functools
import importlib
import string
import sys
import types
import warnings
from collections.abc import Callable
from typing import Any

from autograder.student import allowlist

# Importable by every assignment; an assignment adds more in checks.py, extra["allowed_imports"].
BASE_IMPORTS = ("jax", "numpy", "math", "functools", "itertools", "operator", "collections",
                "dataclasses", "typing")
# Reached through jax's public API (``mlir.ir``) though named jaxlib: usable when handed over by
# jax, never imported by name.
REEXPORTED = ("jaxlib.mlir",)
# Every module a cell may hold, every attribute it may take from each, and the names refused on
# every object (frames, native memory, the backend's client): allowlist.txt, reviewed by hand.
ALLOWLIST = allowlist.load()
_IMPORTABLE = ALLOWLIST.importable()
DENIED_NAMES = ALLOWLIST.refused_members()
# Members refused on one class and its subclasses only (MLIR's Operation.parse, Lowered.compile).
CLASS_REFUSALS = ALLOWLIST.class_refusals()
# The JAX options a cell may set with jax.config.update: the numerics and debugging switches the
# book and the tasks use. Others make JAX write files (jax_dump_ir_to, the compilation cache),
# pick platforms or plugins, or change what the grader measures.
JAX_OPTIONS = frozenset((
    "jax_enable_x64", "jax_debug_nans", "jax_debug_infs", "jax_disable_jit",
    "jax_numpy_rank_promotion", "jax_numpy_dtype_promotion", "jax_default_matmul_precision",
    "jax_log_compiles", "jax_check_tracer_leaks", "jax_enable_checks", "jax_traceback_filtering",
    "jax_explain_cache_misses", "jax_default_prng_impl", "jax_threefry_partitionable",
    "jax_softmax_custom_jvp", "jax_dynamic_shapes",
))
# Packages whose classes a cell may not subclass: an MLIR operation class subclassed with another
# OPERATION_NAME builds any operation, a custom call to native code among them.
UNSUBCLASSABLE = ("jaxlib.mlir", "jax._src.lib.mlir")
# Builtins that run strings, reach namespaces or the interpreter: not in the cells' builtins.
# (``id`` stays: an identity map is an ordinary idiom, and an address is worth nothing without a
# way to read memory, which the allowlist keeps out of reach; a default repr prints one anyway.)
DENIED_BUILTINS = ("eval", "exec", "compile", "__import__", "globals", "locals", "vars", "open",
                   "breakpoint", "input", "help", "getattr", "setattr", "delattr", "hasattr",
                   "memoryview", "exit", "quit", "copyright", "credits", "license",
                   "__loader__", "__spec__")

# The dunders a class body may define (deny by default). Everything else is refused, above all
# the protocols through which NumPy, JAX or Python read memory or namespaces from an object
# (``__array_interface__``, ``__dlpack__``, ``__jax_array__``, ``__getattr__``, ``__dict__``,
# descriptors, pickling, ``__index__``): no task needs them. Conversions to numbers stay out
# too: C code calls them while it reads sizes and indices.
_OPERATORS = ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "pow", "divmod",
              "lshift", "rshift", "and", "or", "xor")
ALLOWED_CLASS_DUNDERS = frozenset(
    {"__init__", "__post_init__", "__call__", "__repr__", "__str__", "__format__",
     "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__", "__bool__",
     "__neg__", "__pos__", "__abs__", "__invert__",
     "__len__", "__iter__", "__next__", "__reversed__", "__contains__",
     "__getitem__", "__setitem__", "__delitem__", "__enter__", "__exit__", "__slots__"}
    | {f"__{p}{op}__" for op in _OPERATORS for p in ("", "r", "i") if (p, op) != ("i", "divmod")})
ALLOWED_CLASS_DUNDERS_TEXT = (
    "__init__, __post_init__, __call__, __repr__, __str__, __format__, comparisons, __hash__, "
    "__bool__, arithmetic and bitwise operators (plain, reflected, in-place), __len__, __iter__, "
    "__next__, __reversed__, __contains__, __getitem__, __setitem__, __delitem__, __enter__, "
    "__exit__, __slots__")


# What functools.update_wrapper/wraps may copy from (Guards adds jax.jit's functions): their
# ``__dict__`` holds only what was set on them through the guards, or by functools itself.
_WRAPPABLE = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, functools.partial)


class PolicyError(Exception):
    """Student code did something the cell policy forbids (raised at run time)."""


def module_allowed(name: str, roots: tuple[str, ...], *, imported: bool = False) -> bool:
    """Whether student code may hold the module called ``name`` (its ``__name__``, or with
    ``imported`` the dotted path it is imported under): it must be on the allowlist and under
    one of the assignment's ``roots`` (re-exported jaxlib modules are usable, never imported)."""
    if imported:
        if name not in _IMPORTABLE:
            return False
        return name.split(".")[0] in roots
    if name not in ALLOWLIST.modules:
        return False
    return name.split(".")[0] in roots or any(
        name == r or name.startswith(r + ".") for r in REEXPORTED)


def module_attribute_refusal(module: str, name: str) -> str | None:
    """Why a cell may not take ``name`` from the module called ``module``, or None. Everything
    not on the allowlist is refused, with the list's reason where it gives one."""
    section = ALLOWLIST.modules.get(module)
    if section is None:
        return f"module {module!r} is not allowed in a cell"
    if name in section.allowed:
        return None
    if name in section.refused:
        return f"{module}.{name} is not allowed ({section.refused[name]})"
    return (f"{module}.{name} is not on the cell policy's allowlist (the students' guide lists "
            "what a cell may use)")


def import_from_refusal(module: str, name: str) -> str | None:
    """Why ``from module import name`` is refused, or None: a submodule on the list, or an
    attribute the list allows."""
    if f"{module}.{name}" in _IMPORTABLE:
        return None
    target = _IMPORTABLE.get(module, module)
    return module_attribute_refusal(target, name)


# A named tuple's public API, underscored so as not to clash with its fields: readable on named
# tuples only (the guard checks the object when the cell runs).
NAMEDTUPLE_API = frozenset(("_replace", "_asdict", "_make", "_fields", "_field_defaults"))


def name_refusal(name: str) -> str | None:
    """Why an attribute called ``name`` may not be read or written, or None."""
    if name in NAMEDTUPLE_API:
        return None
    if name.startswith("_"):
        return f"attribute {name!r} is not allowed (names starting with '_')"
    if name in DENIED_NAMES:
        return f"attribute {name!r} is not allowed ({DENIED_NAMES[name]})"
    return None


def format_refusal(text: str) -> str | None:
    """Why a format string may not be used, or None: a field reading an attribute or an item
    whose name starts with '_' (``"{0.__class__}"``), at any depth: a field's format spec is
    itself formatted first, so ``"{0:{1.__globals__}}"`` reads ``__globals__`` too."""
    fields = []
    try:
        for _, field, spec, _ in string.Formatter().parse(text):  # the parser str.format uses
            if field:
                fields.append(field)
            if spec and "{" in spec:
                why = format_refusal(spec)
                if why:
                    return why
    except (ValueError, TypeError):
        pass  # str.format reads the fields before the bad one, so they are still checked
    for field in fields:
        try:
            for _, key in _string.formatter_field_name_split(field)[1]:
                if isinstance(key, str) and (key.startswith("_") or key in DENIED_NAMES):
                    return (f"format field {field!r} is not allowed "
                            f"(it reads {key!r}: names starting with '_')")
        except (ValueError, TypeError):
            continue
    return None


def namespace_refusal(keys: Any, label: str) -> str | None:
    """Why a class may not be made from a namespace (``type(name, bases, ns)``,
    ``make_dataclass``) with these names, or None: the class-body rule, at run time. Names must
    be plain ``str``: a subclass's ``__eq__``/``__hash__`` could make one name match another."""
    for key in keys:
        if type(key) is not str:
            return f"{label}: names must be plain strings, not {type(key).__name__!r}"
        if key.startswith("__") and key.endswith("__") and key not in ALLOWED_CLASS_DUNDERS:
            return (f"{label}: dunder {key!r} may not be defined in a class "
                    f"(allowed: {ALLOWED_CLASS_DUNDERS_TEXT})")
    return None


class _TypeMeta(type):
    """The metaclass of the cells' ``type``: ``isinstance(x, type)`` and ``issubclass(c, type)``
    answer as for the real one, and calling it goes through the check."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, type)

    def __subclasscheck__(cls, sub: Any) -> bool:
        return sub is CellType or issubclass(sub, type)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and not kwargs:
            kind = type(args[0])
            if kind is type:  # type(int): the stand-in again, never the real one
                return CellType
            if issubclass(kind, type):  # a metaclass makes a class from any namespace
                raise PolicyError(f"type() of {args[0].__name__!r} is not allowed (it is a "
                                  "metaclass, which makes classes with any dunder)")
            return kind
        if len(args) == 3 and isinstance(args[2], dict):
            namespace = dict(args[2])  # checked as passed: a dict subclass could change
            why = namespace_refusal(namespace, "type()")
            if why:
                raise PolicyError(why)
            # Else type() takes __module__ from the caller's globals: this module's, not the cell's.
            namespace = {"__module__": "__main__", **namespace}
            return type(args[0], args[1], namespace, **kwargs)
        return type(*args, **kwargs)  # the real one's error


class CellType(metaclass=_TypeMeta):
    """The cells' ``type`` builtin: ``type(x)`` as usual, but ``type(name, bases, namespace)``
    may define only the dunders a class body may (``type("X", (), {computed: ...})`` would
    otherwise give a class ``__array_interface__`` under a name the policy never sees), and no
    metaclass is ever handed over."""

    def __class_getitem__(cls, item: Any) -> Any:  # type[int] in annotations
        return types.GenericAlias(cls, item)


# Modules are refused by the module rule; plain values (strings, numbers) are shared objects that
# deny nothing by identity.
_SHARED_VALUES = (types.ModuleType, str, bytes, int, float, tuple, type(None))


def class_member_refusal(obj: Any, name: str) -> str | None:
    """Why ``name`` may not be read from ``obj`` because a class on its MRO refuses it."""
    owners = CLASS_REFUSALS.get(name)
    if not owners:
        return None
    cls = obj if isinstance(obj, type) else type(obj)
    for base in getattr(cls, "__mro__", ()):
        why = owners.get(f"{base.__module__}.{base.__qualname__}")
        if why:
            return f"{base.__qualname__}.{name} is not allowed ({why})"
    return None


def _is_namedtuple(obj: Any) -> bool:
    cls = obj if isinstance(obj, type) else type(obj)
    return issubclass(cls, tuple) and type(cls.__dict__.get("_fields")) is tuple


def _is_jax_config(obj: Any) -> bool:
    cls = type(obj)
    return cls.__name__ == "Config" and cls.__module__ == "jax._src.config"


def _checked_config_update(update: Any) -> Any:
    def guarded(name: Any, value: Any) -> Any:
        if type(name) is not str or name not in JAX_OPTIONS:
            raise PolicyError(f"jax.config.update({name!r}, ...) is not allowed in a cell (allowed: "
                              f"{', '.join(sorted(JAX_OPTIONS))})")
        return update(name, value)

    guarded.__name__ = guarded.__qualname__ = "update"
    return guarded


def _build_class(build: Any) -> Any:
    """``__build_class__`` for class statements: no base from ``UNSUBCLASSABLE``."""
    def guarded(func: Any, name: Any, *bases: Any, **kwargs: Any) -> Any:
        for base in bases:
            module = getattr(base, "__module__", "") if isinstance(base, type) else ""
            if isinstance(module, str) and module.startswith(UNSUBCLASSABLE):
                raise PolicyError(f"class {name}: subclassing {base.__qualname__} (MLIR) is not "
                                  "allowed (a subclass can build an operation of any name)")
        return build(func, name, *bases, **kwargs)

    return guarded


def _module_refusal(module: types.ModuleType, name: str) -> str | None:
    """The refusal of a module attribute that is itself a module: named as the module."""
    value = module.__dict__.get(name)
    if not isinstance(value, types.ModuleType):
        return None
    section = ALLOWLIST.modules.get(module.__name__)
    reason = section.refused.get(name) if section else None
    return f"module {value.__name__!r} is not allowed in a cell" + (f" ({reason})" if reason else "")


def _object_new(cls: Any, *args: Any, **kwargs: Any) -> Any:
    """``object.__new__`` for the notebook's own classes only (a pytree's unflatten makes its
    instance without ``__init__``, as JAX's pytree documentation does)."""
    if not (isinstance(cls, type) and cls.__module__ == "__main__"):
        raise PolicyError("object.__new__ is allowed only for classes your notebook defines")
    return object.__new__(cls, *args, **kwargs)


class Guards:
    """The guard functions for one namespace, closed over the assignment's allowed imports."""

    def __init__(self, roots: tuple[str, ...]):
        self.roots = tuple(roots)
        self.special: dict[int, tuple[Any, Any]] = {}  # id -> (object, refusal str | wrapper)
        self.wrappable = _WRAPPABLE
        self._prepare()

    # -- tables built once, in the sandbox, from the live library objects --------------------

    def _prepare(self) -> None:
        # A refused function is refused however it is reached (another module's name for it, a
        # class attribute, a return value): by identity.
        # Only modules already imported (the sandbox preloads jax and numpy): importing the
        # rest here would cost every student's process seconds, and a module imported later is
        # still refused name by name through its section.
        for module, section in ALLOWLIST.modules.items():
            if module not in sys.modules:
                continue
            namespace = vars(sys.modules[module])  # no lazy import (jax.profiler) triggered
            for attr, why in section.refused.items():
                obj = namespace.get(attr)
                if obj is not None and not isinstance(obj, _SHARED_VALUES):
                    self.special[id(obj)] = (obj, f"{module}.{attr} is not allowed ({why})")
        for name in ("operator.attrgetter", "operator.methodcaller", "typing.get_type_hints",
                     "typing.ForwardRef"):
            module, attr = name.rsplit(".", 1)
            self._deny(module, attr, f"{name} is not allowed ({DENIED_NAMES[attr]})")
        for fn in (getattr(builtins, n, None) for n in DENIED_BUILTINS):
            if fn is not None and not isinstance(fn, (str, type(None))):
                self.special[id(fn)] = (fn, "this builtin is not allowed")
        own_class = self._own_class_only
        for name in ("register_dataclass", "register_pytree_node", "register_pytree_node_class",
                     "register_pytree_with_keys", "register_pytree_with_keys_class",
                     "register_static"):
            self._wrap("jax.tree_util", name, own_class)
        self._wrap("jax.tree", "register_dataclass", own_class)
        jit = self._lookup("jax", "jit")
        if jit is not None:
            self.wrappable += (type(jit(abs)),)
        self._wrap("functools", "update_wrapper", self._default_fields_only)
        self._wrap("functools", "wraps", self._default_fields_only)
        self._wrap("jax.debug", "print", self._checked_format)
        self._wrap("jax.debug", "log", self._checked_format)
        self._wrap("jax", "jit", self._no_compiler_options)
        self._wrap("dataclasses", "make_dataclass", self._checked_make_dataclass)
        for method in (str.format, str.format_map):  # str.format(fmt, ...): fmt is checked
            label = f"str.{method.__name__}"
            self.special[id(method)] = (method, self._checked_format(method, label))

    def _lookup(self, module: str, attr: str) -> Any:
        try:
            with warnings.catch_warnings():  # a deprecated name warns when read
                warnings.simplefilter("ignore")
                return getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError):
            return None

    def _deny(self, module: str, attr: str, why: str) -> None:
        obj = self._lookup(module, attr)
        if obj is not None and not isinstance(obj, _SHARED_VALUES):
            self.special[id(obj)] = (obj, why)

    def _wrap(self, module: str, attr: str, make: Callable[[Any, str], Any]) -> None:
        obj = self._lookup(module, attr)
        if obj is not None and id(obj) not in self.special:
            self.special[id(obj)] = (obj, make(obj, f"{module}.{attr}"))

    @staticmethod
    def _own_class_only(fn: Any, label: str) -> Any:
        """Registering a type as a pytree makes JAX read its attributes by name: only for the
        student's own classes, and only attributes the policy lets them read."""

        def check(nodetype: Any, fields: Any) -> None:
            if not isinstance(nodetype, type) or nodetype.__module__ != "__main__":
                raise PolicyError(f"{label} is allowed only for classes your notebook defines")
            for group in fields:
                for name in group or ():
                    if type(name) is not str or name_refusal(name):  # no str subclass
                        raise PolicyError(f"{label}: field {name!r} is not allowed")

        def guarded(nodetype: Any = None, *args: Any, **kwargs: Any) -> Any:
            if nodetype is None:  # decorator with arguments, e.g. register_dataclass(data_fields=)
                def decorate(cls: Any) -> Any:
                    check(cls, (kwargs.get("data_fields"), kwargs.get("meta_fields")))
                    return fn(cls, *args, **kwargs)
                return decorate
            check(nodetype, (kwargs.get("data_fields"), kwargs.get("meta_fields"),
                             *[a for a in args if isinstance(a, (list, tuple))]))
            return fn(nodetype, *args, **kwargs)

        guarded.__name__ = guarded.__qualname__ = label.rsplit(".", 1)[1]
        guarded.__doc__ = fn.__doc__
        return guarded

    def _default_fields_only(self, fn: Any, label: str) -> Any:
        """update_wrapper/wraps copy ``wrapped.__dict__`` and set attributes on ``wrapper``: only
        the default fields (which JAX and functools rely on), only from a function (a module's or
        a class's ``__dict__`` holds what a cell may not read) and only onto a function the
        notebook defined (any other object's ``__dict__`` could be the student's own code,
        handed the copied namespace)."""

        def check_wrapped(wrapped: Any, extra: Any) -> None:
            if extra:
                raise PolicyError(f"{label} with 'assigned' or 'updated' is not allowed")
            if not isinstance(wrapped, self.wrappable):
                raise PolicyError(f"{label} may wrap only a function, not "
                                  f"{type(wrapped).__name__!r}")

        def check_wrapper(wrapper: Any) -> None:
            if not (isinstance(wrapper, types.FunctionType) and wrapper.__module__ == "__main__"):
                raise PolicyError(f"{label} may update only a function your notebook defines")

        if label.endswith("update_wrapper"):
            def guarded(wrapper: Any, wrapped: Any, *args: Any, **kwargs: Any) -> Any:
                check_wrapped(wrapped, args or kwargs)
                check_wrapper(wrapper)
                return fn(wrapper, wrapped)
        else:
            def guarded(wrapped: Any, *args: Any, **kwargs: Any) -> Any:  # type: ignore[misc]
                check_wrapped(wrapped, args or kwargs)
                decorate = fn(wrapped)

                def checked(wrapper: Any) -> Any:
                    check_wrapper(wrapper)
                    return decorate(wrapper)
                return checked

        guarded.__name__ = guarded.__qualname__ = label.rsplit(".", 1)[1]
        guarded.__doc__ = fn.__doc__
        return guarded

    @staticmethod
    def _checked_make_dataclass(fn: Any, label: str) -> Any:
        """make_dataclass names its fields and namespace at run time: the class-body rule."""

        def guarded(cls_name: Any, fields: Any, *args: Any, **kwargs: Any) -> Any:
            # Plain copies, checked as passed: a subclass could answer differently twice.
            fields = [f if type(f) is str else tuple(f) for f in fields]
            namespace = dict(kwargs.get("namespace") or {})
            names = [f if type(f) is str else f[0] if f else None for f in fields]
            why = namespace_refusal([*names, *namespace], label)
            if why:
                raise PolicyError(why)
            # Else the class's module is ``types``: not the notebook's own class.
            kwargs["namespace"] = {"__module__": "__main__", **namespace}
            if sys.version_info >= (3, 12):
                # 3.12's make_dataclass sets __module__ after the class is made, to its caller's
                # module by default: this one, here. The class is the notebook's.
                kwargs["module"] = "__main__"
            return fn(cls_name, fields, *args, **kwargs)

        guarded.__name__ = guarded.__qualname__ = "make_dataclass"
        guarded.__doc__ = fn.__doc__
        return guarded

    @staticmethod
    def _no_compiler_options(fn: Any, label: str) -> Any:
        """jax.jit as it is, but for ``compiler_options``: XLA's options write files
        (``xla_dump_to``) and change what is compiled."""

        @functools.wraps(fn)
        def guarded(*args: Any, **kwargs: Any) -> Any:
            if "compiler_options" in kwargs:
                raise PolicyError(f"{label} with compiler_options is not allowed")
            return fn(*args, **kwargs)

        return guarded

    @staticmethod
    def _checked_format(fn: Any, label: str) -> Any:
        def guarded(fmt: Any, *args: Any, **kwargs: Any) -> Any:
            # A format that is not a plain str is refused: JAX's own callers accept other values
            # (jax.debug.print(None) hands back its formatting closure, unchecked).
            if type(fmt) is not str:
                raise PolicyError(f"{label} takes its format as a string")
            why = format_refusal(fmt)
            if why:
                raise PolicyError(f"{label}: {why}")
            return fn(fmt, *args, **kwargs)

        guarded.__name__ = guarded.__qualname__ = label.rsplit(".", 1)[1]
        return guarded

    # -- the guards ------------------------------------------------------------------------------

    def vet(self, value: Any) -> Any:
        """What student code may receive: no forbidden module, function or builtin."""
        if isinstance(value, types.ModuleType):
            if not module_allowed(value.__name__, self.roots):
                raise PolicyError(f"module {value.__name__!r} is not allowed in a cell")
            return value
        if value is type:
            return CellType
        if isinstance(value, type) and issubclass(value, type):  # typing.NamedTupleMeta, ...
            raise PolicyError(f"metaclass {value.__name__!r} is not allowed in a cell (it makes "
                              "classes with any dunder)")
        entry = self.special.get(id(value))
        if entry is not None and entry[0] is value:
            if isinstance(entry[1], str):
                raise PolicyError(entry[1])
            return entry[1]
        return value

    def getattr(self, obj: Any, name: Any, *default: Any) -> Any:
        if type(name) is not str:
            raise TypeError("attribute name must be a string")
        if obj is object and name == "__new__":  # JAX's pytree docs' unflatten idiom
            return _object_new
        why = name_refusal(name)
        if why:
            raise PolicyError(why)
        if name in NAMEDTUPLE_API and not _is_namedtuple(obj):
            raise PolicyError(f"attribute {name!r} is allowed only on named tuples (names "
                              "starting with '_')")
        if isinstance(obj, types.ModuleType):
            if not module_allowed(obj.__name__, self.roots):
                raise PolicyError(f"module {obj.__name__!r} is not allowed in a cell")
            why = module_attribute_refusal(obj.__name__, name)
            if why:
                raise PolicyError(_module_refusal(obj, name) or why)
        if isinstance(obj, str) and name in ("format", "format_map"):
            why = format_refusal(obj)
            if why:
                raise PolicyError(why)
        why = class_member_refusal(obj, name)
        if why:
            raise PolicyError(why)
        if name == "update" and _is_jax_config(obj):
            return _checked_config_update(obj.update)
        try:
            value = getattr(obj, name)
        except AttributeError:
            if default:
                return default[0]
            raise
        return self.vet(value)

    def hasattr(self, obj: Any, name: Any) -> bool:
        try:
            self.getattr(obj, name)
        except AttributeError:
            return False
        return True

    def getitem(self, obj: Any, key: Any) -> Any:
        if isinstance(key, str) and str.startswith(key, "__"):
            raise PolicyError(f"item {key!r} is not allowed (names starting with '__')")
        if isinstance(key, str) and type(key).__module__ == "__main__":
            # The notebook's own str subclass could match '__builtins__' by __eq__/__hash__.
            raise PolicyError("an item key may not be an instance of a str subclass your "
                              "notebook defines")
        return self.vet(obj[key])

    def write(self, obj: Any) -> Any:
        """The object an attribute or item assignment/deletion changes: never a module or a
        class the notebook did not define."""
        if isinstance(obj, types.ModuleType):
            raise PolicyError(f"changing module {obj.__name__!r} is not allowed")
        if isinstance(obj, type) and obj.__module__ != "__main__":
            raise PolicyError(f"changing class {obj.__name__!r} is not allowed")
        if _is_jax_config(obj):
            raise PolicyError("changing jax.config's attributes is not allowed (jax.config.update "
                              "sets the options a cell may set)")
        return obj

    def setattr(self, obj: Any, name: Any, value: Any) -> None:
        if type(name) is not str or name_refusal(name):
            raise PolicyError(name_refusal(str(name)) or "attribute name must be a string")
        setattr(self.write(obj), name, value)

    def delattr(self, obj: Any, name: Any) -> None:
        if type(name) is not str or name_refusal(name):
            raise PolicyError(name_refusal(str(name)) or "attribute name must be a string")
        delattr(self.write(obj), name)

    def import_(self, name: str, top: bool) -> Any:
        """``import a.b.c`` (binds ``a``, top=True) and ``import a.b.c as x`` (top=False)."""
        if not module_allowed(name, self.roots, imported=True):
            raise PolicyError(f"import of {name!r} is not allowed")
        module = importlib.import_module(name)
        return importlib.import_module(name.split(".")[0]) if top else module

    def import_from(self, module: str, name: str) -> Any:
        if not module_allowed(module, self.roots, imported=True):
            raise PolicyError(f"import of {module!r} is not allowed")
        parent = importlib.import_module(module)
        why = name_refusal(name) or import_from_refusal(module, name)
        if why:
            raise PolicyError(why)
        try:
            value = getattr(parent, name)
        except AttributeError:
            full = f"{module}.{name}"
            if not module_allowed(full, self.roots, imported=True):
                raise PolicyError(f"import of {full!r} is not allowed") from None
            try:
                value = importlib.import_module(full)
            except ImportError:
                raise ImportError(f"cannot import name {name!r} from {module!r}") from None
        return self.vet(value)

    def namespace(self) -> dict[str, Any]:
        """The names the rewritten cells call, and builtins without the denied ones (a second
        line: cells cannot name ``__builtins__`` or a denied builtin in the first place)."""
        safe = {k: v for k, v in vars(builtins).items() if k not in DENIED_BUILTINS}
        # ``__import__`` stays the real one: rewritten cells import through the guards and cannot
        # name it, the provided (trusted) cells share the namespace, and C code (NumPy formatting
        # a bfloat16 dtype, say) imports through the builtins of the frame that called it.
        safe.update(__import__=builtins.__import__, getattr=self.getattr, hasattr=self.hasattr,
                    setattr=self.setattr, delattr=self.delattr, type=CellType,
                    __build_class__=_build_class(builtins.__build_class__))
        return {
            "__builtins__": safe,
            "_getattr_": self.getattr, "_getitem_": self.getitem, "_write_": self.write,
            "_hasattr_": self.hasattr, "_setattr_": self.setattr, "_delattr_": self.delattr,
            "_import_": self.import_, "_import_from_": self.import_from, "_slice_": slice,
        }


def install(user_ns: dict, roots: tuple[str, ...]) -> None:
    """Make ``user_ns`` (the IPython namespace the cells run in) ready for rewritten cells:
    the guards, restricted builtins, and no handle on the shell itself."""
    for name in ("get_ipython", "exit", "quit"):
        user_ns.pop(name, None)
    user_ns.update(Guards(tuple(roots)).namespace())
