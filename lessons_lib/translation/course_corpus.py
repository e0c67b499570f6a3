"""The course's Chinese→English corpus, in which the dependency tree decides part of the translation.

Two groups of short statements, written for the course from the vocabulary of
:mod:`lessons_lib.syntax.attachment_control` (20 verbs, 20 person nouns):

- ``syntax``: the ambiguous phrase **V N1 的 N2** inside a statement frame
  (关心学生的老师很重要。). Its reading is drawn at random for each sentence, independently of
  the text, and decides both the gold tree and the English reference:

  - reading 0, a relative clause **[V N1]的 N2**: "The teacher who cares about the student is important.";
  - reading 1, a verb phrase **V [N1 的 N2]**: "Caring about the student's teacher is important."

  Each drawn text is used for two sentences whose readings are drawn separately, so about
  half of the texts occur with both readings and both references. No function of the text
  can tell which reference is right; only the tree can.
- ``plain``: unambiguous statements of the same length and words, where the text alone
  decides the translation: a clause **N1 V N2** (老师关心学生。 "The teacher cares about the
  student.", also after 我们知道 / 他们认为) and a possessive **N1 的 N2** in the same frames as
  the ``syntax`` group (学生的老师很重要。 "The student's teacher is important.").

Splits are made by phrase (V, N1, N2) before any sentence is drawn, so no phrase of dev or
test occurs in training, in either group. Every sentence has its own id and its own gold
tree (a text that recurs with the other reading has the other tree); every sentence is
segmented by jieba exactly into its gold words (tested over the shipped corpus).

:func:`write_course_corpus` writes the folder in the format of
:mod:`lessons_lib.translation.pairs_folder` (``train.tsv``, ``dev.tsv``, ``test.tsv``,
``trees.conllu``) with a ``README.md``; ``lessons build-translation-corpus`` runs it, and the
shipped ``data/translation_corpus`` is its output for the default sizes and seed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Sequence

from lessons_lib.errors import FieldName, file_errors
from lessons_lib.files import atomic_write_many, folder_lock, record_many
from lessons_lib.paths import TRANSLATION_CORPUS_DIR
from lessons_lib.syntax.attachment_control import PEOPLE, READINGS, VERBS, phrase_tree
from lessons_lib.syntax.treebank import TreebankSentence, format_conllu, make_sentence
from lessons_lib.translation.pairs_folder import SPLITS, TREES_FILE, TranslationPair, format_pairs
from lessons_lib.validation import check_choice, check_int

__all__ = [
    "VERB_GLOSSES",
    "NOUN_GLOSSES",
    "GROUPS",
    "Frame",
    "STATEMENT_FRAMES",
    "CLAUSE_FRAMES",
    "CORPUS_KIND",
    "CORPUS_FILES",
    "DEFAULT_SIZES",
    "DEFAULT_SEED",
    "CorpusSentence",
    "CourseCorpus",
    "english_phrase",
    "syntax_sentence",
    "clause_sentence",
    "possessive_sentence",
    "split_phrases",
    "make_course_corpus",
    "corpus_files",
    "write_course_corpus",
]

# English of the 20 verbs: (third person singular, gerund), each with its object's preposition.
VERB_GLOSSES = {
    "关心": ("cares about", "caring about"), "照顾": ("takes care of", "taking care of"),
    "批评": ("criticizes", "criticizing"), "表扬": ("praises", "praising"),
    "帮助": ("helps", "helping"), "喜欢": ("likes", "liking"),
    "认识": ("knows", "knowing"), "支持": ("supports", "supporting"),
    "保护": ("protects", "protecting"), "邀请": ("invites", "inviting"),
    "理解": ("understands", "understanding"), "感谢": ("thanks", "thanking"),
    "鼓励": ("encourages", "encouraging"), "相信": ("trusts", "trusting"),
    "尊重": ("respects", "respecting"), "讨厌": ("dislikes", "disliking"),
    "培养": ("trains", "training"), "欣赏": ("admires", "admiring"),
    "打扰": ("disturbs", "disturbing"), "监督": ("supervises", "supervising"),
}
# English of the 20 person nouns (singular, written after "the"; the possessive adds "'s").
NOUN_GLOSSES = {
    "老师": "teacher", "学生": "student", "孩子": "child", "医生": "doctor", "病人": "patient",
    "妈妈": "mother", "朋友": "friend", "同事": "colleague", "领导": "leader", "邻居": "neighbor",
    "老人": "old man", "记者": "reporter", "律师": "lawyer", "警察": "police officer", "司机": "driver",
    "经理": "manager", "作者": "author", "队长": "captain", "校长": "principal", "客户": "client",
}
GROUPS = ("syntax", "plain")
SLOT = "{}"  # where a frame's phrase goes, among its words


@dataclass(frozen=True)
class Frame:
    """A statement around one phrase: its words with :data:`SLOT` for the phrase, their tree and its English.

    Attributes:
        words: the frame's words, :data:`SLOT` once.
        heads: 0-based heads over ``words`` (``-1`` the root); the slot's entry is where the phrase's head
            attaches, and a frame word whose head is the slot hangs from the phrase's head.
        deprels: relations over ``words``; the slot's entry is ignored (see ``nominal``, ``clausal``).
        upos: universal POS tags over ``words`` (the slot's entry is ignored).
        nominal, clausal: the relation of the phrase's head when it is a noun (N2) or a verb (V).
        english: the reference with ``{}`` for the phrase's English; a phrase at the start is capitalised.
    """

    words: tuple[str, ...]
    heads: tuple[int, ...]
    deprels: tuple[str, ...]
    upos: tuple[str, ...]
    nominal: str
    clausal: str
    english: str


def _subject_frame(adverb: str, predicate: str, english: str) -> Frame:
    return Frame((SLOT, adverb, predicate, "。"), (2, 2, -1, 2), ("", "advmod", "root", "punct"),
                 ("", "ADV", "ADJ", "PUNCT"), "nsubj", "csubj", english)


def _object_frame(subject: str, verb: str, english: str) -> Frame:
    return Frame((subject, verb, "了", SLOT, "。"), (1, -1, 1, 1, 1), ("nsubj", "root", "aux", "", "punct"),
                 ("PRON", "VERB", "AUX", "", "PUNCT"), "obj", "ccomp", english)


# Frames around a noun phrase or a verb phrase: the ambiguous phrase and the possessive go here.
STATEMENT_FRAMES = (
    _subject_frame("很", "重要", "{} is important."),
    _subject_frame("很", "常见", "{} is common."),
    _subject_frame("很", "难得", "{} is rare."),
    _object_frame("我们", "讨论", "We discussed {}."),
    _object_frame("他", "提到", "He mentioned {}."),
    _object_frame("他们", "研究", "They studied {}."),
)
# Frames around a clause N1 V N2: the plain group's clauses.
CLAUSE_FRAMES = (
    Frame((SLOT, "。"), (-1, 0), ("", "punct"), ("", "PUNCT"), "root", "root", "{}."),
    Frame(("我们", "知道", SLOT, "。"), (1, -1, 1, 1), ("nsubj", "root", "", "punct"),
          ("PRON", "VERB", "", "PUNCT"), "ccomp", "ccomp", "We know that {}."),
    Frame(("他们", "认为", SLOT, "。"), (1, -1, 1, 1), ("nsubj", "root", "", "punct"),
          ("PRON", "VERB", "", "PUNCT"), "ccomp", "ccomp", "They think that {}."),
)

CORPUS_KIND = "file of `lessons build-translation-corpus`"  # in a folder's manifest
CORPUS_FILES = (*(f"{split}.tsv" for split in SPLITS), TREES_FILE, "README.md")
DEFAULT_SIZES = {"train": 4000, "dev": 400, "test": 800}
DEFAULT_SEED = 0
_PHRASE_UPOS = {"的": "PART"}


@dataclass(frozen=True)
class CorpusSentence:
    """One pair of the corpus with its gold tree.

    Attributes:
        id: unique in the corpus (``train-0001``).
        group: ``"syntax"`` or ``"plain"``.
        phrase: the (verb, noun1, noun2) it was drawn from (the unit of the split).
        reading: 0 or 1 (see :data:`~lessons_lib.syntax.attachment_control.READINGS`) in the
            ``syntax`` group, ``None`` in the ``plain`` group.
        words, heads, deprels, upos: the gold tree (0-based heads, root = -1).
        reference: the English translation.
    """

    id: str
    group: str
    phrase: tuple[str, str, str]
    reading: int | None
    words: tuple[str, ...]
    heads: tuple[int, ...]
    deprels: tuple[str, ...]
    upos: tuple[str, ...]
    reference: str

    @property
    def text(self) -> str:
        return "".join(self.words)

    def pair(self) -> TranslationPair:
        return TranslationPair(self.id, self.text, self.reference, self.group)

    def tree(self) -> TreebankSentence:
        """The gold tree, keyed by :attr:`id`, with the group, the phrase and the reading as comments."""
        comments = [("group", self.group), ("phrase", " ".join(self.phrase))]
        if self.reading is not None:
            comments.append(("reading", str(self.reading)))
        return make_sentence(self.id, self.words, self.heads, self.deprels, upos=self.upos, comments=comments)


def english_phrase(verb: str, noun1: str, noun2: str, reading: int) -> str:
    """The English of ``V N1 的 N2`` under ``reading`` (lower case, as inside a sentence)."""
    third_person, gerund = VERB_GLOSSES[verb]
    if reading == 0:  # [V N1]的 N2: the N2 who V's the N1
        return f"the {NOUN_GLOSSES[noun2]} who {third_person} the {NOUN_GLOSSES[noun1]}"
    return f"{gerund} the {NOUN_GLOSSES[noun1]}'s {NOUN_GLOSSES[noun2]}"  # V [N1 的 N2]


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


def _fill(frame: Frame, words: Sequence[str], heads: Sequence[int], deprels: Sequence[str],
          upos: Sequence[str], english: str) -> tuple[tuple[str, ...], tuple[int, ...], tuple[str, ...],
                                                  tuple[str, ...], str]:
    """The phrase (its head marked ``-1``; a verb head makes it a clause) put into ``frame``'s slot."""
    slot = frame.words.index(SLOT)
    phrase_head = slot + list(heads).index(-1)

    def moved(index: int) -> int:  # a frame word's index once the phrase fills the slot (the slot: the phrase's head)
        return index if index < slot else phrase_head if index == slot else index + len(words) - 1

    out_words, out_heads, out_rels, out_upos = [], [], [], []
    for i, word in enumerate(frame.words):
        if word != SLOT:
            out_words.append(word)
            out_heads.append(-1 if frame.heads[i] == -1 else moved(frame.heads[i]))
            out_rels.append(frame.deprels[i])
            out_upos.append(frame.upos[i])
            continue
        for word_, head, rel, tag in zip(words, heads, deprels, upos):
            out_words.append(word_)
            if head != -1:
                out_heads.append(slot + head)
                out_rels.append(rel)
            else:  # the phrase's head attaches where the frame says, by the role it plays there
                out_heads.append(-1 if frame.heads[slot] == -1 else moved(frame.heads[slot]))
                out_rels.append(frame.clausal if tag == "VERB" else frame.nominal)
            out_upos.append(tag)
    reference = frame.english.format(english)
    reference = _capitalised(reference) if frame.words[0] == SLOT else reference
    return tuple(out_words), tuple(out_heads), tuple(out_rels), tuple(out_upos), reference


def _upos(words: Sequence[str]) -> tuple[str, ...]:
    return tuple(_PHRASE_UPOS.get(w, "VERB" if w in VERB_GLOSSES else "NOUN") for w in words)


def syntax_sentence(sentence_id: str, phrase: tuple[str, str, str], reading: int, frame: int) -> CorpusSentence:
    """``V N1 的 N2`` in statement frame ``frame`` with the tree and the English of ``reading``."""
    check_int(frame, FieldName("frame"), minimum=0, maximum=len(STATEMENT_FRAMES) - 1)
    words, heads, rels = phrase_tree(*phrase, reading)
    filled = _fill(STATEMENT_FRAMES[frame], words, heads, rels, _upos(words), english_phrase(*phrase, reading))
    return CorpusSentence(sentence_id, "syntax", phrase, reading, *filled)


def clause_sentence(sentence_id: str, phrase: tuple[str, str, str], frame: int) -> CorpusSentence:
    """The clause ``N1 V N2`` (老师关心学生) in clause frame ``frame``: "the N1 V's the N2"."""
    check_int(frame, FieldName("frame"), minimum=0, maximum=len(CLAUSE_FRAMES) - 1)
    verb, noun1, noun2 = phrase
    words = (noun1, verb, noun2)
    english = f"the {NOUN_GLOSSES[noun1]} {VERB_GLOSSES[verb][0]} the {NOUN_GLOSSES[noun2]}"
    filled = _fill(CLAUSE_FRAMES[frame], words, (1, -1, 1), ("nsubj", "", "obj"), _upos(words), english)
    return CorpusSentence(sentence_id, "plain", phrase, None, *filled)


def possessive_sentence(sentence_id: str, phrase: tuple[str, str, str], frame: int) -> CorpusSentence:
    """The possessive ``N1 的 N2`` (学生的老师) in statement frame ``frame``: "the N1's N2" (the verb unused)."""
    check_int(frame, FieldName("frame"), minimum=0, maximum=len(STATEMENT_FRAMES) - 1)
    _, noun1, noun2 = phrase
    words = (noun1, "的", noun2)
    english = f"the {NOUN_GLOSSES[noun1]}'s {NOUN_GLOSSES[noun2]}"
    filled = _fill(STATEMENT_FRAMES[frame], words, (2, 0, -1), ("nmod", "case", ""), _upos(words), english)
    return CorpusSentence(sentence_id, "plain", phrase, None, *filled)


@dataclass(frozen=True)
class CourseCorpus:
    """The generated corpus: the sentences of each split, in file order, and how they were made.

    Attributes:
        train, dev, test: the sentences of each split.
        seed: the generation seed.
    """

    train: tuple[CorpusSentence, ...]
    dev: tuple[CorpusSentence, ...]
    test: tuple[CorpusSentence, ...]
    seed: int

    def split(self, name: str) -> tuple[CorpusSentence, ...]:
        check_choice(name, FieldName("split"), SPLITS)
        return getattr(self, name)

    def pairs(self, name: str) -> list[TranslationPair]:
        """The translation pairs of split ``name``, in file order."""
        return [sentence.pair() for sentence in self.split(name)]

    def trees(self) -> list[TreebankSentence]:
        """Every sentence's gold tree, train then dev then test (keyed by id: a text may recur with another tree)."""
        return [sentence.tree() for name in SPLITS for sentence in self.split(name)]


def split_phrases(seed: int) -> dict[str, list[tuple[str, str, str]]]:
    """Every phrase (V, N1, N2) with N1 ≠ N2, shuffled by ``seed`` and cut 70 / 15 / 15 % into train, dev, test."""
    phrases = [(v, a, b) for v in VERBS for a in PEOPLE for b in PEOPLE if a != b]
    random.Random(f"course-corpus-split:{seed}").shuffle(phrases)
    n_train, n_dev = int(0.7 * len(phrases)), int(0.15 * len(phrases))
    return {"train": phrases[:n_train], "dev": phrases[n_train:n_train + n_dev], "test": phrases[n_train + n_dev:]}


def _draw_syntax(rng: random.Random, pool: Sequence[tuple[str, str, str]], count: int) -> list[CorpusSentence]:
    """``count`` ambiguous sentences: each drawn text twice, each time with a reading drawn afresh."""
    sentences: list[CorpusSentence] = []
    while len(sentences) < count:
        phrase, frame = rng.choice(pool), rng.randrange(len(STATEMENT_FRAMES))
        for _ in range(min(2, count - len(sentences))):
            sentences.append(syntax_sentence("", phrase, rng.randrange(len(READINGS)), frame))
    return sentences


def _draw_plain(rng: random.Random, pool: Sequence[tuple[str, str, str]], count: int) -> list[CorpusSentence]:
    """``count`` unambiguous sentences, half clauses and half possessives (drawn one by one)."""
    sentences = []
    for _ in range(count):
        phrase = rng.choice(pool)
        if rng.randrange(2) == 0:
            sentences.append(clause_sentence("", phrase, rng.randrange(len(CLAUSE_FRAMES))))
        else:
            sentences.append(possessive_sentence("", phrase, rng.randrange(len(STATEMENT_FRAMES))))
    return sentences


def _numbered(split: str, sentences: list[CorpusSentence]) -> tuple[CorpusSentence, ...]:
    width = max(4, len(str(len(sentences))))
    return tuple(replace(sentence, id=f"{split}-{n:0{width}d}") for n, sentence in enumerate(sentences, start=1))


def make_course_corpus(n_train: int = DEFAULT_SIZES["train"], n_dev: int = DEFAULT_SIZES["dev"],
                       n_test: int = DEFAULT_SIZES["test"], seed: int = DEFAULT_SEED) -> CourseCorpus:
    """Generate the corpus (deterministic from ``seed``; see the module docstring).

    Args:
        n_train, n_dev, n_test: pairs per split (each ≥ 2): half ``syntax`` (rounded down), the rest ``plain``.
        seed: the generation seed (phrase split, sentences, readings, order).
    """
    sizes = {"train": check_int(n_train, FieldName("n_train"), minimum=2), "dev": check_int(n_dev, FieldName("n_dev"), minimum=2),
             "test": check_int(n_test, FieldName("n_test"), minimum=2)}
    check_int(seed, FieldName("seed"), minimum=0)
    splits = {}
    for split, pool in split_phrases(seed).items():
        rng = random.Random(f"course-corpus:{seed}:{split}")  # one generator per split: resizing one moves no other
        sentences = _draw_syntax(rng, pool, sizes[split] // 2) + _draw_plain(rng, pool, sizes[split] - sizes[split] // 2)
        rng.shuffle(sentences)  # the groups mixed, and the two sentences of one syntax text apart
        splits[split] = _numbered(split, sentences)
    return CourseCorpus(splits["train"], splits["dev"], splits["test"], seed)


def _command(corpus: CourseCorpus) -> str:
    """The command line that writes ``corpus`` (its non-default seed and sizes spelled out)."""
    flags = [f"--{split}-pairs {len(corpus.split(split))}" for split in SPLITS
             if len(corpus.split(split)) != DEFAULT_SIZES[split]]
    if corpus.seed != DEFAULT_SEED:
        flags.append(f"--seed {corpus.seed}")
    return " ".join(["lessons build-translation-corpus", *flags])


def _readings_by_text(sentences: Sequence[CorpusSentence]) -> dict[str, dict[int, CorpusSentence]]:
    """Each syntax text → its first sentence under each reading it occurs with."""
    found: dict[str, dict[int, CorpusSentence]] = {}
    for sentence in sentences:
        if sentence.reading is not None:
            found.setdefault(sentence.text, {}).setdefault(sentence.reading, sentence)
    return found


def _size_rows(corpus: CourseCorpus) -> list[str]:
    rows = ["| split | syntax: reading 0 / 1 | syntax texts (with both readings) | plain: clause / possessive | pairs |",
            "|---|---|---|---|---|"]
    for split in SPLITS:
        syntax = [s for s in corpus.split(split) if s.group == "syntax"]
        plain = [s for s in corpus.split(split) if s.group == "plain"]
        readings = _readings_by_text(syntax)
        both = sum(len(found) == 2 for found in readings.values())
        possessives = sum("的" in s.words for s in plain)
        rows.append(f"| {split} | {len(syntax):,}: {sum(s.reading == 0 for s in syntax):,} / "
                    f"{sum(s.reading == 1 for s in syntax):,} | {len(readings):,} ({both:,}) | "
                    f"{len(plain):,}: {len(plain) - possessives:,} / {possessives:,} | {len(corpus.split(split)):,} |")
    return rows


def _example_lines(corpus: CourseCorpus) -> list[str]:
    """Both readings of the first training text that has both, then a clause and a possessive."""
    train = corpus.train
    both = [found for found in _readings_by_text(train).values() if len(found) == 2]
    chosen = [both[0][0], both[0][1]] if both else []
    for possessive in (False, True):  # a small corpus may lack one kind: then it shows none
        chosen += [s for s in train if s.group == "plain" and ("的" in s.words) == possessive][:1]
    return [f"| `{s.id}` | {s.group} | {'—' if s.reading is None else s.reading} | {s.text} | {s.reference} |"
            for s in chosen]


def _readme(corpus: CourseCorpus) -> str:
    verbs = ", ".join(f"{v} {third} / {gerund}" for v, (third, gerund) in VERB_GLOSSES.items())
    nouns = ", ".join(f"{n} {gloss}" for n, gloss in NOUN_GLOSSES.items())
    frames = "; ".join(f"{''.join(f.words).replace(SLOT, 'X')} \"{f.english.replace(SLOT, 'X')}\""
                       for f in STATEMENT_FRAMES + CLAUSE_FRAMES)
    lines = [
        "# The course's translation corpus (Chinese → English)",
        "",
        "Short Chinese statements with English references and a gold dependency tree for each, written for",
        "the course (nothing here is taken from another corpus). In the `syntax` group the tree decides part of",
        "the translation; in the `plain` group the text alone decides it. Generated by",
        f"`{_command(corpus)}` (`--out-dir DIR` for another folder; `lessons_lib/translation/course_corpus.py`,",
        f"whose docstring gives the algorithm; seed {corpus.seed}). The files are exactly what it writes (tested).",
        "",
        "## Files",
        "",
        "- `train.tsv`, `dev.tsv`, `test.tsv`: `id<TAB>source<TAB>reference<TAB>group`, one pair a line",
        "  (the format of `lessons_lib/translation/pairs_folder.py`).",
        "- `trees.conllu`: one gold tree per pair, keyed by `# sent_id = <id>`, with the comments `# group`,",
        "  `# phrase` (V N1 N2, the unit of the split) and, in the `syntax` group, `# reading`. A text may occur",
        "  several times with different trees: look trees up by id, never by text.",
        "",
        "## Groups",
        "",
        "- `syntax`: the ambiguous phrase V N1 的 N2 in a statement frame. Its reading is drawn at random for",
        "  each pair, independently of the text: 0, a relative clause [V N1]的 N2 (\"the N2 who V's the N1\"),",
        "  or 1, a verb phrase V [N1 的 N2] (\"V-ing the N1's N2\"). The gold tree and the reference follow it.",
        "  Each drawn text is used for two pairs whose readings are drawn separately, so about half of the",
        "  texts occur with both readings and both references: no function of the text can tell them apart.",
        "- `plain`: the clause N1 V N2 (alone, or after 我们知道 / 他们认为) and the possessive N1 的 N2",
        "  (in the same frames as `syntax`): unambiguous, one text, one reference.",
        "",
        "| id | group | reading | source | reference |",
        "|---|---|---|---|---|",
        *_example_lines(corpus),
        "",
        "## Sizes",
        "",
        *_size_rows(corpus),
        "",
        "## How it is made",
        "",
        "- The phrases (V, N1, N2), N1 ≠ N2, are shuffled and cut 70 / 15 / 15 % into train, dev and test",
        "  before any sentence is drawn: no phrase of dev or test occurs in training, in either group.",
        "- Each split draws half its pairs (rounded down) for `syntax` and the rest for `plain` from its own",
        "  phrases, frames at random, and shuffles them; ids number the pairs in file order.",
        f"- Frames (X: the phrase): {frames}.",
        f"- Verbs (third person / gerund): {verbs}.",
        f"- Nouns: {nouns}.",
        "- jieba segments every source exactly into its tree's words, so a parser sees the gold words.",
        "",
        "Licence: CC BY 4.0.",
    ]
    return "\n".join(lines) + "\n"


def corpus_files(corpus: CourseCorpus) -> dict[str, str]:
    """The folder's files, name → text: the three splits, the trees and the README."""
    files = {f"{split}.tsv": format_pairs(corpus.pairs(split)) for split in SPLITS}
    files[TREES_FILE] = format_conllu(corpus.trees())
    files["README.md"] = _readme(corpus)
    return files


def write_course_corpus(out_dir: str | Path = TRANSLATION_CORPUS_DIR, n_train: int = DEFAULT_SIZES["train"],
                        n_dev: int = DEFAULT_SIZES["dev"], n_test: int = DEFAULT_SIZES["test"],
                        seed: int = DEFAULT_SEED) -> CourseCorpus:
    """Generate the corpus and write its files (:data:`CORPUS_FILES`) into ``out_dir``, all or none.

    The course's own folder is written as it is (git keeps its files); any other folder records
    the files in its manifest, so that the next build may replace them and only them. Whether
    ``out_dir`` may be written at all is the caller's check
    (:func:`lessons_lib.files.check_output_folder` with :data:`CORPUS_KIND`).
    """
    corpus = make_course_corpus(n_train, n_dev, n_test, seed)
    contents = corpus_files(corpus)
    out_dir = Path(out_dir)
    with file_errors(out_dir, "create the folder"):
        out_dir.mkdir(parents=True, exist_ok=True)
    with folder_lock(out_dir):  # the files are replaced together, or none of them
        if out_dir.resolve() == TRANSLATION_CORPUS_DIR.resolve():
            atomic_write_many({out_dir / name: text for name, text in contents.items()})
        else:
            record_many(out_dir, contents, CORPUS_KIND)
    return corpus
