"""How many distance buckets a bucket scheme has by default and at most, and its checks, without torch.

:mod:`lessons_lib.syntax.buckets` turns distances into bucket ids (with torch); a config that only
names a scheme's size (:class:`lessons_lib.ablation.config.ExperimentConfig`, and through it the
flags of ``lessons experiment``) reads the two numbers here, and checks a scheme's sizes with
:func:`check_bucket_sizes` (what :class:`lessons_lib.syntax.buckets.BucketScheme` checks too), so
that reading a results file needs no torch.
"""

from __future__ import annotations

from lessons_lib.errors import FieldName, input_error
from lessons_lib.validation import check_int

__all__ = ["DEFAULT_MAX_DISTANCE", "INT8_MAX_DISTANCE", "DEFAULT_LOG_MAX", "exact_limit", "check_bucket_sizes"]

DEFAULT_MAX_DISTANCE = 10
# The largest ``max_distance`` whose bucket ids (``max_distance + 3`` of them) fit an int8, the type
# the experiments keep bucket matrices in.
INT8_MAX_DISTANCE = 127 - 3
# With log buckets, the distance from which everything shares the last bucket, unless told otherwise.
DEFAULT_LOG_MAX = 64


def exact_limit(max_distance: int, exact: int | None) -> int:
    """The longest distance that keeps its own bucket under log buckets (default ``max_distance // 2``, at least 1)."""
    return exact if exact is not None else max(1, max_distance // 2)


def check_bucket_sizes(max_distance: int, log_buckets: bool, exact: int | None = None,
                       log_max: int = DEFAULT_LOG_MAX) -> None:
    """Raise :class:`~lessons_lib.errors.CourseInputError` unless these make a bucket scheme
    (the fields of :class:`lessons_lib.syntax.buckets.BucketScheme`)."""
    check_int(max_distance, FieldName("max_distance"))
    if log_buckets:
        exact = exact_limit(max_distance, exact)
        if not 1 <= exact < max_distance:
            raise input_error(FieldName("exact"), f" must be in [1, max_distance) for log buckets, got {exact}")
        if log_max <= exact + 1:
            raise input_error(FieldName("log_max"), f" must exceed exact + 1 = {exact + 1}, got {log_max}")
