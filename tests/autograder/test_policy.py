"""The cell policy (autograder.worker.policy, autograder.student.cellguard): what a student cell may not do.

Every released reference solution and every correct alternative passes the policy and runs
under its guards; each hostile construct, written several ways, is refused before it runs with
a message naming the line and the rule, or, where only the running code can tell, stopped by a
guard with a PolicyError.
"""

from __future__ import annotations

import ast
import importlib
import re
import sys
from pathlib import Path

import pytest

from autograder.instructor.release import names
from autograder.student.cellguard import (
    ALLOWED_CLASS_DUNDERS,
    BASE_IMPORTS,
    DENIED_BUILTINS,
    Guards,
    PolicyError,
)
from autograder.worker.policy import allowed_imports, apply, check_source

ROOT = Path(__file__).resolve().parents[2]
ROOTS = tuple(BASE_IMPORTS)


def _assignment_roots(name: str) -> tuple[str, ...]:
    checks = importlib.import_module(f"autograder.assignments.{name}.checks")
    return allowed_imports(checks.ASSIGNMENT)


def _fills(table: dict) -> dict[str, str]:
    """{label: source} from a table of name -> (description, {grade_id: source}) or
    name -> {grade_id: source}."""
    out = {}
    for name, entry in table.items():
        cells = entry[1] if isinstance(entry, tuple) else entry
        for grade_id, source in cells.items():
            out[f"{name}:{grade_id}"] = source
    return out


def _tables(attr: str) -> list[tuple[str, str, str]]:
    """(assignment, label, source) for every cell of every ``attr`` table (ALTERNATIVES,
    MUTANTS) found in the assignments' modules and in tests/assignments, whatever their names."""
    found = []
    # Tables in tests/assignments are imported by module name, as pytest imports them there.
    if str(ROOT / "tests" / "assignments") not in sys.path:
        sys.path.insert(0, str(ROOT / "tests" / "assignments"))
    files = sorted((ROOT / "autograder" / "assignments").glob("*/*.py"))
    files += sorted((ROOT / "tests" / "assignments").glob("*.py"))
    for path in files:
        text = path.read_text(encoding="utf-8")
        if not re.search(rf"^{attr}\b", text, re.MULTILINE):
            continue
        assignment = next((n for n in names(root=ROOT) if n in str(path)), None)
        if assignment is None:
            continue
        if path.is_relative_to(ROOT / "autograder"):
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        else:
            module = path.stem
        mod = importlib.import_module(module)
        if not isinstance(getattr(mod, attr), dict):  # e.g. a list of test ids of that name
            continue
        for label, source in _fills(getattr(mod, attr)).items():
            found.append((assignment, f"{path.name}:{label}", source))
    return found


def _reference_cells() -> list[tuple[str, str, str]]:
    from autograder.instructor.classroom import solution_sources

    return [(name, grade_id, source) for name in names(root=ROOT)
            for grade_id, source in solution_sources(name, root=ROOT).items()]


def _run(code: str, roots: tuple[str, ...] = ROOTS) -> dict:
    """Run an approved cell as the sandbox does: its rewritten form, in a namespace holding
    the guards and the restricted builtins."""
    ns = {"__name__": "__main__", **Guards(roots).namespace()}
    exec(compile(code, "<cell>", "exec"), ns)  # noqa: S102 - the policy's own output
    return ns


# -- what must pass --------------------------------------------------------------------------


@pytest.mark.parametrize(("assignment", "grade_id", "source"), _reference_cells(),
                         ids=lambda v: v if len(str(v)) < 40 else "")
def test_reference_solution_cells_pass_the_policy(assignment, grade_id, source):
    code, refusals = check_source(source, _assignment_roots(assignment))
    assert refusals == [], f"{assignment} {grade_id}: {refusals}"
    ast.parse(code)


@pytest.mark.parametrize(("assignment", "label", "source"), _tables("ALTERNATIVES"),
                         ids=lambda v: v if len(str(v)) < 60 else "")
def test_correct_alternative_solutions_pass_the_policy(assignment, label, source):
    assert check_source(source, _assignment_roots(assignment))[1] == [], label


@pytest.mark.parametrize(("assignment", "label", "source"), _tables("MUTANTS"),
                         ids=lambda v: v if len(str(v)) < 60 else "")
