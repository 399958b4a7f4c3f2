"""The cell policy's allowlist (autograder/student/allowlist.txt) against what a cell can reach.

The audit walks every module and class reachable from what any assignment's cells may import and
the cells' builtins, through every attribute the list lets a cell take, and fails on any public
name it reaches that the list neither allows nor refuses: a NumPy, JAX or Python upgrade that
adds a function fails here until someone has read it and put it on the list
(``python -m autograder.student.allowlist`` prints the same; ``... accept`` adds the names).
"""

from __future__ import annotations

import pytest

from autograder.student import allowlist, cellguard
from autograder.worker.policy import check_source


@pytest.fixture(scope="module")
def reach():
    return allowlist.reachable(cellguard.ALLOWLIST, allowlist.audit_roots())


def test_every_name_a_cell_can_reach_is_reviewed(reach, capsys):
    missing = allowlist.unreviewed(cellguard.ALLOWLIST, reach)
    with capsys.disabled():
        print(f"\nallowlist audit: {allowlist.summary(cellguard.ALLOWLIST, reach)}")
    assert not missing, "\n".join(f"unreviewed: {head}: {' '.join(names)}"
                                  for head, names in missing.items())


def test_the_audit_reaches_the_whole_surface(reach):
    # A walk that stopped early would pass on nothing: it must see the array APIs whole, the
    # rule registries of ps1, the classes behind values (ndarray, jax.Array, a device).
    assert reach.callables > 5000
    for module in ("numpy", "jax.numpy", "jax.lax", "jax.interpreters.ad", "jaxlib.mlir.ir",
                   "jax.extend.mlir.dialects.stablehlo", "numpy.testing"):
        assert module in reach.modules and len(reach.modules[module]) > 5, module
    for cls in ("numpy.ndarray", "jaxlib._jax.Device", "numpy.random.bit_generator.BitGenerator"):
        assert cls in reach.classes, cls
    # Modules off the list are refused wherever they are reached, not entered.
    assert ("numpy", "lib") not in reach.unlisted  # refused by name in numpy's section
    assert not {"os", "sys", "ctypes", "numpy.lib", "jax._src.core"} & set(reach.modules)


def test_an_unreviewed_name_fails_the_audit(reach):
    text = allowlist.LIST.read_text(encoding="utf-8")
    trimmed = allowlist.parse(text.replace(" runstring", "").replace("!runstring:", "!kept:"))
    section = trimmed.modules["numpy.testing"]
    section.refused.pop("kept", None)
    section.allowed.discard("assert_allclose")
    missing = allowlist.unreviewed(trimmed, allowlist.reachable(trimmed, allowlist.audit_roots()))
    assert {"runstring", "assert_allclose"} <= set(missing["module numpy.testing"])


@pytest.mark.parametrize("module", sorted(cellguard.ALLOWLIST.modules))
def test_every_listed_module_says_why(module):
    assert cellguard.ALLOWLIST.modules[module].why


def test_every_refusal_on_every_object_is_refused_as_typed():
    for name, why in cellguard.DENIED_NAMES.items():
        code, refusals = check_source(f"x = y.{name}\n", cellguard.BASE_IMPORTS)
        assert code is None and why in refusals[0], name


@pytest.mark.parametrize(("source", "says"), [
    ("import numpy.ma\n", "import of 'numpy.ma' is not allowed"),
    ("import jax.profiler\n", "import of 'jax.profiler' is not allowed"),
    ("from numpy.testing import runstring\n", "it runs a string as code"),
    ("from numpy.linalg import lapack_lite\n", "not on the cell policy's allowlist"),
    ("from jax.extend.mlir.dialects.stablehlo import custom_call\n", "with sizes nothing checks"),
    ("import os\n", "import of 'os' is not allowed"),
])
def test_imports_off_the_list_are_refused_as_typed(source, says):
    code, refusals = check_source(source, cellguard.BASE_IMPORTS)
    assert code is None and says in " ".join(refusals), refusals


def _run(source: str) -> dict:
    code, refusals = check_source(source, cellguard.BASE_IMPORTS)
    assert code is not None, refusals
    ns = {"__name__": "__main__"}
    cellguard.install(ns, cellguard.BASE_IMPORTS)
    exec(compile(code, "<cell>", "exec"), ns)  # noqa: S102 - rewritten by the cell policy
    return ns


@pytest.mark.parametrize(("source", "says"), [
    ("import numpy as np\nnp.testing.runstring('1', {})\n", "it runs a string as code"),
    ("import numpy as np\nnp.linalg.lapack_lite\n", "not on the cell policy's allowlist"),
    ("import numpy as np\nnp.fromregex('/proc/self/mountinfo', 'x', [('a', 'U9')])\n",
     "it reads files"),
    ("import numpy as np\nnp.lib\n", "module 'numpy.lib' is not allowed in a cell"),
    ("import dataclasses\ndataclasses.sys\n", "module 'sys' is not allowed in a cell"),
    ("import jax\njax.profiler\n", "module 'jax.profiler' is not allowed in a cell"),
    ("import jax.numpy as jnp\nf = jnp.load\n", "it can unpickle"),
])
def test_module_attributes_off_the_list_are_refused_when_they_run(source, says):
    with pytest.raises(cellguard.PolicyError, match=says):
        _run(source)


def test_a_refused_function_is_refused_however_it_is_reached():
    # The same function object under a name the list allows elsewhere is still refused (for the
    # modules imported when the guards start: the sandbox preloads numpy's).
    import numpy as np
    import numpy.testing

    guards = cellguard.Guards(cellguard.BASE_IMPORTS)

    with pytest.raises(cellguard.PolicyError, match="it runs a string as code"):
        guards.vet(np.testing.runstring)


def test_object_new_makes_the_notebook_own_classes_only():
    ns = _run("class Point:\n    def __init__(self, x):\n        self.x = x\n\n"
              "p = object.__new__(Point)\np.x = 3\n")
    assert ns["p"].x == 3
    with pytest.raises(cellguard.PolicyError, match="only for classes your notebook defines"):
        _run("import numpy as np\nobject.__new__(np.random.Generator)\n")
    code, refusals = check_source("x = int.__new__\n", cellguard.BASE_IMPORTS)
    assert code is None and "'__new__'" in refusals[0]


def test_a_named_tuples_api_on_named_tuples_only():
    ns = _run("import collections\nP = collections.namedtuple('P', 'a b')\n"
              "p = P(1, 2)._replace(b=3)\nd = p._asdict()\nkey = id(p)\n")
    assert ns["p"] == (1, 3) and ns["d"] == {"a": 1, "b": 3} and ns["key"] == id(ns["p"])
    with pytest.raises(cellguard.PolicyError, match="allowed only on named tuples"):
        _run("import jax\nf = jax.jit._replace\n")


def test_the_audit_starts_from_what_a_cell_may_import():
    assert set(cellguard.BASE_IMPORTS) <= set(allowlist.AUDIT_ROOTS)
