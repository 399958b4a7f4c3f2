"""Issue 26's attacks, rebuilt as real student notebooks of ps1 and ps5 and graded by the real
command (``python -m autograder grade``, cell policy on, as an instructor runs it).

Each attack is one cell added to a released notebook, untouched (the issue's "an untouched
notebook plus one cell": 52/52 on ps1, 50/50 on ps5) or partly solved (its honest cells must
still earn). Each is written twice where the text alone can hide it: as a student would type it
(the policy refuses the cell before it runs, naming line and rule) and with every forbidden name
built at run time (the cell runs; the guards stop it with a PolicyError naming the rule). Either
way the notebook earns no point beyond the same notebook without the attack cell.

- ``wrapper_builtins``: ``functools.update_wrapper(obj, jax)`` onto an object whose class has a
  ``__dict__`` property: jax's real module dict lands in the student's ``update`` method, and
  ``"__" + "builtins__"`` hands over the real ``__import__``, ``exec``, ``open``;
- ``raw_memory``: a class with an ``__array_interface__`` property over ``id()``: ``np.asarray``
  makes a writable view of any address;
- ``probe_rewrite``: with the real builtins, every probe function rewritten in place (code,
  globals, builtins), the function objects kept;
- ``json_forgery``: with the real builtins, json's and the channel's encoder and decoder
  replaced, so that every reply is rewritten before it is signed;
- ``nested_format``: a format field nested in a format spec (``"{0:{1.__globals__...}}"``).

Issue 51's attacks go through functions of allowed modules instead of the language: an exec
(``numpy.testing.runstring``), raw memory from LAPACK with unchecked sizes
(``numpy.linalg.lapack_lite``), a file read (``np.fromregex`` of ``/proc/self/mountinfo``), a
compiled function's module namespace (``func_globals``), a bit generator's ``cffi``, a device's
backend ``client``: each is off the allowlist (autograder/student/allowlist.txt), refused as
typed and at run time. (The mount table itself is checked without the policy, by the toy's
hostile class: tests/autograder/test_engine_hostile_class.py.)

One class per assignment, one ``grade`` run each (module-scoped fixtures).
"""

from __future__ import annotations

import csv
import html
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from engine_helpers import REPO

from autograder.grade.grading import hidden_paths
from autograder.instructor.classroom import make_submission, mutants_module, solution_sources

GRADE_LIMIT_S = 1800  # each class: a dozen notebooks on a busy 2-core machine, ps5 compiling C++
pytestmark = pytest.mark.timeout(GRADE_LIMIT_S + 300)

# Each attack as a student types it: refused before it runs, with the rule the message names.
# Three of them start the same way: a class whose `__dict__` property hands the real module dict
# of `jax` to `update_wrapper`'s `update` call, and with it the real builtins.
GRAB_BUILTINS = '''\
import functools
import jax


class Grab:
    def update(self, namespace):
        Grab.found = namespace


class Wrapper:
    @property
    def __dict__(self):
        return Grab()


functools.update_wrapper(Wrapper(), jax)
real = Grab.found["__builtins__"]
'''
WRAPPER_BUILTINS = GRAB_BUILTINS + '''\
real["print"]("REAL-BUILTINS", sorted(real)[:3])
'''
RAW_MEMORY = '''\
import jax
import numpy as np


class Raw:
    def __init__(self, address, size):
        self.address, self.size = address, size

    @property
    def __array_interface__(self):
        return {"shape": (self.size,), "typestr": "|u1", "data": (self.address, False),
                "version": 3}


memory = np.asarray(Raw(id(jax.jit), 64))
memory[16:24] = 0
print("RAW-MEMORY", memory[:8])
'''
PROBE_REWRITE = GRAB_BUILTINS + '''\
sys = real["__import__"]("sys")
probes = sys.modules["{probes}"]


def answer(ns, inputs):
    return inputs.get("expected")


for name, fn in list(vars(probes).items()):
    if name.startswith("probe_"):
        fn.__code__ = answer.__code__.replace(co_name=fn.__code__.co_name)
        fn.__globals__.update(__builtins__=real)
print("PROBES-REWRITTEN")
'''
JSON_FORGERY = GRAB_BUILTINS + '''\
json = real["__import__"]("json")
sys = real["__import__"]("sys")


class Forger(json.JSONEncoder):
    def encode(self, value):
        text = super().encode(value)
        return text.replace('"failed"', '"passed"').replace("false", "true")


json._default_encoder = Forger()
channel = sys.modules.get("autograder.student.channel")
if channel is not None:
    channel.ENCODER = Forger()
print("JSON-FORGED")
'''
NESTED_FORMAT = '''\
import jax

leak = "{0:{1.__globals__[__builtins__]}}".format(0, jax.jit)
print("FORMAT-LEAK", leak)
'''