def test_realistic_wrong_solutions_are_not_refused(assignment, label, source):
    """A wrong solution must lose points on its own task, not be refused by the policy."""
    assert check_source(source, _assignment_roots(assignment))[1] == [], label


def test_the_tables_are_found():
    assert len(_reference_cells()) >= 3 * len(names(root=ROOT))
    assert _tables("ALTERNATIVES")


ALLOWED = {
    "dunder methods in a class": '''
class Pair:
    __slots__ = ("a", "b")

    def __init__(self, a, b):
        self.a, self.b = a, b

    def __eq__(self, other):
        return isinstance(other, Pair) and (self.a, self.b) == (other.a, other.b)

    def __hash__(self):
        return hash((self.a, self.b))

    def __repr__(self):
        return f"Pair({self.a!r}, {self.b!r})"

    def __call__(self, *args, **kwargs):
        return len(args) + len(kwargs)

assert Pair(1, 2) == Pair(1, 2) and hash(Pair(1, 2)) == hash((1, 2))
assert Pair(1, 2)(1, 2, k=3) == 3
''',
    "one leading underscore": '''
def _helper(x):
    _scale = 2.0
    return _scale * x

_cache = {}
_cache["k"] = _helper(3)
for _ in range(2):
    pass
assert _cache == {"k": 6.0}
''',
    "augmented assignment, unpacking, comprehensions, walrus, starred calls": '''
import functools
import itertools
import operator
from collections import namedtuple

class Counter:
    def __init__(self):
        self.n = 0

c = Counter()
c.n += 2
total = 0
for i, (a, b) in enumerate([(1, 2), (3, 4)]):
    total += a * b
items = {k: v for k, v in zip("ab", (1, 2))}
first, *rest = [1, 2, 3]
if (n := len(rest)) == 2:
    total += n
args, kwargs = (1, 2), {"initial": 0}
assert functools.reduce(operator.add, args, 0) == 3
assert list(itertools.accumulate(args)) == [1, 3]
P = namedtuple("P", "x y")
assert c.n == 2 and total == 16 and P(1, 2).y == 2 and items["b"] == 2
''',
    "jax, numpy, dataclasses, typing, getattr with a literal": '''
import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

@dataclasses.dataclass
class Box:
    value: float

class Shape(NamedTuple):
    rows: int

f = jax.jit(lambda x: lax.fori_loop(0, 3, lambda i, v: v + jnp.sin(v), x))
y = f(jnp.ones(3))
assert np.asarray(y).shape == (3,) and getattr(Box(1.0), "value") == 1.0
assert hasattr(jnp, "linalg") and Shape(2).rows == 2
jax.tree_util.register_dataclass(Box, data_fields=["value"], meta_fields=[])
assert jax.tree_util.tree_leaves(Box(2.0)) == [2.0]
print("{0} and {name}".format(1, name="two"))
jax.debug.print("{x}", x=y.sum())
''',
    "every kind of allowed class dunder": '''
import dataclasses
import numpy as np

class Vec:
    __slots__ = ("v",)
    __hash__ = None

    def __init__(self, v):
        self.v = list(v)

    def __add__(self, o):
        return Vec(a + b for a, b in zip(self.v, o.v))

    __radd__ = __add__

    def __iadd__(self, o):
        self.v = (self + o).v
        return self

    def __neg__(self):
        return Vec(-a for a in self.v)

    def __rmatmul__(self, o):
        return sum(a * b for a, b in zip(o, self.v))

    def __eq__(self, o):
        return self.v == o.v

    def __lt__(self, o):
        return self.v < o.v

    def __len__(self):
        return len(self.v)

    def __iter__(self):
        return iter(self.v)

    def __getitem__(self, i):
        return self.v[i]

    def __setitem__(self, i, x):
        self.v[i] = x

    def __contains__(self, x):
        return x in self.v

    def __bool__(self):
        return any(self.v)

    def __format__(self, spec):
        return ",".join(format(a, spec) for a in self.v)

    def __str__(self):
        return f"Vec({self:g})"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

@dataclasses.dataclass
class Scaled:
    x: float
    double: float = 0.0

    def __post_init__(self):
        self.double = 2 * self.x

u = Vec([1, 2])
u += Vec([1, 1])
with u as w:
    w[0] = 5
assert u == Vec([5, 3]) and -u < u and len(u) == 2 and 3 in u and bool(u)
assert [1, 1] @ u == 8 and str(u) == "Vec(5,3)" and list(u) == [5, 3]
assert Scaled(1.5).double == 3.0
a = np.ndarray((2, 3), np.float32)
assert isinstance(a, np.ndarray) and a.shape == (2, 3)
''',
    "functools.wraps and update_wrapper on the student's own functions": '''
import functools
import jax

def logged(f):
    @functools.wraps(f)
    def inner(*args):
        return f(*args)
    return inner

@logged
def double(x):
    return 2 * x

def copy_of(x):
    return double(x)

functools.update_wrapper(copy_of, double)
functools.wraps(jax.jit(double))(lambda x: x)
functools.wraps(functools.partial(double, 1))(lambda: 0)
functools.wraps(abs)(lambda x: x)
functools.wraps(wrapped=double)(lambda x: x)
assert double(3) == 6 and copy_of(2) == 4
''',
    "type() with one or three arguments, make_dataclass": '''
import dataclasses
import jax

T = type("T", (), {"a": 1, "f": lambda self: 5})
t = T()
assert t.f() == 5 and T.a == 1 and type(t) is T and type(1) is int and type(int) is type
assert isinstance(T, type) and not isinstance(1, type) and issubclass(type(T), type)
jax.tree_util.register_dataclass(T, data_fields=["a"], meta_fields=[])
D = dataclasses.make_dataclass("D", ["x", ("y", int), ("z", int, dataclasses.field(default=3))],
                               namespace={"f": lambda self: self.x})
assert D(1, 2).f() == 1 and D(1, 2).z == 3
jax.tree_util.register_dataclass(D, data_fields=["x", "y", "z"], meta_fields=[])
assert jax.tree_util.tree_leaves(D(1, 2)) == [1, 2, 3]

class Meta(type):
    pass

assert Meta("X", (), {"b": 2}).b == 2

def make(cls: type[T]) -> T:
    return cls()

assert make(T).a == 1
''',
    "the setup imports of the course's notebooks": '''
from jax.extend.core import Primitive
from jax.extend.mlir.dialects import stablehlo as hlo
from jax.interpreters import ad, batching, mlir
p = Primitive("demo_policy")
ir_type = mlir.ir.RankedTensorType
assert hlo.add is not None and ad.Zero is not None and batching.primitive_batchers is not None
''',
}


