"""Reading LCQMC-format question-pair files, and finding them.

The format is one pair a line, ``text_a<TAB>text_b<TAB>label`` with ``label`` 0 (different
meaning) or 1 (same meaning); an optional header line whose third column is ``label``;
UTF-8 with or without a byte-order mark; LF or CRLF line ends. The real LCQMC
(238,766 / 8,802 / 12,500 pairs) is not redistributable: :func:`resolve_data_dir` finds it
from an argument or the ``LCQMC_DIR`` environment variable, and falls back to the sample
written for the course (``data/lcqmc_sample``), always saying which one it chose.

Nothing is dropped silently: a malformed line raises :class:`CourseInputError` naming the
file and line, or, in lenient mode, is skipped and listed in :attr:`LcqmcSplit.skipped`
(:func:`write_skipped_lines` writes every one of them, with its reason, to a file). An empty
split, and a folder holding two candidate files for one split (``train.txt`` and
``train.tsv``), are errors too. So is a sentence longer than :data:`MAX_SENTENCE_CHARS`
characters: parsing it and its tree-distance matrix grow with its length squared, so such a
line is refused (or skipped) before any of that work starts. Exact duplicates and pairs seen with both labels are counted
(and kept, as in the source). :func:`examples_fingerprint` identifies a list of pairs, so
that a run or its predictions can tell which data they came from. :func:`subsample` draws the
fixed training subset of a low-resource run (the same for every run of one seed);
:func:`distinct_sentences` lists the sentences some splits hold (what a parser must parse);
:func:`char_overlap` measures how many characters a pair's two questions share.
"""

from __future__ import annotations

import hashlib
import os
import random
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence, TypeVar

from lessons_lib.errors import CourseInputError, FieldName, file_errors, input_error
from lessons_lib.validation import check_number
from lessons_lib.files import atomic_write
from lessons_lib.paths import LCQMC_ENV_VAR, LCQMC_SAMPLE_DIR

__all__ = [
    "SPLITS",
    "MAX_SENTENCE_CHARS",
    "PairExample",
    "SkippedLine",
    "LcqmcSplit",
    "LcqmcData",
    "DataSource",
    "LCQMC_SHA256",
    "examples_sha256",
    "check_pairs_sha256",
    "FINGERPRINT_DIGITS",
    "examples_fingerprint",
    "check_train_fraction",
    "subsample",
    "distinct_sentences",
    "char_overlap",
    "read_lcqmc_file",
    "write_skipped_lines",
    "format_skipped_lines",
    "find_split_file",
    "resolve_data_dir",
    "load_lcqmc",
]

SPLITS = ("train", "dev", "test")
# The longest sentence the course reads, in characters. LCQMC's questions are far shorter; a
# 100,000-character one would need a 100,000² tree-distance matrix (tens of GB) and minutes of
# parsing before the model's max_len cuts it, and a batch of 500-character ones stays ~100 MB.
MAX_SENTENCE_CHARS = 500
# File names tried for each split, in order: the sample's, the original release's, others seen in the wild.
# lcqmc_{split}.tsv is how the public copy names its files; a case-insensitive file system sees it
# and LCQMC_{split}.tsv as one file, counted once below.
_SPLIT_FILE_PATTERNS = ("{split}.tsv", "{split}.txt", "LCQMC_{split}.tsv", "LCQMC_{split}.txt", "lcqmc_{split}.tsv",
                        "lcqmc_{split}.txt", "{split}")


_Item = TypeVar("_Item")


@dataclass(frozen=True)
class PairExample:
    """One question pair. ``line`` is the 1-based line number in its file (0 if made in code)."""

    text_a: str
    text_b: str
    label: int
    line: int = 0


@dataclass(frozen=True)
class SkippedLine:
    """A line that lenient reading skipped, and why."""

    line: int
    reason: str
    text: str


# The real LCQMC's splits as the course reads them (:func:`examples_sha256`); for its
# tab-separated files these equal the files' own SHA-256 once the header line is removed.
LCQMC_SHA256 = {
    "train": "8d9d196cb8b86e53a6ccb9d2c0682844d973eebe089590b2c46388a03d63f639",
    "dev": "d3cd41ed89b8f6196a76ebff2aa03d5ecf42edcd12942aa865d34f7e570af7c2",
    "test": "8969f9c16050f40df9da6f591443a47bc14c17a504a354ee4cc4ab5b9aa303d9",
}


