"""Build the course's LCQMC-format sample from question families written for the course.

Source: ``data/lcqmc_sample/source/question_families.txt`` (its header gives the format). A
*family* is a few question templates about one kind of thing (``{plant}怎么养``,
``{plant}多久浇一次水`` …) sharing slots with values (绿萝, 吊兰 …). A *meaning* is one
template with one value per slot; its *wordings* are the template's own wording and its
rewordings (each of a positive kind: L light, R word order, S synonym, F filler, P free
paraphrase), plus the own wording with a synonym of a value (S).

Pairs, as in LCQMC, are lexically close in both classes:

- a **positive** is a meaning's own wording with one of its rewordings; its kind is the
  rewording's;
- a **negative** joins wordings of two meanings of one family that differ in one thing: one
  slot value (kind E another entity, N another number/time/place, G the opposite polarity,
  C a value left out or put in: the slot's kind, ``-`` values), another template with the same
  values (A another aspect), two values exchanged in a ``swap`` template (O another order),
  or, kind U, two meanings of different families of one topic.

The shares of the kinds are those the course's maintainers counted by hand on 300 LCQMC dev
negatives and 300 positives (:data:`lessons_lib.pairs.stats.LCQMC_KINDS`); the character
Jaccard overlap of each split's label-0 and label-1 pairs follows LCQMC's histogram
(:data:`lessons_lib.pairs.stats.LCQMC_MEASURED`, 20 bins of width 0.05).

The build, step by step (:func:`build_sample`):

1. Read the families, expand every meaning's wordings (a wording produced by two meanings is
   an error naming both).
2. Per eval split (test first, then dev): ``eval_pairs`` pairs, half label 1; each label's
   pairs are shared out over the kinds (largest remainders) and over "both" / "one" /
   "neither" question seen in train (LCQMC's test shares). Every wording is used by at most
   one eval pair in the whole sample, so eval pairs share no question: dev and test are close
   to independent observations (one occurrence per question, components of one pair).
3. Train: a pool of wordings holding every *seen* eval wording (it must occur in train) and
   whole meanings of unused wordings, sized so that each is used about
   :data:`TRAIN_USES_PER_QUESTION` times (LCQMC: 1.94); *unseen* eval wordings never enter
   it. Seen wordings get their train pair first; then the pool's least used wordings anchor
   the rest, none in more than :data:`MAX_TRAIN_USES` pairs (when the pool has no free pair
   of a rare kind, G or O, an unused wording of that kind joins it). ``train_pairs`` pairs,
   ``train_positive_share`` label 1.
4. Every pair is drawn greedily: :attr:`SampleRecipe.candidates` candidate pairs of the
   wanted label and kind, and the one whose Jaccard bin is furthest below its target count
   is kept (then the least used). No unordered pair is used twice anywhere.
5. Each split is shuffled and each pair's order flipped by its own generator, checked
   (:func:`verify_sample`) and written.

Everything is drawn from ``random.Random`` seeded by ``SampleRecipe.seed`` over lists in
source order (never the iteration order of a set of strings), so the same source and seed
give byte-identical files.
"""

from __future__ import annotations

import itertools
import random
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Mapping, NoReturn

from lessons_lib.errors import CourseInputError, file_errors, reworded
from lessons_lib.files import atomic_write_many, folder_lock, record_many
from lessons_lib.pairs.data import SPLITS, PairExample, char_overlap
from lessons_lib.pairs.stats import (JACCARD_BINS, LCQMC_KINDS, LCQMC_MEASURED, SplitStatistics,
                                     jaccard_bin, split_statistics)
from lessons_lib.paths import LCQMC_SAMPLE_DIR

# What the files of `lessons build-sample` are, in their folder's manifest (only they are replaced without --force).
SAMPLE_KIND = "split of `lessons build-sample`"
SAMPLE_FILES = tuple(f"{split}.tsv" for split in SPLITS)

__all__ = [
    "SOURCE_FILE",
    "NEGATIVE_KINDS",
    "POSITIVE_KINDS",
    "SLOT_KINDS",
    "TRAIN_USES_PER_QUESTION",
    "MAX_TRAIN_USES",
    "Slot",
    "Template",
    "Family",
    "read_question_families",
    "POSITIVE_SALIENCE",
    "positive_kind",
    "Wording",
    "Meaning",
    "expand_meanings",
    "pair_kind",
    "apportion",
    "SampleRecipe",
    "PairDrawer",
    "verify_sample",
    "SampleStats",
    "build_sample",
]

