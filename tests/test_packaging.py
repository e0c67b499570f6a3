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
    assert pip_sections == [["-e ."]], f"a learner's environment installs the course without extras: {pip_sections}"
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


def _readme_block(marker: str) -> str:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    return re.search(rf"<!-- {marker} -->\s*```bash\n(.+?)\n```", readme, re.S).group(1).strip()


def test_the_readme_has_one_command_per_role_and_ci_runs_the_maintainers():
    ci = (REPO_ROOT / ".ci" / "run").read_text(encoding="utf-8")
    ci_lines = [line.strip() for line in ci.splitlines()]
    assert _readme_block("tests") == "bash .ci/run"
    assert _readme_block("test") in ci_lines, f"CI does not run the README's test command {_readme_block('test')!r}"
    assert 'python -m pip install -e ".[dev]"' in ci_lines
    assert _readme_block("learner") == "python -m pip install -e . && lessons workspace"


def test_teacher_tools_are_an_extra_that_the_tests_include():
    extras = _pyproject()["project"]["optional-dependencies"]
    assert any(r.startswith("nbgrader") for r in extras["teacher"])
    assert "attention-course[teacher]" in extras["dev"]
    assert not any("nbgrader" in r for r in _pyproject()["project"]["dependencies"])


def test_a_learner_install_pulls_no_teacher_or_test_tools():
    """Walk the installed requirements from the course's own (no extras): nbgrader is never reached."""
    from importlib.metadata import PackageNotFoundError, requires
    from packaging.requirements import Requirement

    seen, todo = set(), ["attention-course"]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            requirements = requires(name) or []
        except PackageNotFoundError:  # an optional platform dependency that is not installed here
            continue
        for line in requirements:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name.lower().replace("_", "-"))
    assert len(seen) > 50, f"the walk found only {sorted(seen)}"  # it really followed the dependencies
    for tool in ("nbgrader", "pytest", "nbval", "playwright"):
        assert tool not in seen, f"a learner install pulls {tool}"