# The same attacks with every forbidden name built at run time: the text check sees nothing, the
# guards stop the cell while it runs.
RUNTIME_WRAPPER = '''\
import functools
import jax


class Grab:
    def update(self, namespace):
        Grab.found = namespace


name = "_" * 2 + "dict" + "_" * 2
Wrapper = type("Wrapper", (), {name: property(lambda self: Grab())})
functools.update_wrapper(Wrapper(), jax)
real = Grab.found["_" * 2 + "builtins" + "_" * 2]
real["print"]("REAL-BUILTINS", sorted(real)[:3])
'''
RUNTIME_WRAPPER_FUNCTION = '''\
import functools
import jax


def wrapper():
    pass


functools.update_wrapper(wrapper, jax)
print("WRAPPED-JAX")
'''
RUNTIME_RAW_MEMORY = '''\
import jax
import numpy as np

name = "_" * 2 + "array_interface" + "_" * 2
Raw = type("Raw", (), {name: property(lambda self: {
    "shape": (64,), "typestr": "|u1", "data": (hash(jax.jit) << 4, False), "version": 3})})
memory = np.asarray(Raw())
print("RAW-MEMORY", memory[:8])
'''
RUNTIME_NESTED_FORMAT = '''\
import jax

dunder = "_" * 2
template = "{0:{1." + dunder + "globals" + dunder + "[" + dunder + "builtins" + dunder + "]}}"
leak = template.format(0, jax.jit)
print("FORMAT-LEAK", leak)
'''
# Issue 51: ways in through functions of allowed modules.
RUNSTRING = '''\
import numpy as np

np.testing.runstring("print('EXEC-RAN', __builtins__)", {})
'''
LAPACK = '''\
import numpy as np

lapack = np.linalg.lapack_lite
a = np.zeros((1, 1))
lapack.dgelsd(4096, 4096, 1, a, 4096, a, 4096, a, 0.0, 0, a, -1, np.zeros(1, np.int32), 0)
print("LAPACK-RAN")
'''
FROM_IMPORT_LAPACK = '''\
from numpy.linalg import lapack_lite

print("LAPACK-RAN", lapack_lite)
'''
FILE_READ = '''\
import numpy as np

table = np.fromregex("/proc/self/mountinfo", r"(.*)\\n", [("line", "U4096")])
print("MOUNTS-READ", len(table))
'''
FUNC_GLOBALS = '''\
import numpy as np

space = np.random.default_rng.func_globals
print("GLOBALS-READ", sorted(space)[:3])
'''
BIT_GENERATOR_CFFI = '''\
import numpy as np

ffi = np.random.PCG64().cffi
print("CFFI-REACHED", ffi)
'''
BACKEND_CLIENT = '''\
import jax

client = jax.devices()[0].client
print("CLIENT-REACHED", client)
'''

