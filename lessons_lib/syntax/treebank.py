"""Reading, validating and writing dependency treebanks in CoNLL-U.

A :class:`TreebankSentence` holds what the course uses of a CoNLL-U sentence: its text,
words, 0-based heads (root = -1, see :mod:`lessons_lib.syntax.trees`), relations and,
when given, universal POS tags. :func:`read_conllu` validates every sentence as it reads
it — one root, no cycles, heads in range, known UD v2 relation labels, words that spell
the ``# text`` — and raises :class:`~lessons_lib.errors.CourseInputError` naming the file,
the line and the sentence id.

Multiword-token lines (``1-2``) and empty nodes (``1.1``) are not words of the basic tree;
they are skipped on purpose and counted in :attr:`TreebankSentence.skipped_lines`.
"""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from lessons_lib.errors import CourseInputError, file_errors
from lessons_lib.files import atomic_write
from lessons_lib.syntax.trees import heads_from_conllu, heads_to_conllu, validate_heads

# The 37 universal relations of UD v2; a subtype ("discourse:sp", "obl:tmod") is accepted
# when its part before the colon is one of them.
UD_RELATIONS = frozenset(
    """acl advcl advmod amod appos aux case cc ccomp clf compound conj cop csubj dep det
    discourse dislocated expl fixed flat goeswith iobj list mark nmod nsubj nummod obj obl
    orphan parataxis punct reparandum root vocative xcomp""".split()
)
UD_UPOS = frozenset(
    "ADJ ADP ADV AUX CCONJ DET INTJ NOUN NUM PART PRON PROPN PUNCT SCONJ SYM VERB X _".split()
)
_WORD_ID = re.compile(r"^[1-9][0-9]*$")


@dataclass(frozen=True)
class TreebankSentence:
    """One validated sentence of a treebank.

    Attributes:
        sent_id: the ``# sent_id`` comment (or ``"<file>#<n>"`` when absent).
        text: the ``# text`` comment (or the words joined when absent).
        words: the word forms, length ``n``.
        heads: 0-based heads, root = -1, length ``n``.
        deprels: UD relations, length ``n``.
        upos: universal POS tags (``"_"`` where not annotated), length ``n``.
        source: ``"file:line"`` of the sentence's first line.
        comments: the other comment lines, as ``(key, value)`` pairs, in order.
        skipped_lines: multiword-token and empty-node lines that were skipped.
    """

    sent_id: str
    text: str
    words: tuple[str, ...]
    heads: tuple[int, ...]
    deprels: tuple[str, ...]
    upos: tuple[str, ...]
    source: str = ""
    comments: tuple[tuple[str, str], ...] = ()
    skipped_lines: int = 0

    def __len__(self) -> int:
        return len(self.words)

    def comment(self, key: str) -> str | None:
        """The value of comment ``# key = value``, or ``None``."""
        return next((v for k, v in self.comments if k == key), None)


def _squeeze(text: str) -> str:
    return "".join(text.split())


def check_relation(label: str, where: str) -> None:
    """Raise unless ``label`` is a UD v2 relation (optionally with a subtype)."""
    base = label.split(":", 1)[0]
    if base not in UD_RELATIONS or (":" in label and not label.split(":", 1)[1]):
        raise CourseInputError(f"{where}: unknown dependency relation {label!r} (not a UD v2 relation)")


def make_sentence(
    sent_id: str,
    words: Sequence[str],
    heads: Sequence[int],
    deprels: Sequence[str],
    text: str | None = None,
    upos: Sequence[str] | None = None,
    source: str = "",
    comments: Sequence[tuple[str, str]] = (),
) -> TreebankSentence:
    """Build and validate a :class:`TreebankSentence` (heads 0-based, root = -1)."""
    where = f"{source or sent_id} (sentence {sent_id})"
    words = tuple(words)
    if not (len(words) == len(heads) == len(deprels)):
        raise CourseInputError(
            f"{where}: {len(words)} words, {len(heads)} heads and {len(deprels)} relations must be equal in number"
        )
    upos = tuple(upos) if upos is not None else ("_",) * len(words)
    if len(upos) != len(words):
        raise CourseInputError(f"{where}: {len(upos)} POS tags for {len(words)} words")
    for i, w in enumerate(words):
        if not w or any(c in w for c in "\t\n"):
            raise CourseInputError(f"{where}: word {i + 1} {w!r} is empty or holds a tab/newline")
    heads = tuple(validate_heads(heads, name=where))
    for label in deprels:
        check_relation(label, where)
    roots = [i for i, h in enumerate(heads) if h == -1]
    if deprels[roots[0]] != "root":
        raise CourseInputError(f"{where}: the root word {roots[0] + 1} has relation {deprels[roots[0]]!r}, not 'root'")
    bad_root = [i + 1 for i, (h, r) in enumerate(zip(heads, deprels)) if r == "root" and h != -1]
    if bad_root:
        raise CourseInputError(f"{where}: words {bad_root} have relation 'root' but a head")
    for tag in upos:
        if tag not in UD_UPOS:
            raise CourseInputError(f"{where}: unknown universal POS tag {tag!r}")
    if text is None:
        text = "".join(words)
    elif _squeeze("".join(words)) != _squeeze(text):
        raise CourseInputError(f"{where}: the words {' '.join(words)!r} do not spell the text {text!r}")
    return TreebankSentence(sent_id, text, words, heads, tuple(deprels), upos, source, tuple(comments))


