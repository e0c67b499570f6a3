"""The parser adapter and the parse cache, with the course's real spaCy parser."""

from __future__ import annotations

import pytest

from lessons_lib import paths
from lessons_lib.errors import CourseInputError
from lessons_lib.syntax.cache import ParseCache, cache_key, lcqmc_sentences, parse_with_cache
from lessons_lib.syntax.parser import (
    Parse,
    doc_to_parse,
    load_parser,
    parse_texts,
    parse_words,
    parser_identity,
    prepare_pipeline,
)
from lessons_lib.syntax.trees import validate_heads

def test_the_course_parser_is_shipped():
    """The parser is committed with the course; a missing one is a broken checkout, not a skip."""
    assert (paths.PARSER_MODEL_DIR / "meta.json").is_file(), (
        f"{paths.PARSER_MODEL_DIR} is missing; restore it from git or run `lessons train-parser`")

QUESTIONS = ["电脑怎么录像？", "如何在计算机上录视频", "什么花一年四季都开", "苹果手机和华为手机哪个好用？"]


@pytest.fixture(scope="module")
def nlp():
    return load_parser(paths.PARSER_MODEL_DIR, prefer_official=False)


def test_shipped_pipeline_segments_with_jieba_and_has_a_parser(nlp):
    from lessons_lib.syntax.segmentation import segment

    assert "parser" in nlp.pipe_names
    for text in QUESTIONS:
        assert [t.text for t in nlp.make_doc(text)] == segment(text)


def test_parses_are_single_validated_trees_with_root_minus_one(nlp):
    for parse in parse_texts(nlp, QUESTIONS):
        assert isinstance(parse, Parse)
        assert "".join(parse.words) == parse.text
        assert validate_heads(parse.heads) == list(parse.heads)
        assert list(parse.heads).count(-1) == 1
        assert parse.deprels[parse.heads.index(-1)] == "root"


def test_a_text_of_several_sentences_still_gets_one_tree(nlp):
    # Without the single-sentence component spaCy's parser would return one tree per sentence.
    [parse] = parse_texts(nlp, ["你好。请问怎么做红烧肉？谢谢！"])
    assert list(parse.heads).count(-1) == 1


def test_whitespace_tokens_are_removed_and_counted(nlp):
    [parse] = parse_texts(nlp, ["我 爱 python 编程？"])
    # Single spaces become trailing whitespace of a token, not tokens of their own.
    assert parse.words == ("我", "爱", "python", "编程", "？") and parse.removed_spaces == 0
    [parse] = parse_texts(nlp, ["请问  这个怎么办"])
    assert parse.removed_spaces == 1 and " " not in parse.words
    validate_heads(parse.heads)


def test_non_tree_output_is_an_error_naming_the_sentence(nlp):
    from spacy.tokens import Doc

    # Two roots, as a pipeline that splits sentences would produce.
    doc = Doc(nlp.vocab, words=["你好", "。", "谢谢"], spaces=[False] * 3, heads=[0, 0, 2], deps=["ROOT", "punct", "ROOT"])
    with pytest.raises(CourseInputError, match="你好。谢谢") as info:
        doc_to_parse(doc)
    assert "one root" in str(info.value)


def test_bad_input_is_named(nlp):
    with pytest.raises(CourseInputError, match=r"`texts`\[1\]"):
        parse_texts(nlp, ["好", "  "])
    import spacy

    with pytest.raises(CourseInputError, match="no 'parser'"):
        prepare_pipeline(spacy.blank("zh"))
    with pytest.raises(CourseInputError, match="not found"):
        load_parser(paths.DATA_DIR / "no_such_parser")
    with pytest.raises(CourseInputError, match="not installed"):
        load_parser("zh_no_such_pipeline_sm")


def test_identity_changes_when_the_parser_changes(nlp):
    name, version = parser_identity(nlp)
    assert name == "zh_course_parser" and version.startswith("1.0.0+")
    changed = load_parser(paths.PARSER_MODEL_DIR, prefer_official=False)  # a second copy to modify
    assert parser_identity(changed) == (name, version)
    model = changed.get_pipe("parser").model
    node = next(n for n in model.walk() if n.param_names)
    param = node.param_names[0]
    node.set_param(param, node.get_param(param) + 0.01)
    assert parser_identity(changed)[0] == name and parser_identity(changed)[1] != version


def test_cache_miss_then_hit_then_invalidation(nlp, tmp_path):
    name, version = parser_identity(nlp)
    texts = QUESTIONS + [QUESTIONS[0]]  # a duplicate is parsed once
    with ParseCache(tmp_path, name, version) as cache:
        first, stats = parse_with_cache(texts, nlp, cache, batch_size=2)
        assert (stats.requested, stats.distinct, stats.hits, stats.parsed) == (5, 4, 0, 4)
        assert len(cache) == 4
        second, stats = parse_with_cache(texts, nlp, cache)
        assert (stats.hits, stats.parsed) == (4, 0)
        assert second == first == parse_texts(nlp, texts)
    # Reopening the same file keeps the entries (a stopped pre-parse resumes).
    with ParseCache(tmp_path, name, version) as cache:
        assert cache.get(QUESTIONS[1]) == first[1]
    # Another parser version sees none of them, and pruning removes the old ones.
    with ParseCache(tmp_path, name, version + "-retrained") as other:
        assert other.get_many(QUESTIONS) == {} and len(other) == 0
        _, stats = parse_with_cache(QUESTIONS[:1], nlp, other)
        assert stats.parsed == 1
        assert other.prune() == 4 and len(other) == 1


def test_cache_key_depends_on_text_name_and_version():
    keys = {cache_key("好", "p", "1"), cache_key("好", "p", "2"), cache_key("好", "q", "1"), cache_key("坏", "p", "1")}
    assert len(keys) == 4


