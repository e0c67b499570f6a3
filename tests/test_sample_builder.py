"""The sample builder: the family source, meanings and their wordings, pair kinds, the guarantees of a build."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from lessons_lib.errors import CourseInputError
from lessons_lib.pairs.data import char_overlap, load_lcqmc
from lessons_lib.pairs.sample import (
    PairDrawer,
    SampleRecipe,
    apportion,
    build_sample,
    expand_meanings,
    pair_kind,
    positive_kind,
    read_question_families,
)
from lessons_lib.pairs.stats import LCQMC_KINDS, LCQMC_MEASURED, split_statistics
from lessons_lib.paths import LCQMC_SAMPLE_DIR

SOURCE = """# a small source in the shipped format
## 饮食
[food] E: 苹果 | 香蕉 | 橙子 | 葡萄 | 西瓜 | 桃子 | 番茄/西红柿 | 梨
[who] E: - | 孕妇 | 小孩 | 老人
= {who}能吃{food}吗
L: {who}能吃{food}吗？
S: {who}可以吃{food}吗
R: {food}{who}能吃吗
F: 请问{who}能吃{food}吗
P: {who}吃{food}没问题吧
= {who}吃{food}有什么好处
L: {who}吃{food}有什么好处？
S: {who}吃{food}有哪些好处
R: 有什么好处，{who}吃{food}
F: 想问{who}吃{food}有什么好处
P: {who}吃{food}对身体好在哪

[fruit] E: 草莓 | 樱桃 | 蓝莓 | 杨梅 | 桑葚 | 李子
[wash] G: 不洗 | 洗过
= {fruit}{wash}能直接吃吗
L: {fruit}{wash}能直接吃吗？
S: {fruit}{wash}可以直接吃吗
R: {wash}的{fruit}能直接吃吗
F: 请问{fruit}{wash}能直接吃吗
P: {fruit}{wash}就吃会不会有问题

