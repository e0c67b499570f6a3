"""How an LCQMC-format data set is put together: recurrence of questions across splits, balance, hard pairs.

Computed from the pairs alone, so it works on any folder with train/dev/test files (the real
LCQMC, the course's sample, your own data): ``lessons data-stats --data-dir DIR``.

Definitions, with ``T`` the set of distinct questions of the training split (either side):

- *questions seen in train*: the distinct questions of dev (or test), either side, that are
  in ``T``, as a share of that split's distinct questions;
- *pairs with both / one / neither question in train*: per dev (test) pair, how many of its
  two questions are in ``T``;
- *linked positives*: label-1 dev (test) pairs whose two questions are joined by a chain of
  label-1 training pairs, i.e. pairs that follow from the training labels by transitivity;
- *pair repeats across splits*: unordered pairs (``{a, b}`` = ``{b, a}``) found in two splits,
  whatever their labels; *duplicates*: unordered pairs occurring more than once in one split;
- *label shares*: the share of label 1 per split;
- *hard negatives*: label-0 pairs whose character Jaccard overlap is at least
  :data:`HARD_NEGATIVE_OVERLAP` (the 什么花 / 什么花生 kind: nearly the same characters,
  another meaning).

:data:`LCQMC_MEASURED` holds the same numbers for the real LCQMC, measured by the course's
maintainers (the data is not redistributable), so that a report can show both side by side.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from lessons_lib.errors import CourseInputError
from lessons_lib.pairs.baselines import char_overlap
from lessons_lib.pairs.data import SPLITS, PairExample, load_lcqmc

__all__ = [
    "HARD_NEGATIVE_OVERLAP",
    "LCQMC_MEASURED",
    "EvalSplitStats",
    "SplitStatistics",
    "split_statistics",
    "data_statistics",
]

HARD_NEGATIVE_OVERLAP = 0.5

# The real LCQMC, measured by the course's maintainers (shares of the test split against train).
LCQMC_MEASURED = {
    "pairs": {"train": 238_766, "dev": 8_802, "test": 12_500},
    "label_1": {"train": 0.580, "dev": 0.500, "test": 0.500},
    "test_questions_seen": 0.663,
    "test_both": 0.523,
    "test_one": 0.294,
    "test_neither": 0.184,
    "repeats": 0,
}


@dataclass(frozen=True)
class EvalSplitStats:
    """Dev or test against train (definitions in the module docstring)."""

    pairs: int
    questions: int
    questions_seen: int
    both: int
    one: int
    neither: int
    positives: int
    linked_positives: int

    @property
    def seen_share(self) -> float:
        return self.questions_seen / self.questions

    def kind_shares(self) -> tuple[float, float, float]:
        """Shares of pairs with both / one / neither question in train."""
        return self.both / self.pairs, self.one / self.pairs, self.neither / self.pairs


@dataclass(frozen=True)
class SplitStatistics:
    """The statistics of one data set; ``report()`` prints them beside LCQMC's."""

    pairs: dict[str, int]
    positives: dict[str, int]
    questions: dict[str, int]
    against_train: dict[str, EvalSplitStats]
    repeats: dict[str, int]
    duplicates: dict[str, int]
    hard_negatives: dict[str, int]
    shared_dev_test_questions: int

    def label_share(self, split: str) -> float:
        return self.positives[split] / self.pairs[split]

    def report(self) -> str:
        """A table: this data beside the real LCQMC (measured by the maintainers)."""
        ref = LCQMC_MEASURED
        rows = [
            ("pairs train / dev / test", " / ".join(f"{self.pairs[s]:,}" for s in SPLITS),
             " / ".join(f"{ref['pairs'][s]:,}" for s in SPLITS)),
            ("label 1 train / dev / test", " / ".join(f"{self.label_share(s):.1%}" for s in SPLITS),
             " / ".join(f"{ref['label_1'][s]:.1%}" for s in SPLITS)),
        ]
        for split in ("dev", "test"):
            stats = self.against_train[split]
            both, one, neither = stats.kind_shares()
            is_test = split == "test"
            rows.append((f"{split} questions seen in train", f"{stats.seen_share:.1%} of {stats.questions:,}",
                         f"{ref['test_questions_seen']:.1%}" if is_test else "-"))
            rows.append((f"{split} pairs with both / one / neither in train",
                         f"{both:.1%} / {one:.1%} / {neither:.1%}",
                         f"{ref['test_both']:.1%} / {ref['test_one']:.1%} / {ref['test_neither']:.1%}" if is_test else "-"))
            rows.append((f"{split} label-1 pairs linked through train positives",
                         f"{stats.linked_positives} of {stats.positives}", "-"))
        rows += [
            ("pair repeats train&dev / train&test / dev&test",
             " / ".join(str(self.repeats[k]) for k in ("train&dev", "train&test", "dev&test")), str(ref["repeats"])),
            ("duplicates within train / dev / test", " / ".join(str(self.duplicates[s]) for s in SPLITS), "-"),
            (f"hard negatives (label 0, Jaccard >= {HARD_NEGATIVE_OVERLAP}) train / dev / test",
             " / ".join(str(self.hard_negatives[s]) for s in SPLITS), "-"),
            ("questions in both dev and test", str(self.shared_dev_test_questions), "-"),
        ]
        width = max(len(name) for name, _, _ in rows)
        value_width = max(len(value) for _, value, _ in rows)
        lines = [f"{'':{width}}  {'this data':{value_width}}  LCQMC (measured by the maintainers)"]
        lines += [f"{name:{width}}  {value:{value_width}}  {lcqmc}" for name, value, lcqmc in rows]
        return "\n".join(lines)


