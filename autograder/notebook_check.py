"""The cell policy in the student's own kernel: an IPython extension, so the notebook and the
grader agree on which cells run.

The grader refuses a student cell that breaks the cell policy (autograder.worker.policy) or calls
what a task bans (autograder.worker.banned), and a refused cell is not run. Without this module a
student would learn that only from the feedback: JupyterLab, the visible tests and ``nbgrader
validate`` run every cell. ``make setup`` loads it into every kernel of the course's environment
(``$VENV/etc/ipython/ipython_kernel_config.py``, from ``scripts/ipython_kernel_config.py``).

It stays idle until the kernel runs a provided cell of an assignment (a read-only cell of the
released notebook: its setup cell, a visible test), so the book's chapters and any other notebook
run as they are. From then on each cell that is not a provided cell of that assignment is
checked, with the grader's own functions, before it runs. A cell the grader would refuse is not
run here either: its error, :class:`CellRefused`, lists each line and rule, as the feedback would.
One exception: a reproducer pasted from the feedback (first line ``# CHECK_ID: ``) may call the
banned functions to show a correct result; the grader skips such a cell at no cost, so the kernel
runs it and says that it will not run when graded.

Only the text of a cell is checked here. The rules the grader can only apply while a cell runs
(``PolicyError``: a module reached through another one, a write to a library's class) are not: no
task needs what they refuse, and applying them would mean running the notebook's own cells under
the grader's guards.

What the check needs of each assignment (the imports it allows, the calls each task bans, the
names each task cell defines, the check ids, the provided cells' hashes) is read from
``notebook_check.json`` beside this file. ``python -m autograder.notebook_check`` (and ``python
-m autograder release``) writes it from the contracts and the released notebooks, and
tests/autograder/test_notebook_check.py fails when it is out of date. The kernel imports no
check, solution or course secret. Grading itself is unchanged: the grader's sandbox makes its own
``InteractiveShell``, which reads no configuration file, so no extension is loaded there.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import sys
import textwrap
from pathlib import Path
from typing import Any

from IPython.core.error import InputRejected

TABLE = Path(__file__).with_name("notebook_check.json")
_HIDDEN = ("### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS")
_GUIDE = ('The guide for students lists what a cell may do ("What a cell may not do"); the task '
          "text names the calls a rule may not use.")


def cell_hash(source: str) -> str:
    """The hash a provided cell is known by: its text without hidden-test regions (plain
    ``nbgrader autograde`` restores them into the test cells), without trailing spaces, without
    blank lines at either end."""
    lines, hidden = [], False
    for line in source.splitlines():
        text = line.strip()
        if text == _HIDDEN[0]:
            hidden = True
        elif text == _HIDDEN[1]:
            hidden = False
        elif not hidden:
            lines.append(line.rstrip())
    return hashlib.sha256("\n".join(lines).strip("\n").encode()).hexdigest()


def defined_names(source: str) -> list[str]:
    """The names a cell binds at its top level (functions, classes, assigned names)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    names = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names += [t.id for t in targets if isinstance(t, ast.Name)]
    return names


# -- the table: written from the contracts, read by the kernel ------------------------------------

def released(root: Path) -> list[Path]:
    """The course's released notebooks, assignments/<name>/<name>.ipynb."""
    return sorted(p for p in (Path(root) / "assignments").glob("*/*.ipynb")
                  if p.stem == p.parent.name)


def table(root: Path) -> dict[str, Any]:
    """Per assignment, what the check needs; from its contract and its released notebooks."""
    import nbformat

    from autograder import inprocess
    from autograder.worker import policy

    out: dict[str, Any] = {}
    for path in released(root):
        name = path.stem
        spec, _ = inprocess.load(name)
        notebook = nbformat.read(path, 4)
        task_of = {t.id.split(".", 1)[-1]: t.id for t in spec.tasks}
        provided, names = set(), {}
        for cell in notebook.cells:
            if cell.cell_type != "code":
                continue
            meta = cell.metadata.get("nbgrader", {})
            if meta.get("solution"):
                task = task_of.get(meta.get("grade_id", ""))
                if task:
                    names.setdefault(task, []).extend(defined_names(cell.source))
            else:
                provided.add(cell_hash(cell.source))
        # The translated notebooks beside it (zh/<name>.ipynb): the same provided code, with
        # comments and messages in their language (autograder/instructor/code_translation.py).
        for other in sorted(path.parent.glob(f"*/{path.name}")):
            provided |= {cell_hash(c.source) for c in nbformat.read(other, 4).cells
                         if c.cell_type == "code"
                         and not c.metadata.get("nbgrader", {}).get("solution")}
        out[name] = {
            "allowed_imports": list(policy.allowed_imports(spec)),
            # In the tasks' order, as the grader's messages list them (the file's keys are sorted).
            "bans": [[t.id, list(t.banned)] for t in spec.tasks if t.banned],
            "task_names": {task: sorted(set(n)) for task, n in sorted(names.items())},
            "checks": sorted(c.id for c in spec.checks),
            "provided": sorted(provided),
        }
    return out


