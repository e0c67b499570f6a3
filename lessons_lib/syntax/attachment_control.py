"""A positive control for syntax-biased attention: one string, two trees, and only the tree knows the label.

Sentence A of each pair is a short question built around the classic ambiguity
**V N1 的 N2** — 关心学生的老师 is either

- reading 0, a relative clause: **[关心学生]的老师**, "the teacher who cares about students"
  (N1 is the object of V, V modifies N2), or
- reading 1, a verb phrase: **关心[学生的老师]**, "caring about the students' teacher"
  (N1 modifies N2, N2 is the object of V).

The reading of each sentence is drawn **at random, independently of its text**, and written
only into its gold dependency tree. Sentence B is the unambiguous probe **N2 V N1 吗？**
(老师关心学生吗？). The label is 1 exactly when A's tree says reading 0 — when B asks what A
talks about. Both readings spell the same characters in the same order, so no function of
the text can beat chance: not a character model, not character overlap, not a bias on
sequence distance. Only a model that reads the tree can learn the task.

What the mechanism can see: every tree of ``n`` words has ``n − 1`` arcs, so both readings
have exactly as many distance-1 pairs; they differ further out (reading 1 nests 的 two arcs
deeper, so it has more pairs at distance 5, and at distance 6 some that reading 0 never has;
:func:`bucket_profile`).

Vocabulary: 20 two-character transitive verbs that take a person as object and 20 person
nouns, in 12 question frames (prefix ∅ / 请问 / 你觉得 × 4 tails). Splits are made by phrase
(V, N1, N2) before any pair is drawn, so no test phrase occurs in training. A text that
recurs keeps the tree it first got (one text, one tree), as the parse tables of the course
assume. Every sentence is segmented by jieba exactly into the gold words (tested), so the
course parser's trees are aligned with the gold ones. Everything here was written for the
course.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import torch

from lessons_lib.errors import CourseInputError, FieldName
from lessons_lib.pairs.data import DataSource, LcqmcData, LcqmcSplit, PairExample
from lessons_lib.syntax.buckets import DEFAULT_SCHEME, BucketScheme, char_word_index
from lessons_lib.syntax.distances import tree_distances
from lessons_lib.syntax.parser import Parse
from lessons_lib.syntax.trees import validate_heads
from lessons_lib.validation import check_choice, check_int

__all__ = [
    "VERBS",
    "PEOPLE",
    "FRAMES",
    "READINGS",
    "PROBE",
    "ControlTask",
    "phrase_tree",
    "ambiguous_question",
    "probe_question",
    "make_attachment_control",
    "text_only_baselines",
    "both_readings",
    "bucket_profile",
]

VERBS = ("关心", "照顾", "批评", "表扬", "帮助", "喜欢", "认识", "支持", "保护", "邀请",
         "理解", "感谢", "鼓励", "相信", "尊重", "讨厌", "培养", "欣赏", "打扰", "监督")
PEOPLE = ("老师", "学生", "孩子", "医生", "病人", "妈妈", "朋友", "同事", "领导", "邻居",
          "老人", "记者", "律师", "警察", "司机", "经理", "作者", "队长", "校长", "客户")
# Question frames: a prefix (words, relations; "root" marks the root) and a tail whose first
# word is the predicate the phrase is the subject of.
_PREFIXES = (((), ()), (("请问",), ("discourse",)), (("你", "觉得"), ("nsubj", "root")))
_TAILS = (("重要", "吗", "？"), ("怎么样", "？"), ("常见", "吗", "？"), ("好", "吗", "？"))
FRAMES = tuple((prefix, tail) for prefix in _PREFIXES for tail in _TAILS)
_TAIL_RELATIONS = {"吗": "discourse:sp", "？": "punct"}
READINGS = {0: "relative clause: [V N1]的 N2", 1: "verb phrase: V [N1 的 N2]"}
PROBE = -1  # the reading recorded for a probe sentence: it has only one


def phrase_tree(verb: str, noun1: str, noun2: str, reading: int) -> tuple[list[str], list[int], list[str]]:
    """Words, heads and relations of ``V N1 的 N2`` under ``reading``.

    Heads index the four words; ``-1`` marks the phrase's head (the subject of the frame's
    predicate): N2 in reading 0, V in reading 1.
    """
    check_choice(reading, FieldName("reading"), tuple(READINGS))
    words = [verb, noun1, "的", noun2]
    if reading == 0:  # [V N1]的 N2: V modifies N2, N1 is V's object, 的 marks the clause
        return words, [3, 0, 0, -1], ["acl:relcl", "obj", "mark:rel", "nsubj"]
    return words, [-1, 3, 1, 0], ["csubj", "nmod", "case", "obj"]  # V [N1 的 N2]


def _frame_sentence(frame_index: int, words: Sequence[str], heads: Sequence[int], rels: Sequence[str]) -> Parse:
    """The phrase inside frame ``frame_index``: the whole question as a :class:`Parse`."""
    (prefix, prefix_rels), tail = FRAMES[frame_index]
    predicate = len(prefix) + len(words)  # the tail's first word
    root = len(prefix) - 1 if "root" in prefix_rels else predicate  # 你觉得 …: 觉得 is the root
    out_words, out_heads, out_rels = [], [], []
    for word, rel in zip(prefix, prefix_rels):
        out_words.append(word)
        out_heads.append(-1 if rel == "root" else root)
        out_rels.append(rel)
    for word, head, rel in zip(words, heads, rels):
        out_words.append(word)
        out_heads.append(predicate if head == -1 else len(prefix) + head)
        out_rels.append(rel)
    for k, word in enumerate(tail):
        out_words.append(word)
        if k == 0:
            out_heads.append(-1 if root == predicate else root)
            out_rels.append("root" if root == predicate else "ccomp")
        else:
            out_heads.append(predicate)
            out_rels.append(_TAIL_RELATIONS[word])
    validate_heads(out_heads, name=" ".join(out_words))
    return Parse("".join(out_words), tuple(out_words), tuple(out_heads), tuple(out_rels))


def ambiguous_question(verb: str, noun1: str, noun2: str, reading: int, frame: int = 0) -> Parse:
    """Sentence A: ``V N1 的 N2`` in question frame ``frame`` (0–11), with the tree of ``reading``."""
    check_int(frame, FieldName("frame"), minimum=0, maximum=len(FRAMES) - 1)
    return _frame_sentence(frame, *phrase_tree(verb, noun1, noun2, reading))


def probe_question(verb: str, noun1: str, noun2: str) -> Parse:
    """Sentence B: ``N2 V N1 吗？`` (老师关心学生吗？), unambiguous: N2 is the one who V's N1."""
    words = (noun2, verb, noun1, "吗", "？")
    return Parse("".join(words), words, (1, -1, 1, 1, 1), ("nsubj", "root", "obj", "discourse:sp", "punct"))


