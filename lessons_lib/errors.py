"""Error types shared by the package, so callers can catch the course's own errors.

:func:`file_errors` is the one place where an operating-system error on a named file
(missing, unreadable, a folder where a file was expected, a full disk) becomes a
:class:`CourseInputError` that names the file: the command line shows it as one
``error: …`` line instead of a traceback.

:class:`FieldName`, :class:`NamePhrase` and :class:`FieldError` let an error say which field or option it is
about: the message is built from parts, some of them field names, so that the command
line can show a field as the flag the user types (:func:`lessons_lib.cli.options.flag_names`)
without reading the message's text.
"""

from __future__ import annotations

import contextlib
import os
from typing import Callable, Iterator

__all__ = ["CourseInputError", "FieldName", "NamePhrase", "FieldError", "input_error", "reworded", "file_errors"]


class CourseInputError(ValueError):
    """Bad input: a wrong shape, dtype, argument value, file line or label.

    The message always names the argument, file or line at fault.
    """


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

    def __reduce__(self):  # pickled across processes (a worker's error) as its two names
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

    def __reduce__(self):
        return NamePhrase, self.parts


class FieldError(CourseInputError):
    """Bad input about one or more named fields: the message is its :attr:`parts` joined.

    A part is plain text or a :class:`FieldName`; :meth:`renamed` shows the fields another
    way (the command line's flags) and leaves the text as it is.
    """

    def __init__(self, *parts: str) -> None:
        self.parts = parts
        super().__init__("".join(parts))

    def __reduce__(self):
        return FieldError, self.parts

    def renamed(self, name: Callable[[FieldName], str]) -> FieldError:
        """The same error with every field shown as ``name(field)`` (a field renamed becomes plain text)."""
        return FieldError(*(name(part) if isinstance(part, FieldName) else part for part in self.parts))


def input_error(*parts: str) -> CourseInputError:
    """The error whose message is ``parts`` joined: a :class:`FieldError` when a part is a :class:`FieldName`.

    A :class:`NamePhrase` among the parts counts as its own parts.
    """
    parts = tuple(piece for part in parts for piece in (part.parts if isinstance(part, NamePhrase) else (part,)))
    if any(isinstance(part, FieldName) for part in parts):
        return FieldError(*parts)
    return CourseInputError("".join(parts))


def reworded(error: CourseInputError, before: str, after: str = "") -> CourseInputError:
    """``error`` with ``before`` and ``after`` around its message (the file it is about), its fields kept."""
    parts = error.parts if isinstance(error, FieldError) else (str(error),)
    return input_error(before, *parts, after)


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