@pytest.mark.parametrize("name", sorted(ALLOWED))
def test_ordinary_code_passes_and_runs_under_the_guards(name):
    code, refusals = check_source(ALLOWED[name], ROOTS)
    assert refusals == []
    _run(code)


# -- what is refused before it runs -------------------------------------------------------------

# (cell source, the refusal message expected, "line N: ..."); each construct a few ways.
HOSTILE = [
    ("x = 1\ny = x.__class__", ("line 2: attribute '__class__' is not allowed (names starting "
                               "with '_')")),
    ("type(1).__mro__", "line 1: attribute '__mro__' is not allowed (names starting with '_')"),
    ("().__class__.__base__.__subclasses__()", "line 1: attribute '__class__' is not allowed"),
    ("f = lambda: 0\nf.__globals__", "line 2: attribute '__globals__' is not allowed"),
    ("import jax\njax.numpy._src", ("line 2: attribute '_src' is not allowed (names starting "
                                   "with '_')")),
    ("getattr(1, '__cl' + 'ass__')", "line 1: getattr is allowed only with a string literal"),
    ("name = 'cls'\ngetattr(1, name)", "line 2: getattr is allowed only with a string literal"),
    ("getattr(1, '__class__')", "line 1: attribute '__class__' is not allowed"),
    ("setattr(1, '_x', 2)", "line 1: attribute '_x' is not allowed"),
    ("g = getattr\ng(1, 'real')", ("line 1: getattr is allowed only when called with a string "
                                  "literal")),
    ("f = lambda obj, g=getattr: g(obj, 'x')", "line 1: getattr is allowed only when called"),
    ("@getattr\ndef f():\n    pass", "line 1: getattr is allowed only when called"),
    ("(g := hasattr)", "line 1: hasattr is allowed only when called"),
    ("s = '__globals__'", "line 1: string '__globals__' is not allowed (it names a dunder)"),
    ("'{0.__class__}'.format(1)", "line 1: format field '0.__class__' is not allowed"),
    ("'{0[__builtins__]}'.format({})", "line 1: format field '0[__builtins__]' is not allowed"),
    ("import jax\njax.debug.print('{x.__class__}', x=1)", "line 2: format field 'x.__class__'"),
    ("f'{(1).__class__}'", "line 1: attribute '__class__' is not allowed"),
    ("__builtins__['eval']('1')", "line 1: name '__builtins__' is not allowed"),
    ("b = __builtins__", "line 1: name '__builtins__' is not allowed"),
    ("__import__('os')", "line 1: name '__import__' is not allowed"),
    ("eval('1 + 1')", "line 1: name 'eval' is not allowed"),
    ("exec('x = 1')", "line 1: name 'exec' is not allowed"),
    ("c = compile('1', 'f', 'eval')", "line 1: name 'compile' is not allowed"),
    ("g = globals()", "line 1: name 'globals' is not allowed"),
    ("def f():\n    return locals()", "line 2: name 'locals' is not allowed"),
    ("vars(object)", "line 1: name 'vars' is not allowed"),
    ("open('/etc/passwd').read()", "line 1: name 'open' is not allowed"),
    ("breakpoint()", "line 1: name 'breakpoint' is not allowed"),
    ("x = input()", "line 1: name 'input' is not allowed"),
    ("m = memoryview(b'x')", "line 1: name 'memoryview' is not allowed"),
    ("get_ipython().system('ls')", "line 1: name 'get_ipython' is not allowed"),
    ("import os", "line 1: import of 'os' is not allowed"),
    ("import sys\nsys.settrace(None)", "line 1: import of 'sys' is not allowed"),
    ("x = 1\nimport gc\ngc.get_objects()", "line 2: import of 'gc' is not allowed"),
    ("import ctypes", "line 1: import of 'ctypes' is not allowed"),
    ("import threading", "line 1: import of 'threading' is not allowed"),
    ("import inspect", "line 1: import of 'inspect' is not allowed"),
    ("import importlib", "line 1: import of 'importlib' is not allowed"),
    ("import signal", "line 1: import of 'signal' is not allowed"),
    ("import subprocess", "line 1: import of 'subprocess' is not allowed"),
    ("import builtins", "line 1: import of 'builtins' is not allowed"),
    ("from os import path", "line 1: import of 'os' is not allowed"),
    ("import time", "line 1: import of 'time' is not allowed"),
    ("import jax._src.core", "line 1: import of 'jax._src.core' is not allowed"),
    ("from jax._src import core", "line 1: import of 'jax._src' is not allowed"),
    ("from jax import _src", "line 1: import of '_src' is not allowed"),
    ("import jaxlib.xla_client", "line 1: import of 'jaxlib.xla_client' is not allowed"),
    ("from jaxlib.mlir import ir", "line 1: import of 'jaxlib.mlir' is not allowed"),
    ("import jax.ffi", "line 1: import of 'jax.ffi' is not allowed"),
    ("from numpy.lib.stride_tricks import as_strided", "line 1: import of 'numpy.lib."),
    ("from numpy import load", "line 1: import of 'numpy.load' is not allowed"),
    ("from functools import singledispatch", "line 1: import of 'functools.singledispatch'"),
    ("import numpy as np\nnp.ctypeslib", "line 2: attribute 'ctypeslib' is not allowed"),
    ("import numpy as np\nnp.ones(2).ctypes", "line 2: attribute 'ctypes' is not allowed"),
    ("from operator import attrgetter", "line 1: import of 'attrgetter' is not allowed"),
    ("import operator\noperator.methodcaller('x')", "line 2: attribute 'methodcaller' is not"),
    ("import typing\ntyping.get_type_hints(int)", "line 2: attribute 'get_type_hints' is not"),
    ("from . import x", "line 1: relative imports are not allowed"),
    ("from jax import *", "line 1: '*' imports are not allowed"),
    ("def g():\n    yield 1\ng().gi_frame.f_back", "line 3: attribute 'gi_frame' is not allowed"),
    ("try:\n    1 / 0\nexcept Exception as e:\n    e.__traceback__.tb_frame",
     "line 4: attribute '__traceback__' is not allowed"),
    ("def f(x: 'os.system(1)'):\n    pass", "line 1: string annotations are not allowed"),
    ("_getattr_ = lambda o, n: 0", ("line 1: name '_getattr_' is not allowed (reserved for the "
                                   "grader's guards)")),
    ("import jax as _write_", "line 1: name '_write_' is not allowed (reserved"),
    ("def __init__(self):\n    pass", ("line 1: name '__init__' is not allowed (names starting "
                                       "with '__')")),
    ("class A:\n    x = __name__", "line 2: name '__name__' is not allowed"),
    ("class A(metaclass=type):\n    pass", ("line 1: the keyword argument 'metaclass' is not "
                                           "allowed")),
    ("async def f():\n    pass", "line 1: AsyncFunctionDef statements are not allowed"),
    ("def f():\n    x = 1\n    def g():\n        nonlocal x\n",
     "line 4: Nonlocal statements are not allowed"),
    ("try:\n    pass\nexcept* ValueError:\n    pass", "line 1: TryStar statements are not"),
    ("%timeit 1 + 1", "line 1: IPython magics and shell commands ('%', '!') are not allowed"),
    ("x = 1\n!ls /", "line 2: IPython magics and shell commands"),
    ("def f(:\n", "line 1: the cell does not parse (SyntaxError"),
    # Class dunders: deny by default; the rule names the dunder and what is allowed.
    ("class A:\n    def __array_interface__(self):\n        pass",
     "line 2: dunder '__array_interface__' may not be defined in a class (allowed: __init__,"),
    *[(f"class A:\n    def {d}(self, *a):\n        pass",
       f"line 2: dunder '{d}' may not be defined in a class")
      for d in ("__array__", "__array_struct__", "__array_ufunc__", "__array_function__",
                "__dlpack__", "__dlpack_device__", "__buffer__", "__release_buffer__",
                "__jax_array__", "__getattribute__", "__getattr__", "__setattr__",
                "__delattr__", "__set_name__", "__init_subclass__", "__class_getitem__",
                "__get__", "__set__", "__delete__", "__index__", "__reduce__", "__reduce_ex__",
                "__getstate__", "__setstate__", "__del__", "__new__", "__mro_entries__",
                "__instancecheck__", "__subclasscheck__", "__fspath__", "__int__")],
    ("class A:\n    __dict__ = property(lambda self: {})",
     "line 2: dunder '__dict__' may not be defined in a class"),
    ("class A:\n    @property\n    def __class__(self):\n        return int",
     "line 3: dunder '__class__' may not be defined in a class"),
    ("class A:\n    __array_priority__: float = 100.0",
     "line 2: dunder '__array_priority__' may not be defined in a class"),
    ("class A:\n    __weakref__, x = 1, 2", "line 2: dunder '__weakref__' may not be"),
    ("class A:\n    __array_struct__ = __getattr__ = None",
     "line 2: dunder '__array_struct__' may not be"),
    ("class A:\n    class __array_interface__:\n        pass",
     "line 2: name '__array_interface__' is not allowed"),
    ("def __array__(self):\n    pass", "line 1: name '__array__' is not allowed"),
    # Arrays over foreign memory; a named tuple's API may be read, never written.
    ("p._replace = None", "line 1: attribute '_replace' may be read, not written"),
    ("x._private", "line 1: attribute '_private' is not allowed"),
    ("import numpy as np\nnp.ndarray((3,), np.uint8, b'abc')",
     "line 2: calling ndarray with a buffer, offset or strides is not allowed"),
    ("import numpy as np\nnp.ndarray((3,), buffer=bytearray(3))",
     "line 2: calling ndarray with a buffer"),
    ("import numpy as np\nnp.ndarray(shape=(3,), strides=(8,))", "line 2: calling ndarray"),
    ("from numpy import ndarray\nndarray((3,), offset=8)", "line 2: calling ndarray"),
    ("import numpy as np\nkw = {}\nnp.ndarray((3,), **kw)", "line 3: calling ndarray"),
    ("import numpy as np\nnp.recarray((3,), buf=b'abc')", "line 2: calling recarray"),
    ("from numpy import frombuffer", "line 1: import of 'numpy.frombuffer' is not allowed"),
    ("from numpy import from_dlpack", "line 1: import of 'numpy.from_dlpack' is not allowed"),
    ("from jax.numpy import frombuffer", "line 1: import of 'jax.numpy.frombuffer' is not"),
    ("import jax.dlpack", "line 1: import of 'jax.dlpack' is not allowed"),
    ("from jax import dlpack", "line 1: import of 'jax.dlpack' is not allowed"),
    ("from jax.dlpack import from_dlpack", "line 1: import of 'jax.dlpack' is not allowed"),
    ("import numpy.lib.stride_tricks", "line 1: import of 'numpy.lib.stride_tricks' is not"),
    # Format fields nested in a format spec are read too, at every depth.
    ("'{0:{1.__globals__}}'.format(1, print)", "line 1: format field '1.__globals__' is not"),
    ("'{0:{1._x}}'", "line 1: format field '1._x' is not allowed"),
    ("'{0:>{1[__builtins__]}}'", "line 1: format field '1[__builtins__]' is not allowed"),
    ("'{0:{1:{2.__class__}}}'", "line 1: format field '2.__class__' is not allowed"),
    ("'{0:{1}}{2:{3.f_back}}'", "line 1: format field '3.f_back' is not allowed"),
    ("from typing import Type", "line 1: import of 'typing.Type' is not allowed"),
]


