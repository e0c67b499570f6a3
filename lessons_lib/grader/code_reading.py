"""Reading a submission's code for the routes to the course's own implementations, which the grader flags.

The course's reference implementations cannot be hidden from a sandbox: the notebook's own
check cells run the checkers, and the checkers compute the expected values with them. So the
grader reads each submitted notebook (without running it) and flags, for the teacher, every
route by which its code could reach them and the exercise notebook's own code does not:

1. **Course names** (:func:`course_names`): every ``lessons_lib`` name the code names, exactly:
   ``from M import n`` names ``M.n`` (not all of ``M``), ``import M as m`` names ``M`` and each
   ``m.attribute`` read from a module ``m`` names ``M.attribute``, and a string such as ``import_module``'s
   argument names itself. So importing ``attention_scores`` through the checker module that
   the exercise already imports (``from lessons_lib.exercises.attention import
   attention_scores``) is a name the exercise notebook does not use.
2. **Looking inside or up at run time** (:func:`runtime_lookups`): the attributes that open a
   function or module from the inside (``__globals__``, ``__closure__``, ``__dict__``, ...,
   written as an attribute or as a string) and the tools that look a name up by a string
   (``getattr``, ``vars``, ``globals``, ``eval``, ``exec``, ``__import__``, ``importlib``,
   ``inspect``, ``sys.modules``, ...). A checker's ``__globals__`` holds the names its module
   imported; these are the only ways to reach them from a name that is not written out.
3. **Course code called by a graded function** (:func:`course_names_used_by`): the course names
   a graded function uses, directly or through the notebook's other functions and variables,
   that the solution's function does not. Several lessons import a library version of what an
   exercise asks for, to show it first; a graded function that calls it is flagged.

Everything is compared with the exercise notebook (the student version of the solution) and
the solution itself, so what the course gives every learner is never flagged. A
flag is not a verdict: a teacher reads the notebook. A name assembled from pieces at run
time still escapes rule 1, but not the lookup that uses it (rule 2).
"""

from __future__ import annotations

import ast
from typing import Any, Iterable, Iterator

__all__ = ["code_tree", "code_trees", "course_names", "runtime_lookups", "course_names_used_by"]

PACKAGE = "lessons_lib"
# Attributes that open a function, frame, class or module from the inside.
INTROSPECTION_ATTRIBUTES = frozenset({
    "__globals__", "__closure__", "__code__", "__builtins__", "__dict__", "__wrapped__", "__func__", "__self__",
    "__defaults__", "__kwdefaults__", "__subclasses__", "__mro__", "__bases__", "__base__", "__loader__",
    "__spec__", "__import__", "__getattribute__", "f_globals", "f_locals", "f_back", "f_builtins", "tb_frame",
    "gi_frame", "cr_frame", "co_consts", "co_names", "cell_contents",
})
# Built-in functions that look a name up, or run code, from a string.
LOOKUP_BUILTINS = frozenset({"getattr", "setattr", "delattr", "vars", "globals", "locals", "dir", "eval", "exec",
                             "compile", "__import__", "breakpoint"})
# Modules whose purpose is finding objects by name or from the inside.
LOOKUP_MODULES = frozenset({"importlib", "inspect", "gc", "ctypes", "builtins", "pkgutil", "runpy", "operator",
                            "pickle", "marshal", "dill"})
# Attributes of ``sys`` that reach every loaded module or the caller's frames.
SYS_LOOKUPS = frozenset({"modules", "_getframe", "meta_path", "path_importer_cache"})


def code_tree(source: str) -> ast.Module | None:
    """A code cell's syntax tree, its IPython lines (``%magic``, ``!shell``) left out; ``None`` if it is not Python."""
    lines = ["" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines()]
    try:
        return ast.parse("\n".join(lines))
    except (SyntaxError, ValueError):
        return None


def code_trees(nb: Any) -> list[ast.Module]:
    """The syntax trees of a notebook's code cells that are Python, in order."""
    trees = (code_tree(cell.source) for cell in nb.cells if cell.cell_type == "code")
    return [tree for tree in trees if tree is not None]


def _is_course(name: str) -> bool:
    return name == PACKAGE or name.startswith(f"{PACKAGE}.")


