"""Fixtures shared by test folders, and the markers each test gets from where it is.

The demo classes, graded once per session by the real command, serve every test that reads them
(the end-to-end test, the exports, the reproducers, the Dask cluster test, the browser's feedback
pages): ``demo_out``.

The toy assignment of tests/fixtures/toycontract is added to autograder.assignments.REGISTRY here,
before any test module is collected: every contract test runs on it (tests/contract), and it is
marked as any assignment is, with nothing but the registry to say so.

Markers (``--strict-markers`` is on), applied at collection: the tiers below are registered in
pyproject.toml, the assignments' and tasks' by ``pytest_configure`` from the registry, so an
assignment added to the registry is marked with nothing else to edit:

- ``ps1`` ... ``ps5`` (``toy``): a test about that assignment: its file is named after it, or its
  name or parameters name it (``ps1_primitives``, a check id ``ps1.jvp.grad``). The marker is
  the prefix of the assignment's task ids.
- one marker per task, its id without the assignment (``jvp``, ``abstract_eval``, ``dce``), on a
  test of that assignment whose name or parameters name the task (``ps1.jvp``, or ``jvp`` as a
  word: ``jvp_drops_w_term``) or a wrong solution or alternative of it (the assignment's
  ``mutants`` module): ``-m "ps1 and jvp"``.
- ``slow``: what ``make test-fast`` leaves out: tests that use a fixture grading a class
  (``SLOW_FIXTURES``), tests whose own code runs the grader (``GRADES``, ``SLOW_MODULES``,
  ``SLOW_TESTS``), tests whose module runs notebooks in Jupyter kernels, and everything marked
  ``book`` or ``browser``.
  Chosen by measuring (README, "Tests").
- ``book``: reads the built book (``make book``): tests/book/test_executed_chapters.py and every
  test function whose name has the word ``built``.
- ``browser``: drives headless Chromium over the built site (tests/browser/).
- ``stability`` (set by the test): the costly runs, grading under many secrets and ids (and
  the Gradescope set-up's second, current-toolchain install); skipped unless pytest gets
  ``--stability`` (``make test-stability``).
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib
import inspect
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path

import pytest

from autograder.assignments import REGISTRY, contract

ROOT = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent
FIXTURES = TESTS / "fixtures"
if str(FIXTURES) not in sys.path:
    sys.path.insert(0, str(FIXTURES))

from toycontract import TOY  # the fixtures folder is on the path only from here

REGISTRY.setdefault(TOY, "toycontract.toy_double.assignment")
# ps5's kernels: each distinct source is compiled once per session, in this process and in the
# subprocesses the tests start (the grader's sandbox clears its environment and compiles anew).
os.environ.setdefault("JAXCOURSE_KERNEL_CACHE", tempfile.mkdtemp(prefix="jaxcourse-kernels-"))

# `python -m autograder demo` grades the five demo classes (35 notebooks, ps5's compiling C++):
# 4 to 10 minutes on a 2-core machine. Past this limit the fixture fails, saying so; every test
# that uses it is given this much time on top of its own limit (pytest-timeout counts fixtures).
DEMO_LIMIT_S = 1800

# Fixtures that grade a class (by the real command, or many notebooks in process), by name, in
# whatever module: a test that uses one, directly or through another fixture, is `slow`. Each
# costs from half a minute (the toy course) to ten (the demo classes) on a 2-core machine.
SLOW_FIXTURES = ("demo_out", "graded", "failed_checks", "mutants_graded", "mutants", "failed",
                 "grading", "runs", "visible")
# Fixtures that grade a class under a limit of their own (seconds), by name or as
# "<the file that defines it>::<name>": a test that uses one is given that limit on top of its
# own, since pytest-timeout counts the time a test waits for its fixtures; the fixture's own limit
# then stops it first, saying what it was doing.
FIXTURE_LIMITS: dict[str, int] = {
    "demo_out": DEMO_LIMIT_S,
    "tests/autograder/test_time_limits.py::graded": 900,  # grade_command(timeout=900)
}
# Test modules (under tests/) whose every test is costly, with why.
SLOW_MODULES: dict[str, str] = {}
# A test whose own code runs the grader on a class: the real command, the pool or the demo (each
# starts fork servers that import JAX: 20 s to a minute a run on a 2-core machine).
GRADES = re.compile(r"\b(grade_command|grading\.grade|_grade|demo)\(")
# Single tests that grade on their own otherwise ("<module>::<test name>").
SLOW_TESTS: dict[str, str] = {
    "assignments/test_ps3_pitfalls.py::test_a_demo_mutant_graded_whole_matches_the_shortcut":
        "grades a wrong ps3 notebook twice in process (minutes on a busy machine)",
    "autograder/test_release_gradebook.py::test_a_release_that_would_orphan_graded_submissions_says_why":
        "releases through nbgrader four times, the command once (20 s of CPU)",
}
# Under pytest-xdist (`make test`: two workers, `--dist loadfile --no-loadscope-reorder`), the
# modules are handed out in collection order, one whole module at a time: these, the costliest
# (seconds of the whole run on a 2-core machine, README "Tests"), go first, so that neither worker
# is left with a long module at the end while the other has nothing to do. The first two grade
# the session's demo classes and ps1's notebooks, which later modules then find done.
COSTLIEST_FIRST = (
    "autograder/test_grades_under_load.py", "assignments/test_ps1_primitives_reproducers.py",
    "assignments/test_ps3_pitfalls_reproducers.py",
    "assignments/test_ps5_kernels_reproducers.py", "autograder/test_attack_notebooks.py",
    "assignments/test_ps5_sandbox.py", "assignments/test_ps2_autodidax_reproducers.py",
    "test_dask_cluster.py", "test_demo_reproducers.py", "test_gradescope_setup.py",
    "browser/test_site.py", "assignments/test_ps4_core_reproducers.py", "browser/test_zh_site.py",
)
# Read the built book: the whole module.
BOOK_MODULES = ("book/test_executed_chapters.py",)


def _shared_folder(tmp_path_factory) -> Path | None:
    """Under pytest-xdist (``make test`` runs two workers), the run's temporary folder that every
    worker shares (each has its own below it); None in a plain pytest process."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return None
    return tmp_path_factory.getbasetemp().parent