@pytest.mark.parametrize(("source", "message"), HOSTILE, ids=[s for s, _ in HOSTILE])
def test_hostile_cell_is_refused_naming_line_and_rule(source, message):
    code, refusals = check_source(source, ROOTS)
    assert code is None
    assert any(r.startswith(message) for r in refusals), refusals
    assert all(re.match(r"line \d+: ", r) for r in refusals)


def test_an_assignment_can_add_imports():
    assert check_source("import time\nt = time.monotonic()", ROOTS + ("time",))[1] == []
    assert "time" in _assignment_roots("ps3_pitfalls")
    assert "time" not in _assignment_roots("ps1_primitives")


# -- what the guards stop while the code runs ------------------------------------------------

RUNTIME = [
    ("import numpy as np\nm = np.lib", "module 'numpy.lib' is not allowed"),
    ("import typing\ns = typing.sys", "module 'sys' is not allowed"),
    ("import dataclasses\ns = dataclasses.sys", "module 'sys' is not allowed"),
    ("import jax\nx = jax.lib", "module 'jax.lib' is not allowed"),
    ("import numpy as np\nf = np.load", "numpy.load is not allowed"),
    ("import jax.numpy as jnp\nf = jnp.load", "jax.numpy.load is not allowed"),
    ("import numpy as np\nf = np.testing.measure", "numpy.testing.measure is not allowed"),
    ("import jax\njax.jit = None", "changing module 'jax' is not allowed"),
    ("import jax\nsetattr(jax.numpy, 'sum', None)", "changing module 'jax.numpy' is not"),
    ("import jax\ndel jax.grad", "changing module 'jax' is not allowed"),
    ("import jax\njax.Array.shape = None", "changing class '"),
    ("import numpy as np\nnp.ndarray.foo = 1", "changing class 'ndarray' is not allowed"),
    ("fmt = '{0.' + '_' * 2 + 'class__}'\nfmt.format(1)", "format field '0.__class__'"),
    ("import jax\nfmt = '{x.' + '_' * 2 + 'class__}'\njax.debug.print(fmt, x=1)",
     "jax.debug.print: format field"),
    ("d = {'a': 1}\nk = '_' * 2 + 'a'\nd[k]", "item '__a' is not allowed"),
    (("import jax\njax.tree_util.register_dataclass(type(jax), data_fields=['numpy'], "
     "meta_fields=[])"), "jax.tree_util.register_dataclass is allowed only for classes"),
    (("import jax\nclass C:\n    pass\nname = '_' * 2 + 'dict' + '_' * 2\n"
     "jax.tree_util.register_dataclass(C, data_fields=[name], meta_fields=[])"),
     "field '__dict__' is not allowed"),
    ("import jax\njax.tree_util.register_pytree_node(type(print), list, list)",
     "jax.tree_util.register_pytree_node is allowed only for classes"),
    ("import functools\ndef f():\n    pass\nfunctools.update_wrapper(f, print, ('x',))",
     "functools.update_wrapper with 'assigned' or 'updated' is not allowed"),
    ("import functools\nw = functools.wraps(print, updated=['x'])",
     "functools.wraps with 'assigned' or 'updated' is not allowed"),
    ("fmt = '{0.' + '_' * 2 + 'class__}'\nstr.format(fmt, 1)", "str.format: format field"),
    ("class S(str):\n    pass\nS('{0.' + '_' * 2 + 'class__}').format(1)", "format field"),
    ("import functools\nf = functools.singledispatch", "functools.singledispatch is not allowed"),
    ("n = 'set' + 'trace'\nimport jax\ngetattr(jax, 'numpy')\nx = {n: 1}", None),
    ("fmt = '{0:{1.' + '_' * 2 + 'globals__}}'\nfmt.format(1, print)", "format field '1.__glo"),
    ("fmt = '{0:{1.' + '_' * 2 + 'globals__}}'\nstr.format(fmt, 1, print)", "str.format: form"),
    ("import numpy as np\nf = np.frombuffer", "numpy.frombuffer is not allowed"),
    ("import numpy as np\nf = np.from_dlpack", "numpy.from_dlpack is not allowed"),
    ("import numpy as np\nf = np.memmap", "numpy.memmap is not allowed"),
    ("import jax.numpy as jnp\nf = jnp.frombuffer", "jax.numpy.frombuffer is not allowed"),
    ("import jax\nd = jax.dlpack", "module 'jax.dlpack' is not allowed"),
    ("import numpy as np\ns = np.lib.stride_tricks", "module 'numpy.lib' is not allowed"),
    ("import functools\nimport jax\ndef f():\n    pass\nfunctools.update_wrapper(f, jax)",
     "functools.update_wrapper may wrap only a function, not 'module'"),
    ("import functools\nimport jax\ndef f():\n    pass\nfunctools.wraps(jax)(f)",
     "functools.wraps may wrap only a function, not 'module'"),
    ("import functools\nimport jax\nfunctools.wraps(jax.numpy)",
     "functools.wraps may wrap only a function, not 'module'"),
    ("import functools\nclass C:\n    pass\ndef f():\n    pass\nfunctools.wraps(C)(f)",
     "functools.wraps may wrap only a function, not 'type'"),
    (("import functools\nclass C:\n    pass\ndef f():\n    pass\n"
      "functools.update_wrapper(f, C())"), "may wrap only a function, not 'C'"),
    (("import functools\nclass W:\n    pass\ndef f():\n    pass\n"
      "functools.update_wrapper(W(), f)"),
     "functools.update_wrapper may update only a function your notebook defines"),
    ("import functools\nclass W:\n    pass\ndef f():\n    pass\nfunctools.wraps(f)(W)",
     "functools.wraps may update only a function your notebook defines"),
    ("import functools\nimport jax\ndef f():\n    pass\nfunctools.wraps(f)(jax.jit)",
     "functools.wraps may update only a function your notebook defines"),
    # Classes made at run time from a namespace: the class-body rule, and no metaclass.
    ("k = '_' * 2 + 'array_interface' + '_' * 2\nX = type('X', (), {k: {}})",
     "type(): dunder '__array_interface__' may not be defined in a class (allowed: __init__"),
    ("class M(type):\n    pass\nk = '_' * 2 + 'array' + '_' * 2\nX = M('X', (), {k: 1})",
     "type(): dunder '__array__' may not be defined in a class"),
    (("import dataclasses\nk = '_' * 2 + 'array' + '_' * 2\n"
     "D = dataclasses.make_dataclass('D', [(k, int, 0)])"),
     "dataclasses.make_dataclass: dunder '__array__' may not be defined in a class"),
    (("import dataclasses\nk = '_' * 2 + 'getattr' + '_' * 2\n"
     "D = dataclasses.make_dataclass('D', ['x'], namespace={k: print})"),
     "dataclasses.make_dataclass: dunder '__getattr__' may not be defined"),
    ("class S(str):\n    def __hash__(self):\n        return 1\nX = type('X', (), {S('a'): 1})",
     "type(): names must be plain strings, not 'S'"),
    ("import jax\nm = type(jax.Array)", "is not allowed (it is a metaclass"),
    ("m = type(type)", "type() of 'CellType' is not allowed (it is a metaclass"),
    ("import typing\nm = typing.NamedTupleMeta", "metaclass 'NamedTupleMeta' is not allowed"),
    ("import typing\nm = typing.ABCMeta", "metaclass 'ABCMeta' is not allowed"),
    ("import typing\nclass M(typing.Type):\n    pass", "typing.Type is not allowed"),
    ("class S(str):\n    pass\nd = {'a': 1}\nd[S('a')]",
     "an item key may not be an instance of a str subclass your notebook defines"),
    (("import jax\nclass S(str):\n    pass\nclass C:\n    pass\n"
     "jax.tree_util.register_dataclass(C, data_fields=[S('a')], meta_fields=[])"),
     "jax.tree_util.register_dataclass: field 'a' is not allowed"),
]