def _is_module(name: str) -> bool:
    """Whether course name ``name`` is a module (its attributes are names of the course) rather than an object."""
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _import_bindings(trees: Iterable[ast.AST]) -> dict[str, str]:
    """``{local name: the course name it is bound to}`` for every course import of the code (any scope)."""
    bound: dict[str, str] = {}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if _is_course(alias.name):
                        if alias.asname:
                            bound[alias.asname] = alias.name
                        else:  # `import a.b.c` binds `a`
                            bound[alias.name.split(".")[0]] = alias.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level and _is_course(node.module):
                for alias in node.names:
                    if alias.name != "*":
                        bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return bound


def _dotted(node: ast.AST) -> list[str] | None:
    """``a.b.c`` as ``["a", "b", "c"]`` when the expression is a plain chain of attributes on a name."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id, *reversed(parts)]


def _outermost_attributes(tree: ast.AST) -> Iterator[ast.Attribute]:
    """Every attribute chain of the tree once, by its outermost node (``a.b.c``, not also ``a.b``)."""
    inner: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            if id(node) not in inner:
                yield node
            if isinstance(node.value, ast.Attribute):
                inner.add(id(node.value))


def course_names(trees: Iterable[ast.AST]) -> set[str]:
    """Every ``lessons_lib`` name the code names: imported names, attributes read from them, strings.

    ``from M import n`` gives ``M.n``; ``import M`` gives ``M``; ``m.x.y`` where ``m`` is bound
    to course name ``M`` gives ``M.x.y``; ``"lessons_lib.x"`` gives ``lessons_lib.x``;
    ``from M import *`` gives ``M.*``.
    """
    trees = list(trees)
    bound = _import_bindings(trees)
    found: set[str] = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names if _is_course(alias.name))
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level and _is_course(node.module):
                found.update(f"{node.module}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _is_course(node.value.strip()):
                found.add(node.value.strip())
        for node in _outermost_attributes(tree):
            parts = _dotted(node)
            if parts and parts[0] in bound and _is_module(bound[parts[0]]):
                found.add(".".join([bound[parts[0]], *parts[1:]]))
    return found


def runtime_lookups(trees: Iterable[ast.AST]) -> set[str]:
    """The ways the code looks inside objects or looks names up at run time (see the module's rule 2)."""
    found: set[str] = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in INTROSPECTION_ATTRIBUTES:
                found.add(node.attr)
            elif isinstance(node, ast.Attribute) and node.attr in SYS_LOOKUPS and _dotted(node) == ["sys", node.attr]:
                found.add(f"sys.{node.attr}")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in INTROSPECTION_ATTRIBUTES:
                found.add(node.value)
            elif isinstance(node, ast.Name) and node.id in LOOKUP_BUILTINS:
                found.add(node.id)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names if alias.name.split(".")[0] in LOOKUP_MODULES)
            elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in LOOKUP_MODULES:
                found.add(node.module)
            elif isinstance(node, ast.ImportFrom) and node.module == "sys":
                found.update(f"sys.{a.name}" for a in node.names if a.name in SYS_LOOKUPS)
    return found


def _top_level_graph(trees: Iterable[ast.Module]) -> dict[str, set[str]]:
    """``{global name: the names its definitions use}``: functions, classes, assignments, loops at top level.

    A statement that binds several names (``a, b = ...``, a loop) links each of them to every
    name it uses: the reading errs towards following too much, never too little.
    """
    graph: dict[str, set[str]] = {}
    for tree in trees:
        for statement in tree.body:
            if isinstance(statement, (ast.Import, ast.ImportFrom)):
                continue
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound = {statement.name}
            else:
                bound = {n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
                bound |= {n.name for n in ast.walk(statement)
                          if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
            used = {n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
            for name in bound:
                graph.setdefault(name, set()).update(used)
    return graph


def course_names_used_by(trees: Iterable[ast.Module], function: str) -> set[str]:
    """The course names that global ``function`` uses, directly or through the notebook's other globals."""
    trees = list(trees)
    bound = _import_bindings(trees)
    graph = _top_level_graph(trees)
    seen, todo = set(), [function]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += graph.get(name, ())
    return {bound[name] for name in seen if name in bound}
