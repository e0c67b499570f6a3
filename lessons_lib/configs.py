"""Helpers shared by the package's configuration dataclasses (saved with checkpoints as JSON)."""

from __future__ import annotations

from dataclasses import fields
from typing import Any, TypeVar

from lessons_lib.errors import CourseInputError

T = TypeVar("T")


def strict_from_dict(cls: type[T], data: dict[str, Any]) -> T:
    """Build the dataclass ``cls`` from ``data``; an unknown key is an error, not ignored.

    A checkpoint or preset written by another version of the course fails loudly instead
    of silently losing a setting.
    """
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise CourseInputError(f"unknown {cls.__name__} fields: {unknown}")
    return cls(**data)
