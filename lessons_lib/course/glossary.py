"""One Chinese term per concept: the course's glossary and the check for variant spellings.

The glossary is ``notebooks/GLOSSARY.md``: one table row per concept,
``| 中文 | English | 一句话定义 | 不要写成 |``, the last column listing the variant
spellings a lesson must not use (separated by ``、``; empty when there is none). The
check reads every cell source of a notebook (markdown, and code, where figure labels
live) and reports each variant it finds. A variant inside a longer glossary term is not
a variant (「掩码语言模型」 is its own term, so it does not count as 「掩码」).

One rule is not a word list: lessons are cited as 「第 NN 课」, two digits and spaces
(「第 06 课」, never 「第 6 课」 or 「第06课」).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from lessons_lib.course.notebooks import read_notebook
from lessons_lib.errors import CourseInputError
from lessons_lib.paths import NOTEBOOKS_DIR

GLOSSARY_PATH = NOTEBOOKS_DIR / "GLOSSARY.md"
HEADER = ("中文", "English", "一句话定义", "不要写成")
LESSON_REFERENCE = re.compile(r"第\s*(\d+)\s*课")
CANONICAL_LESSON_REFERENCE = re.compile(r"第 \d\d 课")


@dataclass(frozen=True)
class GlossaryEntry:
    """One concept: its Chinese term, English term, a one-line definition and the spellings to avoid."""

    term: str
    english: str
    definition: str
    variants: tuple[str, ...]


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def parse_glossary(text: str, source: str = "glossary") -> list[GlossaryEntry]:
    """The entries of the glossary table in ``text``; a malformed row is an error naming its line."""
    entries, in_table = [], False
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.lstrip().startswith("|"):
            in_table = False
            continue
        cells = _cells(line)
        if tuple(cells) == HEADER:
            in_table = True
            continue
        if not in_table or set("".join(cells)) <= set("-: "):
            continue
        if len(cells) != len(HEADER) or not all(cells[:3]):
            raise CourseInputError(f"{source} line {number}: a glossary row needs {len(HEADER)} cells "
                                   f"({' | '.join(HEADER)}), the first three non-empty; got {line.strip()!r}")
        variants = tuple(v.strip() for v in cells[3].split("、") if v.strip())
        entries.append(GlossaryEntry(cells[0], cells[1], cells[2], variants))
    if not entries:
        raise CourseInputError(f"{source}: no glossary table with the header | {' | '.join(HEADER)} |")
    _check_consistent(entries, source)
    return entries


def _check_consistent(entries: list[GlossaryEntry], source: str) -> None:
    terms = [e.term for e in entries]
    repeated = sorted({t for t in terms if terms.count(t) > 1})
    if repeated:
        raise CourseInputError(f"{source}: terms listed twice: {', '.join(repeated)}")
    clashes = sorted({v for e in entries for v in e.variants if v in terms})
    if clashes:
        raise CourseInputError(f"{source}: listed both as a term and as a variant to avoid: {', '.join(clashes)}")


def read_glossary(path: Path = GLOSSARY_PATH) -> list[GlossaryEntry]:
    """The course's glossary (``notebooks/GLOSSARY.md`` by default)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise CourseInputError(f"{path}: cannot read the glossary ({error})") from error
    return parse_glossary(text, source=str(path))


def variant_spellings(text: str, entries: list[GlossaryEntry]) -> list[str]:
    """One line per variant spelling in ``text`` (and per lesson reference not written 第 NN 课)."""
    protected = sorted({e.term for e in entries}, key=len, reverse=True)
    remaining = text
    for term in protected:
        remaining = remaining.replace(term, "\0" * len(term))
    problems = []
    for entry in entries:
        for variant in entry.variants:
            count = remaining.count(variant)
            if count:
                problems.append(f"「{variant}」 ×{count}: write 「{entry.term}」 ({entry.english})")
    for match in LESSON_REFERENCE.finditer(text):
        if not CANONICAL_LESSON_REFERENCE.fullmatch(match.group(0)):
            problems.append(f"「{match.group(0)}」: write 「第 {int(match.group(1)):02d} 课」")
    return problems


def notebook_variant_spellings(path: Path, entries: list[GlossaryEntry]) -> list[str]:
    """Variant spellings in every cell source of the notebook, one line each with its cell."""
    nb = read_notebook(path)
    problems = []
    for index, cell in enumerate(nb.get("cells", [])):
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        problems += [f"cell {index}: {problem}" for problem in variant_spellings(source, entries)]
    return problems