def examples_sha256(examples: Sequence[PairExample]) -> str:
    """The SHA-256 of the pairs written one per line, ``text_a<TAB>text_b<TAB>label``, in order."""
    digest = hashlib.sha256()
    for ex in examples:
        digest.update(f"{ex.text_a}\t{ex.text_b}\t{ex.label}\n".encode("utf-8"))
    return digest.hexdigest()


FINGERPRINT_DIGITS = 16


def examples_fingerprint(examples: Sequence[PairExample]) -> str:
    """A short hash of the pairs (texts and labels, in order): equal fingerprints mean the same data."""
    return examples_sha256(examples)[:FINGERPRINT_DIGITS]


@dataclass
class LcqmcSplit:
    """The pairs of one file, with what reading it found.

    Attributes:
        name: ``"train"``, ``"dev"``, ``"test"`` or the file name.
        path: the file read.
        examples: every well-formed pair, in file order (duplicates kept).
        skipped: lines skipped in lenient mode (empty in strict mode).
        had_header: whether the first line was a header.
    """

    name: str
    path: Path
    examples: list[PairExample]
    skipped: list[SkippedLine] = field(default_factory=list)
    had_header: bool = False

    def __len__(self) -> int:
        return len(self.examples)

    def fingerprint(self) -> str:
        """:func:`examples_fingerprint` of the split's pairs."""
        return examples_fingerprint(self.examples)

    def label_counts(self) -> dict[int, int]:
        counts = Counter(ex.label for ex in self.examples)
        return {0: counts.get(0, 0), 1: counts.get(1, 0)}

    def duplicate_count(self) -> int:
        """Lines that repeat an earlier line exactly (same order, same label)."""
        counts = Counter((ex.text_a, ex.text_b, ex.label) for ex in self.examples)
        return sum(n - 1 for n in counts.values())

    def conflicting_pairs(self) -> list[tuple[str, str]]:
        """Pairs (in either order) that appear with label 0 somewhere and label 1 elsewhere."""
        labels: dict[tuple[str, str], set[int]] = {}
        for ex in self.examples:
            key = tuple(sorted((ex.text_a, ex.text_b)))
            labels.setdefault(key, set()).add(ex.label)  # type: ignore[arg-type]
        return sorted(key for key, seen in labels.items() if len(seen) == 2)  # type: ignore[misc]

    def summary(self) -> str:
        """One line: size, labels, duplicates, conflicts, skipped lines."""
        counts = self.label_counts()
        total = max(len(self.examples), 1)
        text = (
            f"{self.name}: {len(self.examples)} pairs (label 1: {counts[1]}, {counts[1] / total:.1%}; "
            f"label 0: {counts[0]}), exact duplicates: {self.duplicate_count()}, "
            f"pairs with both labels: {len(self.conflicting_pairs())}"
        )
        if self.skipped:
            lines = ", ".join(str(s.line) for s in self.skipped[:10])
            more = " ..." if len(self.skipped) > 10 else ""
            text += f", skipped lines: {len(self.skipped)} (lines {lines}{more})"
        return text


def _is_header(fields: list[str]) -> bool:
    return len(fields) == 3 and fields[2].strip().lower() == "label"


def _parse_line(fields: list[str]) -> tuple[str, str, int] | str:
    """The pair of a split line, or the reason it is malformed."""
    if len(fields) != 3:
        return f"expected 3 tab-separated columns (text_a, text_b, label), found {len(fields)}"
    text_a, text_b, label_text = (f.strip() for f in fields)
    if label_text not in ("0", "1"):
        return f"label must be 0 or 1, found {label_text!r}"
    if not text_a:
        return "empty first sentence (text_a)"
    if not text_b:
        return "empty second sentence (text_b)"
    for which, text in (("first sentence (text_a)", text_a), ("second sentence (text_b)", text_b)):
        if len(text) > MAX_SENTENCE_CHARS:
            return f"the {which} has {len(text):,} characters, more than the {MAX_SENTENCE_CHARS:,} the course reads"
        if not any(_visible(ch) for ch in text):
            return f"the {which} has no visible character (only control, zero-width or space characters)"
    return text_a, text_b, int(label_text)


def _visible(ch: str) -> bool:
    """Not a control, format (zero-width), unassigned or separator character (Unicode categories C*, Z*)."""
    return unicodedata.category(ch)[0] not in "CZ"


