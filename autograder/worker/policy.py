"""Second stage: the cell policy, decided in the grader before any student cell runs.

Every student cell (the notebook's solution cells and any code cell the student added; the
provided cells restored by autograder.worker.normalise stay trusted) is parsed and walked by
:class:`CellPolicy`, a RestrictedPython ``RestrictingNodeTransformer``. A cell that breaks a rule
is refused: it is not run, so the tasks it defines earn nothing, and the feedback names the line
and the rule. An approved cell is rewritten so that what cannot be decided from the text is
decided when it runs, by the guards in autograder.student.cellguard (attribute reads, subscripts,
writes, imports); the sandbox runs the rewritten code, the feedback shows what the student wrote.

The rules (``Assignment.extra["allowed_imports"]`` adds modules for one assignment); what is not
named as allowed is refused:

- imports: the modules of the allowlist (autograder/student/allowlist.txt) under jax, numpy,
  math, functools, itertools, operator, collections, dataclasses, typing and the assignment's
  extras; nothing else, no relative or ``*`` imports; ``from M import x`` only for an ``x`` the
  list allows in ``M`` (at run time, every attribute of a module goes through the same list);
- no attribute whose name starts with ``_`` (dunders included) but ``object.__new__`` (for the
  notebook's own classes) and a named tuple's ``_replace``, ``_asdict``, ``_make``, ``_fields``, and none the list refuses on every object (frames, native memory,
  the backend's client: ``gi_frame``, ``ctypes``, ``attrgetter``, ``client``, ...);
- no ``eval``, ``exec``, ``compile``, ``globals``, ``locals``, ``vars``, ``open``, ``input``,
  ``breakpoint``, ``help``, ``memoryview``, ``get_ipython``; ``getattr``, ``setattr``,
  ``hasattr`` and ``delattr`` only called with a string literal that passes the attribute rule;
- no name starting with ``__`` (``__builtins__``, ``__class__``), except, defined directly in a
  class body (``def``, assignment, ``__hash__ = None``), the dunders of
  ``cellguard.ALLOWED_CLASS_DUNDERS``: construction, calling, printing, comparison, hashing,
  operators, containers, iteration, context managers, ``__slots__``. Every other dunder is
  refused, above all the protocols NumPy, JAX or Python use to reach memory or namespaces
  (``__array_interface__``, ``__dlpack__``, ``__jax_array__``, ``__getattr__``, ``__dict__``,
  descriptors, pickling). Names with one leading underscore are the student's own, except the
  guards' ``_name_`` names;
- no call of ``ndarray``/``recarray``/``chararray`` with a buffer, offset or strides;
- no string literal that names a dunder (``"__globals__"``) or holds a format field, at any
  nesting depth, reading an attribute starting with ``_`` (``"{0.__class__}"``,
  ``"{0:{1.__globals__}}"``); no string annotations (evaluated later);
- no IPython magics or shell escapes, no async code, no ``nonlocal``, no ``except*``, no
  ``metaclass=`` (RestrictedPython's own refusals).
"""

from __future__ import annotations

import ast
import re
from dataclasses import replace
from typing import Any

from RestrictedPython.transformer import RestrictingNodeTransformer

from autograder.student.cellguard import (
    ALLOWED_CLASS_DUNDERS,
    ALLOWED_CLASS_DUNDERS_TEXT,
    BASE_IMPORTS,
    DENIED_BUILTINS,
    NAMEDTUPLE_API,
    format_refusal,
    import_from_refusal,
    module_allowed,
    name_refusal,
)
from autograder.worker import banned
from autograder.worker.normalise import Notebook

FORBIDDEN_NAMES = frozenset(DENIED_BUILTINS) | {"get_ipython", "__builtins__"}
ATTRIBUTE_BUILTINS = {"getattr": "_getattr_", "hasattr": "_hasattr_", "setattr": "_setattr_",
                      "delattr": "_delattr_"}
