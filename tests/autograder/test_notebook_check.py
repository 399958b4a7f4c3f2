"""The cell policy in the student's own kernel (autograder.notebook_check): the notebook refuses
a cell exactly when the grader would, says why in the cell and under every later error (what
``nbgrader validate`` shows), lets a pasted reproducer run, trusts the provided cells, and does
nothing in a notebook that is not an assignment."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from autograder import inprocess
from autograder import notebook_check as nc
from autograder.assignments import contract, course
from autograder.instructor import classroom, release
from autograder.worker import banned, policy

ROOT = Path(__file__).resolve().parents[2]
NAMES = [path.stem for path in nc.released(ROOT)]
ENTRIES = json.loads(nc.TABLE.read_text(encoding="utf-8"))


def test_the_table_is_the_contracts_and_the_released_notebooks():
    assert sorted(ENTRIES) == NAMES == course()
    assert nc.table(ROOT) == ENTRIES, "out of date: run python -m autograder.notebook_check"


@pytest.mark.parametrize("name", NAMES)
def test_every_provided_cell_is_trusted_and_no_task_cell_is(name):
    provided = set(ENTRIES[name]["provided"])
    notebooks = [nbformat.read(release.release_path(name, root=ROOT), 4)]
    zh = release.zh_release_path(name, root=ROOT)
    notebooks += [nbformat.read(zh, 4)] if zh.is_file() else []
    for nb in notebooks:
        for cell in nb.cells:
            if cell.cell_type == "code":
                solution = cell.metadata.get("nbgrader", {}).get("solution", False)
                assert (nc.cell_hash(cell.source) in provided) != solution, cell.source[:80]
    # The source notebook's test cells, with the hidden tests plain `nbgrader autograde` restores.
    tests = [c for c in release.source_notebook(name, root=ROOT).cells
             if c.cell_type == "code" and not c.metadata.get("nbgrader", {}).get("solution")]
    assert any("BEGIN HIDDEN TESTS" in c.source for c in tests)
    assert all(nc.cell_hash(c.source) in provided for c in tests)


def test_no_chapter_of_the_book_wakes_the_check():
    """The book's kernels load the extension too; no chapter cell is an assignment's provided
    cell, so none of them is ever checked."""
    import jupytext

    provided = {h for entry in ENTRIES.values() for h in entry["provided"]}
    pages = sorted((ROOT / "book").rglob("*.md"))
    assert len(pages) > 20
    for page in pages:
        cells = jupytext.read(page, fmt="md:myst").cells
        assert not [c for c in cells if c.cell_type == "code"
                    and nc.cell_hash(c.source) in provided], page


@pytest.mark.parametrize("name", NAMES)
def test_the_kernel_refuses_a_cell_exactly_when_and_why_the_grader_does(name):
    """Every cell of the reference, of each correct alternative and of each wrong solution, and a
    few a student might write: the kernel's refusals are the grader's, word for word (the same
    task named), and a correct solution's cells are never refused."""
    spec, _ = inprocess.load(name)
    a = contract(name)
    entry = ENTRIES[name]
    bans = {t.id: t.banned for t in spec.tasks if t.banned}
    task_of = {t.id.split(".", 1)[-1]: t.id for t in spec.tasks}
    correct = [*classroom.solution_sources(name, root=ROOT).items(),
               *(cell for alt in a.alternatives.values() for cell in alt.cells.items())]
    wrong = [cell for w in a.wrong_solutions.values() for cell in w.cells.items()]
    first = next(iter(task_of))
    own = [(first, "import scipy\n"), ("added", "def f(x):\n    return type(x).__name__\n"),
           ("added", "%timeit 1 + 1\n"), ("added", "from jaxcourse import multiply_add\n")]
    own += [("added", f"g = {name}\n") for names in bans.values() for name in names[:1]]
    refused = 0
    for kind, cells in (("correct", correct), ("wrong", wrong), ("own", own)):
        for grade_id, source in cells:
            task = task_of.get(grade_id)
            grader = (policy.check_source(source, policy.allowed_imports(spec))[1]
                      + (banned.refusals(source, bans, task) if bans else []))
            kernel, skipped = nc.verdict(source, entry)
            assert kernel == grader, (kind, grade_id, source[:200])
            assert skipped == []
            assert not (kind == "correct" and kernel), (grade_id, kernel)
            refused += bool(kernel)
    assert refused >= len(own)


def test_a_pasted_reproducer_may_call_what_the_tasks_ban_and_nothing_else():
    from autograder.assignments.ps1_primitives import reproduce

    entry = ENTRIES["ps1_primitives"]
    code = reproduce.reproducer("ps1.jvp.both")
    refusals, skipped = nc.verdict(code, entry)
    assert refusals == [] and skipped and all("jax.jvp may not be called" in s for s in skipped)
    # The exemption is the heading naming a check: without it, or naming none, it is refused.
    body = code.split("\n", 1)[1]
    assert nc.verdict("# a plain comment\n" + body, entry) == (skipped, [])
    assert nc.verdict("# ps1.no_such_check: x\n" + body, entry) == (skipped, [])
    # A heading does not excuse the cell policy.
    assert nc.verdict(code + "\nimport os\n", entry)[0]


