"""Generated toy tasks: Chinese numerals and digit-string reversal."""

from __future__ import annotations

import pytest
import torch

from lessons_lib.errors import CourseInputError
from lessons_lib.seq2seq.numerals import SymbolTable, chinese_numeral, numeral_split
from lessons_lib.transformer.reversal import reversal_batch


@pytest.mark.parametrize(
    "n, text",
    [
        (0, "零"), (7, "七"), (10, "十"), (15, "十五"), (20, "二十"), (100, "一百"), (101, "一百零一"),
        (110, "一百一十"), (305, "三百零五"), (1005, "一千零五"), (1010, "一千零一十"), (1200, "一千二百"),
        (10000, "一万"), (10010, "一万零一十"), (10500, "一万零五百"), (100010, "十万零一十"),
        (110000, "十一万"), (1000000, "一百万"), (20000500, "二千万零五百"), (100000001, "一亿零一"),
        (123456789, "一亿二千三百四十五万六千七百八十九"), (1000000000, "十亿"),
    ],
)
def test_chinese_numerals(n, text):
    assert chinese_numeral(n) == text


def _value(text: str) -> int:
    """An independent reader of the numerals (parses the text back), for a round-trip test."""
    digits = {c: i for i, c in enumerate("零一二三四五六七八九")}
    units = {"十": 10, "百": 100, "千": 1000}
    total, section, number = 0, 0, 0
    for c in text:
        if c in digits:
            number = digits[c]
        elif c in units:
            section += (number or 1) * units[c]
            number = 0
        else:  # 万 or 亿
            big = 10_000 if c == "万" else 100_000_000
            if big == 100_000_000:
                total = (total + section + number) * big
            else:
                total += (section + number) * big
            section = number = 0
    return total + section + number


def test_numerals_round_trip_and_are_distinct():
    numbers = list(range(0, 120_000, 7)) + [10**8 + 7, 3 * 10**8 + 2 * 10**4, 987654321012]
    texts = [chinese_numeral(n) for n in numbers]
    assert [_value(t) for t in texts] == numbers
    assert len(set(texts)) == len(texts)
    assert not any(t.endswith("零") and t != "零" for t in texts)
    assert not any("零零" in t for t in texts)


@pytest.mark.parametrize("bad", [-1, 10**12, 2.0, True])
def test_numeral_rejects_bad_numbers(bad):
    with pytest.raises(CourseInputError, match="`n`"):
        chinese_numeral(bad)


def test_vocab_round_trip_and_batch():
    vocab = SymbolTable("0123456789")
    assert vocab.encode("305", bos=True, eos=True) == [1, 6, 3, 8, 2]
    ids, lengths = vocab.batch(["305", "7"], eos=True)
    assert ids.tolist() == [[6, 3, 8, 2], [10, 2, 0, 0]] and lengths.tolist() == [4, 2]
    assert vocab.decode([1, 6, 3, 8, 2, 9, 9]) == "305"
    with pytest.raises(CourseInputError, match="not in the vocabulary"):
        vocab.encode("3a")
    with pytest.raises(CourseInputError, match="distinct"):
        SymbolTable("00")
    with pytest.raises(CourseInputError, match="empty"):
        vocab.batch([])


def test_numeral_split_is_disjoint_and_reproducible():
    split = numeral_split(300, 100, max_value=999, seed=3)
    assert len(split.train) == 300 and len(split.test) == 100
    assert not {t for _, t in split.train} & {t for _, t in split.test}
    assert numeral_split(300, 100, max_value=999, seed=3).test == split.test
    assert all(chinese_numeral(int(t)) == s for s, t in split.train)
    for s, _ in split.test:
        split.source_vocab.encode(s)  # every character is covered
    with pytest.raises(CourseInputError, match="do not fit"):
        numeral_split(900, 200, max_value=999)
    with pytest.raises(CourseInputError, match="n_test"):
        numeral_split(10, 0)


def test_reversal_batch():
    inputs, targets, keep = reversal_batch(16, 2, 9, generator=torch.Generator().manual_seed(0))
    assert inputs.shape == targets.shape == keep.shape == (16, 9)
    for row_in, row_out, row_keep in zip(inputs, targets, keep):
        n = int(row_keep.sum())
        assert row_out[:n].tolist() == row_in[:n].flip(0).tolist()
        assert row_in[n:].eq(0).all() and row_out[n:].eq(0).all() and row_in[:n].ge(1).all()
    with pytest.raises(CourseInputError, match="min_len"):
        reversal_batch(4, 5, 3)
