"""strict_from_dict: configuration round trips, unknown keys are errors."""

from dataclasses import asdict, dataclass

import pytest

from lessons_lib.validation import strict_from_dict
from lessons_lib.errors import CourseInputError


@dataclass
class _Config:
    width: int
    depth: int = 1


def test_round_trip():
    config = _Config(width=8, depth=2)
    assert strict_from_dict(_Config, asdict(config)) == config


def test_unknown_key_is_named():
    with pytest.raises(CourseInputError, match=r"unknown _Config fields: \['heads'\]"):
        strict_from_dict(_Config, {"width": 8, "heads": 4})