def write(root: Path) -> Path:
    TABLE.write_text(json.dumps(table(root), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return TABLE


# -- the check --------------------------------------------------------------------------------

class CellRefused(InputRejected):
    """A cell the grader would refuse; raised before it runs, so it does not run (IPython shows
    an ``InputRejected`` raised by an AST transformer as the cell's error, and keeps the
    transformer)."""

    def _render_traceback_(self) -> list[str]:  # IPython shows this instead of a traceback
        return [f"CellRefused: {self}"]


def task_of_cell(source: str, entry: dict[str, Any]) -> str | None:
    """The task whose cell this is, by the names its stub defines; None for an added cell."""
    names = set(defined_names(source))
    return next((task for task, stub in entry["task_names"].items() if names & set(stub)), None)


def verdict(source: str, entry: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(refusals, skipped): what the grader would refuse the cell for, and the banned calls a
    pasted reproducer makes, which only mean the grader will not run it."""
    from autograder.worker import banned, policy

    _, refusals = policy.check_source(source, tuple(entry["allowed_imports"]))
    uses = banned.refusals(source, dict(entry["bans"]), task_of_cell(source, entry))
    first = source.lstrip().split("\n", 1)[0]
    heading = re.match(r"# ([\w.]+): ", first)
    if heading and heading.group(1) in entry["checks"]:
        return refusals, uses
    return refusals + uses, []


def refusal_text(refusals: list[str]) -> str:
    return ("this cell was not run: the grader's cell policy refuses it, so it would not run "
            "when your notebook is graded either.\n"
            + "\n".join(f"  {line}" for line in refusals) + f"\n{_GUIDE}")


class NotebookCheck(ast.NodeTransformer):
    """Registered as an AST transformer and on IPython's ``pre_execute`` and ``pre_run_cell``
    events: the events note the cell's text, ``visit`` (called on the parsed cell, before it
    runs) refuses it.

    ``nbgrader validate`` shows only the errors of the test cells, and there a refused rule is
    only missing. So once an assignment is recognised, every error of a later cell ends with a
    note naming the cells refused so far (each until a version of it that passes runs)."""

    def __init__(self, entries: dict[str, Any], shell: Any = None):
        super().__init__()
        self.entries = entries
        self.shell = shell
        self.provided = {h: name for name, e in entries.items() for h in e["provided"]}
        self.assignment: str | None = None
        self.pending: str | None = None
        self.refused: dict[str, str] = {}  # task id, or an added cell's hash -> what to say

    def pre_execute(self) -> None:
        self.pending = None  # a silent execution (a frontend's own) is not a notebook cell

    def pre_run_cell(self, info: Any) -> None:
        source = getattr(info, "raw_cell", None) or ""
        name = self.provided.get(cell_hash(source))
        if name:
            if name != self.assignment:
                self.assignment, self.refused = name, {}
                self._note_errors()
        elif self.assignment:
            self.pending = source

    def visit(self, node: ast.AST) -> ast.AST:
        source, self.pending = self.pending, None
        if source is None or not self.assignment:
            return node
        entry = self.entries[self.assignment]
        try:
            refusals, skipped = verdict(source, entry)
            task = task_of_cell(source, entry)
        except Exception as err:  # noqa: BLE001 (a fault of this check must never stop a notebook)
            print(f"(the notebook's cell check failed, so this cell runs unchecked: {err!r})",
                  file=sys.stderr)
            return node
        key = task or cell_hash(source)
        if refusals:
            where = f"the cell of {task}" if task else "a cell you added"
            self.refused[key] = f"{where} ({refusals[0]})"
            raise CellRefused(refusal_text(refusals))
        self.refused.pop(key, None)
        if skipped:
            print("This cell calls what a task bans, so the grader will not run it (a reproducer "
                  "costs nothing there, but no rule may use what it defines):\n"
                  + "\n".join(f"  {line}" for line in skipped), file=sys.stderr)
        return node

    def note(self) -> str:
        """Said under an error while cells are refused: why what they define may be missing."""
        if not self.refused:
            return ""
        text = ("Note: the cell policy refused these cells, so they did not run and what they "
                "define is missing or stale: " + "; ".join(self.refused.values())
                + ". Each refused cell's own error says why.")
        return "\n".join(textwrap.wrap(text, 78, subsequent_indent="  "))

    def _note_errors(self) -> None:
        """Add :meth:`note` under every error of a cell (IPython's custom exception handler),
        unless something else (the book's error display) already handles them."""
        shell = self.shell
        if shell is None or getattr(shell, "custom_exceptions", ()) or self._handler_set:
            return
        check = self

        def with_note(shell: Any, etype: Any, value: Any, tb: Any, tb_offset: Any = None):
            stb = shell.InteractiveTB.structured_traceback(etype, value, tb, tb_offset=tb_offset)
            if check.note():
                stb = [*stb, check.note()]
            shell._showtraceback(etype, value, stb)
            return stb

        shell.set_custom_exc((Exception,), with_note)
        self._handler_set = True

    _handler_set = False


def load_ipython_extension(ip: Any) -> None:
    try:
        entries = json.loads(TABLE.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        print(f"autograder.notebook_check: no table ({err}); cells are not checked",
              file=sys.stderr)
        return
    check = NotebookCheck(entries, ip)
    ip.events.register("pre_execute", check.pre_execute)
    ip.events.register("pre_run_cell", check.pre_run_cell)
    ip.ast_transformers.append(check)


if __name__ == "__main__":
    print(f"wrote {write(Path(__file__).resolve().parents[1])}")
