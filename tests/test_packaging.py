"""pyproject.toml owns the dependencies; environment.yml, README and CI must agree with it."""

from __future__ import annotations

import re
import tomllib

import yaml

from lessons_lib.paths import REPO_ROOT


def _pyproject():
    return tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _environment():
    return yaml.safe_load((REPO_ROOT / "environment.yml").read_text(encoding="utf-8"))


def test_environment_installs_the_package_from_pyproject():
    deps = _environment()["dependencies"]
    pip_sections = [d["pip"] for d in deps if isinstance(d, dict) and "pip" in d]
    assert pip_sections == [['-e ".[dev]"']] or pip_sections == [["-e .[dev]"]], pip_sections
    conda = [d for d in deps if isinstance(d, str)]
    names = {re.split(r"[=<>]", d)[0] for d in conda}
    # Only Python and pip come from conda; every other package is pyproject's.
    assert names == {"python", "pip"}, f"environment.yml lists packages of its own: {sorted(names)}"


def test_python_versions_agree():
    deps = _environment()["dependencies"]
    python = next(d for d in deps if isinstance(d, str) and d.startswith("python"))
    version = python.split("=")[-1]
    major, minor = (int(x) for x in version.split(".")[:2])
    spec = _pyproject()["project"]["requires-python"]
    low = re.search(r">=\s*3\.(\d+)", spec)
    high = re.search(r"<\s*3\.(\d+)", spec)
    assert major == 3 and low and int(low.group(1)) <= minor
    assert high is None or minor < int(high.group(1))


def test_core_dependencies_are_declared():
    declared = " ".join(_pyproject()["project"]["dependencies"])
    for name in ("torch", "matplotlib", "jieba", "spacy", "jupyterlab", "nbclient", "tqdm"):
        assert name in declared, f"{name} missing from pyproject dependencies"
    dev = " ".join(_pyproject()["project"]["optional-dependencies"]["dev"])
    for name in ("pytest", "nbval"):
        assert name in dev


def test_ci_runs_the_readme_commands():
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    ci = (REPO_ROOT / ".ci" / "run").read_text(encoding="utf-8")
    setup = re.search(r"<!-- setup -->\s*```bash\n(.+?)\n```", readme, re.S).group(1).strip()
    test = re.search(r"<!-- test -->\s*```bash\n(.+?)\n```", readme, re.S).group(1).strip()
    ci_lines = [line.strip() for line in ci.splitlines()]
    assert setup in ci_lines, f"CI does not run the README's setup command {setup!r}"
    assert test in ci_lines, f"CI does not run the README's test command {test!r}"
