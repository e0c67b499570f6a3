"""Error types shared by the package, so callers can catch the course's own errors."""


class CourseInputError(ValueError):
    """Bad input: a wrong shape, dtype, argument value, file line or label.

    The message always names the argument, file or line at fault.
    """
