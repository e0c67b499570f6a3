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
- *Jaccard by label*: the mean and quartiles (inclusive method) of :func:`char_overlap`
  over a split's label-0 and label-1 pairs; *characters of a pair*: the mean of
  ``len(a) + len(b)`` per label;
- *pairs per question*: ``2 × pairs / distinct questions`` (how often a question occurs;
  1.0 when no two pairs share a question);
- *components*: the connected components of the graph whose nodes are a split's questions
  and whose edges are its pairs (pairs linked by a shared question, whatever the label);
  *largest component*: the pairs of the largest one, also as a share of the split's pairs.
  Pairs in different components share nothing; pairs in one component do.

:data:`LCQMC_MEASURED` holds the same numbers for the real LCQMC, measured by the course's
maintainers (the data is not redistributable), so that a report can show both side by side.
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from lessons_lib.errors import CourseInputError, FieldName, input_error
from lessons_lib.pairs.data import SPLITS, PairExample, char_overlap, load_lcqmc

__all__ = [
    "HARD_NEGATIVE_OVERLAP",
    "LCQMC_MEASURED",
    "JACCARD_BINS",
    "LCQMC_KINDS",
    "jaccard_bin",
    "QuestionGraph",
    "question_graph",
    "NEAR_DUPLICATE_OVERLAP",
    "NearDuplicates",
    "near_duplicates",
    "LabelOverlap",
    "label_overlap",
    "EvalSplitStats",
    "SplitStatistics",
    "split_statistics",
    "data_statistics",
]

HARD_NEGATIVE_OVERLAP = 0.5

# The real LCQMC, measured by the course's maintainers (shares of the test split against train;
# per split: distinct questions, components, the largest component's pairs, Jaccard by label
# (mean, q1, median, q3), mean characters of a pair by label, the Jaccard histogram by label
# over JACCARD_BINS).
LCQMC_MEASURED: dict[str, Any] = {
    "pairs": {"train": 238_766, "dev": 8_802, "test": 12_500},
    "label_1": {"train": 0.580, "dev": 0.500, "test": 0.500},
    "test_questions_seen": 0.663,
    "test_both": 0.523,
    "test_one": 0.294,
    "test_neither": 0.184,
    "repeats": 0,
    "questions": {"train": 245_951, "dev": 15_917, "test": 23_557},
    "components": {"train": 70_541, "dev": 7_135, "test": 11_090},
    "largest_component": {"train": 210, "dev": 7, "test": 8},
    "jaccard": {
        "train": {0: (0.439, 0.300, 0.444, 0.583), 1: (0.736, 0.636, 0.750, 0.857)},
        "dev": {0: (0.556, 0.400, 0.600, 0.714), 1: (0.714, 0.600, 0.733, 0.833)},
        "test": {0: (0.569, 0.455, 0.556, 0.667), 1: (0.741, 0.636, 0.750, 0.857)},
    },
    "pair_chars": {"train": {0: 24.1, 1: 20.3}, "dev": {0: 23.2, 1: 26.8}, "test": {0: 19.3, 1: 19.6}},
    "jaccard_histogram": {
        "train": {
            0: (0.017, 0.023, 0.0371, 0.0446, 0.0545, 0.072, 0.0786, 0.0797, 0.1065, 0.0619,
                0.1291, 0.0638, 0.0849, 0.0436, 0.0369, 0.032, 0.0193, 0.0088, 0.0044, 0.0024),
            1: (0.0001, 0.0001, 0.0002, 0.0004, 0.0006, 0.0018, 0.0054, 0.0103, 0.0254, 0.0202,
                0.0709, 0.0481, 0.098, 0.0847, 0.0915, 0.1285, 0.1349, 0.1277, 0.1072, 0.0441),
        },
        "dev": {
            0: (0.0077, 0.01, 0.0164, 0.0236, 0.0343, 0.0484, 0.0534, 0.0482, 0.0532, 0.0352,
                0.0857, 0.0623, 0.122, 0.1073, 0.107, 0.0882, 0.0557, 0.0234, 0.0123, 0.0057),
            1: (0.0, 0.0002, 0.0002, 0.0011, 0.0023, 0.0066, 0.0125, 0.0157, 0.0309, 0.0293,
                0.0702, 0.0584, 0.1093, 0.1045, 0.0816, 0.1186, 0.1515, 0.0498, 0.1006, 0.0568),
        },
        "test": {
            0: (0.0, 0.0, 0.0005, 0.0011, 0.0045, 0.0144, 0.0419, 0.055, 0.113, 0.0603,
                0.1805, 0.0968, 0.1365, 0.0816, 0.069, 0.0712, 0.0374, 0.021, 0.0104, 0.005),
            1: (0.0, 0.0, 0.0, 0.0, 0.0002, 0.0016, 0.0034, 0.0083, 0.0256, 0.0157,
                0.0664, 0.0429, 0.1035, 0.0936, 0.0962, 0.1211, 0.1368, 0.132, 0.1115, 0.0413),
        },
    },
}