SOURCE_FILE = LCQMC_SAMPLE_DIR / "source" / "question_families.txt"
EVAL_SPLITS = ("test", "dev")  # test is drawn first
SEEN_KINDS = ("both", "one", "neither")
POSITIVE_KINDS = ("L", "R", "S", "F", "P")
NEGATIVE_KINDS = ("E", "A", "N", "C", "G", "O", "U")
SLOT_KINDS = ("E", "N", "G")
TRAIN_USES_PER_QUESTION = 1.94  # LCQMC train: 2 × 238,766 pairs / 245,951 distinct questions
MAX_TRAIN_USES = 3  # a train question is in at most this many train pairs
_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")


@dataclass(frozen=True)
class Slot:
    """A slot of a family: its kind (``E``, ``N`` or ``G``) and values, each ``(value, *synonyms)``; ``""`` is empty."""

    name: str
    kind: str
    values: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Template:
    """A question template: its own wording, its rewordings ``(kind, pattern)``, the slots it uses, a swap."""

    pattern: str
    rewordings: tuple[tuple[str, str], ...]
    slots: tuple[str, ...]
    swap: tuple[str, str] | None
    line: int


@dataclass(frozen=True)
class Family:
    """Templates about one kind of thing, sharing slots. ``index`` is the family's order in the source."""

    index: int
    topic: str
    slots: dict[str, Slot]
    templates: tuple[Template, ...]
    line: int


class _FamilyReader:
    """Line-by-line parser of the source format (see the source file's header)."""

    def __init__(self, path: Path):
        self.path = path
        self.families: list[Family] = []
        self.topic: str | None = None
        self._reset()

    def _reset(self) -> None:
        self.slots: dict[str, Slot] = {}
        self.templates: list[list] = []  # [pattern, rewordings, swap, line]
        self.start = 0

    def fail(self, number: int, message: str) -> NoReturn:
        raise CourseInputError(f"{self.path}, line {number}: {message}")

    def close(self) -> None:
        if not self.slots and not self.templates:
            return
        if not self.templates:
            self.fail(self.start, "a family needs at least one '= template' line")
        templates = []
        for pattern, rewordings, swap, line in self.templates:
            names = tuple(dict.fromkeys(_PLACEHOLDER.findall(pattern)))
            for _kind, text in [("", pattern)] + rewordings:
                unknown = [n for n in _PLACEHOLDER.findall(text) if n not in self.slots]
                if unknown:
                    self.fail(line, f"slot {{{unknown[0]}}} is not declared in its family")
                if set(_PLACEHOLDER.findall(text)) != set(names):
                    self.fail(line, f"rewording {text!r} does not use the same slots as {pattern!r}")
            if swap and not set(swap) <= set(names):
                self.fail(line, f"swap {swap} names a slot the template does not use")
            templates.append(Template(pattern, tuple(rewordings), names, swap, line))
        self.families.append(Family(len(self.families), self.topic or "", dict(self.slots), tuple(templates),
                                    self.start))
        self._reset()

    def slot(self, number: int, line: str) -> None:
        match = re.fullmatch(r"\[(\w+)\]\s*([A-Z])\s*:\s*(.+)", line)
        if not match:
            self.fail(number, "a slot line reads '[name] KIND: value | value/synonym | -'")
        name, kind, values = match.groups()
        if kind not in SLOT_KINDS:
            self.fail(number, f"slot kind must be one of {', '.join(SLOT_KINDS)}, got {kind!r}")
        parsed = tuple(tuple("" if v.strip() == "-" else v.strip() for v in value.split("/"))
                       for value in values.split("|"))
        if len(parsed) < 2 or len({v[0] for v in parsed}) != len(parsed):
            self.fail(number, f"slot [{name}] needs at least two different values")
        self.slots[name] = Slot(name, kind, parsed)

    def template(self, number: int, line: str) -> None:
        pattern, _, option = line[1:].partition("|")
        swap = None
        if option.strip():
            words = option.split()
            if len(words) != 3 or words[0] != "swap":
                self.fail(number, "a template option reads '| swap slot_a slot_b'")
            swap = (words[1], words[2])
        self.templates.append([pattern.strip(), [], swap, number])

    def rewording(self, number: int, line: str) -> None:
        kind, _, pattern = line.partition(":")
        if kind.strip() not in POSITIVE_KINDS:
            self.fail(number, f"a rewording starts with one of {', '.join(POSITIVE_KINDS)} and ':'")
        if not self.templates:
            self.fail(number, "a rewording before its '= template' line")
        self.templates[-1][1].append((kind.strip(), pattern.strip()))

    def read(self, lines: list[str]) -> list[Family]:
        for number, raw in enumerate(lines, start=1):
            line = raw.strip()
            if not line:
                self.close()
            elif line.startswith("##"):
                self.close()
                self.topic = line.lstrip("#").strip()
            elif line.startswith("#"):
                continue
            elif self.topic is None:
                self.fail(number, "a family before the first '## topic' line")
            elif "\t" in line:
                self.fail(number, "a line must not contain a tab")
            else:
                if not self.slots and not self.templates:
                    self.start = number
                {"[": self.slot, "=": self.template}.get(line[0], self.rewording)(number, line)
        self.close()
        return self.families


