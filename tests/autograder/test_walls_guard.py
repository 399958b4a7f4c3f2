"""The in-process walls (autograder.student.guard): the restore closure, the quiet check, the tripwire.

The tripwire cases run in a subprocess each (an audit hook cannot be removed): code compiled from
a string plays the notebook's code; the library paths are trusted, as in the sandbox. These hold
without the cell policy: the attacks are plain Python.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import types

import numpy as np
import pytest
from engine_helpers import REPO

import autograder.student.guard as guard_module
from autograder.student.guard import TRIPWIRE_KINDS, Guard, make_quiet_check


def test_restore_survives_the_guard_class_and_module_being_replaced():
    guard = Guard()
    restore = guard.restore
    real_allclose, real_restore_class = np.allclose, Guard.__init__
    try:
        Guard.__init__ = lambda self, *a, **k: None
        guard_module._make_restore = lambda *a: (list)
        np.allclose = lambda *a, **k: True
        changed = restore()
    finally:
        Guard.__init__ = real_restore_class
    assert np.allclose is real_allclose
    assert "numpy.allclose" in changed
    assert "autograder.student.guard._make_restore" in changed
    assert "autograder.student.guard.Guard.__init__" in changed
    assert restore() == []


def test_any_jax_class_is_guarded():
    from jax._src import dispatch

    cls = next(v for v in vars(dispatch).values()
               if isinstance(v, type) and v.__module__ == dispatch.__name__)
    guard = Guard()
    cls.planted = 1
    assert any(c.endswith(".planted") for c in guard.restore())
    assert not hasattr(cls, "planted")


def test_quiet_check_finds_threads_hooks_and_handlers():
    quiet = make_quiet_check({})
    assert quiet() == []
    stop = threading.Event()
    worker = threading.Thread(target=stop.wait, daemon=True)
    worker.start()
    try:
        assert any("thread" in f for f in quiet())
    finally:
        stop.set()
        worker.join()
    previous = signal.signal(signal.SIGUSR1, lambda *a: None)
    threading.settrace(lambda *a: None)
    try:
        found = quiet()
    finally:
        signal.signal(signal.SIGUSR1, previous)
        threading.settrace(None)
    assert any("signal" in f for f in found) and any("new threads" in f for f in found)
    assert quiet() == []  # what it found, it stopped


def _tripwire(student_code: str) -> subprocess.CompletedProcess:
    program = textwrap.dedent(f"""
        import sys, os, warnings
        warnings.simplefilter("ignore")
        import jax, jax.numpy as jnp, numpy as np
        from autograder.student import sandbox
        from autograder.student.guard import install_tripwire
        probes = type(sys)("probes")
        probes.__file__ = {str(REPO / "autograder" / "x.py")!r}
        ns = {{"__name__": "__main__", "jax": jax, "jnp": jnp, "np": np}}
        install_tripwire(sandbox._trusted_prefixes(probes), 200, ns)
        exec(compile({student_code!r}, "<ipython-input-1>", "exec"), ns)
        print("RAN-TO-THE-END")
    """)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          env=env, timeout=300, check=False)


def test_tripwire_lets_honest_code_run():
    proc = _tripwire(textwrap.dedent("""
        import collections, dataclasses, functools, typing, enum, math, itertools, operator
        P = collections.namedtuple("P", "a b")
        class N(typing.NamedTuple):
            z: int
        @dataclasses.dataclass(frozen=True)
        class D:
            x: int = 1
        class E(enum.Enum):
            A = 1
        T = typing.TypeVar("T")
        def f(x):
            return jnp.sin(x) * 2
        g = functools.wraps(f)(lambda x: f(x))
        f.__doc__ = "mine"
        y = jax.jit(g)(jnp.arange(3.0)) + jax.grad(lambda x: jnp.sum(f(x)))(jnp.ones(3))
        try:
            jax.jit(lambda x: x.no_such_attribute)(1.0)
        except AttributeError:
            pass
        print(P(1, 2), N(3), D(), E.A, y, eval("1 + 1"))
        with open("/proc/self/status") as fh:
            fh.read()
    """))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "RAN-TO-THE-END" in proc.stdout


@pytest.mark.parametrize(("code", "kind"), [
    ("import gc\ngc.get_objects()", 0),
    ("import gc\ngc.get_referrers(jax)", 0),
    ("import sys\nsys._getframe()", 1),
    ("try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    e.__traceback__.tb_frame", 1),
    ("import inspect\ninspect.currentframe()", 1),
    ("def g():\n    yield\ng().gi_frame", 1),
    ("import ctypes\nctypes.string_at(id(jax), 8)", 2),
    ("import ctypes\nctypes.CDLL(None)", 2),
    # Through ctypes' own loader, and through a library (jax, a trusted file) whose ctypes call
    # would hand XLA any address as a handler: refused whoever calls.
    ("import ctypes\nctypes.cdll.LoadLibrary('libm.so.6')", 2),
    ("jax.ffi.pycapsule(0)", 2),
    ("import sys\nsys.settrace(lambda *a: None)", 3),
    ("import sys\nsys.setprofile(lambda *a: None)", 3),
    ("import sys\nsys.addaudithook(lambda *a: None)", 4),
    ("import autograder.student.sandbox as s\ns._changes.__defaults__ = (1,)", 5),
    ("exec(compile('x = 1', jax.__file__, 'exec'))", 5),
    ("(lambda: 0).__code__.replace(co_name='x')", 1),
    ("open('/proc/self/mem', 'rb')", 6),
], ids=lambda v: str(v)[:30])
def test_tripwire_ends_the_process_before_the_operation(code, kind):
    proc = _tripwire(code)
    assert proc.returncode == 200 + kind, (proc.returncode, proc.stderr[-2000:])
    assert "RAN-TO-THE-END" not in proc.stdout
    assert 0 <= kind < len(TRIPWIRE_KINDS)


def _fake_probes(source: str) -> types.ModuleType:
    module = types.ModuleType("fake_probes_issue51")
    exec(compile(source, "fake_probes_issue51.py", "exec"), vars(module))  # noqa: S102
    sys.modules[module.__name__] = module
    return module


def test_a_swapped_closure_cell_is_a_change():
    from autograder.student.probe_helpers import each_case

    module = _fake_probes("def probe_one(ns, inputs):\n    return 1\n")
    module.probe_one = each_case(module.probe_one)
    module.probe_one.__module__ = module.__name__
    try:
        restore = Guard(extra_modules=(module.__name__,)).restore
        cell = module.probe_one.__closure__[0]
        honest = cell.cell_contents
        cell.cell_contents = lambda ns, inputs: 2  # no audit event is raised for this
        assert f"{module.__name__}.probe_one (rewritten in place)" in restore()
        cell.cell_contents = honest
        assert restore() == []
    finally:
        del sys.modules[module.__name__]


def test_live_instructions_overwritten_in_memory_are_seen_and_replaced():
    import ctypes
    import dis

    module = _fake_probes("def probe_two():\n    a = 1\n    b = 2\n    return a\n")
    try:
        restore = Guard(extra_modules=(module.__name__,)).restore
        assert restore() == [] and module.probe_two() == 1
        code = module.probe_two.__code__
        assert code.co_code  # cached: the copy dis and marshal read is now fixed
        live = code._co_code_adaptive
        at = max(i for i in range(0, len(live), 2)
                 if live[i] == dis.opmap["LOAD_FAST"] and live[i + 1] == 0)
        where = ctypes.string_at(id(code), code.__sizeof__()).index(live)
        ctypes.memmove(id(code) + where + at + 1, b"\x01", 1)  # `return a` becomes `return b`
        assert module.probe_two() == 2 and dis.Bytecode(code).dis() == dis.Bytecode(
            module.probe_two.__code__).dis()
        assert restore() == [f"{module.__name__}.probe_two (rewritten in place)"]
        assert module.probe_two() == 1  # what runs now is the pristine copy
        assert restore() == []
    finally:
        del sys.modules[module.__name__]


def test_the_kernels_isolation_latch_is_guarded():
    from jaxcourse.kernels import build

    restore = Guard(extra_modules=("jaxcourse.kernels.build",)).restore
    cell = build.kernels_isolated.__closure__[0]
    was = cell.cell_contents
    cell.cell_contents = not was
    try:
        assert "jaxcourse.kernels.build.kernels_isolated (rewritten in place)" in restore()
    finally:
        cell.cell_contents = was
    assert restore() == []
