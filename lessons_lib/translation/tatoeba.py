"""The Tatoeba Chinese–English pairs (``cmn.txt``), read from outside the repository and split into a pairs folder.

The file holds one pair a line, ``English<TAB>Chinese<TAB>attribution``, the attribution naming both sentences' ids
(``CC-BY 2.0 (France) Attribution: tatoeba.org #<english id> (<user>) & #<chinese id> (<user>)``).
The sentences are Tatoeba's (CC BY 2.0 FR): like the real LCQMC, the file is read where the
user keeps it (``--source`` or ``$TATOEBA_FILE``), checked by its SHA-256 (:data:`TATOEBA_SHA256`),
and nothing derived from it that holds text is ever written inside the repository.

What :func:`read_tatoeba` does, line by line (nothing is dropped silently):

- a malformed line (not three fields, an empty field, an attribution without the two ids, a
  sentence id whose text differs from an earlier line's) raises one
  :class:`~lessons_lib.errors.CourseInputError` naming the file and line, never quoting it;
- the Chinese side goes from traditional to simplified characters with OpenCC's ``t2s``
  configuration (the course's format wants simplified sources; Tatoeba mixes both scripts);
  how many sentences and characters that changed is counted;
- a line repeating an earlier pair (the same two ids, or the same English text with the same
  converted Chinese text) is left out and counted.

:func:`split_tatoeba` keeps every sentence on one side: pairs sharing an English sentence or a
Chinese sentence (by id, or by identical text — after conversion for the Chinese) form one
connected component (union–find), and whole components go to train, dev or test. The
components are shuffled with the seed and laid end to end; each goes to the split in which its
middle pair falls, cut at :data:`SPLIT_SHARES` (80/10/10 of the pairs), so each split is within
one component of its share. :func:`write_tatoeba_split` writes the folder in the format of
:mod:`~lessons_lib.translation.pairs_folder` (ids ``tatoeba-<english id>-<chinese id>``, group
``all``), reads it back and checks again that no sentence crosses splits.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import random
import re
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

from lessons_lib.errors import CourseInputError, file_errors
from lessons_lib.files import folder_lock, record_many
from lessons_lib.translation.pairs_folder import SPLITS, TranslationPair, read_pairs_folder, write_pairs_file

__all__ = [
    "TATOEBA_SHA256",
    "TATOEBA_LINES",
    "OPENCC_CONFIG",
    "SPLIT_SHARES",
    "DEFAULT_SEED",
    "SPLIT_KIND",
    "SUMMARY_FILE",
    "TatoebaPair",
    "TatoebaReading",
    "TatoebaSplit",
    "file_sha256",
    "check_tatoeba_sha256",
    "simplified_converter",
    "changed_characters",
    "read_tatoeba",
    "sentence_components",
    "split_tatoeba",
    "check_no_shared_sentences",
    "write_tatoeba_split",
]

# The public cmn.txt the course measures with: 24,026 lines.
TATOEBA_SHA256 = "6d9734ce952db2b694ac8a6abae52b445f8dbc6a599959b0971a2bc74eec1918"
TATOEBA_LINES = 24026
# OpenCC's configuration: traditional Chinese (OpenCC's standard) to simplified, characters and phrases.
OPENCC_CONFIG = "t2s"
# The share of the pairs each split aims at; a split ends within one component of it.
SPLIT_SHARES = {"train": 0.8, "dev": 0.1, "test": 0.1}
DEFAULT_SEED = 20240601
# The kind of output recorded in the folder's manifest: only a split of this command is ever replaced.
SPLIT_KIND = "split of `lessons tatoeba-split`"
# Numbers only (counts, seed, digests, OpenCC's version): where the split came from.
SUMMARY_FILE = "tatoeba_split.json"

_FIELDS = ("English", "Chinese", "attribution")
_ATTRIBUTION = re.compile(r"^CC-BY 2\.0 \(France\) Attribution: tatoeba\.org #(\d+) \(.*\) & #(\d+) \(.*\)$")
_PAIR_ID = re.compile(r"^tatoeba-(\d+)-(\d+)$")
_ATTRIBUTION_FORM = "CC-BY 2.0 (France) Attribution: tatoeba.org #<id> (<user>) & #<id> (<user>)"


@dataclass(frozen=True)
class TatoebaPair:
    """One kept line: the two sentences, their Tatoeba ids, and the Chinese as written.

    Attributes:
        line: its line number in the file (1-based).
        english_id, chinese_id: the sentences' Tatoeba ids (digits).
        english: the English sentence, as written.
        chinese: the Chinese sentence in simplified characters (OpenCC ``t2s``).
        chinese_original: the Chinese sentence as written.
    """

    line: int
    english_id: str
    chinese_id: str
    english: str
    chinese: str
    chinese_original: str

    @property
    def pair_id(self) -> str:
        """``tatoeba-<english id>-<chinese id>``: unique, since a repeated id pair is left out."""
        return f"tatoeba-{self.english_id}-{self.chinese_id}"

    def translation_pair(self) -> TranslationPair:
        """The pair in the course's format: the Chinese is the source, the English the reference."""
        return TranslationPair(self.pair_id, self.chinese, self.english, "all")