def read_lcqmc_file(path: str | Path, *, lenient: bool = False, name: str | None = None) -> LcqmcSplit:
    """Read one LCQMC-format file.

    Args:
        path: the file.
        lenient: skip malformed lines (recorded in ``skipped``) instead of raising.
        name: the split's name in reports; defaults to the file name.

    Raises:
        CourseInputError: missing file, or (strict mode) a malformed line or bytes that are
            not UTF-8; the message names the file and the 1-based line number.
    """
    path = Path(path)
    if not path.is_file():
        raise CourseInputError(f"LCQMC file not found: {path}")
    with file_errors(path):
        raw_lines = path.read_bytes().split(b"\n")
    if raw_lines and raw_lines[-1] == b"":  # the newline that ends the last line
        raw_lines.pop()
    examples: list[PairExample] = []
    skipped: list[SkippedLine] = []
    had_header = False
    for number, raw in enumerate(raw_lines, start=1):
        if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        raw = raw.rstrip(b"\r")
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            reason = f"not valid UTF-8 ({error.reason} at byte {error.start})"
            line = raw.decode("utf-8", errors="replace")
            parsed: tuple[str, str, int] | str = reason
        else:
            fields = line.split("\t")
            if number == 1 and _is_header(fields):
                had_header = True
                continue
            parsed = _parse_line(fields) if line.strip() else "empty line"
        if isinstance(parsed, str):
            if not lenient:
                raise CourseInputError(
                    f"{path}, line {number}: {parsed}; line was {line[:80]!r} "
                    "(fix or remove it; `lessons train`, `lessons baseline` and `lessons data-stats` can skip and "
                    "list such lines with --lenient, while `lessons preparse` and `lessons experiment` read every line)"
                )
            skipped.append(SkippedLine(number, parsed, line))
            continue
        examples.append(PairExample(parsed[0], parsed[1], parsed[2], number))
    return LcqmcSplit(name or path.name, path, examples, skipped, had_header)


def find_split_file(data_dir: str | Path, split: str) -> Path:
    """The file of ``split`` in ``data_dir`` (``train.tsv``, ``train.txt``, ...).

    Raises:
        CourseInputError: unknown split, no such file (the message lists the names tried, or names
            the folder that has a split file's name), or more than one (which one was meant is not
            for the course to guess).
    """
    if split not in SPLITS:
        raise input_error(FieldName("split"), f" must be one of {SPLITS}, got {split!r}")
    data_dir = Path(data_dir)
    names = [pattern.format(split=split) for pattern in _SPLIT_FILE_PATTERNS]
    found: list[Path] = []
    for path in (data_dir / name for name in names):
        if path.is_file() and not any(path.samefile(other) for other in found):
            found.append(path)
    if len(found) > 1:
        raise CourseInputError(f"{data_dir} holds {len(found)} {split} files ({', '.join(p.name for p in found)}): "
                               "keep one, or point --data-dir at a folder with one file per split")
    if not found:
        folders = [data_dir / name for name in names if (data_dir / name).is_dir()]
        if folders:  # a split's name on a folder: say so rather than that nothing is there
            raise CourseInputError(f"{folders[0]} is a folder, not a file: the {split} split must be a file of "
                                   "tab-separated pairs")
        raise CourseInputError(f"no {split} file in {data_dir}: tried {', '.join(names)}")
    return found[0]


@dataclass(frozen=True)
class DataSource:
    """Where the pairs come from. ``origin`` is ``"argument"``, ``"environment"``, ``"sample"``
    or ``"generated"`` (made in code, e.g. :mod:`lessons_lib.syntax.attachment_control`; ``path``
    is then only a name)."""

    path: Path
    origin: str

    @property
    def is_sample(self) -> bool:
        return self.origin == "sample"

    def describe(self) -> str:
        """A sentence (in Chinese, for lessons) naming the data without an absolute path."""
        if self.is_sample:
            return "课程自带的样例数据 (data/lcqmc_sample，为本课程原创，不是 LCQMC 原文)"
        if self.origin == "generated":
            return f"课程在代码里生成的句对 ({self.path.name})，不是 LCQMC"
        how = "参数 data_dir" if self.origin == "argument" else f"环境变量 {LCQMC_ENV_VAR}"
        return f"用户提供的真实 LCQMC 数据（由{how}指定的目录 {self.path.name}/）"


def resolve_data_dir(data_dir: str | Path | None = None) -> DataSource:
    """Choose the data: ``data_dir`` if given, else ``$LCQMC_DIR`` if set, else the sample.

    Raises:
        CourseInputError: a named directory (argument or environment variable) does not exist.
    """
    if data_dir not in (None, ""):
        path = Path(data_dir).expanduser()
        if not path.is_dir():
            raise input_error(FieldName("data_dir"), f" is not a directory: {path}")
        return DataSource(path, "argument")
    env_value = os.environ.get(LCQMC_ENV_VAR, "")
    if env_value:
        path = Path(env_value).expanduser()
        if not path.is_dir():
            raise CourseInputError(f"environment variable {LCQMC_ENV_VAR} names no directory: {path}")
        return DataSource(path, "environment")
    return DataSource(LCQMC_SAMPLE_DIR, "sample")


