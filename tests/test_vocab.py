"""Character vocabulary, pair encoding (the lesson's 23- and 20-position examples) and batching."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from lessons_lib.errors import CourseInputError
from lessons_lib.pairs.data import PairExample
from lessons_lib.pairs.encoding import collate_pairs, encode_pair, make_batches, truncate_pair
from lessons_lib.pairs.vocab import SPECIAL_TOKENS, Vocabulary, tokenize_chars


@pytest.fixture()
def vocab() -> Vocabulary:
    return Vocabulary.build(["什么花一年四季都开", "什么花一年四季都是开的", "电脑怎么录像？", "如何在计算机上录视频"])


def test_special_tokens_come_first(vocab: Vocabulary) -> None:
    assert vocab.tokens[:4] == list(SPECIAL_TOKENS)
    assert (vocab.pad_id, vocab.unk_id, vocab.cls_id, vocab.sep_id) == (0, 1, 2, 3)


def test_order_is_frequency_then_code_point() -> None:
    vocab = Vocabulary.build(["乙甲甲", "丙乙甲"])
    assert vocab.tokens[4:] == ["甲", "乙", "丙"]  # 3, 2, 1 occurrences
    assert Vocabulary.build(["b a", "a b"]).tokens[4:] == ["a", "b"]  # tie broken by code point, space dropped


def test_unknown_character_maps_to_unk(vocab: Vocabulary) -> None:
    assert vocab.encode("花X") == [vocab.token_id("花"), vocab.unk_id]
    assert tokenize_chars(" 花 \t开") == ["花", "开"]


def test_min_freq_and_bad_arguments() -> None:
    assert "丙" not in Vocabulary.build(["甲甲丙", "甲"], min_freq=2)
    with pytest.raises(CourseInputError, match="min_freq"):
        Vocabulary.build(["甲"], min_freq=0)
    with pytest.raises(CourseInputError, match="must start with"):
        Vocabulary(["甲", "[PAD]"])
    with pytest.raises(CourseInputError, match="unique"):
        Vocabulary([*SPECIAL_TOKENS, "甲", "甲"])
    with pytest.raises(CourseInputError, match="outside the vocabulary"):
        Vocabulary(list(SPECIAL_TOKENS)).decode([7])


def test_save_load_round_trip(tmp_path: Path, vocab: Vocabulary) -> None:
    loaded = Vocabulary.load(vocab.save(tmp_path / "vocab.json"))
    assert loaded.tokens == vocab.tokens
    assert loaded.fingerprint() == vocab.fingerprint()
    assert loaded.encode("什么花生") == vocab.encode("什么花生")


def test_mismatch_is_a_clear_error(tmp_path: Path, vocab: Vocabulary) -> None:
    other = Vocabulary.build(["完全不同的词表"])
    with pytest.raises(CourseInputError, match="vocabulary mismatch: checkpoint x"):
        other.check_fingerprint(vocab.fingerprint(), where="checkpoint x")
    path = vocab.save(tmp_path / "vocab.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    data["tokens"].append("新")  # edited by hand: fingerprint no longer matches
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(CourseInputError, match="fingerprint"):
        Vocabulary.load(path)
    (tmp_path / "bad.json").write_text("{", encoding="utf-8")
    with pytest.raises(CourseInputError, match="not valid JSON"):
        Vocabulary.load(tmp_path / "bad.json")


def test_the_23_position_example(vocab: Vocabulary) -> None:
    pair = encode_pair(vocab, "什么花一年四季都开", "什么花一年四季都是开的")
    assert len(pair) == 23
    assert list(pair.segment_ids) == [0] * 11 + [1] * 12
    tokens = vocab.decode(pair.token_ids)
    assert tokens[0] == "[CLS]" and tokens[10] == "[SEP]" and tokens[22] == "[SEP]"
    assert "".join(tokens[1:10]) == "什么花一年四季都开"
    assert "".join(tokens[11:22]) == "什么花一年四季都是开的"
    assert vocab.unk_id not in pair.token_ids


def test_the_20_position_example(vocab: Vocabulary) -> None:
    pair = encode_pair(vocab, "电脑怎么录像？", "如何在计算机上录视频")
    assert len(pair) == 20
    assert list(pair.segment_ids) == [0] * 9 + [1] * 11


def test_truncation_keeps_both_sentences() -> None:
    a, b = truncate_pair(list(range(10)), [100, 101], 6)
    assert (a, b) == ([0, 1, 2, 3], [100, 101])
    a, b = truncate_pair([1, 2, 3], [4, 5, 6, 7], 4)
    assert (a, b) == ([1, 2], [4, 5])
    a, b = truncate_pair(list(range(50)), list(range(50)), 2)
    assert len(a) == 1 and len(b) == 1
    with pytest.raises(CourseInputError, match="max_tokens"):
        truncate_pair([1], [2], 1)


def test_encode_pair_truncates_to_max_len(vocab: Vocabulary) -> None:
    pair = encode_pair(vocab, "什么花一年四季都开" * 3, "电脑", max_len=12)
    assert len(pair) == 12
    assert pair.token_ids[-3:] == (vocab.token_id("电"), vocab.token_id("脑"), vocab.sep_id)
    assert list(pair.segment_ids).count(1) == 3  # 电 脑 [SEP] survive
    with pytest.raises(CourseInputError, match="text_b"):
        encode_pair(vocab, "花", "   ")
    with pytest.raises(CourseInputError, match="max_len"):
        encode_pair(vocab, "花", "开", max_len=4)


def test_collate_pads_to_longest_pair(vocab: Vocabulary) -> None:
    short = encode_pair(vocab, "电脑", "录像")
    long = encode_pair(vocab, "什么花一年四季都开", "什么花一年四季都是开的")
    batch = collate_pairs([short, long], [0, 1])
    assert batch.token_ids.shape == batch.segment_ids.shape == batch.key_mask.shape == (2, 23)
    assert batch.key_mask.dtype == torch.bool and batch.token_ids.dtype == torch.long
    assert batch.key_mask.sum(1).tolist() == [7, 23]
    assert batch.token_ids[0, 7:].eq(0).all() and batch.segment_ids[0, 7:].eq(0).all()
    assert batch.labels.tolist() == [0, 1]
    with pytest.raises(CourseInputError, match="empty"):
        collate_pairs([])
    with pytest.raises(CourseInputError, match="labels"):
        collate_pairs([short], [0, 1])


def test_make_batches_order_swaps_and_extras(vocab: Vocabulary) -> None:
    examples = [PairExample("电脑" * (i % 3 + 1), "录像", i % 2) for i in range(10)]
    def run(seed):
        return [b.token_ids.tolist() for b in make_batches(examples, vocab, 4, shuffle=True, seed=seed)]
    assert run(1) == run(1)
    assert [len(b) for b in make_batches(examples, vocab, 4)] == [4, 4, 2]
    swapped = next(make_batches(examples[:1], vocab, 1, swap_probability=1.0))
    assert swapped.pairs[0].text_a == "录像" and swapped.labels.tolist() == [0]
    with_extra = next(make_batches(examples, vocab, 3, extras_fn=lambda pairs, b: {"n": torch.full((len(b),), 7)}))
    assert with_extra.extras["n"].tolist() == [7, 7, 7]
    with pytest.raises(CourseInputError, match="batch_size"):
        next(make_batches(examples, vocab, 0))


def test_a_vocabulary_file_that_is_not_one_is_named(tmp_path: Path) -> None:
    for content in (b"\xff\xfe", b'{"format": "lessons-char-vocab/1", "tokens": [1, 2]}', b"[]"):
        path = tmp_path / "vocab.json"
        path.write_bytes(content)
        with pytest.raises(CourseInputError, match="vocab.json"):
            Vocabulary.load(path)