# Bin edges of the Jaccard histogram: [0, 0.05), [0.05, 0.1), ..., [0.95, 1.0] (1.0 in the last bin).
JACCARD_BINS = tuple(i / 20 for i in range(21))

# Kinds of LCQMC pairs, counted by hand by the course's maintainers on a seeded random 300
# label-0 and 300 label-1 pairs of LCQMC's dev split; each kind's definition, and how the
# pairs were drawn, in data/lcqmc_sample/source/lcqmc_kinds.md.
LCQMC_KINDS = {
    "negative": {"A": 112, "E": 78, "C": 42, "U": 37, "O": 12, "N": 11, "G": 8},
    "positive": {"P": 75, "S": 64, "F": 58, "R": 56, "L": 47},
}


def jaccard_bin(overlap: float) -> int:
    """The index (0–19) of the :data:`JACCARD_BINS` bin holding ``overlap`` (in [0, 1])."""
    return min(len(JACCARD_BINS) - 2, int(overlap * (len(JACCARD_BINS) - 1) + 1e-9))


@dataclass(frozen=True)
class QuestionGraph:
    """How a split's pairs share questions (definitions in the module docstring).

    Attributes:
        pairs: the split's pairs.
        questions: its distinct questions.
        components: connected components of its question graph.
        largest_component: pairs of the largest component.
    """

    pairs: int
    questions: int
    components: int
    largest_component: int

    @property
    def pairs_per_question(self) -> float:
        return 2 * self.pairs / self.questions

    @property
    def largest_share(self) -> float:
        return self.largest_component / self.pairs


def question_graph(examples: Sequence[PairExample]) -> QuestionGraph:
    """The :class:`QuestionGraph` of ``examples`` (union-find over the questions of each pair)."""
    component = _components((e.text_a, e.text_b) for e in examples)
    sizes = Counter(component[e.text_a] for e in examples)
    return QuestionGraph(pairs=len(examples), questions=len(component), components=len(sizes),
                         largest_component=max(sizes.values(), default=0))


NEAR_DUPLICATE_OVERLAP = 0.8
"""Character Jaccard from which two questions count as near-duplicates (:func:`near_duplicates`)."""


@dataclass(frozen=True)
class NearDuplicates:
    """How a split's pairs are linked by near-duplicate questions, not only by identical ones.

    Attributes:
        pairs: the split's pairs.
        min_overlap: the character Jaccard from which two questions are near-duplicates.
        pairs_linked: pairs with a question that is a near-duplicate of a question of another pair.
        largest_web: pairs of the largest group joined by chains of such links.
        example: two near-duplicate questions of different pairs in that group (``None`` when none).
    """

    pairs: int
    min_overlap: float
    pairs_linked: int
    largest_web: int
    example: tuple[str, str] | None


def near_duplicates(examples: Sequence[PairExample], min_overlap: float = NEAR_DUPLICATE_OVERLAP) -> NearDuplicates:
    """Link two pairs when a question of one and a question of the other have :func:`char_overlap` ≥ ``min_overlap``.

    :func:`question_graph` links pairs that share an identical question; this counts what it
    cannot see: 厨房里有蚂蚁怎么办 and 厨房里有蚂蚁该怎么办 in two pairs. Every two questions of
    different pairs are compared (quadratic: about 3 s for 1,200 pairs); questions whose lengths
    alone rule out the overlap are skipped.

    Raises:
        CourseInputError: ``min_overlap`` outside (0, 1].
    """
    if not 0 < min_overlap <= 1:
        raise input_error(FieldName("min_overlap"), f" must lie in (0, 1], got {min_overlap!r}")
    questions = [(index, text, set(text)) for index, e in enumerate(examples) for text in (e.text_a, e.text_b)]
    questions.sort(key=lambda q: len(q[2]))
    links: list[tuple[str, str]] = []
    first_link: dict[int, tuple[str, str]] = {}
    for i, (pair_i, text_i, chars_i) in enumerate(questions):
        for pair_j, text_j, chars_j in questions[i + 1:]:
            if len(chars_i) < min_overlap * len(chars_j):
                break  # sorted by size: every later question is at least as large
            if pair_i != pair_j and char_overlap(text_i, text_j) >= min_overlap:
                links.append((str(pair_i), str(pair_j)))
                first_link.setdefault(pair_i, (text_i, text_j))
                first_link.setdefault(pair_j, (text_i, text_j))
    component = _components(links)
    sizes = Counter(component.values())
    if not sizes:
        return NearDuplicates(len(examples), min_overlap, 0, 0, None)
    root = max(sizes, key=lambda r: (sizes[r], r))
    example = next(first_link[int(p)] for p in sorted(component, key=int) if component[p] == root)
    return NearDuplicates(len(examples), min_overlap, len(component), sizes[root], example)