@dataclass
class TatoebaReading:
    """What :func:`read_tatoeba` kept and counted.

    Attributes:
        path: the file read.
        sha256: its SHA-256.
        lines_read: every line of the file (blank lines are malformed, so all are pairs).
        pairs: the kept pairs, in file order.
        repeated_ids: lines left out because an earlier line has the same two ids.
        duplicate_texts: lines left out because an earlier line has the same English and the same converted Chinese.
        converted_sentences: distinct Chinese sentences (by id) that OpenCC changed.
        converted_characters: characters OpenCC changed in them.
        opencc_version: the version of the ``opencc`` package used.
    """

    path: Path
    sha256: str
    lines_read: int
    pairs: list[TatoebaPair]
    repeated_ids: int = 0
    duplicate_texts: int = 0
    converted_sentences: int = 0
    converted_characters: int = 0
    opencc_version: str = ""

    @property
    def chinese_sentences(self) -> int:
        """Distinct Chinese sentences (by id) among the kept pairs."""
        return len({pair.chinese_id for pair in self.pairs})


@dataclass
class TatoebaSplit:
    """The pairs of each split, and how many components made them.

    Attributes:
        splits: ``{"train": [...], "dev": [...], "test": [...]}``, each in file order.
        components: the number of connected components (see :func:`sentence_components`).
        largest_component: the pairs in the largest one.
        seed: the seed of the components' order.
    """

    splits: dict[str, list[TatoebaPair]]
    components: int
    largest_component: int
    seed: int
    shares: Mapping[str, float] = field(default_factory=lambda: dict(SPLIT_SHARES))

    def sentence_counts(self, split: str) -> tuple[int, int]:
        """Distinct English and Chinese sentences (by text; Chinese converted) of ``split``."""
        pairs = self.splits[split]
        return len({pair.english for pair in pairs}), len({pair.chinese for pair in pairs})


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of the file's bytes."""
    digest = hashlib.sha256()
    with file_errors(path), open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_tatoeba_sha256(path: str | Path, expected: str = TATOEBA_SHA256) -> str:
    """The file's SHA-256 when it is ``expected``; otherwise one line naming the file and both digests."""
    found = file_sha256(path)
    if found != expected:
        raise CourseInputError(f"{path}: SHA-256 {found}, expected {expected} (Tatoeba's cmn.txt of "
                               f"{TATOEBA_LINES:,} lines, which this course reads): another file or another version")
    return found