# name -> (added cell, what the refusal or the PolicyError says: the rule it names).
ATTACKS = {
    "wrapper_builtins": (WRAPPER_BUILTINS, "dunder '__dict__' may not be defined in a class"),
    "raw_memory": (RAW_MEMORY, "dunder '__array_interface__' may not be defined in a class"),
    "probe_rewrite": (PROBE_REWRITE, "dunder '__dict__' may not be defined in a class"),
    "json_forgery": (JSON_FORGERY, "dunder '__dict__' may not be defined in a class"),
    "nested_format": (NESTED_FORMAT, "format field '1.__globals__[__builtins__]' is not allowed"),
    "runtime_wrapper": (RUNTIME_WRAPPER,
                        "type(): dunder '__dict__' may not be defined in a class"),
    "runtime_wrapper_function": (RUNTIME_WRAPPER_FUNCTION,
                                 "functools.update_wrapper may wrap only a function, not 'module'"),
    "runtime_raw_memory": (RUNTIME_RAW_MEMORY,
                           "type(): dunder '__array_interface__' may not be defined in a class"),
    "runtime_nested_format": (RUNTIME_NESTED_FORMAT,
                              "format field '1.__globals__[__builtins__]' is not allowed"),
    # The list's refusal names why; a name the list does not hold says so.
    "runstring": (RUNSTRING, "numpy.testing.runstring is not allowed (it runs a string as code)"),
    "lapack": (LAPACK, "numpy.linalg.lapack_lite is not on the cell policy's allowlist"),
    "from_import_lapack": (FROM_IMPORT_LAPACK,
                           "numpy.linalg.lapack_lite is not on the cell policy's allowlist"),
    "file_read": (FILE_READ, "numpy.fromregex is not allowed (it reads files)"),
    "func_globals": (FUNC_GLOBALS, "attribute 'func_globals' is not allowed"),
    "bit_generator_cffi": (BIT_GENERATOR_CFFI, "attribute 'cffi' is not allowed"),
    "backend_client": (BACKEND_CLIENT, "attribute 'client' is not allowed"),
}
STATIC = ("wrapper_builtins", "raw_memory", "probe_rewrite", "json_forgery", "nested_format",
          "from_import_lapack", "func_globals", "bit_generator_cffi", "backend_client")
# What a cell prints only if its attack ran past the guards.
RAN_MARKERS = ("REAL-BUILTINS", "RAW-MEMORY", "PROBES-REWRITTEN", "JSON-FORGED", "FORMAT-LEAK",
               "WRAPPED-JAX", "EXEC-RAN", "LAPACK-RAN", "MOUNTS-READ", "GLOBALS-READ",
               "CFFI-REACHED", "CLIENT-REACHED")
# (A name a cell cannot write as text cannot be computed either: getattr takes a literal.)
ISSUE_51 = ("runstring", "lapack", "from_import_lapack", "file_read", "func_globals",
            "bit_generator_cffi", "backend_client")
# Per assignment: the attacks added to the untouched notebook and those added to the partly
# solved one (its honest cells keep their points). ps1's class holds every attack. ps5's
# notebooks each compile C++ (and CUDA where nvcc is installed) in the sandbox, a minute or two a
# notebook on a busy 2-core machine: its class holds what can differ from ps1's there, the
# attacks that run (one run-time variant of each kind of guard, and two of issue 51's), against
# ps5's own probes and channel. The attacks refused as typed are refused by the cell policy
# before anything of the assignment runs, whichever it is (an assignment changes its static rules
# only by the modules it allows, and these attacks import what both allow), so ps1's class shows
# them for both.
PLAN = {
    "ps1_primitives": (tuple(ATTACKS), ("probe_rewrite", "runtime_wrapper", "runtime_raw_memory",
                                        "runstring")),
    "ps5_kernels": (("runtime_raw_memory", "runtime_nested_format", "runstring", "lapack"),
                    ("runtime_wrapper",)),
}
ASSIGNMENTS = {"ps1": "ps1_primitives", "ps5": "ps5_kernels"}


def _partial_fills(name: str) -> dict[str, str]:
    solutions = solution_sources(name, root=REPO)
    return {k: solutions[k] for k in mutants_module(name).PARTIAL}


def notebooks(name: str) -> dict[str, tuple[nbformat.NotebookNode, str]]:
    """student -> (notebook, the honest twin it must not outscore): the released notebook
    untouched or partly solved, with one attack cell added at its end."""
    probes = f"autograder.assignments.{name}.probes"
    bases = {"untouched": make_submission(name, {}, root=REPO),
             "partial": make_submission(name, _partial_fills(name), root=REPO)}
    students = {base: (nb, base) for base, nb in bases.items()}

    def add(student: str, base: str, cell: str) -> None:
        nb = nbformat.from_dict(json.loads(json.dumps(bases[base])))
        nb.cells.append(nbformat.v4.new_code_cell(cell.replace("{probes}", probes)))
        students[student] = (nb, base)

    on_untouched, on_partial = PLAN[name]
    for attack in on_untouched:
        add(attack, "untouched", ATTACKS[attack][0])
    for attack in on_partial:
        add(f"partial_{attack}", "partial", ATTACKS[attack][0])
    return students


