"""Monkeypatch defence for the student's process.

Before student code runs, the harness snapshots the namespaces the probes and the harness rely on
(modules, classes, JAX's rule registries, ``sys.modules``). After the student's cells and after
every probe it puts them back and reports what had been changed, so a redefined ``np.allclose``
or ``jax.grad`` never reaches a probe. JAX's registries may change only for the assignment's own
primitives (``Assignment.extra["own_primitives"]``): registering those rules is the assignment.
"""

from __future__ import annotations

import builtins
import importlib
import sys
import types
from typing import Any

_MODULES = (
    "jax", "jax.numpy", "jax.lax", "jax.test_util", "jax.extend", "jax.extend.core",
    "jax.interpreters.ad", "jax.interpreters.batching", "jax.interpreters.mlir",
    "jax._src.interpreters.ad", "jax._src.interpreters.batching", "jax._src.interpreters.mlir",
    "jax._src.core", "jax._src.api", "jax._src.array", "numpy", "numpy.testing", "numpy.linalg",
    "builtins", "os", "sys", "io", "json", "struct", "hmac", "hashlib", "signal", "traceback",
    "IPython.core.interactiveshell", "autograder.plain", "autograder.channel", "autograder.guard",
    "autograder.sandbox",
)
_CLASSES = (
    ("jax._src.core", "Primitive"), ("jax._src.core", "Tracer"), ("jax._src.core", "Trace"),
    ("jax._src.array", "ArrayImpl"), ("jax._src.core", "ShapedArray"),
    ("IPython.core.interactiveshell", "InteractiveShell"),
)
# (module, attribute) of dicts keyed by Primitive.
_REGISTRIES = (
    ("jax._src.interpreters.ad", "primitive_jvps"),
    ("jax._src.interpreters.ad", "primitive_transposes"),
    ("jax._src.interpreters.batching", "fancy_primitive_batchers"),
    ("jax._src.interpreters.mlir", "_lowerings"),
)
_MISSING = object()


class Guard:
    def __init__(self, own_primitives: tuple[str, ...] = (), extra_modules: tuple[str, ...] = ()):
        self.own = frozenset(own_primitives)
        self._dicts: list[tuple[str, dict, dict]] = []  # (label, live dict, snapshot)
        self._classes: list[tuple[str, type, dict]] = []
        self._registries: list[tuple[str, dict, dict]] = []
        for name in _MODULES + tuple(extra_modules):
            try:
                module = importlib.import_module(name)
            except ImportError:
                continue
            self._dicts.append((name, vars(module), dict(vars(module))))
        for module_name, cls_name in _CLASSES:
            try:
                cls = getattr(importlib.import_module(module_name), cls_name)
            except (ImportError, AttributeError):
                continue
            self._classes.append((f"{cls.__module__}.{cls.__qualname__}", cls, dict(vars(cls))))
        for module_name, attr in _REGISTRIES:
            try:
                table = getattr(importlib.import_module(module_name), attr)
            except (ImportError, AttributeError):
                continue
            self._registries.append((f"{module_name}.{attr}", table, dict(table)))
        from jax._src.interpreters import mlir

        for platform, table in list(mlir._platform_specific_lowerings.items()):
            self._registries.append((f"{platform} lowerings", table, dict(table)))
        self._platform_tables = mlir._platform_specific_lowerings
        self._platforms = set(self._platform_tables)
        self._sys_modules = dict(sys.modules)
        self._builtins = dict(vars(builtins))

    def restore(self) -> list[str]:
        """Undo every change to the guarded state; the names of what had been changed."""
        changed: list[str] = []
        for label, live, snap in self._dicts:
            changed += _restore_dict(label, live, snap)
        for label, cls, snap in self._classes:
            live = dict(vars(cls))
            for key in set(live) | set(snap):
                old, new = snap.get(key, _MISSING), live.get(key, _MISSING)
                if old is new:
                    continue
                changed.append(f"{label}.{key}")
                try:
                    if old is _MISSING:
                        delattr(cls, key)
                    else:
                        setattr(cls, key, old)
                except (AttributeError, TypeError):
                    pass
        for label, table, snap in self._registries:
            for key in set(table) | set(snap):
                if getattr(key, "name", None) in self.own:
                    continue
                old, new = snap.get(key, _MISSING), table.get(key, _MISSING)
                if old is new:
                    continue
                changed.append(f"{label}[{getattr(key, 'name', key)!s}]")
                if old is _MISSING:
                    del table[key]
                else:
                    table[key] = old
        for platform in set(self._platform_tables) - self._platforms:
            table = self._platform_tables[platform]
            for key in [k for k in table if getattr(k, "name", None) not in self.own]:
                changed.append(f"{platform} lowerings[{getattr(key, 'name', key)!s}]")
                del table[key]
        for name, module in self._sys_modules.items():
            if sys.modules.get(name, _MISSING) is not module:
                changed.append(f"sys.modules[{name!r}]")
                sys.modules[name] = module
        return sorted(set(changed))


def _restore_dict(label: str, live: dict, snap: dict) -> list[str]:
    changed = []
    for key in [k for k in live if k not in snap]:
        # Importing a submodule (jax.extend, numpy.testing) binds it in its parent: harmless.
        if isinstance(live[key], types.ModuleType) or _harmless(label, key):
            continue
        if not (isinstance(key, str) and key.startswith("__")):
            changed.append(f"{label}.{key} (added)")
        del live[key]
    for key, old in snap.items():
        if live.get(key, _MISSING) is not old:
            if not _harmless(label, key):
                changed.append(f"{label}.{key}")
            live[key] = old
    return changed


def _harmless(label: str, key: Any) -> bool:
    # Interpreter bookkeeping that changes on its own while code runs.
    return label in ("sys", "builtins") and key in (
        "last_type", "last_value", "last_traceback", "last_exc", "_", "displayhook", "stdout",
        "stderr", "ps1", "ps2", "__IPYTHON__", "get_ipython", "display", "exc_info", "excepthook",
    )
