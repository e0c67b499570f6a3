"""What each room of the package says it offers: a docstring per room and module, and an
``__all__`` that names every public function and class the module defines (and nothing it lacks)."""

from __future__ import annotations

import ast
import importlib

import pytest

from lessons_lib.paths import REPO_ROOT

PACKAGE = REPO_ROOT / "lessons_lib"
MODULES = sorted(PACKAGE.rglob("*.py"))


def _module_name(path) -> str:
    parts = path.relative_to(REPO_ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _declared_all(tree: ast.Module) -> list[str] | None:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
            return list(ast.literal_eval(node.value))
    return None


@pytest.mark.parametrize("path", MODULES, ids=_module_name)
def test_every_room_and_module_says_what_it_is_for(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstring = ast.get_docstring(tree)
    assert docstring and len(docstring.split()) >= 3, f"{_module_name(path)} has no docstring saying what it is for"


WITH_ALL = [p for p in MODULES if _declared_all(ast.parse(p.read_text(encoding="utf-8"))) is not None]


@pytest.mark.parametrize("path", WITH_ALL, ids=_module_name)
def test_all_names_every_public_function_and_class_and_nothing_missing(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    declared = _declared_all(tree)
    defined = {node.name for node in tree.body
               if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    public = {name for name in defined if not name.startswith("_")}
    assert not public - set(declared), f"public but not in __all__: {sorted(public - set(declared))}"
    module = importlib.import_module(_module_name(path))
    assert not [n for n in declared if not hasattr(module, n)], "__all__ names what the module lacks"
    assert len(declared) == len(set(declared)), "__all__ names a name twice"