def simplified_converter() -> tuple[Callable[[str], str], str]:
    """OpenCC's traditional→simplified conversion (:data:`OPENCC_CONFIG`) and the package's version."""
    from importlib.metadata import PackageNotFoundError, version

    try:  # imported here: only this reader needs it, and `import lessons_lib` stays light
        import opencc
    except ImportError:
        raise CourseInputError("the package `opencc` is missing: pip install -e . installs it") from None
    try:
        found = version("opencc")
    except PackageNotFoundError:
        found = "unknown"
    return opencc.OpenCC(OPENCC_CONFIG).convert, found


def changed_characters(before: str, after: str) -> int:
    """How many characters a conversion changed: position by position when the lengths agree, else by alignment."""
    if len(before) == len(after):
        return sum(a != b for a, b in zip(before, after))
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    return sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal")


def _parse_line(text: str, where: str) -> tuple[str, str, str, str]:
    """``(english_id, chinese_id, english, chinese)`` of one line; a malformed one names ``where``, not its text."""
    fields = text.split("\t")
    if len(fields) != len(_FIELDS):
        raise CourseInputError(f"{where}: expected {len(_FIELDS)} tab-separated fields "
                               f"({', '.join(_FIELDS)}), found {len(fields)}")
    english, chinese, attribution = (value.strip() for value in fields)
    for name, value in zip(_FIELDS, (english, chinese, attribution)):
        if not value:
            raise CourseInputError(f"{where}: the {name} field is empty")
    match = _ATTRIBUTION.match(attribution)
    if match is None:
        raise CourseInputError(f"{where}: the attribution does not name the two sentence ids "
                               f"(expected `{_ATTRIBUTION_FORM}`)")
    return match.group(1), match.group(2), english, chinese


def _decoded_lines(path: Path) -> list[str]:
    with file_errors(path):
        raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        raise CourseInputError(f"{path}:{line}: not UTF-8 (byte {error.start} of the file)") from None
    if not text:
        raise CourseInputError(f"{path}: the file is empty")
    # Only "\n" ends a line: a stray "\r" or another Unicode line separator inside a field stays in it.
    return text.removesuffix("\n").split("\n")


def _check_same_text(seen: dict[str, tuple[str, int]], sentence_id: str, text: str, path: Path, number: int,
                     language: str) -> None:
    """One id, one text: a sentence id whose text differs from its earlier line's is malformed."""
    earlier_text, earlier_line = seen.setdefault(sentence_id, (text, number))
    if earlier_text != text:
        raise CourseInputError(f"{path}:{number}: the {language} sentence #{sentence_id} has another text "
                               f"on line {earlier_line}")


def read_tatoeba(path: str | Path, *, expected_sha256: str | None = TATOEBA_SHA256) -> TatoebaReading:
    """Read ``cmn.txt``: checked by SHA-256, parsed line by line, the Chinese converted (module docstring).

    Args:
        expected_sha256: the digest the file must have. ``None`` skips the check: only for
            the tests' synthetic files (the command line offers no way to skip it).

    Raises:
        CourseInputError: another file (both digests named), a malformed line (file and line named).
    """
    path = Path(path)
    if not path.is_file():
        raise CourseInputError(f"{path}: not a file" + ("" if path.exists() else " (it does not exist)"))
    sha256 = check_tatoeba_sha256(path, expected_sha256) if expected_sha256 is not None else file_sha256(path)
    convert, opencc_version = simplified_converter()
    reading = TatoebaReading(path, sha256, 0, [], opencc_version=opencc_version)
    english_seen: dict[str, tuple[str, int]] = {}
    chinese_seen: dict[str, tuple[str, int]] = {}
    kept_ids: set[tuple[str, str]] = set()
    kept_texts: set[tuple[str, str]] = set()
    for number, text in enumerate(_decoded_lines(path), start=1):
        where = f"{path}:{number}"
        english_id, chinese_id, english, chinese = _parse_line(text, where)
        _check_same_text(english_seen, english_id, english, path, number, "English")
        _check_same_text(chinese_seen, chinese_id, chinese, path, number, "Chinese")
        reading.lines_read += 1
        simplified = convert(chinese)
        if (english_id, chinese_id) in kept_ids:
            reading.repeated_ids += 1
        elif (english, simplified) in kept_texts:
            reading.duplicate_texts += 1
        else:
            kept_ids.add((english_id, chinese_id))
            kept_texts.add((english, simplified))
            reading.pairs.append(TatoebaPair(number, english_id, chinese_id, english, simplified, chinese))
    changed = {pair.chinese_id: changed_characters(pair.chinese_original, pair.chinese)
               for pair in reading.pairs if pair.chinese != pair.chinese_original}
    reading.converted_sentences, reading.converted_characters = len(changed), sum(changed.values())
    return reading


