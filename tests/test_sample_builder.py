"""The sample builder: role counts, eval groups, the guarantees of a build, determinism."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from lessons_lib.errors import CourseInputError
from lessons_lib.pairs.data import load_lcqmc
from lessons_lib.pairs.sample import (
    OverlapIndex,
    QuestionGroup,
    RoleCounts,
    SampleRecipe,
    build_sample,
    choose_eval_groups,
    read_question_groups,
    role_counts,
)
from lessons_lib.pairs.stats import split_statistics
from lessons_lib.paths import LCQMC_SAMPLE_DIR

TOPICS = ("甲", "乙", "丙")
ASKS = ("怎么办", "如何处理", "该怎么做", "有办法吗", "怎么解决", "咋整")


def write_source(tmp_path: Path, n_groups: int = 30) -> Path:
    """Groups of 6 questions over three topics; the subject character makes groups differ."""
    lines = []
    for index in range(n_groups):
        if index % 10 == 0:
            lines.append(f"## {TOPICS[index // 10 % 3]}")
        subject = chr(0x4E00 + 37 * index)  # one CJK character per group
        lines += [f"{subject}{index}号{ask}" for ask in ASKS] + [""]
    path = tmp_path / "groups.txt"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def test_role_counts_follow_lcqmcs_shares() -> None:
    # groups of 6 and 300 positives per eval split: the shipped sample's plan
    assert role_counts(6, 300) == RoleCounts(new=4, extended=18, focus=3, decoy=2)
    # groups of 4: 5 / 16 / 17 / 6, seen share 116 / (116 + 20 + 16 + 24) = 0.659
    assert role_counts(4, 162) == RoleCounts(new=5, extended=16, focus=17, decoy=6)
    with pytest.raises(CourseInputError, match="at least 3 questions"):
        role_counts(2, 100)


def test_choose_eval_groups_keeps_twins_together_and_spreads_topics() -> None:
    groups = [QuestionGroup(i, TOPICS[i % 3], (f"q{i}a", f"q{i}b"), i) for i in range(12)]
    twins = {0: 3, 3: 0}
    chosen = choose_eval_groups(groups, 4, twins, random.Random(0))
    assert [len(chosen[s]) for s in ("test", "dev")] == [4, 4]
    indices = [g.index for s in ("test", "dev") for g in chosen[s]]
    assert len(set(indices)) == 8
    for split in ("test", "dev"):
        members = {g.index for g in chosen[split]}
        assert (0 in members) == (3 in members) or not ({0, 3} & set(indices)) >= {0, 3}
        assert {g.topic for g in chosen[split]} == set(TOPICS)
    with pytest.raises(CourseInputError, match="write more groups"):
        choose_eval_groups(groups, 6, twins, random.Random(0))


def test_overlap_index_is_sorted_and_finds_twins() -> None:
    groups = [QuestionGroup(0, "t", ("猫能吃葡萄吗", "猫咪可以吃葡萄吗"), 1),
              QuestionGroup(1, "t", ("狗能吃葡萄吗", "狗狗可以吃葡萄吗"), 4),
              QuestionGroup(2, "t", ("明天下雨吗", "明天有雨吗"), 7)]
    index = OverlapIndex(groups, minimum=0.3)
    overlaps = [o for o, _, _ in index.pairs]
    assert overlaps == sorted(overlaps, reverse=True) and overlaps[0] >= 0.5
    owner = {q: g for g in groups for q in g.questions}
    assert index.twins(owner, 0.5) == {0: 1, 1: 0}
    assert all(owner[a].index != owner[b].index for _, a, b in index.pairs)


def test_build_keeps_its_guarantees_and_is_deterministic(tmp_path: Path) -> None:
    source = write_source(tmp_path)
    recipe = SampleRecipe(eval_positives=30)
    stats = build_sample(source, tmp_path / "a", seed=7, recipe=recipe)
    build_sample(source, tmp_path / "b", seed=7, recipe=recipe)
    build_sample(source, tmp_path / "c", seed=8, recipe=recipe)
    files = {d: [(tmp_path / d / f"{s}.tsv").read_bytes() for s in ("train", "dev", "test")] for d in "abc"}
    assert files["a"] == files["b"] != files["c"]
    assert stats.roles == role_counts(6, 30) and stats.groups == 30 and stats.questions == 180
    data = load_lcqmc(tmp_path / "a")
    recount = split_statistics({"train": data.train.examples, "dev": data.dev.examples, "test": data.test.examples})
    assert recount == stats.statistics
    assert set(recount.repeats.values()) == {0} and recount.label_share("dev") == recount.label_share("test") == 0.5
    assert abs(recount.label_share("train") - 0.58) < 0.02
    report = stats.report()
    assert report.startswith("180 questions in 30 groups over 3 topics") and "LCQMC" in report


def test_build_rejects_a_source_too_small(tmp_path: Path) -> None:
    with pytest.raises(CourseInputError, match="write more groups"):
        build_sample(write_source(tmp_path, n_groups=5), tmp_path / "out", recipe=SampleRecipe(eval_positives=300))


def test_shipped_build_does_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    code = ("import sys; from lessons_lib.pairs.sample import build_sample; build_sample(out_dir=sys.argv[1])")
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=True, env=env)
    for split in ("train", "dev", "test"):
        assert (tmp_path / f"{split}.tsv").read_bytes() == (LCQMC_SAMPLE_DIR / f"{split}.tsv").read_bytes()


def test_shipped_source_has_no_near_duplicate_across_groups() -> None:
    # the same question with other punctuation in two groups would be a pair labelled 0 by mistake
    groups = read_question_groups()
    normalised: dict[str, int] = {}
    for group in groups:
        for question in group.questions:
            key = "".join(ch for ch in question if ch not in "？?，,、。！ ")
            assert normalised.setdefault(key, group.index) == group.index, question