def test_cache_rejects_bad_arguments(nlp, tmp_path):
    with pytest.raises(CourseInputError, match="parser_name"):
        ParseCache(tmp_path, "", "1")
    with ParseCache(tmp_path, "p", "1") as cache:
        with pytest.raises(CourseInputError, match="batch_size"):
            parse_with_cache(["好"], nlp, cache, batch_size=0)
        with pytest.raises(CourseInputError, match="n_process"):
            parse_with_cache(["好"], nlp, cache, n_process=0)


def test_lcqmc_sentences_of_the_shipped_sample():
    texts, counts = lcqmc_sentences(paths.LCQMC_SAMPLE_DIR)
    assert len(texts) == len(set(texts)) == counts["distinct sentences"] > 0
    assert counts["train pairs"] > 0


def test_a_fraction_reads_only_the_sentences_the_experiment_uses(tmp_path, capsys):
    from lessons_lib.cli import main
    from lessons_lib.pairs.data import load_lcqmc, subsample
    from lessons_lib.ablation.config import ExperimentConfig
    from lessons_lib.ablation.experiment import needed_texts

    data = load_lcqmc(paths.LCQMC_SAMPLE_DIR)
    everything, _ = lcqmc_sentences(paths.LCQMC_SAMPLE_DIR)
    texts, counts = lcqmc_sentences(paths.LCQMC_SAMPLE_DIR, train_fraction=0.02, subset_seed=3)
    subset = subsample(data.train.examples, 0.02, 3)
    assert counts["train pairs"] == len(subset) == round(0.02 * len(data.train))
    assert counts["dev pairs"] == len(data.dev) and counts["test pairs"] == len(data.test)
    expected = {t for split in (subset, data.dev.examples, data.test.examples) for ex in split for t in (ex.text_a, ex.text_b)}
    assert set(texts) == expected and len(texts) == counts["distinct sentences"] < len(everything)
    assert texts == needed_texts(data, ExperimentConfig(train_fraction=0.02, subset_seed=3))
    # The command parses exactly those (here only the first 40 of them, to stay fast) into the cache.
    assert main(["preparse", "--data-dir", str(paths.LCQMC_SAMPLE_DIR), "--cache-dir", str(tmp_path),
                 "--train-fraction", "0.02", "--subset-seed", "3", "--limit", "40"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("40 distinct sentences")
    assert f"'train pairs': {len(subset)}" in out and f"'distinct sentences': {len(texts)}" in out
    assert '"parsed": 40' in out


def test_parse_words_uses_the_given_segmentation(nlp):
    jieba_words = parse_texts(nlp, ["怎么开发票"])[0].words
    parse = parse_words(nlp, ["怎么", "开", "发票"])
    assert jieba_words == ("怎么", "开发票") and parse.words == ("怎么", "开", "发票")
    validate_heads(parse.heads)
    with pytest.raises(CourseInputError, match="words"):
        parse_words(nlp, ["好", ""])


def test_a_stored_parse_is_checked_when_read():
    from lessons_lib.syntax.parser import Parse

    good = {"text": "怎么 学", "words": ["怎么", "学"], "heads": [1, -1], "deprels": ["advmod", "root"]}
    assert Parse.from_json(good).words == ("怎么", "学")
    for broken, message in (({**good, "words": ["怎么", "学习"]}, "do not spell the text"),
                            ({**good, "heads": [1, 0]}, "exactly one root"),
                            ({**good, "deprels": ["root"]}, "2 words, 2 heads and 1 relations"),
                            ({"text": "学"}, "not a stored parse")):
        with pytest.raises(CourseInputError, match=message):
            Parse.from_json(broken, where="cache entry")


def test_an_entry_is_checked_against_its_key_and_an_entry_without_a_digest_is_parsed_again(tmp_path):
    import json
    import sqlite3

    text = "怎么学"
    parse = Parse(text, ("怎么", "学"), (1, -1), ("advmod", "root"))
    with ParseCache(tmp_path, "p", "1") as cache:
        cache.put_many([parse])
        assert cache.get(text) == parse
    # another valid tree for the same text, written in place of the parse: every other check passes
    other = json.dumps(Parse(text, ("怎么", "学"), (-1, 0), ("root", "obj")).to_json(), ensure_ascii=False)
    with sqlite3.connect(tmp_path / "parses.sqlite") as db:
        db.execute("UPDATE parses SET parse = ? WHERE key = ?", (other, cache_key(text, "p", "1")))
    with ParseCache(tmp_path, "p", "1") as cache:
        with pytest.raises(CourseInputError) as error:
            cache.get(text)
    line = str(error.value)
    assert line.startswith(f"parse cache {tmp_path / 'parses.sqlite'}, entry for {text!r}: its parse is not the one "
                           "written under its key") and "delete the cache file" in line and "\n" not in line
    # a cache written before entries carried a digest: its entries are misses, parsed again and written with one
    old = tmp_path / "old"
    old.mkdir()
    with sqlite3.connect(old / "parses.sqlite") as db:
        db.execute("CREATE TABLE parses (key TEXT PRIMARY KEY, parser TEXT NOT NULL, version TEXT NOT NULL, "
                   "text TEXT NOT NULL, parse TEXT NOT NULL)")
        db.execute("INSERT INTO parses VALUES (?, ?, ?, ?, ?)", (cache_key(text, "p", "1"), "p", "1", text, other))
    db.close()
    with ParseCache(old, "p", "1") as cache:
        assert cache.get(text) is None and len(cache) == 1
        cache.put_many([parse])
        assert cache.get(text) == parse and len(cache) == 1
