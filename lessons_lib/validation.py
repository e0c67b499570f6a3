"""Input checks shared by the whole package, so that every argument error reads the same.

Each helper returns the checked value (so it can be used inline) or raises
:class:`~lessons_lib.errors.CourseInputError` naming the argument. ``bool`` is never
accepted as a number: ``True`` is an ``int`` to Python, but ``epochs=True`` is a mistake.
"""

from __future__ import annotations

import math
from dataclasses import fields
from pathlib import Path
from typing import Any, Iterable, TypeVar

from lessons_lib.errors import CourseInputError, file_errors

T = TypeVar("T")

__all__ = [
    "check_int", "check_number", "check_probability", "check_choice", "strict_from_dict",
    "check_not_a_file", "check_output_dir", "check_input_dir",
]


def check_int(value: Any, name: str, *, minimum: int | None = 1, maximum: int | None = None) -> int:
    """``value`` as an int in ``[minimum, maximum]`` (default: a positive int)."""
    kind = {1: "a positive int", 0: "a non-negative int"}.get(minimum, "an int" if minimum is None else f"an int ≥ {minimum}")
    if maximum is not None:
        kind += f" ≤ {maximum}"
    if (not isinstance(value, int) or isinstance(value, bool) or (minimum is not None and value < minimum)
            or (maximum is not None and value > maximum)):
        raise CourseInputError(f"{name} must be {kind}, got {value!r}")
    return value


def check_number(value: Any, name: str, *, minimum: float | None = None, maximum: float | None = None,
                 strict_minimum: bool = False, finite: bool = True) -> float:
    """``value`` as a float: finite (unless ``finite=False``; NaN never passes) and within bounds.

    Args:
        minimum, maximum: inclusive bounds (``None``: unbounded).
        strict_minimum: the value must be greater than ``minimum``, not equal to it.
    """
    if not isinstance(value, (int, float)) or isinstance(value, bool) or math.isnan(value):
        raise CourseInputError(f"{name} must be a number, got {value!r}")
    if finite and math.isinf(value):
        raise CourseInputError(f"{name} must be finite, got {value!r}")
    if minimum is not None and (value <= minimum if strict_minimum else value < minimum):
        raise CourseInputError(f"{name} must be {'>' if strict_minimum else '≥'} {minimum}, got {value!r}")
    if maximum is not None and value > maximum:
        raise CourseInputError(f"{name} must be ≤ {maximum}, got {value!r}")
    return float(value)


def check_probability(value: Any, name: str) -> float:
    """``value`` as a float in ``[0, 1]``."""
    return check_number(value, name, minimum=0.0, maximum=1.0)


def check_choice(value: T, name: str, options: Iterable[T]) -> T:
    """``value`` if it is one of ``options``."""
    options = tuple(options)
    if value not in options:
        raise CourseInputError(f"{name} must be one of {', '.join(map(repr, options))}; got {value!r}")
    return value


def strict_from_dict(cls: type[T], data: dict[str, Any]) -> T:
    """Build the dataclass ``cls`` from ``data``; an unknown key is an error, not ignored.

    A checkpoint or preset written by another version of the course fails loudly instead
    of silently losing a setting.
    """
    if not isinstance(data, dict):
        raise CourseInputError(f"{cls.__name__} needs a dict of fields, got {type(data).__name__}")
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise CourseInputError(f"unknown {cls.__name__} fields: {unknown}")
    return cls(**data)


def check_not_a_file(path: Any, name: str) -> Path:
    """``path`` as a folder to be written later: missing or a folder (nothing is created); a file there is an error."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise CourseInputError(f"{name} {path} is a file, not a folder")
    return path


def check_output_dir(path: Any, name: str) -> Path:
    """``path`` as a folder that can be written to: created when missing; a file there is an error."""
    path = check_not_a_file(path, name)
    with file_errors(path, "create the folder"):
        path.mkdir(parents=True, exist_ok=True)
    return path


def check_input_dir(path: Any, name: str) -> Path:
    """``path`` as an existing folder."""
    path = Path(path)
    if not path.is_dir():
        raise CourseInputError(f"{name} {path} is not a folder" + ("" if path.exists() else " (it does not exist)"))
    return path
