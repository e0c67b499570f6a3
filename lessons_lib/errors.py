"""Error types shared by the package, so callers can catch the course's own errors.

:func:`file_errors` is the one place where an operating-system error on a named file
(missing, unreadable, a folder where a file was expected, a full disk) becomes a
:class:`CourseInputError` that names the file: the command line shows it as one
``error: …`` line instead of a traceback.

An error about a config field or an option says which one it is: :func:`input_error` builds
its message from parts, some of them a :class:`FieldName` (or a :class:`NamePhrase` around
one), and the error keeps those parts, so that the command line can show each field as the
flag the user types (:func:`lessons_lib.cli.options.flag_names`) without reading the text.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, Callable, Iterator

__all__ = ["CourseInputError", "FieldName", "NamePhrase", "input_error", "reworded", "file_errors"]


class FieldName(str):
    """The name of a config field or an option, as a message shows it to a Python caller.

    It reads ``EncoderConfig.d_model`` for a field of a config class (``owner``) and
    ```train_fraction``` for an option of a function; :attr:`field` is the bare name
    (``d_model``), from which the command line makes its flag.
    """

    field: str
    owner: str | None

    def __new__(cls, field: str, owner: str | None = None) -> FieldName:
        self = super().__new__(cls, f"{owner}.{field}" if owner else f"`{field}`")
        self.field, self.owner = field, owner
        return self

    def __reduce__(self) -> tuple[Any, ...]:  # pickled (a worker's error) as its two names
        return FieldName, (self.field, self.owner)


class NamePhrase(str):
    """An argument's name in words around a field (``each of `seeds```), for a check's ``name``.

    It reads as its :attr:`parts` joined; an error built from it (:func:`input_error`) keeps
    the field among them, so that the command line can still show its flag.
    """

    parts: tuple[str, ...]

    def __new__(cls, *parts: str) -> NamePhrase:
        self = super().__new__(cls, "".join(parts))
        self.parts = parts
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return NamePhrase, self.parts


class CourseInputError(ValueError):
    """Bad input: a wrong shape, dtype, argument value, file line or label.

    The message always names the argument, file or line at fault. An error made by
    :func:`input_error` also keeps the message's :attr:`parts`, among them the
    :class:`FieldName` of each field it is about (:attr:`fields`).
    """

    parts: tuple[str, ...] = ()

    @property
    def fields(self) -> tuple[FieldName, ...]:
        """The fields the message names, in its order (none for a message given as plain text)."""
        return tuple(part for part in self.parts if isinstance(part, FieldName))

    def renamed(self, name: Callable[[FieldName], str]) -> CourseInputError:
        """The same error with every field shown as ``name(field)``; the rest of the text as it is."""
        return input_error(*(name(part) if isinstance(part, FieldName) else part for part in self.parts))


def input_error(*parts: str) -> CourseInputError:
    """The :class:`CourseInputError` whose message is ``parts`` joined, keeping the parts.

    A :class:`NamePhrase` among them counts as its own parts, so that its field stays one.
    """
    parts = tuple(piece for part in parts for piece in (part.parts if isinstance(part, NamePhrase) else (part,)))
    error = CourseInputError("".join(parts))
    error.parts = parts
    return error


def reworded(error: CourseInputError, before: str, after: str = "") -> CourseInputError:
    """``error`` with ``before`` and ``after`` around its message (the file it is about), its fields kept."""
    return input_error(before, *(error.parts or (str(error),)), after)


@contextlib.contextmanager
def file_errors(path: str | os.PathLike, action: str = "read") -> Iterator[None]:
    """Turn an ``OSError`` raised inside the block into a :class:`CourseInputError` naming ``path``.

    Args:
        path: the file or folder the block works on.
        action: what the block does to it, for the message (``"read"``, ``"write"``, ...).
    """
    try:
        yield
    except OSError as error:
        culprit = error.filename if error.filename not in (None, "") else path
        where = f"{path}" if os.fspath(culprit) == os.fspath(path) else f"{path} ({culprit})"
        raise CourseInputError(f"cannot {action} {where}: {error.strerror or error}") from error