# Attacks by what sits beside the notebook in the submission folder (the untouched notebook, so
# the untouched student is the twin), each graded under a late policy, where timestamp.txt is
# read and its text shown back in the feedback: a link to the course's secret file, a FIFO
# (it hung the run before anyone was graded), and an assignment folder linked to the twin's
# (`feedback` laid it out with the twin's submission_secret.txt, under which nbgrader sends it).
COURSE_SECRET = "SECRET-OF-THE-COURSE-" + "5eC" * 14
FOLDER_ATTACKS = ("stamp_secret", "stamp_fifo", "linked_folder")


def _course(base: Path) -> Path:
    """A course root beside the class: the repository's releases, a late policy far ahead (no
    score changes), a secret file that a student's folder links to."""
    root = base / "course"
    root.mkdir()
    (root / "assignments").symlink_to(REPO / "assignments")
    (root / "course.toml").write_text(
        "".join(f'[late.{n}]\ndue = "2099-01-01 00:00"\nlate_days = 3\npenalty_per_day = 0.1\n'
                for n in ASSIGNMENTS.values()))
    (root / ".autograder_secret").write_text(COURSE_SECRET + "\n")
    return root


def _folder_attacks(submitted: Path, name: str, untouched: nbformat.NotebookNode) -> None:
    twin = submitted / "untouched" / name
    (twin / "timestamp.txt").write_text("2026-12-01 10:00:00.000000 UTC")
    (twin / "submission_secret.txt").write_text("secret-of-untouched")
    for student in ("stamp_secret", "stamp_fifo"):
        (submitted / student / name).mkdir(parents=True)
        nbformat.write(untouched, submitted / student / name / f"{name}.ipynb")
    (submitted / "stamp_secret" / name / "timestamp.txt").symlink_to(
        "../../../course/.autograder_secret")
    os.mkfifo(submitted / "stamp_fifo" / name / "timestamp.txt")
    (submitted / "linked_folder").mkdir()
    (submitted / "linked_folder" / name).symlink_to(f"../untouched/{name}")