@pytest.mark.parametrize(("source", "message"), RUNTIME, ids=[s for s, _ in RUNTIME])
def test_runtime_guard_stops_what_the_text_cannot_show(source, message):
    code, refusals = check_source(source, ROOTS)
    assert refusals == [], refusals
    if message is None:
        _run(code)
        return
    with pytest.raises(PolicyError, match=re.escape(message)):
        _run(code)


def test_guards_and_builtins_in_the_namespace():
    ns = Guards(ROOTS).namespace()
    for name in ("eval", "exec", "compile", "open", "globals", "vars", "breakpoint", "input"):
        assert name not in ns["__builtins__"]
    assert ns["__builtins__"]["id"] is id  # identity maps are an ordinary idiom
    assert ns["__builtins__"]["getattr"] == ns["_getattr_"]
    assert ns["__builtins__"]["type"] is not type  # the checked stand-in
    with pytest.raises(PolicyError):
        ns["__builtins__"]["getattr"](1, "__class__")



def test_the_students_guide_lists_what_runs():
    """The guide's allowlist is the policy's: every class dunder it names is allowed, every
    import root and removed builtin is named."""
    text = (ROOT / "book" / "guides" / "students.md").read_text(encoding="utf-8")
    section = text[text.index("### What a cell may not do"):text.index("### What the feedback")]
    row = next(line for line in section.splitlines() if line.startswith("| Dunders a class"))
    assert set(re.findall(r"__\w+?__", row)) <= ALLOWED_CLASS_DUNDERS
    for name in (*BASE_IMPORTS, *DENIED_BUILTINS):
        if not name.startswith("_") and name not in ("exit", "quit", "copyright", "credits",
                                                     "license"):
            assert f"`{name}`" in section, name