class _UnionFind:
    """Disjoint sets of hashable keys, with path halving and union by size."""

    def __init__(self) -> None:
        self.parent: dict[object, object] = {}
        self.size: dict[object, int] = {}

    def find(self, key: object) -> object:
        self.parent.setdefault(key, key)
        self.size.setdefault(key, 1)
        while self.parent[key] != key:
            self.parent[key] = self.parent[self.parent[key]]
            key = self.parent[key]
        return key

    def union(self, first: object, second: object) -> None:
        a, b = self.find(first), self.find(second)
        if a == b:
            return
        if self.size[a] < self.size[b]:
            a, b = b, a
        self.parent[b] = a
        self.size[a] += self.size[b]


def _sentence_keys(pair: TatoebaPair) -> tuple[tuple[str, str], ...]:
    """Everything that names one of the pair's sentences: both ids and both texts (the Chinese converted)."""
    return (("english id", pair.english_id), ("chinese id", pair.chinese_id),
            ("english text", pair.english), ("chinese text", pair.chinese))


def sentence_components(pairs: Sequence[TatoebaPair]) -> list[list[TatoebaPair]]:
    """The connected components of ``pairs``: two pairs are joined when they share a sentence (id or text).

    Returns the components in order of their first pair in the file, each in file order.
    """
    sets = _UnionFind()
    for pair in pairs:
        first, *others = _sentence_keys(pair)
        for key in others:
            sets.union(first, key)
    components: dict[object, list[TatoebaPair]] = {}
    for pair in pairs:
        components.setdefault(sets.find(_sentence_keys(pair)[0]), []).append(pair)
    return list(components.values())


def _split_of_position(middle: float, total: int, shares: Mapping[str, float]) -> str:
    """The split whose stretch of ``[0, total)`` holds ``middle`` (stretches in the order of :data:`SPLITS`)."""
    end = 0.0
    for split in SPLITS:
        end += shares[split] * total
        if middle < end:
            return split
    return SPLITS[-1]


def split_tatoeba(pairs: Sequence[TatoebaPair], *, seed: int = DEFAULT_SEED,
                  shares: Mapping[str, float] = SPLIT_SHARES) -> TatoebaSplit:
    """Whole components to train, dev and test (module docstring); deterministic for a seed.

    Raises:
        CourseInputError: a split would hold no pair (too few components), or bad ``shares``.
    """
    if sorted(shares) != sorted(SPLITS) or any(share <= 0 for share in shares.values()) \
            or abs(sum(shares.values()) - 1) > 1e-9:
        raise CourseInputError(f"shares must give each of {', '.join(SPLITS)} a positive share, summing to 1; got {dict(shares)}")
    components = sentence_components(pairs)
    random.Random(seed).shuffle(components)
    splits: dict[str, list[TatoebaPair]] = {split: [] for split in SPLITS}
    before = 0
    for component in components:
        splits[_split_of_position(before + len(component) / 2, len(pairs), shares)].extend(component)
        before += len(component)
    empty = [split for split, members in splits.items() if not members]
    if empty:
        raise CourseInputError(f"too few groups of pairs sharing no sentence ({len(components)}) to fill "
                               f"{', '.join(empty)}: the file needs more pairs")
    for members in splits.values():
        members.sort(key=lambda pair: pair.line)
    return TatoebaSplit(splits, len(components), max(map(len, components)), seed, dict(shares))


