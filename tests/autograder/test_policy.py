"""The cell policy (autograder.policy, autograder.cellguard): what a student cell may not do.

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

from autograder.cellguard import BASE_IMPORTS, Guards, PolicyError
from autograder.policy import allowed_imports, apply, check_source
from autograder.release import names

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
    from autograder.classroom import solution_sources

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
    assert ns["__builtins__"]["getattr"] == ns["_getattr_"]
    with pytest.raises(PolicyError):
        ns["__builtins__"]["getattr"](1, "__class__")



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
    from autograder.normalise import Cell, Notebook

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
