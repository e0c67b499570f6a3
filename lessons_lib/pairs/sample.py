"""Build the course's LCQMC-format sample from groups of questions written for the course.

Source: ``data/lcqmc_sample/source/question_groups.txt``. A line ``## <topic>`` starts a
topic, each other non-empty line is a question, a blank line ends a group; questions of
one group mean the same thing, questions of different groups do not. Lines starting with
``#`` (not ``##``) are comments.

Pairs, per split (groups are assigned to exactly one split, so nothing leaks):

- positives (label 1): every two questions of a group;
- negatives (label 0), as many as ``negative_ratio`` × positives, from three pools in turn:
  *hard* — questions of different groups with the highest character overlap (the
  什么花 / 什么花生 kind: nearly the same characters, another meaning); *same topic* —
  random questions of two groups of one topic; *random* — any two groups.

Everything is drawn from ``random.Random(seed)`` and sorted inputs, so the same source
and seed give byte-identical files.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

from lessons_lib.errors import CourseInputError, file_errors
from lessons_lib.pairs.data import SPLITS, PairExample
from lessons_lib.paths import LCQMC_SAMPLE_DIR

__all__ = [
    "QuestionGroup",
    "SOURCE_FILE",
    "read_question_groups",
    "char_overlap",
    "split_groups",
    "make_pairs",
    "SampleStats",
    "build_sample",
]

SOURCE_FILE = LCQMC_SAMPLE_DIR / "source" / "question_groups.txt"
SPLIT_FRACTIONS = {"train": 0.8, "dev": 0.1, "test": 0.1}


@dataclass(frozen=True)
class QuestionGroup:
    """Questions that mean the same thing. ``index`` is the group's order in the source."""

    index: int
    topic: str
    questions: tuple[str, ...]
    line: int  # 1-based line of the group's first question


def read_question_groups(path: str | Path = SOURCE_FILE) -> list[QuestionGroup]:
    """Parse the source file.

    Raises:
        CourseInputError: a question before any topic, a group of one question, a tab in a
            question, or a question that appears twice (naming both lines).
    """
    path = Path(path)
    if not path.is_file():
        raise CourseInputError(f"question-group source not found: {path}")
    groups: list[QuestionGroup] = []
    seen: dict[str, int] = {}
    topic: str | None = None
    current: list[str] = []
    start = 0

    def close_group() -> None:
        nonlocal current
        if not current:
            return
        if len(current) < 2:
            raise CourseInputError(f"{path}, line {start}: a group needs at least 2 questions, found 1")
        groups.append(QuestionGroup(len(groups), topic or "", tuple(current), start))
        current = []

    try:
        with file_errors(path):
            lines = path.read_text(encoding="utf-8-sig").splitlines()
    except UnicodeDecodeError as error:
        raise CourseInputError(f"{path}: not UTF-8 text ({error.reason} at byte {error.start})") from None
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line:
            close_group()
        elif line.startswith("##"):
            close_group()
            topic = line.lstrip("#").strip()
        elif line.startswith("#"):
            continue
        else:
            if topic is None:
                raise CourseInputError(f"{path}, line {number}: question before the first '## topic' line")
            if "\t" in line:
                raise CourseInputError(f"{path}, line {number}: a question must not contain a tab")
            if line in seen:
                raise CourseInputError(f"{path}, line {number}: question {line!r} already on line {seen[line]}")
            seen[line] = number
            if not current:
                start = number
            current.append(line)
    close_group()
    return groups


def char_overlap(a: str, b: str) -> float:
    """Jaccard overlap of the two questions' character sets, in [0, 1]."""
    set_a, set_b = set(a), set(b)
    return len(set_a & set_b) / len(set_a | set_b)


