"""A folder of translation pairs: the one format the course's translation code reads.

A folder holds ``train.tsv``, ``dev.tsv`` and ``test.tsv``, UTF-8, one pair a line, with the
header ``id<TAB>source<TAB>reference<TAB>group``:

- ``id``: unique within the folder (across all three splits), no whitespace;
- ``source``: the Chinese sentence, in simplified characters;
- ``reference``: its English translation, as written (the metric tokenizes it);
- ``group``: a label for reading results by kind of sentence (the course corpus uses
  ``syntax`` where the tree decides the translation and ``plain`` where it does not; real
  data uses ``all``).

A folder may also hold ``trees.conllu``: one gold tree per source sentence, keyed by
``# sent_id = <id>`` and spelling the source (``# text``). Without it, trees come from a parser.

Nothing is dropped silently: a malformed line raises :class:`CourseInputError` naming the file
and line.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from lessons_lib.errors import CourseInputError, file_errors
from lessons_lib.files import atomic_write

__all__ = ["SPLITS", "HEADER", "TREES_FILE", "TranslationPair", "TranslationData", "read_pairs_file",
           "format_pairs", "write_pairs_file", "read_pairs_folder", "pairs_sha256"]

SPLITS = ("train", "dev", "test")
HEADER = ("id", "source", "reference", "group")
TREES_FILE = "trees.conllu"


@dataclass(frozen=True)
class TranslationPair:
    """One source sentence and its reference translation."""

    id: str
    source: str
    reference: str
    group: str = "all"


@dataclass(frozen=True)
class TranslationData:
    """The three splits of a pairs folder, and the folder they came from."""

    folder: Path
    train: tuple[TranslationPair, ...]
    dev: tuple[TranslationPair, ...]
    test: tuple[TranslationPair, ...]

    def split(self, name: str) -> tuple[TranslationPair, ...]:
        if name not in SPLITS:
            raise CourseInputError(f"split must be one of {', '.join(SPLITS)}; got {name!r}")
        return getattr(self, name)

    def groups(self, split: str = "test") -> list[str]:
        """The groups of ``split``, in order of first appearance."""
        return list(dict.fromkeys(pair.group for pair in self.split(split)))

    @property
    def trees_path(self) -> Path | None:
        """``trees.conllu`` in the folder, or ``None``."""
        path = self.folder / TREES_FILE
        return path if path.is_file() else None


def _checked_fields(fields: list[str], where: str) -> TranslationPair:
    if len(fields) != len(HEADER):
        raise CourseInputError(f"{where}: expected {len(HEADER)} tab-separated fields "
                               f"({', '.join(HEADER)}), found {len(fields)}")
    pair_id, source, reference, group = (field.strip() for field in fields)
    for name, value in zip(HEADER, (pair_id, source, reference, group)):
        if not value:
            raise CourseInputError(f"{where}: the field `{name}` is empty")
    if any(ch.isspace() for ch in pair_id + group):
        raise CourseInputError(f"{where}: `id` and `group` may not contain whitespace")
    return TranslationPair(pair_id, source, reference, group)


def read_pairs_file(path: str | Path) -> list[TranslationPair]:
    """The pairs of one split file, checked line by line (see the module docstring)."""
    path = Path(path)
    with file_errors(path):
        raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise CourseInputError(f"{path}: not UTF-8 (byte {error.start})") from None
    lines = text.splitlines()
    if not lines or tuple(field.strip() for field in lines[0].split("\t")) != HEADER:
        raise CourseInputError(f"{path}:1: the first line must be the header {'<TAB>'.join(HEADER)}")
    pairs = [_checked_fields(line.split("\t"), f"{path}:{number}")
             for number, line in enumerate(lines[1:], start=2) if line.strip()]
    if not pairs:
        raise CourseInputError(f"{path}: no pairs after the header")
    return pairs


def format_pairs(pairs: Iterable[TranslationPair]) -> str:
    """The text of a split file holding ``pairs`` (header included), each pair checked as the reader would."""
    lines = ["\t".join(HEADER)]
    for index, pair in enumerate(pairs):
        _checked_fields([pair.id, pair.source, pair.reference, pair.group], f"pair {index} ({pair.id!r})")
        if any("\t" in value or "\n" in value for value in (pair.source, pair.reference)):
            raise CourseInputError(f"pair {index} ({pair.id!r}): a tab or a line break inside a field")
        lines.append("\t".join((pair.id, pair.source, pair.reference, pair.group)))
    return "\n".join(lines) + "\n"


def write_pairs_file(pairs: Iterable[TranslationPair], path: str | Path) -> None:
    """Write ``pairs`` in the format :func:`read_pairs_file` reads (atomically)."""
    atomic_write(Path(path), format_pairs(pairs))


def read_pairs_folder(folder: str | Path) -> TranslationData:
    """The three splits of ``folder``; ids must be unique across them."""
    folder = Path(folder)
    if not folder.is_dir():
        raise CourseInputError(f"{folder}: not a folder of translation pairs (train.tsv, dev.tsv, test.tsv)")
    for name in SPLITS:
        if not (folder / f"{name}.tsv").is_file():
            raise CourseInputError(f"{folder}: no {name}.tsv file, so not a folder of translation pairs "
                                   "(train.tsv, dev.tsv, test.tsv)")
    splits = {name: tuple(read_pairs_file(folder / f"{name}.tsv")) for name in SPLITS}
    seen: dict[str, str] = {}
    for name, pairs in splits.items():
        for pair in pairs:
            if pair.id in seen:
                raise CourseInputError(f"{folder / (name + '.tsv')}: the id {pair.id!r} is also in {seen[pair.id]}.tsv")
            seen[pair.id] = name
    return TranslationData(folder, splits["train"], splits["dev"], splits["test"])


def pairs_sha256(pairs: Sequence[TranslationPair]) -> str:
    """A digest of the pairs' content, in order: it tells which data a run read."""
    digest = hashlib.sha256()
    for pair in pairs:
        digest.update("\t".join((pair.id, pair.source, pair.reference, pair.group)).encode("utf-8") + b"\n")
    return digest.hexdigest()