def test_the_task_of_a_cell_is_the_one_whose_stub_names_it_defines():
    entry = ENTRIES["ps1_primitives"]
    assert nc.task_of_cell("def weighted_sum_value_and_jvp(p, t, *, axis):\n  pass\n",
                           entry) == "ps1.jvp"
    assert nc.task_of_cell("def helper(x):\n  pass\n", entry) is None
    assert nc.task_of_cell("def (:\n", entry) is None


def test_the_hash_ignores_hidden_tests_trailing_spaces_and_blank_ends():
    plain = "x = 1\nassert x == 1"
    assert nc.cell_hash(f"\n{plain}  \n\n") == nc.cell_hash(plain)
    hidden = f"{plain}\n### BEGIN HIDDEN TESTS\ncheck_cell('a', 'b', globals())\n" \
             "### END HIDDEN TESTS\n"
    assert nc.cell_hash(hidden) == nc.cell_hash(plain)
    assert nc.cell_hash(plain + "\nx = 2") != nc.cell_hash(plain)


def _outputs(cell) -> tuple[str, str, str]:
    """(error name, error traceback, stderr) of an executed cell."""
    errors = [o for o in cell.outputs if o.output_type == "error"]
    stderr = "".join(o.text for o in cell.outputs
                     if o.output_type == "stream" and o.name == "stderr")
    if not errors:
        return "", "", stderr
    return errors[0].ename, "\n".join(errors[0].traceback), stderr


def _run(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    client = NotebookClient(nb, timeout=300, allow_errors=True, kernel_name="python3",
                            resources={"metadata": {"path": str(ROOT)}})
    client.execute()
    return nb


@pytest.mark.slow
def test_in_a_kernel_a_refused_cell_does_not_run_and_later_errors_say_why(tmp_path):
    """The course's kernel (make setup installs the extension; the test needs that set-up) runs
    ps1 with its impl cell importing scipy, as JupyterLab or nbgrader would."""
    config = Path(sys.prefix) / "etc" / "ipython" / "ipython_kernel_config.py"
    assert config.is_file(), "run `make setup`: it installs the kernels' configuration"
    name = "ps1_primitives"
    reference = classroom.solution_sources(name, root=ROOT)
    nb = classroom.make_submission(name, {**reference, "impl": "import scipy\n" + reference["impl"]},
                                   root=ROOT)
    from autograder.assignments.ps1_primitives import reproduce

    added = {"fixed": reference["impl"], "dunder": "def f(x):\n    return type(x).__name__\n",
             "reproducer": reproduce.reproducer("ps1.jvp.both")}
    test_impl = next(c for c in nb.cells
                     if c.metadata.get("nbgrader", {}).get("grade_id") == "test_impl")
    nb.cells += [nbformat.v4.new_code_cell(added["fixed"]),
                 nbformat.v4.new_code_cell(test_impl.source),
                 nbformat.v4.new_code_cell(added["dunder"]),
                 nbformat.v4.new_code_cell(added["reproducer"])]
    _run(nb)
    by_id = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in nb.cells}
    ename, tb, _ = _outputs(by_id["impl"])
    assert ename == "CellRefused" and "line 1: import of 'scipy' is not allowed" in tb
    ename, tb, _ = _outputs(by_id["test_impl"])  # the rule is missing, and the error says why
    assert ename == "NotImplementedError"
    assert "Note: the cell policy refused" in tb and "the cell of ps1.impl" in tb
    for cell in nb.cells:  # every other rule of the reference runs, as when graded
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution") and meta["grade_id"] != "impl":
            assert _outputs(cell)[0] == "", meta["grade_id"]
    fixed, retest, dunder, pasted = (_outputs(c) for c in nb.cells[-4:])
    assert fixed[0] == "" and retest[0] == ""  # the fixed cell runs, and the test passes
    assert dunder[0] == "CellRefused" and "attribute '__name__' is not allowed" in dunder[1]
    assert "Note:" not in dunder[1]  # the impl cell's refusal was lifted when its fix ran
    assert pasted[0] == "" and "the grader will not run it" in pasted[2]

    # nbgrader validate, the students' command, shows the note under the failed test.
    path = tmp_path / f"{name}.ipynb"
    nbformat.write(classroom.make_submission(
        name, {**reference, "impl": "import scipy\n" + reference["impl"]}, root=ROOT), path)
    shown = subprocess.run([str(Path(sys.executable).with_name("nbgrader")), "validate",
                            path.name], check=False, cwd=tmp_path, capture_output=True,
                           text=True, timeout=300)
    assert "VALIDATION FAILED" in shown.stdout
    assert "Note: the cell policy refused" in shown.stdout and "ps1.impl" in shown.stdout

    # In a notebook that is no assignment (a chapter, a scratch notebook) nothing is checked.
    other = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(added["dunder"] + "f(1)")])
    assert _outputs(_run(other).cells[0])[0] == ""
