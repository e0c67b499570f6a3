"""Build the course's LCQMC-format sample from groups of questions written for the course.

Source: ``data/lcqmc_sample/source/question_groups.txt``. A line ``## <topic>`` starts a
topic, each other non-empty line is a question, a blank line ends a group; questions of
one group mean the same thing, questions of different groups do not. Lines starting with
``#`` (not ``##``) are comments.

The sample copies LCQMC's *structure* as the maintainers measured it on the real data
(:data:`lessons_lib.pairs.stats.LCQMC_MEASURED`): about two thirds of the distinct test
questions also occur in training; test pairs have both / one / neither question in
training in the proportions 52.3 / 29.4 / 18.4 %; no pair repeats across splits; training
is 58 % label 1, dev and test 50 %. To get there, *pairs*, not groups, are assigned to
splits: every group gets one **role**.

==========  ===========================================  ====================================
role        its questions                                its positive pairs (any two questions)
==========  ===========================================  ====================================
train       seen (occur in training)                     all go to train
focus       seen                                         a *cover* (a perfect matching: each
                                                         question in one pair) stays in train,
                                                         the rest go to its eval split: "both"
extended    one held out (unseen), the others seen       held-out with each other: "one"; the
                                                         others as in *focus*: "both"
new         unseen                                       all go to its eval split: "neither"
decoy       unseen                                       none: its questions only appear in
                                                         its eval split's negatives
==========  ===========================================  ====================================

The build, step by step:

1. :func:`role_counts`: how many groups of each role one eval split needs, from the group
   size and :class:`SampleRecipe` (``eval_positives`` label-1 pairs per split, shared out
   over "both" / "one" / "neither" as in LCQMC; decoys until the share of seen questions is
   closest to LCQMC's).
2. :func:`choose_eval_groups`: the groups of dev and of test, topic by topic from a seeded
   shuffle, each with its *near-twin* (the group with the most overlapping question, when
   that overlap is ≥ ``twin_overlap``: 四级/六级, 猫/狗, 开机/关机 …), so that the hard pairs
   between twins fall inside one eval split. Every other group has the role ``train``.
3. :func:`plan_roles`: roles inside each eval split (seeded shuffle), covers, held-out
   questions, and the positive pairs of every split.
4. :class:`NegativeSampler`: negatives (label 0, two questions of different groups), never a
   pair used anywhere before. Dev and test get, per kind, exactly as many negatives as
   positives (so each kind is 50 % label 1), drawn from questions of the right kind (both
   seen; one unseen and one seen; both unseen); train gets ``0.42 / 0.58`` × its positives,
   from the seen questions. Each pool is filled 40 % with its highest character-overlap
   pairs (overlap ≥ :data:`MIN_HARD_OVERLAP`, at most 2 per question), 30 % with random
   same-topic pairs, the rest with random pairs, preferring rarely used questions. Test is
   drawn first, then dev, then train, so each eval split gets the hard pairs of its own
   questions.
5. Each split is shuffled and each pair's order flipped by its own generator, written, and
   the guarantees are checked (:func:`verify_sample`): no unordered pair twice anywhere;
   label 1 exactly within a group; unseen questions absent from train, seen ones present.

Everything is drawn from ``random.Random`` seeded by ``SampleRecipe.seed`` over sorted
inputs (never the iteration order of a set of strings), so the same source and seed give
byte-identical files.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from dataclasses import dataclass, field, replace
from itertools import combinations
from pathlib import Path

from lessons_lib.errors import CourseInputError, file_errors
from lessons_lib.files import atomic_write_many, folder_lock
from lessons_lib.pairs.baselines import char_overlap
from lessons_lib.pairs.data import SPLITS, PairExample
from lessons_lib.pairs.stats import LCQMC_MEASURED, SplitStatistics, split_statistics
from lessons_lib.paths import LCQMC_SAMPLE_DIR

__all__ = [
    "QuestionGroup",
    "SOURCE_FILE",
    "MIN_HARD_OVERLAP",
    "read_question_groups",
    "char_overlap",
    "SampleRecipe",
    "RoleCounts",
    "role_counts",
    "OverlapIndex",
    "choose_eval_groups",
    "SamplePlan",
    "plan_roles",
    "NegativeSampler",
    "verify_sample",
    "SampleStats",
    "build_sample",
]

SOURCE_FILE = LCQMC_SAMPLE_DIR / "source" / "question_groups.txt"
EVAL_SPLITS = ("dev", "test")
KINDS = ("both", "one", "neither")
MIN_HARD_OVERLAP = 0.3


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


@dataclass(frozen=True)
class SampleRecipe:
    """The knobs of the build; the defaults make the shipped sample.

    Attributes:
        seed: seeds every random choice.
        eval_positives: label-1 pairs wanted in each of dev and test (each gets as many negatives).
        train_positive_share: share of label 1 in train (LCQMC: 0.58).
        hard_fraction: share of each split's negatives taken from its highest-overlap pairs.
        same_topic_fraction: share of each split's negatives drawn within one topic.
        hard_per_question: at most this many hard negatives per question and pool.
        twin_overlap: two groups are near-twins when some question of one overlaps some
            question of the other at least this much (character Jaccard).
    """

    seed: int = 20240601
    eval_positives: int = 300
    train_positive_share: float = LCQMC_MEASURED["label_1"]["train"]
    hard_fraction: float = 0.4
    same_topic_fraction: float = 0.3
    hard_per_question: int = 2
    twin_overlap: float = 0.5


@dataclass(frozen=True)
class RoleCounts:
    """Groups of each role in one eval split."""

    new: int
    extended: int
    focus: int
    decoy: int

    @property
    def total(self) -> int:
        return self.new + self.extended + self.focus + self.decoy

    def describe(self) -> str:
        return f"new {self.new}, extended {self.extended}, focus {self.focus}, decoy {self.decoy}"


def _cover_size(n_questions: int) -> int:
    """Pairs of a perfect matching of ``n`` questions (one extra pair when ``n`` is odd)."""
    return math.ceil(n_questions / 2)


def role_counts(group_size: int, eval_positives: int) -> RoleCounts:
    """Role counts for one eval split of groups of ``group_size`` questions.

    With ``k = group_size``, ``P = eval_positives`` and LCQMC's shares ``s_both``, ``s_one``,
    ``s_neither`` of test pairs, and ``c(n) = ceil(n / 2)`` (the pairs a cover keeps in train):
    ``new = s_neither·P / C(k, 2)``; ``extended = s_one·P / (k − 1)`` (each gives k − 1 "one"
    pairs and ``C(k−1, 2) − c(k−1)`` "both" pairs); ``focus = (s_both·P − extended·(C(k−1, 2)
    − c(k−1))) / (C(k, 2) − c(k))``; each rounded. ``decoy`` is the count that brings the share
    of seen questions, ``seen / (seen + unseen)``, closest to LCQMC's, with ``seen = (k−1)·
    extended + k·focus`` and ``unseen = k·new + extended + k·decoy``.
    """
    k = group_size
    if k < 3:
        raise CourseInputError(f"eval groups need at least 3 questions (a held-out one and a cover), got {k}")
    ref = LCQMC_MEASURED
    new = round(ref["test_neither"] * eval_positives / math.comb(k, 2))
    extended = round(ref["test_one"] * eval_positives / (k - 1))
    both_per_extended = math.comb(k - 1, 2) - _cover_size(k - 1)
    focus = max(0, round((ref["test_both"] * eval_positives - extended * both_per_extended)
                         / (math.comb(k, 2) - _cover_size(k))))
    seen = (k - 1) * extended + k * focus
    target = ref["test_questions_seen"]
    decoy = min(range(seen + 1), key=lambda d: abs(seen / (seen + k * new + extended + k * d) - target))
    return RoleCounts(new, extended, focus, decoy)


class OverlapIndex:
    """Every cross-group pair of questions with character overlap ≥ ``minimum``, hardest first.

    Computed once (the all-pairs loop is the build's costliest step) and reused for the
    near-twins and for every pool's hard negatives. Pairs are ``(overlap, a, b)`` with ``a``
    before ``b`` in source order; ties keep source order.
    """

    def __init__(self, groups: list[QuestionGroup], minimum: float = MIN_HARD_OVERLAP):
        questions = [(q, g.index) for g in groups for q in g.questions]
        sets = [frozenset(q) for q, _ in questions]
        found = []
        for i, (set_i, (_, group_i)) in enumerate(zip(sets, questions)):
            for j in range(i + 1, len(questions)):
                if questions[j][1] == group_i:
                    continue
                shared = len(set_i & sets[j])
                overlap = shared / (len(set_i) + len(sets[j]) - shared)
                if overlap >= minimum:
                    found.append((-overlap, i, j))
        found.sort()
        self.pairs = [(-neg, questions[i][0], questions[j][0]) for neg, i, j in found]

    def twins(self, owner: dict[str, QuestionGroup], minimum: float) -> dict[int, int]:
        """Group index -> the group holding its most overlapping question, if that overlap ≥ ``minimum``."""
        twin: dict[int, int] = {}
        for overlap, a, b in self.pairs:
            if overlap < minimum:
                break
            ga, gb = owner[a].index, owner[b].index
            twin.setdefault(ga, gb)
            twin.setdefault(gb, ga)
        return twin


def _eval_candidates(groups: list[QuestionGroup]) -> tuple[int, list[QuestionGroup]]:
    """The most common group size (smallest on a tie) and the groups of that size."""
    sizes = Counter(len(g.questions) for g in groups)
    size = min(sizes, key=lambda s: (-sizes[s], s))
    return size, [g for g in groups if len(g.questions) == size]


def choose_eval_groups(
    groups: list[QuestionGroup], per_split: int, twins: dict[int, int], rng: random.Random,
) -> dict[str, list[QuestionGroup]]:
    """``per_split`` groups for test and for dev, topic by topic, each with its near-twin.

    Topics are visited in turn (sorted by name), each offering its next free group of a
    seeded shuffle; the group and its twin (when the twin is a candidate and still free) go
    to the split, of those with room, that has fewer groups of this topic so far, then fewer
    groups overall, then test before dev: so both eval splits cover the topics alike.

    Raises:
        CourseInputError: fewer candidate groups than ``2 × per_split`` plus one for train.
    """
    if len(groups) <= 2 * per_split:
        raise CourseInputError(
            f"the source has {len(groups)} groups of the common size; dev and test need {per_split} each "
            "and train needs the rest: write more groups or lower eval_positives")
    by_index = {g.index: g for g in groups}
    by_topic: dict[str, list[QuestionGroup]] = {}
    for group in groups:
        by_topic.setdefault(group.topic, []).append(group)
    for members in by_topic.values():
        rng.shuffle(members)
    chosen: dict[str, list[QuestionGroup]] = {"test": [], "dev": []}
    taken: set[int] = set()
    while min(len(members) for members in chosen.values()) < per_split:
        for topic in sorted(by_topic):
            free = [g for g in by_topic[topic] if g.index not in taken]
            open_splits = [s for s in ("test", "dev") if len(chosen[s]) < per_split]
            if not free or not open_splits:
                continue
            split = min(open_splits, key=lambda s: (sum(g.topic == topic for g in chosen[s]), len(chosen[s])))
            unit = [free[0]]
            twin = by_index.get(twins.get(free[0].index, -1))
            if twin is not None and twin.index not in taken and len(chosen[split]) + 2 <= per_split:
                unit.append(twin)
            chosen[split].extend(unit)
            taken.update(g.index for g in unit)
    return chosen


@dataclass
class SamplePlan:
    """Who is seen and unseen, and the positive pairs of every split.

    Attributes:
        roles: group index -> (role, eval split), ``("train", None)`` for train groups.
        positives: split -> kind (``"both"``, ``"one"``, ``"neither"``) -> pairs; train's are all "both".
        seen: eval split -> its seen questions (of its focus and extended groups), in source order.
        unseen: eval split -> its unseen questions, in source order.
        train_questions: every question allowed in train, in source order.
    """

    roles: dict[int, tuple[str, str | None]] = field(default_factory=dict)
    positives: dict[str, dict[str, list[tuple[str, str]]]] = field(default_factory=dict)
    seen: dict[str, list[str]] = field(default_factory=dict)
    unseen: dict[str, list[str]] = field(default_factory=dict)
    train_questions: list[str] = field(default_factory=list)


def _cover(rng: random.Random, questions: list[str]) -> list[tuple[str, str]]:
    """A random perfect matching (one extra pair for an odd count): the pairs kept in train."""
    order = questions[:]
    rng.shuffle(order)
    pairs = [(order[i], order[i + 1]) for i in range(0, len(order) - 1, 2)]
    if len(order) % 2:
        pairs.append((order[-2], order[-1]))
    return pairs


def _assign_roles(chosen: dict[str, list[QuestionGroup]], counts: RoleCounts,
                  rng: random.Random) -> dict[int, tuple[str, str | None]]:
    roles: dict[int, tuple[str, str | None]] = {}
    order = ["new"] * counts.new + ["extended"] * counts.extended + ["focus"] * counts.focus + ["decoy"] * counts.decoy
    for split in EVAL_SPLITS:
        members = chosen[split][:]
        rng.shuffle(members)
        for group, role in zip(members, order):
            roles[group.index] = (role, split)
    return roles


def plan_roles(groups: list[QuestionGroup], chosen: dict[str, list[QuestionGroup]], counts: RoleCounts,
               rng: random.Random) -> SamplePlan:
    """Roles of the chosen eval groups (``train`` for the rest) and every split's positive pairs."""
    plan = SamplePlan(roles=_assign_roles(chosen, counts, rng))
    plan.positives = {split: {kind: [] for kind in KINDS} for split in SPLITS}
    plan.seen = {split: [] for split in EVAL_SPLITS}
    plan.unseen = {split: [] for split in EVAL_SPLITS}
    unseen_anywhere: set[str] = set()
    for group in groups:
        role, split = plan.roles.setdefault(group.index, ("train", None))
        questions = list(group.questions)
        if split is None:  # a train group
            plan.positives["train"]["both"].extend(combinations(questions, 2))
            continue
        if role in ("new", "decoy"):
            plan.unseen[split].extend(questions)
            if role == "new":
                plan.positives[split]["neither"].extend(combinations(questions, 2))
            continue
        if role == "extended":
            held_out = questions.pop(rng.randrange(len(questions)))
            plan.unseen[split].append(held_out)
            plan.positives[split]["one"].extend((held_out, q) for q in questions)
        cover = _cover(rng, questions)
        in_cover = {frozenset(pair) for pair in cover}
        plan.positives["train"]["both"].extend(cover)
        plan.positives[split]["both"].extend(p for p in combinations(questions, 2) if frozenset(p) not in in_cover)
        plan.seen[split].extend(questions)
    for split in EVAL_SPLITS:
        unseen_anywhere.update(plan.unseen[split])
    plan.train_questions = [q for g in groups if plan.roles[g.index][0] in ("train", "focus", "extended")
                            for q in g.questions if q not in unseen_anywhere]
    return plan


class NegativeSampler:
    """Draws negatives from pools of questions, never a pair already used anywhere.

    ``used`` holds every unordered pair given out so far (all positives are put in before
    the first negative is drawn), so no pair can repeat, within a split or across splits.
    ``uses`` counts how often each question occurs in the split being drawn; a random pair's
    first question is one of the least used of its pool, its second the least used of a few
    random candidates, so that the questions of an eval split recur about equally and every
    decoy question is used.
    """

    SAMPLE = 8  # random draws compare this many candidates and keep the least used

    def __init__(self, owner: dict[str, QuestionGroup], overlaps: OverlapIndex, used: set[frozenset[str]],
                 rng: random.Random, recipe: SampleRecipe):
        self.owner, self.overlaps, self.used, self.rng, self.recipe = owner, overlaps, used, rng, recipe

    def _free(self, a: str, b: str) -> bool:
        return self.owner[a].index != self.owner[b].index and frozenset((a, b)) not in self.used

    def _take(self, a: str, b: str, uses: Counter[str], out: list[tuple[str, str]]) -> None:
        self.used.add(frozenset((a, b)))
        uses[a] += 1
        uses[b] += 1
        out.append((a, b))

    def _hard(self, left: set[str], right: set[str], n: int, uses: Counter[str], out: list[tuple[str, str]]) -> None:
        """Up to ``n`` of the highest-overlap free pairs with one question in each pool."""
        per_question: Counter[str] = Counter()
        cap = self.recipe.hard_per_question
        for _, a, b in self.overlaps.pairs:
            if len(out) >= n:
                return
            if not ((a in left and b in right) or (a in right and b in left)):
                continue
            if per_question[a] < cap and per_question[b] < cap and self._free(a, b):
                per_question[a] += 1
                per_question[b] += 1
                self._take(a, b, uses, out)

    def _least_used(self, pool: list[str], uses: Counter[str], slack: int) -> str:
        """A random question among the least used of ``pool`` (``slack`` more uses allowed)."""
        lowest = min(uses[q] for q in pool)
        candidates = [q for q in pool if uses[q] <= lowest + slack]
        return candidates[self.rng.randrange(len(candidates))]

    def _rarely_used(self, pool: list[str], uses: Counter[str], exclude: str) -> str | None:
        """The least used of a few random questions of ``pool`` (cheap for large pools)."""
        candidates = [pool[self.rng.randrange(len(pool))] for _ in range(self.SAMPLE)]
        candidates = [q for q in candidates if q != exclude]
        return min(candidates, key=lambda q: uses[q]) if candidates else None

    def _random(self, left: list[str], right: list[str], goal: int, same_topic: bool, uses: Counter[str],
                out: list[tuple[str, str]]) -> None:
        """Random pairs (within one topic if ``same_topic``) until ``out`` holds ``goal`` pairs."""
        by_topic: dict[str, list[str]] = {}
        for question in right:
            by_topic.setdefault(self.owner[question].topic, []).append(question)
        attempts = 0
        while len(out) < goal and attempts < 200 * goal + 1000:
            attempts += 1
            a = self._least_used(left, uses, slack=attempts // 50)
            pool = by_topic.get(self.owner[a].topic, []) if same_topic else right
            b = self._rarely_used(pool, uses, exclude=a) if pool else None
            if b is not None and self._free(a, b):
                self._take(a, b, uses, out)

    def draw(self, left: list[str], right: list[str], n: int, uses: Counter[str]) -> list[tuple[str, str]]:
        """``n`` negatives, one question from ``left`` and one from ``right`` (may be the same pool).

        Raises:
            CourseInputError: the pools cannot give ``n`` free cross-group pairs.
        """
        out: list[tuple[str, str]] = []
        self._hard(set(left), set(right), round(n * self.recipe.hard_fraction), uses, out)
        self._random(left, right, len(out) + round(n * self.recipe.same_topic_fraction), True, uses, out)
        self._random(left, right, n, False, uses, out)
        if len(out) < n:
            raise CourseInputError(
                f"could draw only {len(out)} of {n} negatives from pools of {len(left)} and {len(right)} questions: "
                "the source needs more groups")
        return out


def _draw_eval_negatives(plan: SamplePlan, sampler: NegativeSampler, split: str) -> list[tuple[str, str]]:
    """Per kind as many negatives as positives, from that kind's questions of ``split``."""
    uses: Counter[str] = Counter(q for pairs in plan.positives[split].values() for pair in pairs for q in pair)
    seen, unseen = plan.seen[split], plan.unseen[split]
    pools = {"neither": (unseen, unseen), "one": (unseen, seen), "both": (seen, seen)}
    negatives = []
    for kind in ("neither", "one", "both"):
        left, right = pools[kind]
        negatives += sampler.draw(left, right, len(plan.positives[split][kind]), uses)
    never_used = [q for q in unseen if uses[q] == 0]
    if never_used:
        raise CourseInputError(f"{split}: {len(never_used)} unseen questions got no pair, e.g. {never_used[0]!r}")
    return negatives


def _draw_negatives(plan: SamplePlan, sampler: NegativeSampler, recipe: SampleRecipe) -> dict[str, list[tuple[str, str]]]:
    negatives = {split: _draw_eval_negatives(plan, sampler, split) for split in ("test", "dev")}
    n_train = len(plan.positives["train"]["both"])
    share = recipe.train_positive_share
    negatives["train"] = sampler.draw(plan.train_questions, plan.train_questions,
                                      round(n_train * (1 - share) / share), Counter())
    return negatives


def _ordered_examples(positives: list[tuple[str, str]], negatives: list[tuple[str, str]],
                      rng: random.Random) -> list[PairExample]:
    """Positives and negatives in a shuffled order, each pair's two questions in a random order."""
    rows = [(a, b, 1) for a, b in positives] + [(a, b, 0) for a, b in negatives]
    rng.shuffle(rows)
    return [PairExample(*((a, b) if rng.random() < 0.5 else (b, a)), label) for a, b, label in rows]


def verify_sample(splits: dict[str, list[PairExample]], owner: dict[str, QuestionGroup], plan: SamplePlan) -> None:
    """Check the build's guarantees (module docstring, step 5); a failure is a bug of the builder.

    Raises:
        RuntimeError: naming the guarantee that does not hold.
    """
    keys = [Counter(frozenset((e.text_a, e.text_b)) for e in splits[s]) for s in SPLITS]
    train_questions = {q for e in splits["train"] for q in (e.text_a, e.text_b)}
    failures = []
    if any(n > 1 for counts in keys for n in counts.values()):
        failures.append("a pair occurs twice in one split")
    if any(keys[i].keys() & keys[j].keys() for i, j in ((0, 1), (0, 2), (1, 2))):
        failures.append("a pair occurs in two splits")
    if any((owner[e.text_a].index == owner[e.text_b].index) != bool(e.label) for s in SPLITS for e in splits[s]):
        failures.append("a label disagrees with the groups")
    for split in EVAL_SPLITS:
        if set(plan.unseen[split]) & train_questions or not set(plan.seen[split]) <= train_questions:
            failures.append(f"{split}: seen / unseen questions do not match train")
        if 2 * sum(e.label for e in splits[split]) != len(splits[split]):
            failures.append(f"{split} is not exactly half label 1")
    if failures:
        raise RuntimeError("the sample build broke its guarantees: " + "; ".join(failures))


@dataclass
class SampleStats:
    """What the build produced, for the command's report and the data README."""

    groups: int
    questions: int
    topics: int
    roles: RoleCounts
    train_groups: int
    statistics: SplitStatistics

    def report(self) -> str:
        return "\n".join([
            f"{self.questions} questions in {self.groups} groups over {self.topics} topics",
            f"roles per eval split: {self.roles.describe()}; train-only groups: {self.train_groups}",
            self.statistics.report(),
        ])


def build_sample(source: str | Path = SOURCE_FILE, out_dir: str | Path = LCQMC_SAMPLE_DIR,
                 seed: int = SampleRecipe.seed, recipe: SampleRecipe | None = None) -> SampleStats:
    """Read the groups, plan the roles, draw the pairs and write ``{train,dev,test}.tsv`` (no header).

    ``seed`` replaces ``recipe.seed`` (the command line's ``--seed``). The three files are
    replaced together (a full disk or Ctrl-C leaves the old three), under ``out_dir``'s lock.
    """
    recipe = replace(recipe or SampleRecipe(), seed=seed)
    groups = read_question_groups(source)
    owner = {q: g for g in groups for q in g.questions}
    rng = random.Random(recipe.seed)
    overlaps = OverlapIndex(groups)
    try:  # what follows fails only when the source as a whole cannot give the sample: name it
        size, candidates = _eval_candidates(groups)
        counts = role_counts(size, recipe.eval_positives)
        chosen = choose_eval_groups(candidates, counts.total, overlaps.twins(owner, recipe.twin_overlap), rng)
        plan = plan_roles(groups, chosen, counts, rng)
        used = {frozenset(pair) for kinds in plan.positives.values() for pairs in kinds.values() for pair in pairs}
        negatives = _draw_negatives(plan, NegativeSampler(owner, overlaps, used, rng, recipe), recipe)
    except CourseInputError as error:
        raise CourseInputError(f"{source}: {error}") from None
    out_dir = Path(out_dir)
    splits: dict[str, list[PairExample]] = {}
    for offset, split in enumerate(SPLITS):  # one generator per split: resizing one never moves another
        positives = [pair for pairs in plan.positives[split].values() for pair in pairs]
        splits[split] = _ordered_examples(positives, negatives[split], random.Random(recipe.seed + 10 + offset))
    verify_sample(splits, owner, plan)  # before anything is written: a failed build leaves the old sample
    with file_errors(out_dir, "create the folder"):
        out_dir.mkdir(parents=True, exist_ok=True)
    with folder_lock(out_dir):  # the three files are replaced together, or none of them
        atomic_write_many({out_dir / f"{split}.tsv": "".join(f"{e.text_a}\t{e.text_b}\t{e.label}\n" for e in examples)
                           for split, examples in splits.items()})
    return SampleStats(groups=len(groups), questions=len(owner), topics=len({g.topic for g in groups}),
                       roles=counts, train_groups=sum(role == "train" for role, _ in plan.roles.values()),
                       statistics=split_statistics(splits))
