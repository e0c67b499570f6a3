"""A character vocabulary for Chinese sentence pairs.

Chinese questions are short and a character-level vocabulary needs no word segmenter,
which is what the textbook chapter does too. Ids 0–3 are the special tokens
``[PAD]`` (0, so that padding is the zero id everywhere), ``[UNK]``, ``[CLS]`` and ``[SEP]``;
then the characters of the training split, most frequent first (ties by code point, so the
ids do not depend on file order). Whitespace is not a token.

A model's embedding rows only mean something with the vocabulary it was trained with, so
a saved vocabulary carries a fingerprint and :meth:`Vocabulary.check_fingerprint` turns a
mismatch with a checkpoint into a clear error instead of silently wrong predictions.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Iterable, Sequence

from lessons_lib.errors import CourseInputError, FieldName, file_errors, input_error, reworded
from lessons_lib.files import atomic_write
from lessons_lib.validation import check_int

__all__ = ["PAD", "UNK", "CLS", "SEP", "SPECIAL_TOKENS", "tokenize_chars", "Vocabulary"]

PAD, UNK, CLS, SEP = "[PAD]", "[UNK]", "[CLS]", "[SEP]"
SPECIAL_TOKENS = (PAD, UNK, CLS, SEP)
_FORMAT = "lessons-char-vocab/1"


def tokenize_chars(text: str) -> list[str]:
    """The characters of ``text``, whitespace left out."""
    if not isinstance(text, str):
        raise input_error(FieldName("text"), f" must be a str, got {type(text).__name__}")
    return [ch for ch in text if not ch.isspace()]


class Vocabulary:
    """Token ↔ id mapping; ``tokens[i]`` is the token of id ``i``."""

    def __init__(self, tokens: Sequence[str]):
        tokens = list(tokens)
        if tuple(tokens[: len(SPECIAL_TOKENS)]) != SPECIAL_TOKENS:
            raise CourseInputError(f"a vocabulary must start with {SPECIAL_TOKENS}, got {tokens[:4]}")
        if len(set(tokens)) != len(tokens):
            duplicates = sorted(t for t, n in Counter(tokens).items() if n > 1)
            raise CourseInputError(f"vocabulary tokens must be unique; repeated: {duplicates[:10]}")
        self.tokens = tokens
        self._index = {token: i for i, token in enumerate(tokens)}

    pad_id = 0
    unk_id = 1
    cls_id = 2
    sep_id = 3

    @classmethod
    def build(cls, texts: Iterable[str], min_freq: int = 1) -> "Vocabulary":
        """Count the characters of ``texts`` (the training sentences) and keep those seen ``min_freq`` times."""
        check_int(min_freq, FieldName("min_freq"))
        counts: Counter[str] = Counter()
        for text in texts:
            counts.update(tokenize_chars(text))
        kept = sorted((ch for ch, n in counts.items() if n >= min_freq), key=lambda ch: (-counts[ch], ch))
        return cls([*SPECIAL_TOKENS, *kept])

    def __len__(self) -> int:
        return len(self.tokens)

    def __contains__(self, token: str) -> bool:
        return token in self._index

    def token_id(self, token: str) -> int:
        """The id of ``token``; ``[UNK]``'s id for a token not in the vocabulary."""
        return self._index.get(token, self.unk_id)

    def encode(self, text: str) -> list[int]:
        """Ids of the characters of ``text`` (no special tokens added)."""
        return [self.token_id(ch) for ch in tokenize_chars(text)]

    def decode(self, ids: Iterable[int]) -> list[str]:
        """Tokens of ``ids``; an id outside the vocabulary is an error."""
        out = []
        for i in ids:
            i = int(i)
            if not 0 <= i < len(self.tokens):
                raise CourseInputError(f"id {i} is outside the vocabulary (size {len(self.tokens)})")
            out.append(self.tokens[i])
        return out

    def fingerprint(self) -> str:
        """A short hash of the token list: equal fingerprints mean identical id assignments."""
        return hashlib.sha256("\n".join(self.tokens).encode("utf-8")).hexdigest()[:16]

    def check_fingerprint(self, expected: str | None, where: str) -> None:
        """Raise if this vocabulary is not the one ``where`` (e.g. a checkpoint) was made with."""
        if expected != self.fingerprint():
            raise CourseInputError(
                f"vocabulary mismatch: {where} was made with vocabulary {expected}, but the vocabulary "
                f"given has fingerprint {self.fingerprint()} ({len(self)} tokens); token ids would mean "
                "different characters. Use the vocab.json saved next to the checkpoint."
            )

    def to_dict(self) -> dict:
        return {"format": _FORMAT, "fingerprint": self.fingerprint(), "tokens": self.tokens}

    def to_json(self) -> str:
        """The text of a ``vocab.json`` (UTF-8 JSON, one list of tokens)."""
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=0) + "\n"

    def save(self, path: str | Path) -> Path:
        """Write the vocabulary as JSON (UTF-8, one list of tokens), atomically."""
        path = Path(path)
        with file_errors(path.parent, "create the folder"):
            path.parent.mkdir(parents=True, exist_ok=True)
        return atomic_write(path, self.to_json())

    @classmethod
    def from_dict(cls, data: dict, where: str = "vocabulary") -> "Vocabulary":
        if (not isinstance(data, dict) or data.get("format") != _FORMAT or not isinstance(data.get("tokens"), list)
                or not all(isinstance(t, str) for t in data["tokens"])):
            raise CourseInputError(f"{where}: not a course vocabulary (expected format {_FORMAT!r})")
        try:
            vocab = cls(data["tokens"])
        except CourseInputError as error:
            raise reworded(error, f"{where}: ") from None
        if data.get("fingerprint") not in (None, vocab.fingerprint()):
            raise CourseInputError(f"{where}: its token list does not match its recorded fingerprint (edited by hand?)")
        return vocab

    @classmethod
    def load(cls, path: str | Path) -> "Vocabulary":
        """Read a vocabulary saved by :meth:`save`."""
        path = Path(path)
        if not path.is_file():
            raise CourseInputError(f"vocabulary file not found: {path}")
        try:
            with file_errors(path):
                data = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise CourseInputError(f"{path}: not valid JSON ({error})") from None
        return cls.from_dict(data, where=str(path))
