"""The course's word segmentation: jieba, through spaCy's Chinese tokenizer.

Every place that needs words — the treebank, the parser at inference, the lessons —
segments the same way, so the parser sees at inference the words it was trained on.
"""

from __future__ import annotations

import functools
import logging

from lessons_lib.errors import FieldName, input_error

JIEBA_TOKENIZER_CONFIG = {"nlp": {"tokenizer": {"segmenter": "jieba"}}}


def silence_jieba() -> None:
    """jieba logs its dictionary loading to stderr; keep notebook and test output clean."""
    import jieba

    jieba.setLogLevel(logging.WARNING)


@functools.lru_cache(maxsize=1)
def jieba_nlp():
    """A blank spaCy Chinese pipeline whose tokenizer segments with jieba (cached)."""
    import spacy

    silence_jieba()
    return spacy.blank("zh", config=JIEBA_TOKENIZER_CONFIG)


def segment(text: str) -> list[str]:
    """The course's words of ``text`` (jieba via spaCy), whitespace tokens included.

    Raises:
        CourseInputError: ``text`` is not a non-empty string.
    """
    if not isinstance(text, str) or not text.strip():
        raise input_error(FieldName("text"), f" must be a non-empty string, got {text!r}")
    return [token.text for token in jieba_nlp()(text)]