def _parse_block(lines: list[tuple[int, str]], path: str, index: int) -> TreebankSentence:
    comments: list[tuple[str, str]] = []
    words: list[str] = []
    ud_heads: list[int] = []
    deprels: list[str] = []
    upos: list[str] = []
    skipped = 0
    first_line = lines[0][0]
    sent_id = None
    text = None
    for number, line in lines:
        where = f"{path}:{number}"
        if line.startswith("#"):
            body = line[1:].strip()
            if "=" in body:
                key, value = (part.strip() for part in body.split("=", 1))
                if key == "sent_id":
                    sent_id = value
                elif key == "text":
                    text = value
                else:
                    comments.append((key, value))
            continue
        cols = line.split("\t")
        if len(cols) != 10:
            raise CourseInputError(f"{where}: a CoNLL-U word line has 10 tab-separated columns, found {len(cols)}")
        if "-" in cols[0] or "." in cols[0]:
            skipped += 1  # multiword token or empty node: not part of the basic tree
            continue
        if not _WORD_ID.match(cols[0]) or int(cols[0]) != len(words) + 1:
            raise CourseInputError(f"{where}: word id {cols[0]!r} should be {len(words) + 1} (ids count 1, 2, 3, ...)")
        if not re.match(r"^[0-9]+$", cols[6]):
            raise CourseInputError(f"{where}: head {cols[6]!r} is not a non-negative integer")
        check_relation(cols[7], where)
        words.append(cols[1])
        ud_heads.append(int(cols[6]))
        deprels.append(cols[7])
        upos.append(cols[3])
    sent_id = sent_id or f"{Path(path).name}#{index}"
    if not words:
        raise CourseInputError(f"{path}:{first_line}: sentence {sent_id} has no words")
    sentence = make_sentence(
        sent_id, words, heads_from_conllu(ud_heads), deprels, text=text, upos=upos,
        source=f"{path}:{first_line}", comments=comments,
    )
    return dataclasses.replace(sentence, skipped_lines=skipped)


def _add_sentence(sentence: TreebankSentence, sentences: list[TreebankSentence], seen_ids: dict[str, str]) -> None:
    if sentence.sent_id in seen_ids:
        raise CourseInputError(
            f"{sentence.source}: sent_id {sentence.sent_id!r} repeats the one at {seen_ids[sentence.sent_id]}"
        )
    seen_ids[sentence.sent_id] = sentence.source
    sentences.append(sentence)


def read_conllu(path: str | os.PathLike) -> list[TreebankSentence]:
    """Read and validate every sentence of a CoNLL-U file.

    Raises:
        CourseInputError: a missing or unreadable file (not UTF-8), a malformed line or an
            invalid tree, naming file, line and sentence.
    """
    path = Path(path)
    if not path.is_file():
        raise CourseInputError(f"CoNLL-U file not found: {path}")
    sentences: list[TreebankSentence] = []
    block: list[tuple[int, str]] = []
    seen_ids: dict[str, str] = {}
    with file_errors(path):
        raw_bytes = path.read_bytes()
    try:
        text = raw_bytes.decode("utf-8")
    except UnicodeDecodeError as error:
        line_number = raw_bytes[: error.start].count(b"\n") + 1
        raise CourseInputError(f"{path}:{line_number}: not UTF-8 ({error.reason})") from None
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r")
        if line.strip():
            block.append((number, line))
            continue
        if block:
            _add_sentence(_parse_block(block, str(path), len(sentences) + 1), sentences, seen_ids)
            block = []
    if block:  # the last sentence, when the file lacks its final blank line
        _add_sentence(_parse_block(block, str(path), len(sentences) + 1), sentences, seen_ids)
    return sentences


def format_conllu(sentences: Iterable[TreebankSentence]) -> str:
    """CoNLL-U text of ``sentences`` (lemma, XPOS, features, DEPS, MISC left as ``_``)."""
    out: list[str] = []
    for s in sentences:
        out.append(f"# sent_id = {s.sent_id}")
        out.append(f"# text = {s.text}")
        for key, value in s.comments:
            out.append(f"# {key} = {value}")
        for i, (w, h, r, p) in enumerate(zip(s.words, heads_to_conllu(s.heads), s.deprels, s.upos), start=1):
            out.append(f"{i}\t{w}\t_\t{p}\t_\t_\t{h}\t{r}\t_\t_")
        out.append("")
    return "\n".join(out) + ("\n" if out else "")


def write_conllu(sentences: Iterable[TreebankSentence], path: str | os.PathLike) -> None:
    """Write ``sentences`` as CoNLL-U (UTF-8, ``\\n`` line ends), atomically."""
    atomic_write(path, format_conllu(sentences))
