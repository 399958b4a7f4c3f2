import json

import hostile
import pytest
from engine_helpers import TOY_ROOT

from autograder.worker.normalise import NotebookError, normalise, read_release

RELEASE = read_release(TOY_ROOT / "assignments" / "toy" / "toy.ipynb")


def norm(nb):
    return normalise(json.dumps(nb).encode(), RELEASE)


@pytest.mark.parametrize("data", [b"", b"{", b"\xff\xfe", b"[]", b'{"cells": 3}'])
def test_unreadable_files_are_errors(data):
    with pytest.raises(NotebookError) as err:
        normalise(data, RELEASE)
    # An empty file (never saved) is said as such, not as JSON that fails to parse.
    assert ("empty" in str(err.value)) == (data == b"")


def test_test_cells_never_run_and_provided_cells_restored():
    nb = hostile.submission(hostile.FULL)
    for cell in nb["cells"]:
        grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id")
        if grade_id == "provided":
            cell["source"] = ["square = lambda x: x * x\n"]
    result = norm(nb)
    run = result.code_to_run
    assert run[0].startswith("import jax") and "square_p = Primitive" in run[0]
    assert not any("assert" in src for src in run)  # visible tests are not executed
    assert [c.role for c in result.cells if c.run] == ["provided", "solution", "solution",
                                                        "solution"]
    assert "1 edited provided or test cell(s) were restored from the release (provided)" in \
        result.notes  # the cell is named


def test_deleted_cells_put_back_and_added_cells_kept_in_place():
    nb = hostile.submission(hostile.FULL, extra={"impl": ["helper = 1\n"]})
    nb["cells"] = [c for c in nb["cells"]
                   if c["metadata"].get("nbgrader", {}).get("grade_id") != "provided"]
    result = norm(nb)
    ids = [c.grade_id or c.source.strip() for c in result.cells if c.cell_type == "code"]
    assert ids[:4] == ["provided", "impl", "helper = 1", "test_impl"]
    assert "1 deleted provided or test cell(s) were put back (provided)" in result.notes


def test_outputs_and_ids_do_not_matter():
    plain = norm(hostile.submission(hostile.FULL))
    messy = hostile.submission(hostile.FULL)
    for cell in messy["cells"]:
        cell["id"] = "dup"
        cell.pop("metadata", None) if cell["cell_type"] == "markdown" else None
        if cell["cell_type"] == "code":
            cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "ok"}]
    assert norm(messy).code_to_run == plain.code_to_run


def test_duplicated_solution_cell_runs_both_copies_in_order():
    nb = hostile.submission(hostile.FULL)
    impl = next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id")
                == "impl")
    nb["cells"].append(dict(impl, source=["late = 2\n"]))
    run = norm(nb).code_to_run
    assert run[-1] == "late = 2\n" and len(run) == 5


def test_huge_cells_are_not_run():
    nb = hostile.submission({"impl": "x = 1\n" * 50_000})
    result = norm(nb)
    impl = next(c for c in result.cells if c.grade_id == "impl")
    assert not impl.run and "too large" in impl.note