def split_groups(groups: list[QuestionGroup], seed: int) -> dict[str, list[QuestionGroup]]:
    """Assign whole groups to train/dev/test (80/10/10), shuffled within each topic.

    Splitting topic by topic keeps every topic present in every split.
    """
    rng = random.Random(seed)
    by_topic: dict[str, list[QuestionGroup]] = {}
    for group in groups:
        by_topic.setdefault(group.topic, []).append(group)
    out: dict[str, list[QuestionGroup]] = {split: [] for split in SPLITS}
    carry = 0.0  # spreads rounding over topics so the global fractions hold
    for topic in sorted(by_topic):
        members = by_topic[topic][:]
        rng.shuffle(members)
        n = len(members)
        n_dev = int(n * SPLIT_FRACTIONS["dev"] + carry + 0.5)
        carry += n * SPLIT_FRACTIONS["dev"] - n_dev
        n_dev = min(n_dev, n // 2)
        n_test = min(n_dev, n - n_dev - 1) if n > 2 else 0
        out["dev"].extend(members[:n_dev])
        out["test"].extend(members[n_dev : n_dev + n_test])
        out["train"].extend(members[n_dev + n_test :])
    for split in SPLITS:
        out[split].sort(key=lambda g: g.index)
    return out


def _ordered(rng: random.Random, a: str, b: str) -> tuple[str, str]:
    return (a, b) if rng.random() < 0.5 else (b, a)


def make_pairs(
    groups: list[QuestionGroup], seed: int, negative_ratio: float = 1.1, hard_fraction: float = 0.4,
    same_topic_fraction: float = 0.3,
) -> list[PairExample]:
    """All positive pairs of ``groups`` and ``negative_ratio`` × as many negatives, shuffled."""
    rng = random.Random(seed)
    positives = []
    for group in groups:
        for a, b in combinations(group.questions, 2):
            positives.append(PairExample(*_ordered(rng, a, b), 1))
    n_negative = round(len(positives) * negative_ratio)
    owner = {q: g for g in groups for q in g.questions}
    questions = sorted(owner, key=lambda q: (owner[q].index, owner[q].questions.index(q)))
    used: set[frozenset[str]] = set()
    negatives: list[PairExample] = []

    def add(a: str, b: str) -> bool:
        key = frozenset((a, b))
        if owner[a].index == owner[b].index or key in used:
            return False
        used.add(key)
        negatives.append(PairExample(*_ordered(rng, a, b), 0))
        return True

    # Hard negatives: the most overlapping cross-group pairs, at most 2 per question so a
    # few long questions do not take them all.
    scored = sorted(
        ((char_overlap(a, b), i, j) for i, a in enumerate(questions) for j in range(i + 1, len(questions))
         if owner[a].index != owner[(b := questions[j])].index),
        key=lambda t: (-t[0], t[1], t[2]),
    )
    per_question: Counter[str] = Counter()
    n_hard = int(n_negative * hard_fraction)
    for _, i, j in scored:
        if len(negatives) >= n_hard:
            break
        a, b = questions[i], questions[j]
        if per_question[a] < 2 and per_question[b] < 2 and add(a, b):
            per_question[a] += 1
            per_question[b] += 1
    # Same-topic negatives, then random ones.
    by_topic: dict[str, list[str]] = {}
    for q in questions:
        by_topic.setdefault(owner[q].topic, []).append(q)
    topics = sorted(t for t, qs in by_topic.items() if len({owner[q].index for q in qs}) > 1)
    n_same = n_hard + int(n_negative * same_topic_fraction)
    attempts = 0
    while len(negatives) < n_same and topics and attempts < 100 * n_negative:
        attempts += 1
        pool = by_topic[rng.choice(topics)]
        add(rng.choice(pool), rng.choice(pool))
    while len(negatives) < n_negative and attempts < 200 * n_negative:
        attempts += 1
        add(rng.choice(questions), rng.choice(questions))
    pairs = positives + negatives
    rng.shuffle(pairs)
    return pairs


@dataclass
class SampleStats:
    """What the build produced, for the command's report and the data README."""

    groups: int
    questions: int
    topics: int
    pairs: dict[str, int]
    positives: dict[str, int]
    groups_per_split: dict[str, int]
    mean_overlap: dict[str, float]  # mean char overlap of (positives, hard-ish negatives...) per label

    def report(self) -> str:
        total = sum(self.pairs.values())
        pos = sum(self.positives.values())
        lines = [
            f"{self.questions} questions in {self.groups} groups over {self.topics} topics",
            f"{total} pairs, label 1: {pos} ({pos / total:.1%})",
        ]
        for split in SPLITS:
            n = self.pairs[split]
            lines.append(
                f"  {split}: {n} pairs from {self.groups_per_split[split]} groups, "
                f"label 1: {self.positives[split]} ({self.positives[split] / n:.1%})"
            )
        lines.append(
            f"mean character overlap (Jaccard): label 1 {self.mean_overlap['1']:.3f}, "
            f"label 0 {self.mean_overlap['0']:.3f}, label-0 pairs with overlap ≥ 0.5: "
            f"{self.mean_overlap['hard_count']:.0f}"
        )
        return "\n".join(lines)


def build_sample(
    source: str | Path = SOURCE_FILE, out_dir: str | Path = LCQMC_SAMPLE_DIR, seed: int = 20240601
) -> SampleStats:
    """Read the groups, split them, make pairs and write ``{train,dev,test}.tsv`` (no header)."""
    groups = read_question_groups(source)
    splits = split_groups(groups, seed)
    made = {split: make_pairs(splits[split], seed + offset) for offset, split in enumerate(SPLITS)}
    for split, pairs in made.items():
        if not {p.label for p in pairs} == {0, 1}:
            raise CourseInputError(f"{source}: {len(groups)} question groups are too few: the {split} split "
                                   "would not hold pairs of both labels")
    out_dir = Path(out_dir)
    pairs_count, positives, overlaps = {}, {}, {"0": [], "1": []}
    for split, pairs in made.items():
        with file_errors(out_dir / f"{split}.tsv", "write"):
            out_dir.mkdir(parents=True, exist_ok=True)
            with open(out_dir / f"{split}.tsv", "w", encoding="utf-8", newline="\n") as handle:
                for pair in pairs:
                    handle.write(f"{pair.text_a}\t{pair.text_b}\t{pair.label}\n")
        for pair in pairs:
            overlaps[str(pair.label)].append(char_overlap(pair.text_a, pair.text_b))
        pairs_count[split] = len(pairs)
        positives[split] = sum(p.label for p in pairs)
    mean_overlap = {label: sum(v) / len(v) for label, v in overlaps.items()}
    mean_overlap["hard_count"] = float(sum(o >= 0.5 for o in overlaps["0"]))
    return SampleStats(
        groups=len(groups),
        questions=sum(len(g.questions) for g in groups),
        topics=len({g.topic for g in groups}),
        pairs=pairs_count,
        positives=positives,
        groups_per_split={split: len(splits[split]) for split in SPLITS},
        mean_overlap=mean_overlap,
    )