## 出行
[a] N: 北京 | 上海 | 广州 | 成都 | 西安 | 杭州
[b] N: 北京 | 上海 | 广州 | 成都 | 西安 | 杭州
= {a}到{b}的高铁要多久 | swap a b
L: {a}到{b}的高铁要多久？
S: {a}到{b}的高铁要多长时间
R: 从{a}坐高铁到{b}要多久
F: 请问{a}到{b}的高铁要多久
P: 坐高铁从{a}去{b}得几个小时
"""


def write_source(tmp_path: Path, text: str = SOURCE) -> Path:
    path = tmp_path / "families.txt"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_source_is_read_into_families_templates_and_slots(tmp_path: Path) -> None:
    families = read_question_families(write_source(tmp_path))
    assert [f.topic for f in families] == ["饮食", "饮食", "出行"]
    food = families[0]
    assert food.slots["who"].values[0] == ("",) and food.slots["food"].values[6] == ("番茄", "西红柿")
    assert [t.slots for t in food.templates] == [("who", "food"), ("who", "food")]
    assert [k for k, _ in food.templates[0].rewordings] == ["L", "S", "R", "F", "P"]
    assert families[2].templates[0].swap == ("a", "b") and families[1].slots["wash"].kind == "G"


def test_meanings_expand_into_their_wordings(tmp_path: Path) -> None:
    meanings, by_text = expand_meanings(read_question_families(write_source(tmp_path)))
    # 8 foods × 4 "who" × 2 templates + 6 fruits × 2 + 6 × 5 ordered city pairs (equal cities skipped)
    assert len(meanings) == 64 + 12 + 30
    first = meanings[0]
    assert [w.text for w in first.wordings][:2] == ["能吃苹果吗", "能吃苹果吗？"]
    tomato = next(m for m in meanings if m.wordings[0].text == "孕妇能吃番茄吗")
    assert ("S", "孕妇能吃西红柿吗") in [(w.kind, w.text) for w in tomato.wordings]
    assert all(by_text[w.text] == w for m in meanings for w in m.wordings)


@pytest.mark.parametrize("text, message", [
    ("[x] E: 甲 | 乙\n= {x}吗\n", "line 1: a family before the first '## topic' line"),
    ("## 话题\n[x] Q: 甲 | 乙\n= {x}吗\n", "line 2: slot kind must be one of E, N, G"),
    ("## 话题\n[x] E: 甲\n= {x}吗\n", r"line 2: slot \[x\] needs at least two different values"),
    ("## 话题\n[x] E: 甲 | 乙\n= {y}吗\n", r"line 3: slot \{y\} is not declared"),
    ("## 话题\n[x] E: 甲 | 乙\n[y] E: 丙 | 丁\n= {x}吗\nL: {x}{y}吗？\n", "does not use the same slots"),
    ("## 话题\n[x] E: 甲 | 乙\nL: {x}吗\n", "line 3: a rewording before its '= template' line"),
    ("## 话题\n[x] E: 甲 | 乙\n= {x}吗\nZ: {x}呢\n", "line 4: a rewording starts with one of L, R, S, F, P"),
    ("## 话题\n[x] E: 甲 | 乙\n= {x}吗 | swap x z\n", "swap .* names a slot the template does not use"),
])
def test_source_errors_name_the_line(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(CourseInputError, match=message):
        read_question_families(write_source(tmp_path, text))


def test_two_meanings_with_one_text_are_an_error_naming_both_lines(tmp_path: Path) -> None:
    source = write_source(tmp_path, "## 话题\n[x] E: 甲 | 乙\n= {x}好吗\n= {x}行吗\nL: {x}好吗\n")
    with pytest.raises(CourseInputError, match="'甲好吗' is produced by the templates of line 3 and line 4"):
        expand_meanings(read_question_families(source))


def test_positive_kind_and_apportion() -> None:
    assert positive_kind("", "R") == positive_kind("R", "") == "R"
    assert positive_kind("L", "P") == "P" and positive_kind("F", "S") == "S" and positive_kind("L", "F") == "F"
    counts = apportion(100, LCQMC_KINDS["negative"])
    assert sum(counts.values()) == 100 and counts["A"] == 37 and counts["G"] == 3
    assert apportion(3, {"x": 1, "y": 1, "z": 1}) == {"x": 1, "y": 1, "z": 1}


def test_related_meanings_make_pairs_of_the_asked_kind(tmp_path: Path) -> None:
    meanings, by_text = expand_meanings(read_question_families(write_source(tmp_path)))
    drawer = PairDrawer(meanings, by_text, random.Random(0), SampleRecipe())
    by_first = {m.wordings[0].text: m for m in meanings}
    cases = {"E": "孕妇能吃苹果吗", "C": "能吃苹果吗", "A": "小孩能吃梨吗", "G": "草莓不洗能直接吃吗",
             "N": "北京到上海的高铁要多久", "O": "北京到上海的高铁要多久", "U": "草莓不洗能直接吃吗"}
    for kind, text in cases.items():
        for _ in range(5):
            other = drawer.related(by_first[text], kind)
            assert other is not None
            assert pair_kind(meanings, by_text, text, other.wordings[0].text) == kind, (kind, other.wordings[0].text)
    assert drawer.related(by_first["北京到上海的高铁要多久"], "U") is None  # its topic has one family
    light = by_text["北京到上海的高铁要多久？"]
    assert drawer.partner(light, 1, "S", lambda t: True).text == "北京到上海的高铁要多长时间"  # S outweighs L
    paraphrase = by_text["坐高铁从北京去上海得几个小时"]
    assert drawer.partner(paraphrase, 1, "S", lambda t: True) is None  # with a P rewording every pair is P
    assert drawer.partner(paraphrase, 1, "P", lambda t: t != "北京到上海的高铁要多久") is not None
    assert drawer.partner(paraphrase, 1, "P", lambda t: False) is None


def test_build_keeps_its_guarantees_and_is_deterministic(tmp_path: Path) -> None:
    source = write_source(tmp_path)
    recipe = SampleRecipe(train_pairs=150, eval_pairs=40)
    stats = build_sample(source, tmp_path / "a", seed=7, recipe=recipe)
    build_sample(source, tmp_path / "b", seed=7, recipe=recipe)
    build_sample(source, tmp_path / "c", seed=8, recipe=recipe)
    files = {d: [(tmp_path / d / f"{s}.tsv").read_bytes() for s in ("train", "dev", "test")] for d in "abc"}
    assert files["a"] == files["b"] != files["c"]
    data = load_lcqmc(tmp_path / "a")
    splits = {"train": data.train.examples, "dev": data.dev.examples, "test": data.test.examples}
    recount = split_statistics(splits)
    assert recount == stats.statistics and stats.meanings == 106 and stats.families == 3
    assert [recount.pairs[s] for s in ("train", "dev", "test")] == [150, 40, 40]
    assert set(recount.repeats.values()) == {0} and recount.label_share("dev") == recount.label_share("test") == 0.5
    assert recount.positives["train"] == 87  # round(150 × 0.58)
    for split in ("dev", "test"):  # no question in two eval pairs; the shares of LCQMC's test split
        assert recount.graph[split].pairs_per_question == 1.0 and recount.graph[split].largest_component == 1
        per_label = apportion(20, {k: LCQMC_MEASURED[f"test_{k}"] for k in ("both", "one", "neither")})
        assert recount.against_train[split].kind_shares() == tuple(2 * per_label[k] / 40 for k in ("both", "one", "neither"))
    assert recount.shared_dev_test_questions == 0
    meanings, by_text = expand_meanings(read_question_families(source))
    for split, examples in splits.items():
        for label in (0, 1):
            kinds = Counter(pair_kind(meanings, by_text, e.text_a, e.text_b) for e in examples if e.label == label)
            wanted = apportion(sum(e.label == label for e in examples), LCQMC_KINDS["positive" if label else "negative"])
            assert kinds == Counter({k: n for k, n in wanted.items() if n}), (split, label)
    assert stats.report().startswith("644 possible questions (106 meanings) from 4 templates in 3 families over 2 topics")


def test_build_rejects_a_source_too_small(tmp_path: Path) -> None:
    with pytest.raises(CourseInputError, match="write more families"):
        build_sample(write_source(tmp_path), tmp_path / "out", recipe=SampleRecipe(train_pairs=100, eval_pairs=400))


@pytest.mark.slow
def test_shipped_build_does_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    code = ("import sys; from lessons_lib.pairs.sample import build_sample; build_sample(out_dir=sys.argv[1])")
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=True, env=env)
    for split in ("train", "dev", "test"):
        assert (tmp_path / f"{split}.tsv").read_bytes() == (LCQMC_SAMPLE_DIR / f"{split}.tsv").read_bytes()


def test_shipped_source_has_no_near_duplicate_across_meanings() -> None:
    # the same question with other punctuation in two meanings would be a pair labelled 0 by mistake
    meanings, _ = expand_meanings(read_question_families())
    normalised: dict[str, int] = {}
    for meaning in meanings:
        for wording in meaning.wordings:
            key = "".join(ch for ch in wording.text if ch not in "？?，,、。！ ")
            assert normalised.setdefault(key, meaning.index) == meaning.index, wording.text


def test_shipped_negatives_are_lexically_close_and_positives_too() -> None:
    data = load_lcqmc(LCQMC_SAMPLE_DIR)
    for examples in (data.dev.examples, data.test.examples):
        close = [char_overlap(e.text_a, e.text_b) >= 0.4 for e in examples]
        assert sum(c for c, e in zip(close, examples) if e.label == 0) >= 0.6 * len(examples) / 2
        assert sum(c for c, e in zip(close, examples) if e.label == 1) >= 0.9 * len(examples) / 2


def test_the_kinds_card_gives_the_counts_the_builder_uses() -> None:
    card = (LCQMC_SAMPLE_DIR / "source" / "lcqmc_kinds.md").read_text(encoding="utf-8")
    rows = [line.split("|") for line in card.splitlines() if line.startswith("| ") and line.split("|")[1].strip() in
            (*LCQMC_KINDS["negative"], *LCQMC_KINDS["positive"])]
    counts = {cells[1].strip(): int(cells[-2]) for cells in rows}
    assert counts == {**LCQMC_KINDS["negative"], **LCQMC_KINDS["positive"]}
    assert sum(LCQMC_KINDS["negative"].values()) == sum(LCQMC_KINDS["positive"].values()) == 300
