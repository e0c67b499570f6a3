"""The package's layers: each subpackage imports only the layers below it, nothing but the CLI uses the CLI, and no import circle."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from lessons_lib.paths import NOTEBOOKS_DIR, REPO_ROOT

PACKAGE = REPO_ROOT / "lessons_lib"
# What each subpackage may import from the package, besides the shared leaf modules and itself.
ALLOWED = {
    "attention": set(),
    "seq2seq": {"attention"},
    "transformer": {"attention"},
    "pairs": {"attention", "transformer"},
    "evaluation": {"pairs"},
    "training": {"pairs", "evaluation"},
    "syntax": {"pairs"},
    "syntax_bias": {"attention", "transformer", "pairs", "evaluation", "training", "syntax"},
    "ablation": {"attention", "transformer", "pairs", "evaluation", "training", "syntax", "syntax_bias"},
    "translation": {"attention", "transformer", "pairs", "evaluation", "training", "syntax", "syntax_bias"},
    "exercises": {"attention", "seq2seq", "transformer", "pairs", "evaluation", "training", "syntax", "syntax_bias",
                  "ablation"},
    "course": {"exercises", "pairs", "syntax"},
    "grader": {"course", "exercises"},
    "website": {"course", "exercises"},
}
# The top: the command line may use every layer (and nothing uses it, since no layer above lists it).
ALLOWED["cli"] = set(ALLOWED)
# The leaf modules every layer may use (they import only each other).
SHARED = {"errors", "validation", "paths", "files", "numerics", "progress", "seeding", "provenance", "__init__"}


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


def _module_file(module: str) -> Path | None:
    """The file of a ``lessons_lib`` module (a module or a package's ``__init__``), or ``None``."""
    base = PACKAGE.joinpath(*module.split(".")[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def layer_violations(path: Path) -> list[str]:
    """One line per import of ``path`` that runs up the layers or names no module of the package."""
    layer = _layer(path)
    allowed = ALLOWED.get(layer, set()) | SHARED | {layer}
    problems = []
    for module in sorted(_imported_modules(path)):
        parts = module.split(".")
        target = parts[1] if len(parts) > 1 else "__init__"
        if _module_file(module) is None:
            problems.append(f"{path.relative_to(REPO_ROOT)} imports {module}, which is no module of the package")
        elif target not in allowed:
            problems.append(f"{path.relative_to(REPO_ROOT)} ({layer}) imports {module}; allowed: {sorted(allowed - {'__init__'})}")
    return problems


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_follow_the_layers(path):
    problems = layer_violations(path)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    "where, line, caught",
    [
        ("syntax_bias/x.py", "from lessons_lib.course.reproducibility import set_seed", True),
        ("attention/x.py", "import lessons_lib.transformer.config", True),
        ("seeding.py", "from lessons_lib.pairs.vocab import Vocabulary", True),
        ("cli/x.py", "from lessons_lib.pairs.no_such_module import f", True),
        ("cli/x.py", "from lessons_lib.grader.grading import grade", False),
        ("pairs/x.py", "from lessons_lib.training.runs import load_run", True),
        ("evaluation/x.py", "from lessons_lib.training.trainer import train_pair_classifier", True),
        ("training/x.py", "from lessons_lib.evaluation.metrics import evaluate", False),
        ("course/x.py", "from lessons_lib.grader.sandbox import Limits", True),
        ("course/x.py", "from lessons_lib.website.site import build_site", True),
        ("website/x.py", "from lessons_lib.course.notebooks import read_notebook", False),
        ("syntax_bias/x.py", "from lessons_lib.seeding import set_seed", False),
    ],
)
def test_the_layer_check_catches_an_upward_import(tmp_path, monkeypatch, where, line, caught):
    """The rule itself, on a file written for it: an upward or unknown import is reported, an allowed one is not."""
    fake = tmp_path / "lessons_lib"
    for source in PACKAGE.rglob("*.py"):  # the real package's module files, so imports resolve as they do
        target = fake / source.relative_to(PACKAGE)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.touch()
    (fake / where).write_text(line + "\n", encoding="utf-8")
    monkeypatch.setattr(f"{__name__}.PACKAGE", fake)
    monkeypatch.setattr(f"{__name__}.REPO_ROOT", tmp_path)
    assert bool(layer_violations(fake / where)) is caught


def _circle(edges: dict[str, set[str]]) -> list[str]:
    """One circle of the directed graph ``edges`` (``[a, b, …, a]``), or ``[]`` when it has none."""
    state: dict[str, str] = {}

    def visit(node: str, path: list[str]) -> list[str]:
        state[node] = "open"
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == "open":
                return path[path.index(nxt):] + [node, nxt] if nxt in path else [node, nxt]
            if nxt not in state and (found := visit(nxt, path + [node])):
                return found
        state[node] = "done"
        return []

    for start in sorted(edges):
        if start not in state and (found := visit(start, [])):
            return found
    return []


def module_imports(package: Path) -> dict[str, set[str]]:
    """``{module: the package's modules it imports}``, imports inside functions included (they hide no circle here)."""
    files = {".".join(p.relative_to(package.parent).with_suffix("").parts).removesuffix(".__init__"): p
             for p in package.rglob("*.py")}
    edges = {}
    for module, path in files.items():
        named = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                named.add(node.module)
                named.update(f"{node.module}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.Import):
                named.update(alias.name for alias in node.names)
        edges[module] = {m for m in named if m in files and m != module}
    return edges


def test_the_rooms_allow_no_circle():
    assert _circle({room: set(below) for room, below in ALLOWED.items()}) == []


def test_no_module_imports_itself_through_others():
    """Not even through an import inside a function: a circle there is one a reader cannot see."""
    circle = _circle(module_imports(PACKAGE))
    assert not circle, "import circle: " + " -> ".join(circle)


def test_the_circle_check_sees_an_import_inside_a_function(tmp_path):
    fake = tmp_path / "lessons_lib"
    (fake / "room").mkdir(parents=True)
    for name in ("__init__.py", "room/__init__.py"):
        (fake / name).touch()
    (fake / "room" / "a.py").write_text("from lessons_lib.room.b import g\n", encoding="utf-8")
    (fake / "room" / "b.py").write_text("def g():\n    from lessons_lib.room import a\n", encoding="utf-8")
    assert _circle(module_imports(fake)) == ["lessons_lib.room.a", "lessons_lib.room.b", "lessons_lib.room.a"]
    (fake / "room" / "b.py").write_text("def g():\n    pass\n", encoding="utf-8")
    assert _circle(module_imports(fake)) == []


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