def read_question_families(path: str | Path = SOURCE_FILE) -> list[Family]:
    """Parse the source file.

    Raises:
        CourseInputError: a malformed line, an undeclared slot, a rewording whose slots differ
            from its template's (naming the file and line).
    """
    path = Path(path)
    if not path.is_file():
        raise CourseInputError(f"question-family source not found: {path}")
    try:
        with file_errors(path):
            lines = path.read_text(encoding="utf-8-sig").splitlines()
    except UnicodeDecodeError as error:
        raise CourseInputError(f"{path}: not UTF-8 text ({error.reason} at byte {error.start})") from None
    return _FamilyReader(path).read(lines)


@dataclass(frozen=True)
class Wording:
    """One question: its text, its meaning's index, and its kind (``""`` own wording, else a positive kind)."""

    text: str
    meaning: int
    kind: str


@dataclass
class Meaning:
    """One template with one value index per slot it uses (``values``, in the template's slot order)."""

    index: int
    family: Family
    template: int
    values: tuple[int, ...]
    wordings: list[Wording] = field(default_factory=list)

    def key(self) -> tuple[int, int, tuple[int, ...]]:
        return self.family.index, self.template, self.values


POSITIVE_SALIENCE = ("P", "S", "R", "F", "L")  # a pair of two rewordings has the kind of the more salient one


def positive_kind(a: str, b: str) -> str:
    """The kind of a positive between wordings of kinds ``a`` and ``b`` (``""``: the template's own wording).

    With the own wording it is the other's kind; between two rewordings, the more salient of the
    two (:data:`POSITIVE_SALIENCE`: a free paraphrase outweighs a synonym, which outweighs a word
    order …), as a reader naming the most visible change would.
    """
    if not a or not b:
        return a or b
    return min(a, b, key=POSITIVE_SALIENCE.index)


def _fill(pattern: str, texts: Mapping[str, str]) -> str:
    return _PLACEHOLDER.sub(lambda m: texts[m.group(1)], pattern)


def _wordings(meaning: Meaning) -> list[tuple[str, str]]:
    """``(kind, text)`` of every wording of ``meaning``: own, rewordings, own with a synonym."""
    template = meaning.family.templates[meaning.template]
    slots = [meaning.family.slots[name] for name in template.slots]
    values = [slot.values[i] for slot, i in zip(slots, meaning.values)]
    canonical = {name: value[0] for name, value in zip(template.slots, values)}
    out = [("", _fill(template.pattern, canonical))]
    out += [(kind, _fill(pattern, canonical)) for kind, pattern in template.rewordings]
    for name, value in zip(template.slots, values):
        out += [("S", _fill(template.pattern, {**canonical, name: synonym})) for synonym in value[1:]]
    return out


def expand_meanings(families: list[Family]) -> tuple[list[Meaning], dict[str, Wording]]:
    """Every meaning of every template (a swap template skips equal swapped values) and the wording of each text.

    Raises:
        CourseInputError: two meanings produce the same text (naming both templates' lines).
    """
    meanings: list[Meaning] = []
    by_text: dict[str, Wording] = {}
    for family in families:
        for t, template in enumerate(family.templates):
            sizes = [range(len(family.slots[name].values)) for name in template.slots]
            for values in itertools.product(*sizes):
                if template.swap and _swap_equal(template, family, values):
                    continue
                meaning = Meaning(len(meanings), family, t, values)
                for kind, text in _wordings(meaning):
                    text = re.sub(r"\s+", "", text)
                    if text in by_text:
                        if by_text[text].meaning == meaning.index:
                            continue  # a rewording equal to another of the same meaning adds nothing
                        other = meanings[by_text[text].meaning]
                        raise CourseInputError(
                            f"question {text!r} is produced by the templates of line "
                            f"{other.family.templates[other.template].line} and line {template.line}")
                    wording = Wording(text, meaning.index, kind)
                    by_text[text] = wording
                    meaning.wordings.append(wording)
                meanings.append(meaning)
    return meanings, by_text


def _swap_equal(template: Template, family: Family, values: tuple[int, ...]) -> bool:
    assert template.swap is not None, "only a template that swaps two slots has a swapped twin"
    first, second = template.swap
    a, b = template.slots.index(first), template.slots.index(second)
    return family.slots[first].values[values[a]][0] == family.slots[second].values[values[b]][0]