def _grade_class(base: Path, name: str) -> dict:
    students = notebooks(name)
    submitted, out = base / "submitted", base / "out"
    for student, (nb, _) in students.items():
        path = submitted / student / name / f"{name}.ipynb"
        path.parent.mkdir(parents=True)
        nbformat.write(nb, path)
    root = _course(base)
    folders = FOLDER_ATTACKS if name == ASSIGNMENTS["ps1"] else ()
    if folders:
        _folder_attacks(submitted, name, students["untouched"][0])
    db = f"sqlite:///{base / 'gradebook.db'}"
    env = dict(os.environ, PYTHONPATH=str(REPO),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    run = subprocess.Popen(
        [sys.executable, "-m", "autograder", "grade", name, str(submitted), "--out", str(out),
         "--db", db, "--seed", "attack-notebooks", "--workers", "2", "--no-progress",
         "--root", str(root)],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True)
    try:
        stdout, stderr = run.communicate(timeout=GRADE_LIMIT_S)
    except subprocess.TimeoutExpired:
        os.killpg(run.pid, signal.SIGKILL)
        run.communicate()
        pytest.fail(f"{name}'s attack class was not graded within GRADE_LIMIT_S = "
                    f"{GRADE_LIMIT_S} s ({__name__})", pytrace=False)
    assert run.returncode == 0, stdout[-3000:] + stderr[-3000:]
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        rows = {row["student_id"]: row for row in csv.DictReader(f)}
    results = {s: json.loads((out / "results" / f"{s}.json").read_text())
               for s in (*students, *folders)}
    pages = {s: html.unescape((out / "feedback" / f"{s}.html").read_text(encoding="utf-8"))
             for s in (*students, *folders)}
    hidden = hidden_paths(root=root, submitted=submitted, out=out, db_url=db)
    return {"students": students, "rows": rows, "results": results, "pages": pages,
            "hidden": hidden, "base": base, "submitted": submitted, "out": out,
            "root": root, "folders": folders, "stdout": stdout}


@pytest.fixture(scope="module")
def ps1(tmp_path_factory):
    return _grade_class(tmp_path_factory.mktemp("attacks_ps1"), ASSIGNMENTS["ps1"])


@pytest.fixture(scope="module")
def ps5(tmp_path_factory):
    return _grade_class(tmp_path_factory.mktemp("attacks_ps5"), ASSIGNMENTS["ps5"])


@pytest.fixture()
def graded(request):
    """The class the test names by its ``marker`` parameter (a fixture called "graded" makes the
    test `slow`: tests/conftest.py)."""
    return request.getfixturevalue(request.node.callspec.params["marker"])


def _cases(kind: str) -> list[tuple[str, str]]:
    """(assignment marker, student) for every attack notebook (kind "all") or every attack
    added to a notebook as a student would type it or with names built at run time ("attack":
    each attack once per class, wherever it was added)."""
    cases = []
    for marker, name in ASSIGNMENTS.items():
        on_untouched, on_partial = PLAN[name]
        cases += [(marker, a) for a in on_untouched]
        cases += [(marker, f"partial_{a}") for a in on_partial
                  if kind == "all" or a not in on_untouched]
    return cases


def _points(result: dict) -> dict[str, float]:
    return {t["name"]: t["points"] for t in result["tests"]}


@pytest.mark.parametrize("marker", sorted(ASSIGNMENTS))
def test_every_student_is_graded(graded, marker):
    assert set(graded["rows"]) == set(graded["students"]) | set(graded["folders"])
    for student, row in graded["rows"].items():
        assert row["status"] == ("error" if student == "linked_folder" else "graded"), (
            student, row)
    partial, untouched = (float(graded["rows"][s]["score"]) for s in ("partial", "untouched"))
    assert partial > untouched  # the partly solved twin earns: the comparisons mean something


@pytest.mark.parametrize(("marker", "student"), _cases("all"))
def test_an_attack_earns_no_point_beyond_its_honest_cells(graded, marker, student):
    twin = graded["students"][student][1]
    result, honest = graded["results"][student], graded["results"][twin]
    assert result["score"] <= honest["score"], (student, result["score"], honest["score"])
    # Check by check: the attack cell gives no check a point its twin did not earn, and costs
    # the honest cells nothing (the cell was refused or stopped before it changed anything).
    assert _points(result) == _points(honest), student
    assert result["max_score"] == honest["max_score"]


@pytest.mark.parametrize(("marker", "student"), _cases("attack"))
def test_an_attack_is_refused_naming_the_rule(graded, marker, student):
    page = graded["pages"][student]
    attack = student.removeprefix("partial_")
    rule = ATTACKS[attack][1]
    if attack in STATIC:
        assert "refused by the cell policy: line " in page and rule in page, student
    else:
        assert f"PolicyError: {rule}" in page, student
    for ran in RAN_MARKERS:  # printed only by an attack that ran past the guards
        assert f"{ran} " not in page.replace(f'"{ran}"', ""), (student, ran)


def test_the_submission_folder_reads_nothing_and_stops_nobody(ps1, tmp_path):
    """FOLDER_ATTACKS: graded as their twin, the secret in no output, the FIFO read by nobody,
    the linked folder an error of its own that `feedback` does not hand out."""
    twin = ps1["results"]["untouched"]
    for student in ("stamp_secret", "stamp_fifo"):
        assert _points(ps1["results"][student]) == _points(twin), student
        assert "timestamp.txt unreadable" in ps1["results"][student]["late_note"], student
    assert "is a FIFO (named pipe)" in ps1["results"]["stamp_fifo"]["late_note"]
    assert "timestamp.txt is a symbolic link" in ps1["results"]["stamp_secret"]["late_note"]
    assert ps1["rows"]["linked_folder"]["message"].startswith(
        "ps1_primitives is a symbolic link")
    secret = COURSE_SECRET.encode()
    for path in ps1["out"].rglob("*"):
        if path.is_file():
            assert secret not in path.read_bytes(), path
    assert COURSE_SECRET not in ps1["stdout"]
    dest = tmp_path / "feedback"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    done = subprocess.run(
        [sys.executable, "-m", "autograder", "feedback", ASSIGNMENTS["ps1"], str(ps1["submitted"]),
         str(ps1["out"]), "--root", str(ps1["root"]), "--dest", str(dest)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert not (dest / "linked_folder").exists()
    laid = dest / "untouched" / ASSIGNMENTS["ps1"] / "submission_secret.txt"
    assert laid.read_text() == "secret-of-untouched"
    assert not (dest / "stamp_fifo" / ASSIGNMENTS["ps1"] / "timestamp.txt").exists()