_GUARD_NAME = re.compile(r"_\w*_")  # _getattr_, _write_, ...: the guards' names
_DUNDER = re.compile(r"__\w+__")
_STUDENT_ROLES = ("solution", "student")
_REFUSED = "not run: refused by the cell policy: "


def allowed_imports(assignment: Any) -> tuple[str, ...]:
    extra = getattr(assignment, "extra", None) or {}
    return tuple(BASE_IMPORTS) + tuple(extra.get("allowed_imports", ()))


class CellPolicy(RestrictingNodeTransformer):
    """RestrictedPython's transformer with the course's rules.

    Kept from RestrictedPython: its list of known node types (anything else is refused), its
    refusal of async code, ``nonlocal``, ``except*``, ``metaclass=``, ``*`` imports and
    frame/generator/traceback attributes, and its rewriting of attribute reads, subscripts and
    writes into guard calls. Changed: single-underscore names are the student's own; a class may
    define only the dunders of ``ALLOWED_CLASS_DUNDERS``; ``print`` is the real one; loops,
    unpacking, calls with ``*args`` and augmented assignment run as written (they reach nothing
    the guards must see); imports become guard calls.
    """

    def __init__(self, roots: tuple[str, ...]):
        super().__init__()
        self.roots = roots
        self.scopes: list[str] = ["module"]
        self.refusals: list[tuple[int, str]] = []

    # -- reporting ---------------------------------------------------------------------------

    def error(self, node: ast.AST, info: str) -> None:
        line = getattr(node, "lineno", 0) or 0
        self.refusals.append((line, info))
        self.errors.append(f"line {line}: {info}")

    def not_allowed(self, node: ast.AST) -> None:
        self.error(node, f"{type(node).__name__} statements are not allowed")

    # -- names -------------------------------------------------------------------------------

    def check_name(self, node: Any, name: str | None, allow_magic_methods: bool = False) -> None:
        if name is None or name == "_":
            return
        in_class = allow_magic_methods and self.scopes[-1] == "class"
        if name in FORBIDDEN_NAMES:
            self.error(node, f"name {name!r} is not allowed")
        elif in_class and _DUNDER.fullmatch(name):
            # Deny by default: a dunder is a protocol that Python, NumPy or JAX calls on the
            # student's object (``__array_interface__`` reads memory, ``__getattr__`` sees names).
            if name not in ALLOWED_CLASS_DUNDERS:
                self.error(node, f"dunder {name!r} may not be defined in a class "
                                 f"(allowed: {ALLOWED_CLASS_DUNDERS_TEXT})")
        elif name.startswith("__"):
            self.error(node, f"name {name!r} is not allowed (names starting with '__')")
        elif _GUARD_NAME.fullmatch(name) and not name.startswith("__"):
            self.error(node, f"name {name!r} is not allowed (reserved for the grader's guards)")

    def visit_Name(self, node: ast.Name) -> Any:
        # In a class body, an allowed dunder may be bound, and read back: ``__radd__ = __add__``
        # reads the class's own definition (no module or builtin has such a name).
        in_class = self.scopes[-1] == "class" and (
            isinstance(node.ctx, ast.Store) or node.id in ALLOWED_CLASS_DUNDERS)
        if node.id in ATTRIBUTE_BUILTINS:
            self.error(node, f"{node.id} is allowed only when called with a string literal")
            return node
        self.check_name(node, node.id, allow_magic_methods=in_class)
        return node

    def check_import_names(self, node: ast.Import | ast.ImportFrom) -> Any:
        if getattr(node, "is_lazy", 0):
            self.error(node, "lazy imports are not allowed")
        for alias in node.names:
            if alias.name == "*":
                self.error(node, "'*' imports are not allowed")
            self.check_name(node, (alias.asname or alias.name).split(".")[0])
        return node

    # -- imports -------------------------------------------------------------------------------

    def _import_allowed(self, node: ast.AST, name: str) -> bool:
        if not module_allowed(name, self.roots, imported=True):
            self.error(node, f"import of {name!r} is not allowed (allowed: the modules of the "
                             f"cell policy's allowlist under {', '.join(self.roots)}; the "
                             "students' guide lists them)")
            return False
        return True

    def visit_Import(self, node: ast.Import) -> Any:
        self.check_import_names(node)
        out = []
        for alias in node.names:
            if not self._import_allowed(node, alias.name):
                continue
            target = alias.asname or alias.name.split(".")[0]
            call = _call("_import_", ast.Constant(alias.name), ast.Constant(alias.asname is None))
            out.append(_located(ast.Assign([ast.Name(target, ast.Store())], call), node))
        return out or None

    def visit_ImportFrom(self, node: ast.ImportFrom) -> Any:
        self.check_import_names(node)
        if node.level:
            self.error(node, "relative imports are not allowed")
            return None
        module = node.module or ""
        if not self._import_allowed(node, module):
            return None
        out = []
        for alias in node.names:
            why = name_refusal(alias.name)
            full = f"{module}.{alias.name}"
            if why:
                self.error(node, why.replace("attribute", "import of", 1))
                continue
            refusal = import_from_refusal(module, alias.name)
            if refusal:
                self.error(node, f"import of {full!r} is not allowed: {refusal}")
                continue
            call = _call("_import_from_", ast.Constant(module), ast.Constant(alias.name))
            target = ast.Name(alias.asname or alias.name, ast.Store())
            out.append(_located(ast.Assign([target], call), node))
        return out or None

    # -- attributes, calls, strings ------------------------------------------------------------

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        # ``object.__new__(cls)``: the one dunder read a cell may write, for its own classes
        # (the guard checks the class when it runs).
        object_new = (node.attr == "__new__" and isinstance(node.value, ast.Name)
                      and node.value.id == "object" and isinstance(node.ctx, ast.Load))
        why = None if object_new else name_refusal(node.attr)
        if why:
            self.error(node, why)
        elif node.attr in NAMEDTUPLE_API and not isinstance(node.ctx, ast.Load):
            self.error(node, f"attribute {node.attr!r} may be read, not written (names starting "
                             "with '_')")
        node = self.node_contents_visit(node)
        if isinstance(node.ctx, ast.Load):  # a.b -> _getattr_(a, 'b')
            return _located(_call("_getattr_", node.value, ast.Constant(node.attr)), node)
        # a.b = c, del a.b -> _write_(a).b = c, del _write_(a).b
        node.value = _located(_call("_write_", node.value), node.value)
        return node

    def visit_Call(self, node: ast.Call) -> Any:
        func = node.func
        if isinstance(func, ast.Name) and func.id in ATTRIBUTE_BUILTINS:
            name = node.args[1] if len(node.args) > 1 else None
            if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
                self.error(node, f"{func.id} is allowed only with a string literal as the name")
            elif name_refusal(name.value):
                self.error(node, name_refusal(name.value))
            node.args = [self.visit(a) for a in node.args]
            node.keywords = [self.visit(k) for k in node.keywords]
            node.func = _located(ast.Name(ATTRIBUTE_BUILTINS[func.id], ast.Load()), func)
            return node
        self._check_array_constructor(node)
        if any(k.arg == "compiler_options" for k in node.keywords):
            self.error(node, "the keyword argument 'compiler_options' is not allowed (XLA's "
                             "options write files and change what is compiled)")
        return self.node_contents_visit(node)

    def _check_array_constructor(self, node: ast.Call) -> None:
        """``ndarray(shape, dtype, buffer, offset, strides)`` lays an array over memory the call
        names. NumPy checks it against the buffer's size, but no task needs it, so a direct call
        with those arguments is refused here; the guards keep ``np.ndarray`` the real class (a
        stand-in would break ``isinstance(x, np.ndarray)``)."""
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        if name not in ("ndarray", "recarray", "chararray"):
            return
        memory = {"buffer", "buf", "offset", "strides"}
        if len(node.args) > 2 or any(k.arg in memory or k.arg is None for k in node.keywords):
            self.error(node, f"calling {name} with a buffer, offset or strides is not allowed "
                             "(it makes an array over memory the call names)")

    def visit_Constant(self, node: ast.Constant) -> Any:
        if isinstance(node.value, str):
            if _DUNDER.fullmatch(node.value.strip()):
                self.error(node, f"string {node.value!r} is not allowed (it names a dunder)")
            elif "{" in node.value:
                why = format_refusal(node.value)
                if why:
                    self.error(node, why)
        return node

    def visit_JoinedStr(self, node: ast.JoinedStr) -> Any:
        # The literal parts of an f-string are not format strings; only the values are code.
        for value in node.values:
            if not isinstance(value, ast.Constant):
                self.visit(value)
        return node

    def _check_annotation(self, annotation: ast.AST | None) -> None:
        if annotation is None:
            return
        for sub in ast.walk(annotation):
            if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                self.error(sub, "string annotations are not allowed (they are evaluated later, "
                                "outside the policy)")
                return

    def visit_AnnAssign(self, node: ast.AnnAssign) -> Any:
        self._check_annotation(node.annotation)
        if not node.simple or not isinstance(node.target, ast.Name):
            node.target = self.visit(node.target)
        else:
            self.visit_Name(node.target)
        if node.value is not None:
            node.value = self.visit(node.value)
        node.annotation = self.visit(node.annotation)
        return node

    # -- what runs as written ------------------------------------------------------------------

    def guard_iter(self, node: Any) -> Any:
        return self.node_contents_visit(node)

    def visit_Assign(self, node: ast.Assign) -> Any:
        return self.node_contents_visit(node)

    def visit_With(self, node: ast.With) -> Any:
        return self.node_contents_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> Any:
        return self.node_contents_visit(node)

    def inject_print_collector(self, node: Any, position: int = 0) -> None:
        pass

    # -- definitions ---------------------------------------------------------------------------

    def _function(self, node: ast.FunctionDef | ast.Lambda) -> Any:
        args = node.args
        for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
            if arg is not None:
                self.check_name(node, arg.arg)
                self._check_annotation(arg.annotation)
        self.scopes.append("function")
        try:
            return self.node_contents_visit(node)
        finally:
            self.scopes.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> Any:
        self.check_name(node, node.name, allow_magic_methods=True)
        self._check_annotation(node.returns)
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        decorators, node.decorator_list = node.decorator_list, []
        node = self._function(node)
        node.decorator_list = decorators
        return node

    def visit_Lambda(self, node: ast.Lambda) -> Any:
        return self._function(node)

    def visit_arg(self, node: ast.arg) -> Any:
        return node

    def visit_ClassDef(self, node: ast.ClassDef) -> Any:
        self.check_name(node, node.name)
        if any(k.arg == "metaclass" for k in node.keywords):
            self.error(node, "the keyword argument 'metaclass' is not allowed")
        node.bases = [self.visit(b) for b in node.bases]
        node.keywords = [self.visit(k) for k in node.keywords]
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        self.scopes.append("class")
        try:
            node.body = _flatten(self.visit(s) for s in node.body)
        finally:
            self.scopes.pop()
        return node


