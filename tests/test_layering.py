"""The package's layers: each subpackage imports only the layers below it, and nothing but the CLI uses the CLI."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from lessons_lib.paths import NOTEBOOKS_DIR, REPO_ROOT

PACKAGE = REPO_ROOT / "lessons_lib"
# What each subpackage may import from the package, besides the shared leaf modules
# (errors, validation, paths, files, numerics, progress) and itself.
ALLOWED = {
    "attention": set(),
    "seq2seq": {"attention"},
    "transformer": {"attention"},
    "pairs": {"attention", "transformer"},
    "syntax": {"pairs"},
    "syntax_bias": {"attention", "transformer", "pairs", "syntax"},
    "exercises": {"attention", "seq2seq", "transformer", "pairs", "syntax", "syntax_bias"},
    "course": {"exercises", "pairs", "syntax"},
    "cli": None,  # the top: may use everything
}
SHARED = {"errors", "validation", "paths", "files", "numerics", "progress", "__init__"}
# A leaf module any layer may use: seeding is part of every experiment.
SHARED_MODULES = {"lessons_lib.course.reproducibility"}


def _imported_modules(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {m for m in found if m == "lessons_lib" or m.startswith("lessons_lib.")}


def _layer(path: Path) -> str:
    return path.relative_to(PACKAGE).parts[0].removesuffix(".py")


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_follow_the_layers(path):
    layer = _layer(path)
    allowed = ALLOWED.get(layer, set())
    if allowed is None:
        return
    for module in _imported_modules(path):
        parts = module.split(".")
        target = parts[1] if len(parts) > 1 else "__init__"
        if target in SHARED or target == layer or module in SHARED_MODULES:
            continue
        assert target in allowed, f"{path.relative_to(REPO_ROOT)} ({layer}) imports {module}; allowed: {sorted(allowed)}"


def test_every_subpackage_has_a_layer_rule():
    subpackages = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    assert subpackages == set(ALLOWED)
    modules = {p.stem for p in PACKAGE.glob("*.py")}
    assert modules == SHARED, f"top-level modules besides {sorted(SHARED)}: {sorted(modules - SHARED)}"


@pytest.mark.parametrize("path", sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb")), ids=lambda p: p.name)
def test_notebooks_do_not_use_the_command_line_package(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    assert not re.search(r"\blessons_lib\.cli\b", code), f"{path.name} imports from lessons_lib.cli"