def pair_kind(meanings: list[Meaning], by_text: Mapping[str, Wording], a: str, b: str) -> str:
    """The kind of the pair ``(a, b)`` of two texts of the source (module docstring); ``"-"``: none of the kinds.

    Positives: :func:`positive_kind` of their wordings. Negatives: ``U`` across families;
    ``A`` for two templates of one family with equal values in the slots both use; in one
    template, ``O`` for exchanged swap values, else the kind of the one slot that differs
    (``C`` when one of the two values is empty).
    """
    wa, wb = by_text[a], by_text[b]
    if wa.meaning == wb.meaning:
        return positive_kind(wa.kind, wb.kind)
    ma, mb = meanings[wa.meaning], meanings[wb.meaning]
    if ma.family.index != mb.family.index:
        return "U"
    family = ma.family
    if ma.template != mb.template:
        mine = dict(zip(family.templates[ma.template].slots, ma.values))
        theirs = zip(family.templates[mb.template].slots, mb.values)
        return "A" if all(mine.get(name, value) == value for name, value in theirs) else "-"
    template = family.templates[ma.template]
    differ = [i for i, (x, y) in enumerate(zip(ma.values, mb.values)) if x != y]
    if template.swap:
        i, j = (template.slots.index(name) for name in template.swap)
        if sorted(differ) == sorted((i, j)) and ma.values[i] == mb.values[j] and ma.values[j] == mb.values[i]:
            return "O"
    if len(differ) != 1:
        return "-"
    slot = family.slots[template.slots[differ[0]]]
    empty = "" in (slot.values[ma.values[differ[0]]][0], slot.values[mb.values[differ[0]]][0])
    return "C" if empty else slot.kind


def apportion(total: int, weights: Mapping[str, float]) -> dict[str, int]:
    """``total`` shared out in proportion to ``weights`` by largest remainders (ties: the order of ``weights``)."""
    mass = sum(weights.values())
    exact = {k: total * w / mass for k, w in weights.items()}
    counts = {k: int(v) for k, v in exact.items()}
    order = sorted(weights, key=lambda k: -(exact[k] - counts[k]))
    for k in order[: total - sum(counts.values())]:
        counts[k] += 1
    return counts


@dataclass(frozen=True)
class SampleRecipe:
    """The knobs of the build; the defaults make the shipped sample.

    Attributes:
        seed: seeds every random choice.
        train_pairs: pairs of train.
        eval_pairs: pairs of each of dev and test (half of them label 1).
        train_positive_share: share of label 1 in train (LCQMC: 0.58).
        candidates: candidate pairs compared for each train pair drawn (more: closer Jaccard histograms).
        eval_candidates: the same for dev and test pairs.
    """

    seed: int = 20240601
    train_pairs: int = 9000
    eval_pairs: int = 1200
    train_positive_share: float = LCQMC_MEASURED["label_1"]["train"]
    candidates: int = 24
    eval_candidates: int = 64


