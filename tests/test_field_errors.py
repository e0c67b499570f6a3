"""Errors that know the field they are about, and the command line's flags made from those fields.

A config's or an option's check raises a :class:`CourseInputError` whose message is built
from parts, some of them :class:`FieldName` s; Python callers read the message as before
(``EncoderConfig.d_model``, ```train_fraction```), and :func:`flag_names` shows each field
as the flag it belongs to without reading the message's text.
"""

from __future__ import annotations

import pickle

import pytest

import lessons_lib.cli.options as options
from lessons_lib.cli.options import field_flag, flag_names
from lessons_lib.errors import CourseInputError, FieldName, NamePhrase, input_error, reworded
from lessons_lib.pairs.config import TrainConfig
from lessons_lib.pairs.data import check_train_fraction
from lessons_lib.transformer.config import EncoderConfig


class _NoRegex:
    """Stands in for the ``re`` module: any use of it fails the test."""

    def __getattr__(self, name):
        raise AssertionError(f"re.{name} used while naming flags")


@pytest.fixture
def no_regex(monkeypatch):
    monkeypatch.setattr(options, "re", _NoRegex())


def _raised(build) -> CourseInputError:
    with pytest.raises(CourseInputError) as caught:
        build()
    return caught.value


def test_a_config_error_names_its_fields_and_reads_as_before_from_python():
    error = _raised(lambda: EncoderConfig(vocab_size=10, d_model=10, n_heads=4))
    assert type(error) is CourseInputError
    assert str(error) == "EncoderConfig.d_model=10 must be divisible by EncoderConfig.n_heads=4"
    assert [(f.owner, f.field) for f in error.fields] == [("EncoderConfig", "d_model"), ("EncoderConfig", "n_heads")]


def test_an_option_error_names_its_field_in_backquotes():
    error = _raised(lambda: check_train_fraction(0))
    assert str(error) == "`train_fraction` must be in (0, 1], got 0"
    assert [(f.owner, f.field) for f in error.fields] == [(None, "train_fraction")]


def test_a_field_error_becomes_its_flag_and_a_field_without_one_stays(no_regex):
    with pytest.raises(CourseInputError) as caught, flag_names(["d_model", "epochs"]):
        EncoderConfig(vocab_size=10, d_model=10, n_heads=4)
    assert str(caught.value) == "--d-model=10 must be divisible by EncoderConfig.n_heads=4"
    with pytest.raises(CourseInputError) as caught, flag_names(["epochs"]):
        check_train_fraction(1.5)
    assert str(caught.value) == "`train_fraction` must be in (0, 1], got 1.5"


def test_without_a_list_of_options_every_config_field_is_a_flag_and_no_option_is(no_regex):
    with pytest.raises(CourseInputError) as caught, flag_names():
        TrainConfig(epochs=0)
    assert str(caught.value) == "--epochs must be a positive int, got 0"
    with pytest.raises(CourseInputError) as caught, flag_names():
        check_train_fraction(0)
    assert str(caught.value) == "`train_fraction` must be in (0, 1], got 0"


def test_only_the_field_is_renamed_never_text_that_looks_like_one(no_regex):
    error = input_error(FieldName("preset"), " must be a name, got 'EncoderConfig.d_model' or `epochs`")
    shown = error.renamed(lambda name: field_flag(name, ["preset", "d_model", "epochs"]))
    assert str(shown) == "--preset must be a name, got 'EncoderConfig.d_model' or `epochs`"


def test_an_error_given_as_plain_text_passes_through_unchanged():
    error = CourseInputError("`epochs` must be a positive int")
    with pytest.raises(CourseInputError) as caught, flag_names(["epochs"]):
        raise error
    assert caught.value is error and error.fields == ()


def test_a_phrase_and_a_file_around_an_error_keep_its_field():
    name = NamePhrase("each of ", FieldName("seeds"))
    assert name == "each of `seeds`"
    error = reworded(input_error(name, " must be a non-negative int, got -1"), "runs.json: ")
    assert str(error) == "runs.json: each of `seeds` must be a non-negative int, got -1"
    assert str(error.renamed(lambda f: field_flag(f, ["seeds"]))) == "runs.json: each of --seeds must be a non-negative int, got -1"


def test_an_error_keeps_its_fields_through_pickle():
    error = pickle.loads(pickle.dumps(_raised(lambda: TrainConfig(lr=0.0))))
    assert str(error) == "TrainConfig.lr must be > 0.0, got 0.0"
    assert str(error.renamed(lambda f: field_flag(f))) == "--lr must be > 0.0, got 0.0"