@contextlib.contextmanager
def _first_worker_does(folder: Path, key: str):
    """Held while one worker does the session's ``key`` work in ``folder``: the other workers wait
    on the lock (fcntl) and then find it done. Yields whether it is still to do."""
    with open(folder / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        failed = folder / f"{key}.failed"
        if failed.exists():  # the first worker's failure, not a second half-hour of grading
            pytest.fail(failed.read_text(), pytrace=False)
        done = folder / f"{key}.done"
        if done.exists():
            yield False
            return
        try:
            yield True
        except BaseException as err:
            failed.write_text(f"(in another worker) {err}")
            raise
        done.touch()


def _grade_demo(out: Path) -> Path:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    # A session of its own, so that a run past its limit is stopped with everything it started.
    run = subprocess.Popen([sys.executable, "-m", "autograder", "demo", "--out", str(out)],
                           cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, start_new_session=True)
    try:
        stdout, stderr = run.communicate(timeout=DEMO_LIMIT_S)
    except subprocess.TimeoutExpired:
        os.killpg(run.pid, signal.SIGKILL)
        stdout, _ = run.communicate()
        pytest.fail(f"`python -m autograder demo` did not grade the demo classes within "
                    f"DEMO_LIMIT_S = {DEMO_LIMIT_S} s (tests/conftest.py); its output so far:\n"
                    f"{stdout[-3000:]}", pytrace=False)
    assert run.returncode == 0, stdout[-3000:] + stderr[-3000:]
    return out


@pytest.fixture(scope="session")
def demo_out(tmp_path_factory) -> Path:
    """`python -m autograder demo --out OUT`: every assignment's demo class, graded locally, once
    per test run (under pytest-xdist, by the first worker that asks). Read only."""
    shared = _shared_folder(tmp_path_factory)
    if shared is None:
        return _grade_demo(tmp_path_factory.mktemp("demo"))
    with _first_worker_does(shared, "demo") as to_do:
        if to_do:
            _grade_demo(shared / "demo")
    return shared / "demo"


# --- every notebook an assignment's contract names, graded once per session, in process ---------

def contract_variants(name: str) -> list[str]:
    """What ``graded(name)`` grades: the reference, the untouched notebook, the demo class's
    partial student, every wrong solution and every correct alternative the contract names."""
    a = contract(name)
    return (["reference", "untouched", "demo:partial"]
            + [f"wrong:{w}" for w in sorted(a.wrong_solutions)]
            + [f"alt:{alt}" for alt in sorted(a.alternatives)])


@pytest.fixture(scope="session")
def graded(tmp_path_factory):
    """``graded(name)``: variant -> report (tests/contract/grade_variants.py), each assignment
    graded once, when a test first asks. The contract tests judge these reports; the reproducer
    tests take from them the checks each wrong notebook fails, instead of grading it again."""
    sys.path.insert(0, str(TESTS / "contract"))
    from grade_variants import in_subprocesses

    cache: dict[str, dict[str, dict]] = {}
    shared = _shared_folder(tmp_path_factory)
    # One compilation cache for every assignment's grading in this run (grade_variants says why
    # it is safe here and how much it saves).
    compiled = (shared or tmp_path_factory.getbasetemp()) / "jax-compile-cache"

    def grade(name: str) -> dict[str, dict]:
        return in_subprocesses(REGISTRY[name], contract_variants(name), compile_cache=compiled)

    def get(name: str) -> dict[str, dict]:
        if name in cache:
            return cache[name]
        if shared is None:
            cache[name] = grade(name)
            return cache[name]
        # Under pytest-xdist: graded once per run, by the first worker that asks.
        saved = shared / f"graded-{name}.json"
        with _first_worker_does(shared, f"graded-{name}") as to_do:
            if to_do:
                saved.write_text(json.dumps(grade(name)))
        cache[name] = json.loads(saved.read_text())
        return cache[name]

    return get


def demo_variant(student: str) -> str:
    """The ``graded`` variant of a demo class student or a wrong solution's name: ``untouched``,
    ``demo:partial``, ``wrong:NAME`` (``wrong_NAME`` or ``NAME``)."""
    if student in ("untouched", "reference"):
        return student
    if student == "partial":
        return "demo:partial"
    return f"wrong:{student.removeprefix('wrong_')}"


@pytest.fixture(scope="session")
def failed_checks(graded):
    """``failed_checks(name, student)``: the ids of the checks that notebook fails (``graded``)."""
    def get(name: str, student: str) -> list[str]:
        report = graded(name)[demo_variant(student)]
        return [c["id"] for c in report["checks"] if not c["passed"]]

    return get


# --- markers ---------------------------------------------------------------------------------

def _word(word: str) -> re.Pattern:
    """``word`` standing alone in a test id: between non-alphanumerics (``_`` included)."""
    return re.compile(rf"(?<![a-z0-9]){re.escape(word)}(?![a-z0-9])")


@cache
def assignments() -> dict[str, str]:
    """Marker -> assignment, for every assignment of the registry (autograder.assignments.REGISTRY,
    the toy included): ``{"ps1": "ps1_primitives", ...}``, the name up to its first ``_`` (the
    prefix of its task ids, tests/test_markers.py checks)."""
    return {name.split("_", 1)[0]: name for name in sorted(REGISTRY)}


@cache
def tasks(marker: str) -> tuple[str, ...]:
    """The task markers of an assignment: its task ids without the prefix (``ps1.jvp`` ->
    ``jvp``)."""
    return tuple(t.id.split(".", 1)[1] for t in contract(assignments()[marker]).tasks)


@cache
def named_solutions(marker: str) -> dict[str, str]:
    """Wrong solutions and alternatives of an assignment that touch one task -> that task's
    marker: ``TASK`` of its mutants module, and every ``name -> (description, cells)`` table
    there whose cells are one task's."""
    own = tasks(marker)
    a = contract(assignments()[marker])
    try:
        module = importlib.import_module(f"{a.package}.{a.name}.mutants")
    except ModuleNotFoundError:
        return {}
    found: dict[str, str] = {}
    for value in vars(module).values():
        if not isinstance(value, dict):
            continue
        for name, entry in value.items():
            if not isinstance(name, str):
                continue
            if isinstance(entry, str) and entry.split(".", 1)[-1] in own and "." in entry:
                found.setdefault(name, entry.split(".", 1)[1])
            elif isinstance(entry, tuple):
                cells = next((e for e in entry if isinstance(e, dict)), None)
                ids = [e.split(".", 1)[1] for e in entry
                       if isinstance(e, str) and e.startswith(f"{marker}.")
                       and e.split(".", 1)[1] in own]
                if ids:
                    found.setdefault(name, ids[0])
                elif cells and len(cells) == 1 and next(iter(cells)) in own:
                    found.setdefault(name, next(iter(cells)))
    return found


def markers_of(nodeid: str) -> set[str]:
    """The assignment and task markers of a test, from its node id alone."""
    text = nodeid.lower()
    rest = text.partition("::")[2]
    name, _, params = rest.partition("[")
    found = set()
    for marker in assignments():
        if not _word(marker).search(text):
            continue
        found.add(marker)
        own, solutions = tasks(marker), named_solutions(marker)
        words = [name]
        for param in re.findall(r"[^\[\]\-,]+", params):
            if param == assignments()[marker]:  # its name (toy_double) says no task
                continue
            known = [solutions[n] for n in (param, param.removeprefix("wrong_"),
                                            param.removeprefix("alt:")) if n in solutions]
            if known:  # a wrong solution or alternative: its own task, whatever its name says
                found.add(known[0])
            else:
                words.append(param)
        for task in own:
            if any(_word(task).search(w) for w in words) or re.search(
                    rf"(?<![a-z0-9]){marker}\.{task}(?![a-z0-9_])", text):
                found.add(task)
    return found


def _grades(item) -> bool:
    function = getattr(item, "function", None)
    try:
        return bool(function and GRADES.search(inspect.getsource(function)))
    except (OSError, TypeError):
        return False


def _runs_kernels(item) -> bool:
    """Whether the test's module runs notebooks in Jupyter kernels (tests/reproducer_kernel.py):
    a kernel per notebook, tens of seconds each."""
    module = getattr(item, "module", None)
    return any(getattr(v, "__module__", None) == "reproducer_kernel"
               for v in vars(module).values()) if module else False


def _fixture_limit(item, name: str) -> int:
    defs = getattr(item, "_fixtureinfo", None) and item._fixtureinfo.name2fixturedefs.get(name)
    where = f"{defs[-1].baseid}::{name}" if defs else name
    return FIXTURE_LIMITS.get(where, FIXTURE_LIMITS.get(name, 0))


def _limit(item) -> float:
    marker = item.get_closest_marker("timeout")
    if marker is not None and marker.args:
        return float(marker.args[0])
    return float(item.config.getini("timeout") or 0)


def pytest_addoption(parser):
    parser.addoption("--stability", action="store_true",
                     help="run the tests marked `stability` (hours of CPU: make test-stability)")


def pytest_configure(config):
    """The assignments' markers, from the registry (pyproject.toml lists only the tiers). Their
    tasks' markers are registered as the first test is given one (``_register_tasks``): reading
    an assignment's tasks imports its checks (JAX, seconds), which a run that marks no test of
    it need not do."""
    for marker, name in assignments().items():
        config.addinivalue_line("markers", f"{marker}: assignment {name} (from the registry)")


def _register_tasks(config, marker: str) -> None:
    """Registers the task markers of the assignment ``marker`` (once; --strict-markers reads the
    registered lines again whenever it meets a name it has not seen)."""
    if marker in _TASKS_REGISTERED:
        return
    _TASKS_REGISTERED.add(marker)
    for task in tasks(marker):
        config.addinivalue_line("markers", f"{task}: task {marker}.{task} (from the registry)")


_TASKS_REGISTERED: set[str] = set()


def pytest_collection_modifyitems(config, items):
    skip_costly = pytest.mark.skip(reason="costly (hours of CPU, or a second whole install): run "
                                          "with --stability, `make test-stability`")
    for item in items:
        if item.get_closest_marker("stability") and not config.getoption("stability"):
            item.add_marker(skip_costly)
        where = Path(str(item.path)).resolve()
        module = where.relative_to(TESTS).as_posix() if where.is_relative_to(TESTS) else ""
        names = {m.name for m in item.iter_markers()}
        add = markers_of(item.nodeid)
        if module.startswith("browser/"):
            add |= {"browser", "book"}
        if module in BOOK_MODULES or _word("built").search(item.originalname.lower()):
            add.add("book")
        costly = [f for f in item.fixturenames if f in SLOW_FIXTURES]
        if (costly or module in SLOW_MODULES or f"{module}::{item.originalname}" in SLOW_TESTS
                or _grades(item) or _runs_kernels(item) or add & {"book", "browser"}
                or "book" in names):
            add.add("slow")
        for marker in add & set(assignments()):
            _register_tasks(config, marker)
        for name in sorted(add - names):
            # getattr on pytest.mark: with --strict-markers an unregistered name is an error.
            item.add_marker(getattr(pytest.mark, name))
        waits = sum(_fixture_limit(item, f) for f in item.fixturenames)
        if waits and _limit(item):  # a limit of 0: none at all
            item.add_marker(pytest.mark.timeout(_limit(item) + waits), append=False)
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items.sort(key=lambda item: _cost_rank(item.path))


def _cost_rank(path) -> int:
    where = Path(str(path)).resolve()
    module = where.relative_to(TESTS).as_posix() if where.is_relative_to(TESTS) else ""
    return COSTLIEST_FIRST.index(module) if module in COSTLIEST_FIRST else len(COSTLIEST_FIRST)