class PairDrawer:
    """Draws pairs of a wanted label and kind, greedily following a split's Jaccard targets.

    ``used_pairs`` holds every unordered pair given out anywhere; ``uses`` counts each text's
    pairs in the split being drawn. ``allowed(text)`` says whether a text may be used now.
    """

    def __init__(self, meanings: list[Meaning], by_text: dict[str, Wording], rng: random.Random, recipe: SampleRecipe):
        self.meanings, self.by_text, self.rng, self.recipe = meanings, by_text, rng, recipe
        self.used_pairs: set[frozenset[str]] = set()
        self._by_family: dict[int, list[Meaning]] = {}
        self._by_topic: dict[str, list[int]] = {}
        self._by_key: dict[tuple, Meaning] = {}
        self._anchors: dict[tuple[int, str], list[str]] = {}
        self._anchor_groups: dict[tuple[int, str], list[list[str]]] = {}
        self._changes: dict[int, list[tuple[str, Meaning]]] = {}
        self._aspects: dict[int, list[Meaning]] = {}
        for meaning in meanings:
            self._by_family.setdefault(meaning.family.index, []).append(meaning)
            self._by_key[meaning.key()] = meaning
        for family_index, members in self._by_family.items():
            self._by_topic.setdefault(members[0].family.topic, []).append(family_index)

    # --- related meanings -------------------------------------------------------------
    def _one_slot_change(self, meaning: Meaning) -> list[tuple[str, Meaning]]:
        """``(kind, other)`` for every meaning of the same template differing in one value (or swapped)."""
        if meaning.index not in self._changes:
            self._changes[meaning.index] = self._find_changes(meaning)
        return self._changes[meaning.index]

    def _find_changes(self, meaning: Meaning) -> list[tuple[str, Meaning]]:
        family, template = meaning.family, meaning.family.templates[meaning.template]
        out = []
        for position, name in enumerate(template.slots):
            slot = family.slots[name]
            for value in range(len(slot.values)):
                if value == meaning.values[position]:
                    continue
                values = meaning.values[:position] + (value,) + meaning.values[position + 1:]
                other = self._by_key.get((family.index, meaning.template, values))
                if other is not None:
                    empty = "" in (slot.values[value][0], slot.values[meaning.values[position]][0])
                    out.append(("C" if empty else slot.kind, other))
        if template.swap:
            a, b = (template.slots.index(name) for name in template.swap)
            swapped = list(meaning.values)
            swapped[a], swapped[b] = swapped[b], swapped[a]
            other = self._by_key.get((family.index, meaning.template, tuple(swapped)))
            if other is not None:
                out.append(("O", other))
        return out

    def _other_aspect(self, meaning: Meaning) -> list[Meaning]:
        """Meanings of the family's other templates with the same values in the slots both use."""
        if meaning.index in self._aspects:
            return self._aspects[meaning.index]
        family, template = meaning.family, meaning.family.templates[meaning.template]
        mine = dict(zip(template.slots, meaning.values))
        self._aspects[meaning.index] = [m for m in self._by_family[family.index] if m.template != meaning.template
                and all(mine.get(n, v) == v for n, v in zip(family.templates[m.template].slots, m.values))]
        return self._aspects[meaning.index]

    def related(self, meaning: Meaning, kind: str) -> Meaning | None:
        """A random meaning that makes a negative of ``kind`` with ``meaning`` (``None``: there is none)."""
        if kind == "A":
            options = self._other_aspect(meaning)
        elif kind == "U":
            families = [f for f in self._by_topic[meaning.family.topic] if f != meaning.family.index]
            if not families:
                return None
            members = self._by_family[families[self.rng.randrange(len(families))]]
            return members[self.rng.randrange(len(members))]
        else:
            options = [other for k, other in self._one_slot_change(meaning) if k == kind]
        return options[self.rng.randrange(len(options))] if options else None

    def anchors(self, label: int, kind: str) -> list[str]:
        """Texts that can start a pair of ``label`` and ``kind`` (a rewording of the kind or its own wording for
        positives; any wording of a meaning with a related meaning of the kind for negatives), in source order."""
        key = (label, kind)
        if key not in self._anchors:
            out = []
            for meaning in self.meanings:
                if label == 1:
                    out += [a.text for a in meaning.wordings
                            if any(b is not a and positive_kind(a.kind, b.kind) == kind for b in meaning.wordings)]
                elif kind == "U" or (kind == "A" and self._other_aspect(meaning)) or \
                        any(k == kind for k, _ in self._one_slot_change(meaning)):
                    out += [w.text for w in meaning.wordings]
            self._anchors[key] = out
        return self._anchors[key]

    def pick_anchor(self, label: int, kind: str) -> str:
        """A random anchor of ``label`` and ``kind``: a family first (each alike), then one of its texts, so that
        families with many slot values do not crowd out the others."""
        key = (label, kind)
        if key not in self._anchor_groups:
            by_family: dict[int, list[str]] = {}
            for text in self.anchors(label, kind):
                by_family.setdefault(self.meanings[self.by_text[text].meaning].family.index, []).append(text)
            self._anchor_groups[key] = [by_family[f] for f in sorted(by_family)]
        groups = self._anchor_groups[key]
        if not groups:
            raise CourseInputError(f"no question can start a pair of label {label} and kind {kind}: write more families")
        texts = groups[self.rng.randrange(len(groups))]
        return texts[self.rng.randrange(len(texts))]

    # --- candidates and the greedy choice ---------------------------------------------
    def partner(self, anchor: Wording, label: int, kind: str, allowed) -> Wording | None:
        """A text that makes a pair of ``label`` and ``kind`` with ``anchor`` (``None``: none found)."""
        meaning = self.meanings[anchor.meaning]
        if label == 1:
            options = [w for w in meaning.wordings if w is not anchor and positive_kind(anchor.kind, w.kind) == kind]
        else:
            other = self.related(meaning, kind)
            options = other.wordings if other is not None else []
        options = [w for w in options if allowed(w.text) and frozenset((anchor.text, w.text)) not in self.used_pairs]
        return options[self.rng.randrange(len(options))] if options else None

    @staticmethod
    def best(candidates: list[tuple[str, str]], deficit: list[int], chars: float) -> tuple[str, str] | None:
        """The candidate whose Jaccard bin is furthest below target, then whose length is closest to ``chars``
        (characters of both questions), then the first."""
        if not candidates:
            return None
        return max(candidates, key=lambda p: (deficit[jaccard_bin(char_overlap(*p))], -abs(len(p[0]) + len(p[1]) - chars)))

    def take(self, pair: tuple[str, str], deficit: list[int], uses: Counter[str]) -> None:
        self.used_pairs.add(frozenset(pair))
        deficit[jaccard_bin(char_overlap(*pair))] -= 1
        uses[pair[0]] += 1
        uses[pair[1]] += 1


def _targets(split: str, label: int, n: int) -> list[int]:
    """Target count per Jaccard bin: LCQMC's histogram of ``split``'s ``label`` pairs, scaled to ``n``."""
    shares = LCQMC_MEASURED["jaccard_histogram"][split][label]
    counts = apportion(n, {str(i): s for i, s in enumerate(shares)})
    return [counts[str(i)] for i in range(len(JACCARD_BINS) - 1)]