@dataclass(frozen=True)
class ControlTask:
    """The generated pairs and their gold trees.

    Attributes:
        train, dev, test: the pairs (``text_a`` = the ambiguous question, ``text_b`` = the probe).
        parses: every sentence → its gold :class:`Parse`.
        readings: every sentence → 0 or 1 (the reading its tree encodes), :data:`PROBE` for probes.
        seed: the generation seed.
    """

    train: list[PairExample]
    dev: list[PairExample]
    test: list[PairExample]
    parses: dict[str, Parse]
    readings: dict[str, int]
    seed: int

    def split(self, name: str) -> list[PairExample]:
        check_choice(name, FieldName("split"), ("train", "dev", "test"))
        return getattr(self, name)

    def as_data(self) -> LcqmcData:
        """The three splits as :class:`LcqmcData` (origin ``"generated"``), ready for the ablation runner."""
        folder = Path(f"attachment_control-seed{self.seed}")  # a name, not a folder on disk
        splits = [LcqmcSplit(name, folder / name, list(self.split(name))) for name in ("train", "dev", "test")]
        return LcqmcData(DataSource(folder, "generated"), *splits)


def _split_phrases(seed: int) -> dict[str, list[tuple[str, str, str]]]:
    phrases = [(v, a, b) for v in VERBS for a in PEOPLE for b in PEOPLE if a != b]
    random.Random(f"split{seed}").shuffle(phrases)
    n_train, n_dev = int(0.7 * len(phrases)), int(0.15 * len(phrases))
    return {"train": phrases[:n_train], "dev": phrases[n_train:n_train + n_dev], "test": phrases[n_train + n_dev:]}


