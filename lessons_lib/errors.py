"""Error types shared by the package, so callers can catch the course's own errors.

:func:`file_errors` is the one place where an operating-system error on a named file
(missing, unreadable, a folder where a file was expected, a full disk) becomes a
:class:`CourseInputError` that names the file: the command line shows it as one
``error: …`` line instead of a traceback.
"""

from __future__ import annotations

import contextlib
import os
from typing import Iterator


class CourseInputError(ValueError):
    """Bad input: a wrong shape, dtype, argument value, file line or label.

    The message always names the argument, file or line at fault.
    """


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