def _kind_slots(n: int, label: int, rng: random.Random, seen_shares: Mapping[str, float] | None) -> list[tuple[str, str]]:
    """``(pair kind, seen kind)`` for ``n`` pairs of ``label``: both shared out by largest remainders, then paired at random."""
    kinds = apportion(n, LCQMC_KINDS["positive" if label else "negative"])
    pair_kinds = [k for k, c in kinds.items() for _ in range(c)]
    rng.shuffle(pair_kinds)
    if seen_shares is None:
        return [(k, "train") for k in pair_kinds]
    seen = [k for k, c in apportion(n, seen_shares).items() for _ in range(c)]
    rng.shuffle(seen)
    return list(zip(pair_kinds, seen))


@dataclass
class _Split:
    """What one split has drawn: pairs by label, texts by seen status, uses, Jaccard deficits per label."""

    positives: list[tuple[str, str]] = field(default_factory=list)
    negatives: list[tuple[str, str]] = field(default_factory=list)
    seen: list[str] = field(default_factory=list)
    unseen: list[str] = field(default_factory=list)
    uses: Counter = field(default_factory=Counter)
    deficit: dict[int, list[int]] = field(default_factory=dict)

    def add(self, label: int, pair: tuple[str, str]) -> None:
        (self.positives if label else self.negatives).append(pair)


def _draw_eval(drawer: PairDrawer, taken: set[str], split: str, recipe: SampleRecipe) -> _Split:
    """``recipe.eval_pairs`` pairs of texts no other eval pair uses (step 2 of the module docstring)."""
    rng, out = drawer.rng, _Split()
    seen_shares = {k: LCQMC_MEASURED[f"test_{k}"] for k in SEEN_KINDS}
    half = recipe.eval_pairs // 2
    for label in (1, 0):
        out.deficit[label] = _targets(split, label, half)
        for kind, seen in _kind_slots(half, label, rng, seen_shares):
            candidates = []
            for _ in range(recipe.eval_candidates * 8):
                anchor = drawer.by_text[drawer.pick_anchor(label, kind)]
                if anchor.text in taken:
                    continue
                other = drawer.partner(anchor, label, kind, lambda t, start=anchor.text: t not in taken and t != start)
                if other is not None:
                    candidates.append((anchor.text, other.text))
                if len(candidates) >= recipe.eval_candidates:
                    break
            pair = drawer.best(candidates, out.deficit[label], LCQMC_MEASURED["pair_chars"][split][label])
            if pair is None:
                raise CourseInputError(f"{split}: found no free pair of label {label} and kind {kind}: write more families")
            drawer.take(pair, out.deficit[label], out.uses)
            taken.update(pair)
            out.add(label, pair)
            n_seen = {"both": 2, "one": 1, "neither": 0}[seen]
            out.seen.extend(pair[:n_seen])
            out.unseen.extend(pair[n_seen:])
    return out


def _weighted_choice(rng: random.Random, quotas: dict[int, Counter]) -> tuple[int, str]:
    """A random ``(label, kind)``, each as likely as its remaining quota."""
    items = [(label, kind, n) for label in (1, 0) for kind, n in sorted(quotas[label].items()) if n > 0]
    pick = rng.randrange(sum(n for _, _, n in items))
    for label, kind, n in items:
        if pick < n:
            return label, kind
        pick -= n
    raise AssertionError("unreachable: pick < total")


def _extend_pool(drawer: PairDrawer, pool: list[str], taken: set[str], size: int) -> None:
    """Add whole meanings of texts no eval pair uses until ``pool`` holds ``size`` texts: the families in
    turn, each giving its next meaning of a seeded shuffle (so that large families do not crowd out small ones)."""
    present = set(pool)
    queues: dict[int, list[Meaning]] = {}
    for meaning in drawer.meanings:
        queues.setdefault(meaning.family.index, []).append(meaning)
    for queue in queues.values():
        drawer.rng.shuffle(queue)
    while len(pool) < size and any(queues.values()):
        for family in sorted(queues):
            if queues[family] and len(pool) < size:
                meaning = queues[family].pop()
                fresh = [w.text for w in meaning.wordings if w.text not in taken and w.text not in present]
                pool.extend(fresh)
                present.update(fresh)