@dataclass
class LcqmcData:
    """The three splits and where they came from."""

    source: DataSource
    train: LcqmcSplit
    dev: LcqmcSplit
    test: LcqmcSplit

    def summary(self) -> str:
        return "\n".join(split.summary() for split in (self.train, self.dev, self.test))

    def pairs_sha256(self) -> dict[str, str]:
        """``{"train": …, "dev": …, "test": …}``: :func:`examples_sha256` of each split, what results files record."""
        return {split: examples_sha256(getattr(self, split).examples) for split in SPLITS}


def check_pairs_sha256(path: str | Path, found: Mapping[str, str], expected: Mapping[str, str]) -> None:
    """One line naming ``path`` when the pairs a results file records (``found``) are not ``expected``."""
    for split, sha in expected.items():
        if found.get(split) != sha:
            raise CourseInputError(f"{path}: made on other data: its {split} pairs have SHA-256 "
                                   f"{str(found.get(split))[:12]}…, the expected data's {sha[:12]}…")


def load_lcqmc(data_dir: str | Path | None = None, *, lenient: bool = False) -> LcqmcData:
    """Resolve the data directory (see :func:`resolve_data_dir`) and read train, dev and test."""
    source = resolve_data_dir(data_dir)
    splits = {
        split: read_lcqmc_file(find_split_file(source.path, split), lenient=lenient, name=split)
        for split in SPLITS
    }
    for split in splits.values():
        if not split.examples:
            skipped = f" ({len(split.skipped)} malformed lines skipped)" if split.skipped else ""
            raise CourseInputError(f"{split.path}: the {split.name} split holds no pairs{skipped}")
    return LcqmcData(source, splits["train"], splits["dev"], splits["test"])


def write_skipped_lines(splits: Sequence[LcqmcSplit], path: str | Path) -> int:
    """Write every line that lenient reading skipped to ``path`` (TSV: file, line, reason, text); returns how many.

    The text is written with tabs and line breaks escaped, so that each skipped line stays one row.
    """
    text, count = format_skipped_lines(splits)
    atomic_write(path, text)
    return count


def format_skipped_lines(splits: Sequence[LcqmcSplit]) -> tuple[str, int]:
    """The TSV text of :func:`write_skipped_lines` and how many lines it lists."""
    rows = ["file\tline\treason\ttext"]
    count = 0
    for split in splits:
        for skipped in split.skipped:
            text = skipped.text.replace("\\", "\\\\").replace("\t", "\\t").replace("\r", "\\r")
            rows.append(f"{split.path}\t{skipped.line}\t{skipped.reason}\t{text}")
            count += 1
    return "\n".join(rows) + "\n", count


def check_train_fraction(fraction: float) -> float:
    """``fraction`` when it is a share of the training split to draw, in (0, 1]; the one check of
    every ``train_fraction`` (an experiment's config checks it before any data is read)."""
    if not 0.0 < check_number(fraction, FieldName("train_fraction")) <= 1.0:
        raise input_error(FieldName("train_fraction"), f" must be in (0, 1], got {fraction!r}")
    return fraction


def subsample(examples: Sequence[_Item], fraction: float, seed: int = 0) -> list[_Item]:
    """A random ``fraction`` of the examples (at least one), in their original order (any items:
    question pairs here, translation pairs in :mod:`lessons_lib.translation`)."""
    check_train_fraction(fraction)
    if fraction == 1.0:
        return list(examples)
    keep = max(1, round(fraction * len(examples)))
    chosen = sorted(random.Random(seed).sample(range(len(examples)), keep))
    return [examples[i] for i in chosen]


def distinct_sentences(*splits: Sequence[PairExample]) -> list[str]:
    """Every distinct sentence (``text_a`` and ``text_b``) of the given splits, in first-seen order."""
    return list(dict.fromkeys(t for split in splits for ex in split for t in (ex.text_a, ex.text_b)))


def char_overlap(a: str, b: str) -> float:
    """Jaccard overlap of the two questions' character sets, in [0, 1] (0 when both are empty)."""
    set_a, set_b = set(a), set(b)
    union = len(set_a | set_b)
    return len(set_a & set_b) / union if union else 0.0
