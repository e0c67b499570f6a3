"""How many distance buckets a bucket scheme has by default and at most, without torch.

:mod:`lessons_lib.syntax.buckets` turns distances into bucket ids (with torch); a config that only
names a scheme's size (:class:`lessons_lib.ablation.config.ExperimentConfig`, and through it the
flags of ``lessons experiment``) reads the two numbers here.
"""

from __future__ import annotations

__all__ = ["DEFAULT_MAX_DISTANCE", "INT8_MAX_DISTANCE"]

DEFAULT_MAX_DISTANCE = 10
# The largest ``max_distance`` whose bucket ids (``max_distance + 3`` of them) fit an int8, the type
# the experiments keep bucket matrices in.
INT8_MAX_DISTANCE = 127 - 3