class _TrainDraw:
    """Train's pairs (step 3 of the module docstring): the seen eval texts first, then the least used of the pool."""

    def __init__(self, drawer: PairDrawer, eval_splits: dict[str, _Split], taken: set[str], recipe: SampleRecipe):
        self.drawer, self.taken, self.recipe, self.out = drawer, taken, recipe, _Split()
        self.seen = [t for split in EVAL_SPLITS for t in eval_splits[split].seen]
        self.pool, self.in_pool = self.seen[:], set(self.seen)
        self.growing = False  # True: any text no eval pair uses may join the pool
        n_pos = round(recipe.train_pairs * recipe.train_positive_share)
        sizes = {1: n_pos, 0: recipe.train_pairs - n_pos}
        self.quotas = {label: Counter(apportion(n, LCQMC_KINDS["positive" if label else "negative"]))
                       for label, n in sizes.items()}
        for label, n in sizes.items():
            self.out.deficit[label] = _targets("train", label, n)

    def usable(self, text: str) -> bool:
        return (text in self.in_pool or (self.growing and text not in self.taken)) and \
            self.out.uses[text] < MAX_TRAIN_USES

    def draw_one(self, anchors: list[str], options: list[tuple[int, str]]) -> bool:
        """The best pair starting at one of ``anchors``, of one of the ``(label, kind)`` options (``False``: none)."""
        out, candidates = self.out, []
        for anchor_text, (label, kind) in itertools.product(anchors, options):
            other = self.drawer.partner(self.drawer.by_text[anchor_text], label, kind,
                                        lambda t, start=anchor_text: self.usable(t) and t != start)
            if other is not None:
                candidates.append((label, kind, (anchor_text, other.text)))
        if not candidates:
            return False
        chars = LCQMC_MEASURED["pair_chars"]["train"]
        label, kind, pair = max(candidates, key=lambda c: (out.deficit[c[0]][jaccard_bin(char_overlap(*c[2]))],
                                                          -out.uses[c[2][0]] - out.uses[c[2][1]],
                                                          -abs(len(c[2][0]) + len(c[2][1]) - chars[c[0]])))
        self.quotas[label][kind] -= 1
        self.drawer.take(pair, out.deficit[label], out.uses)
        out.add(label, pair)
        for text in pair:
            if text not in self.in_pool:
                self.pool.append(text)
                self.in_pool.add(text)
        return True

    def pair_the_seen(self) -> None:
        """One train pair for every seen eval text (its partner may be any text no eval pair uses)."""
        self.growing = True
        for text in self.seen:
            options = [(label, kind) for label in (1, 0) for kind, n in sorted(self.quotas[label].items()) if n > 0]
            if self.out.uses[text] == 0 and not self.draw_one([text] * 2, options):
                raise CourseInputError(f"train: no pair for the seen question {text!r}: write more families")
        self.growing = False

    def fill(self) -> None:
        """The remaining quotas, each pair anchored at the least used of a random sample of the pool."""
        rng, recipe, drawer = self.drawer.rng, self.recipe, self.drawer
        pool_anchors: dict[tuple[int, str], list[str]] = {}
        failures = 0
        while any(n > 0 for q in self.quotas.values() for n in q.values()):
            label, kind = _weighted_choice(rng, self.quotas)
            if (label, kind) not in pool_anchors:
                pool_anchors[label, kind] = [t for t in drawer.anchors(label, kind) if t in self.in_pool]
            choices = pool_anchors[label, kind]
            sample = [choices[rng.randrange(len(choices))] for _ in range(4 * recipe.candidates)] if choices else []
            anchors = sorted((t for t in sample if self.usable(t)), key=lambda t: self.out.uses[t])
            if self.draw_one(anchors[: recipe.candidates // 2], [(label, kind)]):
                continue
            # the pool has no free pair of this kind (a rare one: G, O): let texts no eval pair uses join it
            self.growing = True
            fresh = [t for t in drawer.anchors(label, kind) if t not in self.taken and self.out.uses[t] < MAX_TRAIN_USES]
            added = fresh and self.draw_one([fresh[rng.randrange(len(fresh))] for _ in range(recipe.candidates // 2)],
                                            [(label, kind)])
            self.growing = False
            if added:
                pool_anchors.pop((label, kind), None)
            else:
                failures += 1
                if failures > recipe.train_pairs:
                    raise CourseInputError(f"train: could not draw its pairs of kind {kind}: write more families")


def _draw_train(drawer: PairDrawer, eval_splits: dict[str, _Split], taken: set[str], recipe: SampleRecipe) -> _Split:
    """Train's pairs: the seen eval texts paired first, the pool extended to its size, the quotas filled."""
    draw = _TrainDraw(drawer, eval_splits, taken, recipe)
    draw.pair_the_seen()
    _extend_pool(drawer, draw.pool, taken, round(2 * recipe.train_pairs / TRAIN_USES_PER_QUESTION))
    draw.in_pool.update(draw.pool)
    draw.fill()
    return draw.out


def _ordered_examples(positives: list[tuple[str, str]], negatives: list[tuple[str, str]],
                      rng: random.Random) -> list[PairExample]:
    """Positives and negatives in a shuffled order, each pair's two questions in a random order."""
    rows = [(a, b, 1) for a, b in positives] + [(a, b, 0) for a, b in negatives]
    rng.shuffle(rows)
    return [PairExample(*((a, b) if rng.random() < 0.5 else (b, a)), label) for a, b, label in rows]


def verify_sample(splits: dict[str, list[PairExample]], by_text: dict[str, Wording],
                  drawn: dict[str, _Split]) -> None:
    """Check the build's guarantees (module docstring); a failure is a bug of the builder.

    Raises:
        RuntimeError: naming the guarantee that does not hold.
    """
    keys = [Counter(frozenset((e.text_a, e.text_b)) for e in splits[s]) for s in SPLITS]
    questions = {s: {q for e in splits[s] for q in (e.text_a, e.text_b)} for s in SPLITS}
    failures = []
    if any(n > 1 for counts in keys for n in counts.values()):
        failures.append("a pair occurs twice in one split")
    if any(keys[i].keys() & keys[j].keys() for i, j in ((0, 1), (0, 2), (1, 2))):
        failures.append("a pair occurs in two splits")
    if any((by_text[e.text_a].meaning == by_text[e.text_b].meaning) != bool(e.label) for s in SPLITS for e in splits[s]):
        failures.append("a label disagrees with the meanings")
    if questions["dev"] & questions["test"]:
        failures.append("dev and test share a question")
    for split in EVAL_SPLITS:
        if set(drawn[split].unseen) & questions["train"] or not set(drawn[split].seen) <= questions["train"]:
            failures.append(f"{split}: seen / unseen questions do not match train")
        if 2 * sum(e.label for e in splits[split]) != len(splits[split]):
            failures.append(f"{split} is not exactly half label 1")
        if 2 * len(splits[split]) != len(questions[split]):
            failures.append(f"{split}: a question occurs in two of its pairs")
    if failures:
        raise RuntimeError("the sample build broke its guarantees: " + "; ".join(failures))


@dataclass
class SampleStats:
    """What the build produced, for the command's report and the data README."""

    families: int
    templates: int
    meanings: int
    questions: int
    topics: int
    statistics: SplitStatistics

    def report(self) -> str:
        return "\n".join([
            f"{self.questions:,} possible questions ({self.meanings:,} meanings) from {self.templates} templates "
            f"in {self.families} families over {self.topics} topics",
            self.statistics.report(),
        ])


def build_sample(source: str | Path = SOURCE_FILE, out_dir: str | Path = LCQMC_SAMPLE_DIR,
                 seed: int = SampleRecipe.seed, recipe: SampleRecipe | None = None) -> SampleStats:
    """Read the families, draw the pairs and write ``{train,dev,test}.tsv`` (no header).

    ``seed`` replaces ``recipe.seed`` (the command line's ``--seed``). The three files are
    replaced together (a full disk or Ctrl-C leaves the old three), under ``out_dir``'s lock.
    """
    recipe = replace(recipe or SampleRecipe(), seed=seed)
    families = read_question_families(source)
    rng = random.Random(recipe.seed)
    try:  # what follows fails only when the source as a whole cannot give the sample: name it
        meanings, by_text = expand_meanings(families)
        drawer = PairDrawer(meanings, by_text, rng, recipe)
        taken: set[str] = set()
        drawn = {split: _draw_eval(drawer, taken, split, recipe) for split in EVAL_SPLITS}
        drawn["train"] = _draw_train(drawer, drawn, taken, recipe)
    except CourseInputError as error:
        raise reworded(error, f"{source}: ") from None
    splits: dict[str, list[PairExample]] = {}
    for offset, split in enumerate(SPLITS):  # one generator per split: resizing one never moves another
        splits[split] = _ordered_examples(drawn[split].positives, drawn[split].negatives,
                                          random.Random(recipe.seed + 10 + offset))
    verify_sample(splits, by_text, drawn)  # before anything is written: a failed build leaves the old sample
    out_dir = Path(out_dir)
    with file_errors(out_dir, "create the folder"):
        out_dir.mkdir(parents=True, exist_ok=True)
    contents = {f"{split}.tsv": "".join(f"{e.text_a}\t{e.text_b}\t{e.label}\n" for e in examples)
                for split, examples in splits.items()}
    with folder_lock(out_dir):  # the three files are replaced together, or none of them
        if out_dir.resolve() == LCQMC_SAMPLE_DIR.resolve():  # the course's committed sample: git is its record
            atomic_write_many({out_dir / name: text for name, text in contents.items()})
        else:  # recorded, so that the next build may replace them (and only them)
            record_many(out_dir, contents, SAMPLE_KIND)
    return SampleStats(families=len(families), templates=sum(len(f.templates) for f in families),
                       meanings=len(meanings), questions=len(by_text), topics=len({f.topic for f in families}),
                       statistics=split_statistics(splits))