def make_attachment_control(n_train: int = 1500, n_dev: int = 300, n_test: int = 1000, seed: int = 0) -> ControlTask:
    """Generate the control task (deterministic from ``seed``; see the module docstring).

    Args:
        n_train, n_dev, n_test: pairs per split (each ≥ 1).
        seed: the generation seed (phrase split, frames, readings).
    """
    sizes = {"train": check_int(n_train, FieldName("n_train")), "dev": check_int(n_dev, FieldName("n_dev")),
             "test": check_int(n_test, FieldName("n_test"))}
    check_int(seed, FieldName("seed"), minimum=0)
    rng = random.Random(f"attachment:{seed}")
    parses: dict[str, Parse] = {}
    readings: dict[str, int] = {}
    out: dict[str, list[PairExample]] = {}
    for split, pool in _split_phrases(seed).items():
        examples = []
        for line in range(1, sizes[split] + 1):
            verb, noun1, noun2 = rng.choice(pool)
            frame, reading = rng.randrange(len(FRAMES)), rng.randrange(2)
            a = ambiguous_question(verb, noun1, noun2, reading, frame)
            parses.setdefault(a.text, a)
            readings.setdefault(a.text, reading)  # one text, one tree: a repeat keeps its first reading
            b = probe_question(verb, noun1, noun2)
            parses.setdefault(b.text, b)
            readings.setdefault(b.text, PROBE)
            examples.append(PairExample(a.text, b.text, int(readings[a.text] == 0), line))
        out[split] = examples
    return ControlTask(out["train"], out["dev"], out["test"], parses, readings, seed)


def _char_jaccard(a: str, b: str) -> float:
    sa, sb = set(a), set(b)
    return len(sa & sb) / len(sa | sb)


def text_only_baselines(task: ControlTask) -> dict[str, float]:
    """Test accuracy of two rules that read only the text, fitted on train.

    ``"majority"``: always the more frequent training label. ``"jaccard"``: the best
    threshold rule on character overlap, ``overlap ≥ t → 1`` or ``overlap < t → 1``.
    """
    majority = int(2 * sum(ex.label for ex in task.train) >= len(task.train))
    scores = [(_char_jaccard(ex.text_a, ex.text_b), ex.label) for ex in task.train]
    best = (-1.0, 0.0, True)  # (train accuracy, threshold, "above means 1")
    for threshold in sorted({s for s, _ in scores}) + [1.01]:
        for above in (True, False):
            accuracy = sum(((s >= threshold) == above) == bool(y) for s, y in scores) / len(scores)
            best = max(best, (accuracy, threshold, above))
    _, threshold, above = best
    test = task.test
    return {
        "majority": sum(ex.label == majority for ex in test) / len(test),
        "jaccard": sum(((_char_jaccard(ex.text_a, ex.text_b) >= threshold) == above) == bool(ex.label)
                       for ex in test) / len(test),
    }


def both_readings(parse: Parse) -> dict[int, Parse]:
    """The same ambiguous question (same words, same frame) under each reading: ``{0: ..., 1: ...}``."""
    words = tuple(parse.words)
    for frame, ((prefix, _), tail) in enumerate(FRAMES):
        start = len(prefix)
        if (len(words) == start + 4 + len(tail) and words[:start] == prefix and words[start + 4:] == tail
                and words[start + 2] == "的"):
            verb, noun1, noun2 = words[start], words[start + 1], words[start + 3]
            return {r: ambiguous_question(verb, noun1, noun2, r, frame) for r in READINGS}
    raise CourseInputError(f"{parse.text!r} is not an ambiguous question of the control task")


def bucket_profile(task: ControlTask, split: str = "test",
                   scheme: BucketScheme = DEFAULT_SCHEME) -> dict[int, list[float]]:
    """Mean number of character pairs per bucket id in one ambiguous sentence, under each reading.

    Paired: every distinct ambiguous sentence of ``split`` is counted under both trees (its own
    and the other reading's, same words and frame), so a difference between the two lists comes
    from the reading alone, not from which frames or phrases each reading happened to draw.
    Only same-sentence ids occur (same word and the distances; a character paired with itself
    counts in "same word"), so the ``cross sentence`` and ``special`` entries are 0.

    Returns:
        ``{0: [...], 1: [...]}``, one list of ``scheme.n_buckets`` means per reading.
    """
    sums = {r: torch.zeros(scheme.n_buckets, dtype=torch.float64) for r in READINGS}
    texts = list(dict.fromkeys(ex.text_a for ex in task.split(split)))
    if not texts:
        raise CourseInputError(f"the {split} split has no ambiguous sentence")
    for text in texts:
        for reading, parse in both_readings(task.parses[text]).items():
            index = torch.tensor(char_word_index(parse.words))
            char_distances = tree_distances(parse.heads)[index[:, None], index[None, :]]
            sums[reading] += torch.bincount(scheme.bucket(char_distances).flatten(), minlength=scheme.n_buckets)
    return {r: (sums[r] / len(texts)).tolist() for r in READINGS}