@dataclass(frozen=True)
class LabelOverlap:
    """Character Jaccard of one label's pairs of a split: mean and quartiles; and the mean characters of a pair."""

    pairs: int
    mean: float
    quartiles: tuple[float, float, float]
    pair_chars: float

    def describe(self) -> str:
        q1, median, q3 = self.quartiles
        return f"{self.mean:.3f} ({q1:.3f} / {median:.3f} / {q3:.3f})"


def label_overlap(examples: Sequence[PairExample], label: int) -> LabelOverlap | None:
    """:class:`LabelOverlap` of the ``label`` pairs of ``examples`` (``None``: fewer than two such pairs)."""
    chosen = [e for e in examples if e.label == label]
    if len(chosen) < 2:
        return None
    overlaps = [char_overlap(e.text_a, e.text_b) for e in chosen]
    quartiles = statistics.quantiles(overlaps, n=4, method="inclusive")
    q1, median, q3 = quartiles
    return LabelOverlap(len(chosen), statistics.fmean(overlaps), (q1, median, q3),
                        statistics.fmean(len(e.text_a) + len(e.text_b) for e in chosen))


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
    graph: dict[str, QuestionGraph]
    overlap: dict[str, dict[int, LabelOverlap | None]]

    def label_share(self, split: str) -> float:
        return self.positives[split] / self.pairs[split]

    def _overlap_rows(self) -> list[tuple[str, str, str]]:
        """Jaccard mean (q1 / median / q3) and characters of a pair, per split and label."""
        ref, rows = LCQMC_MEASURED, []
        for split in SPLITS:
            for label in (0, 1):
                mine = self.overlap[split][label]
                mean, q1, median, q3 = ref["jaccard"][split][label]
                rows.append((f"{split} Jaccard label {label}: mean (q1 / median / q3)",
                             mine.describe() if mine else "-", f"{mean:.3f} ({q1:.3f} / {median:.3f} / {q3:.3f})"))
            chars = [self.overlap[split][label] for label in (0, 1)]
            rows.append((f"{split} characters of a pair, label 0 / 1",
                         " / ".join(f"{c.pair_chars:.1f}" if c else "-" for c in chars),
                         " / ".join(f"{ref['pair_chars'][split][label]:.1f}" for label in (0, 1))))
        return rows

    def _graph_rows(self) -> list[tuple[str, str, str]]:
        """Distinct questions, pairs per question, components and the largest one, per split."""
        ref, rows = LCQMC_MEASURED, []
        for split in SPLITS:
            graph = self.graph[split]
            n_ref, q_ref = ref["pairs"][split], ref["questions"][split]
            largest_ref = ref["largest_component"][split]
            rows += [
                (f"{split} distinct questions / pairs per question",
                 f"{graph.questions:,} / {graph.pairs_per_question:.2f}", f"{q_ref:,} / {2 * n_ref / q_ref:.2f}"),
                (f"{split} components / largest (pairs, share)",
                 f"{graph.components:,} / {graph.largest_component:,} ({graph.largest_share:.1%})",
                 f"{ref['components'][split]:,} / {largest_ref:,} ({largest_ref / n_ref:.1%})"),
            ]
        return rows

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
        rows += self._overlap_rows() + self._graph_rows()
        width = max(len(name) for name, _, _ in rows)
        value_width = max(len(value) for _, value, _ in rows)
        lines = [f"{'':{width}}  {'this data':{value_width}}  LCQMC (measured by the maintainers)"]
        lines += [f"{name:{width}}  {value:{value_width}}  {lcqmc}" for name, value, lcqmc in rows]
        return "\n".join(lines)


def _pair_key(example: PairExample) -> frozenset[str]:
    return frozenset((example.text_a, example.text_b))


def _components(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Union-find over ``pairs`` of questions: question -> a representative of its connected component."""
    parent: dict[str, str] = {}

    def find(question: str) -> str:
        parent.setdefault(question, question)
        while parent[question] != question:
            parent[question] = parent[parent[question]]
            question = parent[question]
        return question

    for a, b in pairs:
        root_a, root_b = find(a), find(b)
        if root_a != root_b:
            parent[max(root_a, root_b)] = min(root_a, root_b)
    return {question: find(question) for question in list(parent)}


def _positive_components(train: Sequence[PairExample]) -> dict[str, str]:
    """Components of the label-1 training pairs: question -> a representative of its component."""
    return _components((e.text_a, e.text_b) for e in train if e.label == 1)


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
        graph={s: question_graph(splits[s]) for s in SPLITS},
        overlap={s: {label: label_overlap(splits[s], label) for label in (0, 1)} for s in SPLITS},
    )


def data_statistics(data_dir: str | Path | None = None, *, lenient: bool = False) -> SplitStatistics:
    """:func:`split_statistics` of a folder (``None``: ``$LCQMC_DIR``, else the course's sample)."""
    data = load_lcqmc(data_dir, lenient=lenient)
    return split_statistics({"train": data.train.examples, "dev": data.dev.examples, "test": data.test.examples})