def _pair_key(example: PairExample) -> frozenset[str]:
    return frozenset((example.text_a, example.text_b))


def _positive_components(train: Sequence[PairExample]) -> dict[str, str]:
    """Union-find over label-1 training pairs: question -> a representative of its component."""
    parent: dict[str, str] = {}

    def find(question: str) -> str:
        parent.setdefault(question, question)
        while parent[question] != question:
            parent[question] = parent[parent[question]]
            question = parent[question]
        return question

    for example in train:
        if example.label == 1:
            root_a, root_b = find(example.text_a), find(example.text_b)
            if root_a != root_b:
                parent[max(root_a, root_b)] = min(root_a, root_b)
    return {question: find(question) for question in list(parent)}


def _against_train(examples: Sequence[PairExample], seen: set[str], component: dict[str, str]) -> EvalSplitStats:
    questions = {q for e in examples for q in (e.text_a, e.text_b)}
    kinds: Counter[int] = Counter()
    linked = 0
    for example in examples:
        kinds[(example.text_a in seen) + (example.text_b in seen)] += 1
        root_a, root_b = component.get(example.text_a), component.get(example.text_b)
        linked += example.label == 1 and root_a is not None and root_a == root_b
    return EvalSplitStats(
        pairs=len(examples), questions=len(questions), questions_seen=len(questions & seen),
        both=kinds[2], one=kinds[1], neither=kinds[0],
        positives=sum(e.label for e in examples), linked_positives=linked,
    )


def split_statistics(splits: Mapping[str, Sequence[PairExample]]) -> SplitStatistics:
    """The statistics of ``{"train": [...], "dev": [...], "test": [...]}`` (module docstring)."""
    for split in SPLITS:
        if not splits.get(split):
            raise CourseInputError(f"split {split!r} is missing or empty: statistics need train, dev and test pairs")
    questions = {s: {q for e in splits[s] for q in (e.text_a, e.text_b)} for s in SPLITS}
    keys = {s: Counter(_pair_key(e) for e in splits[s]) for s in SPLITS}
    component = _positive_components(splits["train"])
    return SplitStatistics(
        pairs={s: len(splits[s]) for s in SPLITS},
        positives={s: sum(e.label for e in splits[s]) for s in SPLITS},
        questions={s: len(questions[s]) for s in SPLITS},
        against_train={s: _against_train(splits[s], questions["train"], component) for s in ("dev", "test")},
        repeats={f"{a}&{b}": len(keys[a].keys() & keys[b].keys())
                 for a, b in (("train", "dev"), ("train", "test"), ("dev", "test"))},
        duplicates={s: sum(n - 1 for n in keys[s].values()) for s in SPLITS},
        hard_negatives={s: sum(e.label == 0 and char_overlap(e.text_a, e.text_b) >= HARD_NEGATIVE_OVERLAP
                               for e in splits[s]) for s in SPLITS},
        shared_dev_test_questions=len(questions["dev"] & questions["test"]),
    )


def data_statistics(data_dir: str | Path | None = None, *, lenient: bool = False) -> SplitStatistics:
    """:func:`split_statistics` of a folder (``None``: ``$LCQMC_DIR``, else the course's sample)."""
    data = load_lcqmc(data_dir, lenient=lenient)
    return split_statistics({"train": data.train.examples, "dev": data.dev.examples, "test": data.test.examples})