def _flatten(items: Any) -> list:
    out = []
    for item in items:
        if item is None:
            continue
        out.extend(item if isinstance(item, list) else [item])
    return out


def _call(name: str, *args: ast.expr) -> ast.Call:
    return ast.Call(ast.Name(name, ast.Load()), list(args), [])


def _located(new: Any, old: ast.AST) -> Any:
    ast.copy_location(new, old)
    return ast.fix_missing_locations(new)


def check_source(source: str, roots: tuple[str, ...]) -> tuple[str | None, list[str]]:
    """(the code to run, refusals): the rewritten source when the cell is approved, else None
    and one message per broken rule, ``"line 3: attribute '__class__' is not allowed ..."``."""
    try:
        tree = ast.parse(source)
    except SyntaxError as err:
        return None, [_syntax_refusal(source, err)]
    policy = CellPolicy(tuple(roots))
    tree = policy.visit(tree)
    if policy.refusals:
        seen, messages = set(), []
        for line, info in sorted(policy.refusals, key=lambda r: r[0]):
            if (line, info) not in seen:
                seen.add((line, info))
                messages.append(f"line {line}: {info}")
        return None, messages
    tree = _SliceCalls().visit(tree)
    ast.fix_missing_locations(tree)
    return ast.unparse(tree), []