def check_no_shared_sentences(splits: Mapping[str, Iterable[TranslationPair]]) -> None:
    """No English or Chinese sentence (by text, or by the Tatoeba id in a pair's id) in two splits.

    Raises:
        CourseInputError: naming the two splits and how many sentences they share (never the sentences).
    """
    seen: dict[str, dict[str, set[tuple[str, str]]]] = {}
    for split, pairs in splits.items():
        keys: dict[str, set[tuple[str, str]]] = {"English": set(), "Chinese": set()}
        for pair in pairs:
            ids = _PAIR_ID.match(pair.id)
            if ids is None:
                raise CourseInputError(f"{split}: the pair id {pair.id!r} is not tatoeba-<english id>-<chinese id>")
            keys["English"].update((("text", pair.reference), ("id", ids.group(1))))
            keys["Chinese"].update((("text", pair.source), ("id", ids.group(2))))
        for other, other_keys in seen.items():
            for language in keys:
                shared = keys[language] & other_keys[language]
                if shared:
                    raise CourseInputError(f"{len(shared)} {language} sentence(s) or id(s) in both {other} and {split}")
        seen[split] = keys


def _summary(reading: TatoebaReading, split: TatoebaSplit) -> dict:
    """The numbers of a split (no text): what :data:`SUMMARY_FILE` holds and the command prints."""
    per_split = {}
    for name in SPLITS:
        english, chinese = split.sentence_counts(name)
        per_split[name] = {"pairs": len(split.splits[name]), "english_sentences": english, "chinese_sentences": chinese}
    return {
        "source_sha256": reading.sha256, "lines_read": reading.lines_read, "pairs_kept": len(reading.pairs),
        "left_out_repeated_ids": reading.repeated_ids, "left_out_duplicate_texts": reading.duplicate_texts,
        "opencc": {"package_version": reading.opencc_version, "config": OPENCC_CONFIG,
                   "chinese_sentences": reading.chinese_sentences,
                   "sentences_changed": reading.converted_sentences, "characters_changed": reading.converted_characters},
        "seed": split.seed, "shares": dict(split.shares), "components": split.components,
        "largest_component": split.largest_component, "splits": per_split,
    }


def write_tatoeba_split(reading: TatoebaReading, split: TatoebaSplit, out_dir: str | Path) -> dict:
    """Write train/dev/test.tsv (pairs-folder format) and :data:`SUMMARY_FILE` into ``out_dir``; returns the summary.

    The files are recorded as :data:`SPLIT_KIND` in the folder's manifest and replaced all
    together or not at all; the caller checks the folder first (``check_output_folder``). The
    written folder is read back and checked: no sentence in two splits.
    """
    out_dir = Path(out_dir)
    with file_errors(out_dir, "create the folder"):
        out_dir.mkdir(parents=True, exist_ok=True)
    summary = _summary(reading, split)
    contents: dict[str, bytes | str] = {SUMMARY_FILE: json.dumps(summary, indent=2) + "\n"}
    with folder_lock(out_dir):
        # The format's one writer formats each split, in a scratch folder beside the output (same disk, removed after).
        with tempfile.TemporaryDirectory(dir=out_dir, prefix=".tatoeba-") as scratch:
            for name in SPLITS:
                write_pairs_file([pair.translation_pair() for pair in split.splits[name]], Path(scratch) / f"{name}.tsv")
                with file_errors(Path(scratch) / f"{name}.tsv"):
                    contents[f"{name}.tsv"] = (Path(scratch) / f"{name}.tsv").read_bytes()
        record_many(out_dir, contents, SPLIT_KIND)
    written = read_pairs_folder(out_dir)
    check_no_shared_sentences({name: written.split(name) for name in SPLITS})
    counts = Counter({name: len(written.split(name)) for name in SPLITS})
    if counts != Counter({name: len(split.splits[name]) for name in SPLITS}):
        raise CourseInputError(f"{out_dir}: the written splits hold {dict(counts)} pairs, not what was split")
    return summary
