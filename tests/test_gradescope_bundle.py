"""The Gradescope bundle: what it carries (checked file by file) and which notebook it grades
(``stage_submission``). The bundle run end to end, as Gradescope runs it with a checkpoint folder
beside the notebook, is tests/test_exports.py's."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from autograder.instructor.gradescope import bundle_files, stage_submission
from autograder.instructor.release import names

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENTS = names(root=ROOT)
# What run_autograder runs: the command line (grade, export), stage_submission, and the modules
# the grader imports by name (the fork server's sandbox, the assignment's checks and probes; the
# feedback stage's reproducers).
GRADING = ("autograder.__main__", "autograder.instructor.gradescope", "autograder.student.sandbox")
# The one import of a carried module that the bundle may lack: `demo`, a command it never runs.
NOT_CARRIED = {("autograder.cli", "autograder.instructor.demo")}


def _module(name: str) -> str:
    parts = list(Path(name).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(path: Path, known: set[str]) -> set[str]:
    """The modules of ``known`` that ``path`` imports anywhere in its text (in functions too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
    return found & known


KNOWN = {_module(p.relative_to(ROOT).as_posix()): p
         for top in ("autograder", "jaxcourse") for p in (ROOT / top).rglob("*.py")}
IMPORTS = {name: _imported(path, set(KNOWN)) for name, path in KNOWN.items()}


def _needed(assignment: str) -> set[str]:
    """Every module of the repository that grading ``assignment`` imports, transitively."""
    todo = [*GRADING, *(f"autograder.assignments.{assignment}.{m}"
                        for m in ("checks", "probes", "reproduce"))]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        parent = name.rpartition(".")[0]
        todo += [parent] if parent else []
        todo += [m for m in IMPORTS[name] if (name, m) not in NOT_CARRIED]
    return seen


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_the_bundle_carries_what_grading_one_assignment_needs_and_no_solution(assignment):
    carried = {name for _, name in bundle_files(assignment, ROOT)}
    modules = {_module(n) for n in carried if n.endswith(".py")}
    needed = _needed(assignment)
    # Everything grading imports is there (the engine, this assignment's grading modules, the
    # course package's modules they use), and so are the release notebook and the pins.
    assert needed <= modules, sorted(needed - modules)
    # setup.sh reads the pins of both toolchains and pyproject.toml (tests/test_gradescope_setup.py).
    assert {f"assignments/{assignment}/{assignment}.ipynb", "requirements.txt",
            "constraints.txt", "constraints-py312.txt", "pyproject.toml"} <= carried
    # Of the assignments' folders, exactly what grading this one imports: no wrong solution
    # (mutants.py), no correct alternative (ps2's alternatives.py, ps1's CORRECT in mutants.py),
    # no contract value built from them (assignment.py), no other assignment.
    own = f"autograder.assignments.{assignment}"
    assert {m for m in modules if m.startswith("autograder.assignments.")} == {
        m for m in needed if m.startswith("autograder.assignments.")}
    assert {m for m in modules if m.startswith(own + ".")} < {
        _module(p.relative_to(ROOT).as_posix())
        for p in (ROOT / "autograder" / "assignments" / assignment).glob("*.py")}
    for name in carried:
        assert not name.startswith(("solutions/", "tests/", "book/", ".git")), name
        assert Path(name).name not in ("mutants.py", "alternatives.py", "assignment.py",
                                       "classroom.py", "demo.py", "edits.py"), name
        assert not name.startswith("assignments/") or name.startswith(
            f"assignments/{assignment}/"), name
        for other in set(ASSIGNMENTS) - {assignment}:
            assert other not in name, name
    # Every module the bundle carries finds what it imports in the bundle (but `demo`).
    for module in modules:
        missing = {m for m in IMPORTS[module]
                   if m not in modules and (module, m) not in NOT_CARRIED}
        assert not missing, (module, sorted(missing))


def _notebook(path: Path, marker: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"cells": [], "metadata": {"marker": marker}}))
    return path


def _staged(tmp_path: Path, files: dict[str, str]) -> dict[str, str]:
    upload, folder = tmp_path / "submission", tmp_path / "staged"
    for name, marker in files.items():
        _notebook(upload / name, marker)
    stage_submission(upload, folder, "ps1_primitives.ipynb")
    return {p.name: json.loads(p.read_text())["metadata"]["marker"] for p in folder.iterdir()}


@pytest.mark.parametrize(("files", "staged"), [
    # JupyterLab's checkpoint sorts first and used to win (a 52/52 notebook graded 0/52).
    ({".ipynb_checkpoints/ps1_primitives-checkpoint.ipynb": "old",
      "ps1_primitives.ipynb": "real"}, {"ps1_primitives.ipynb": "real"}),
    ({".ipynb_checkpoints/ps1_primitives-checkpoint.ipynb": "old"}, {}),
    ({"my_work.ipynb": "renamed"}, {"my_work.ipynb": "renamed"}),
    ({"upload/ps1_primitives.ipynb": "zipped", "__MACOSX/ps1_primitives.ipynb": "junk"},
     {"ps1_primitives.ipynb": "zipped"}),
    ({"ps1_primitives.ipynb": "top", "old/ps1_primitives.ipynb": "nested",
      "scratch.ipynb": "other"}, {"ps1_primitives.ipynb": "top"}),
    # Several and none named right: the local rule makes that an `error` with its message.
    ({"a.ipynb": "a", "b.ipynb": "b"}, {"a.ipynb": "a", "b.ipynb": "b"}),
])
def test_the_notebook_is_chosen_as_the_local_grader_chooses(tmp_path, files, staged):
    assert _staged(tmp_path, files) == staged


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_bundle_puts_each_failed_checks_reproducer_in_results_json(tmp_path):
    """The bundle run as Gradescope runs it (unzipped into /autograder/source, run_autograder
    with the submission beside a JupyterLab checkpoint of the untouched notebook): every failed
    check's output is Markdown holding its "Try it yourself" snippet, the one the feedback page
    shows; a passed check's output has none."""
    import nbformat
    from gradescope_run import run_autograder

    from autograder.grade import reproduce
    from autograder.instructor.classroom import make_submission, mutant_submission
    from autograder.instructor.gradescope import build_bundle, unpack

    name, mutant = "ps1_primitives", "jvp_drops_w_term"  # loses points on ps1.jvp only
    autograder = tmp_path / "autograder"
    unpack(build_bundle(assignment=name, root=ROOT, dest=tmp_path / "bundle.zip"),
           autograder / "source")
    submission = autograder / "submission"
    (submission / ".ipynb_checkpoints").mkdir(parents=True)
    nbformat.write(mutant_submission(name, mutant, root=ROOT), submission / f"{name}.ipynb")
    nbformat.write(make_submission(name, {}, root=ROOT),
                   submission / ".ipynb_checkpoints" / f"{name}-checkpoint.ipynb")
    data = run_autograder(autograder, "s1", timeout=850)

    failed = [t for t in data["tests"] if t["status"] == "failed"]
    assert failed and all(t["name"].startswith("ps1.jvp.") for t in failed), data["output"]
    for test in data["tests"]:
        check_id = test["name"].split(": ", 1)[0]
        if test["status"] == "passed":
            assert test["output"] == "passed" and "output_format" not in test
            continue
        snippet = reproduce.reproducer(name, check_id)
        assert snippet, check_id
        assert test["output_format"] == "md"
        message, _, rest = test["output"].partition("\n\n**Try it yourself**")
        assert message and "Try it yourself" not in message
        assert f"```python\n{snippet.rstrip()}\n```\n" in rest, check_id