class _SliceCalls(ast.NodeTransformer):
    """RestrictedPython turns ``k[1:, ::-1]`` into ``_getitem_(k, <Slice>, ...)``, which compiles
    from the tree but has no source form; the sandbox runs source, so each slice becomes
    ``_slice_(lower, upper, step)`` (the builtin ``slice``, under a name the cell cannot take)."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "_getitem_" and len(node.args) == 2:
            node.args[1] = self._index(node.args[1])
        return node

    def _index(self, index: ast.expr) -> ast.expr:
        if isinstance(index, ast.Slice):
            none = ast.Constant(None)
            return _located(_call("_slice_", index.lower or none, index.upper or none,
                                  index.step or none), index)
        if isinstance(index, ast.Tuple):
            index.elts = [self._index(e) for e in index.elts]
        return index


def _syntax_refusal(source: str, err: SyntaxError) -> str:
    line = err.lineno or 0
    lines = source.splitlines()
    text = lines[line - 1].lstrip() if 0 < line <= len(lines) else ""
    if text.startswith(("%", "!")) or any(s.lstrip().startswith(("%", "!")) for s in lines):
        return f"line {line}: IPython magics and shell commands ('%', '!') are not allowed"
    return f"line {line}: the cell does not parse (SyntaxError: {err.msg})"


def apply(notebook: Notebook, assignment: Any) -> Notebook:
    """The notebook with every student code cell checked: refused cells are not run and say
    why; approved ones run their rewritten form.

    A cell that uses a call a task bans (``Task.banned``, autograder.worker.banned) is refused too,
    whichever student cell it is: a helper in an added cell or in another task's cell could
    otherwise hand the rule to JAX. Refusing an added cell costs nothing unless a rule uses what
    it defines; a reproducer kept in the notebook (it calls jax.jvp, ...) is only not run."""
    roots = allowed_imports(assignment)
    tasks = getattr(assignment, "tasks", ())
    bans = {t.id: t.banned for t in tasks if getattr(t, "banned", ())}
    task_of = {t.id.split(".", 1)[-1]: t.id for t in tasks}
    cells, notes = [], list(notebook.notes)
    for cell in notebook.cells:
        if not (cell.run and cell.cell_type == "code" and cell.role in _STUDENT_ROLES):
            cells.append(cell)
            continue
        code, refusals = check_source(cell.source, roots)
        task = task_of.get(cell.grade_id) if cell.grade_id else None
        banned_uses = banned.refusals(cell.source, bans, task) if bans else []
        if banned_uses:
            code, refusals = None, refusals + banned_uses
        if code is None:
            shown = "; ".join(refusals[:5]) + (" ..." if len(refusals) > 5 else "")
            where = f"cell {cell.grade_id}" if cell.grade_id else "an added cell"
            notes.append(f"{where} was not run: the cell policy refused it ({shown})")
            cells.append(replace(cell, run=False, note=f"{_REFUSED}{shown}"))
        else:
            cells.append(replace(cell, code=code))
    return Notebook(tuple(cells), tuple(notes))


def refusal_of_task(notebook: Notebook, task_id: str) -> str:
    """For a failed check's message: why the task's cell did not run, when the policy refused
    it (the solution cell's grade_id is the task id without the assignment's prefix)."""
    grade_id = task_id.split(".", 1)[-1]
    for cell in notebook.cells:
        if cell.grade_id == grade_id and cell.note.startswith(_REFUSED):
            return f" Your cell for this task was not run: {cell.note[len(_REFUSED):]}"
    return ""
