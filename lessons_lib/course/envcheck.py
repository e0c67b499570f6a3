"""Environment check for lesson 00 and ``lessons check-env``."""

from __future__ import annotations

import importlib
import logging
import os
import platform
import sys
import warnings
from dataclasses import dataclass

from lessons_lib import paths


@dataclass(frozen=True)
class Check:
    """One line of the environment report."""

    name: str
    ok: bool
    detail: str
    required: bool = True


def _package_check(module: str) -> Check:
    try:
        mod = importlib.import_module(module)
    except ImportError as error:
        return Check(module, False, f"not importable: {error}")
    return Check(module, True, getattr(mod, "__version__", "installed"))


def check_cjk_font() -> Check:
    """Render Chinese tick labels off-screen; fail on any missing-glyph warning."""
    import io

    from matplotlib.figure import Figure

    from lessons_lib.course.plotting import setup_cjk_font

    try:
        name = setup_cjk_font()
    except FileNotFoundError as error:
        return Check("CJK font", False, str(error))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # A bare Figure renders with Agg without touching pyplot's backend (inline in notebooks).
        fig = Figure(figsize=(2, 1))
        fig.add_subplot().set_xticks([0, 1], labels=["注意力", "花生"])
        fig.savefig(io.BytesIO(), format="png")
    missing = [str(w.message) for w in caught if "missing from" in str(w.message)]
    if missing:
        return Check("CJK font", False, f"{name}: {missing[0]}")
    return Check("CJK font", True, name)


def check_parser() -> list[Check]:
    """spaCy's Chinese tokenizer with jieba, and the course parser when it is built."""
    checks = []
    try:
        import jieba
        import spacy

        jieba.setLogLevel(logging.WARNING)  # its dictionary-loading chatter goes to stderr
        nlp = spacy.blank("zh", config={"nlp": {"tokenizer": {"segmenter": "jieba"}}})
        words = [t.text for t in nlp("什么花一年四季都开")]
        checks.append(Check("spaCy + jieba segmentation", bool(words), " / ".join(words)))
    except Exception as error:  # any failure here means the lesson cannot segment
        checks.append(Check("spaCy + jieba segmentation", False, repr(error)))
    model = paths.PARSER_MODEL_DIR
    checks.append(Check("course parser", model.is_dir(),
                        str(model.relative_to(paths.REPO_ROOT)) if model.is_dir() else "not built yet (lesson 07)",
                        required=False))
    return checks


def check_data() -> list[Check]:
    """Which LCQMC data a lesson would read: the user's real files or the shipped sample."""
    real = os.environ.get(paths.LCQMC_ENV_VAR)
    sample = paths.LCQMC_SAMPLE_DIR
    checks = [Check("shipped LCQMC sample", sample.is_dir(),
                    str(sample.relative_to(paths.REPO_ROOT)) if sample.is_dir() else "not built yet (lesson 06)",
                    required=False)]
    if real:
        checks.append(Check(f"${paths.LCQMC_ENV_VAR}", os.path.isdir(real), real, required=False))
    else:
        checks.append(Check(f"${paths.LCQMC_ENV_VAR}", True, "not set: lessons use the shipped sample", required=False))
    return checks


def check_environment() -> list[Check]:
    """All checks, in report order."""
    checks = [Check("python", sys.version_info >= (3, 10), platform.python_version())]
    checks += [_package_check(m) for m in ("torch", "numpy", "matplotlib", "jieba", "spacy", "nbformat")]
    checks.append(check_cjk_font())
    checks += check_parser()
    checks += check_data()
    return checks


def format_report(checks: list[Check]) -> str:
    """A fixed-width table: status, name, detail."""
    lines = []
    for c in checks:
        status = "ok" if c.ok else ("MISSING" if c.required else "optional")
        lines.append(f"{status:8} {c.name:28} {c.detail}")
    return "\n".join(lines)