def test_rule_raising_on_bfloat16_under_the_guards():
    """C code imports through the builtins of the calling frame (formatting a bfloat16 dtype
    does): the cells' builtins must let it, or a correct rule fails with a PolicyError."""
    source = ("import jax\nimport jax.numpy as jnp\n"
              "def describe(x):\n    return f'{x.dtype} {x.shape}'\n"
              "text = describe(jnp.zeros(3, jnp.bfloat16))\n")
    code, refusals = check_source(source, ROOTS)
    assert refusals == [] and _run(code)["text"] == "bfloat16 (3,)"


# -- the stage: refused cells are not run, and say why ---------------------------------------


def test_apply_refuses_student_cells_and_keeps_provided_ones():
    from autograder.worker.normalise import Cell, Notebook

    notebook = Notebook((
        Cell("code", "import os\nx = os.getcwd()", "provided", "setup", run=True),
        Cell("code", "def f(x):\n    return x.__class__", "solution", "impl", run=True),
        Cell("code", "def g(x):\n    return x + 1", "solution", "other", run=True),
        Cell("code", "import sys", "student", None, run=True),
        Cell("markdown", "__class__", "text", None),
    ))
    checked = apply(notebook, None)
    provided, impl, other, added, text = checked.cells
    assert provided == notebook.cells[0] and text == notebook.cells[4]
    assert not impl.run and impl.note == ("not run: refused by the cell policy: line 2: "
                                          "attribute '__class__' is not allowed (names "
                                          "starting with '_')")
    assert not added.run and "import of 'sys' is not allowed" in added.note
    assert other.run and other.source == notebook.cells[2].source and other.code
    assert checked.code_to_run == [provided.source, other.code]
    assert any("cell impl was not run" in n for n in checked.notes)
    assert any("an added cell was not run" in n for n in checked.notes)
