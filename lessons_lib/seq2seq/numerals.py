"""Chinese numerals → Arabic digits (``三百零五`` → ``305``): the seq2seq lesson's toy task.

A transduction task small enough to train in seconds on a CPU, generated here by
:func:`chinese_numeral` (never shipped as data). :class:`SymbolTable` turns the strings of
either side into padded id tensors, with ``<pad>``/``<bos>``/``<eos>`` for the decoder.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Iterable, Sequence

import torch

from lessons_lib.errors import CourseInputError, FieldName, input_error
from lessons_lib.validation import check_int

__all__ = [
    "DIGITS",
    "chinese_numeral",
    "SymbolTable",
    "NumeralSplit",
    "numeral_split",
]

DIGITS = "零一二三四五六七八九"
_SMALL_UNITS = ("", "十", "百", "千")  # within a group of four digits
_LARGE_UNITS = ("", "万", "亿")  # one per group of four digits
MAX_NUMERAL = 10**12 - 1


def _group_reading(group: int) -> str:
    """Reading of 0 < group < 10000 without leading-zero handling: 3050 → 三千零五十."""
    out: list[str] = []
    zero_pending = False
    for power in (3, 2, 1, 0):
        digit = group // 10**power % 10
        if digit == 0:
            zero_pending = bool(out)  # a zero only matters between two non-zero digits
            continue
        if zero_pending:
            out.append("零")
            zero_pending = False
        out.append(DIGITS[digit] + _SMALL_UNITS[power])
    return "".join(out)


def chinese_numeral(n: int) -> str:
    """The standard (mainland, written) Chinese reading of ``0 <= n < 10**12``.

    Conventions: ``零`` once for any run of zeros between non-zero digits (``1005`` →
    ``一千零五``), none at the end (``300`` → ``三百``); ``十`` without ``一`` at the very
    start (``15`` → ``十五``) but ``一十`` inside (``115`` → ``一百一十五``); always ``二``,
    never the colloquial ``两``.
    """
    check_int(n, FieldName("n"), minimum=0, maximum=MAX_NUMERAL)
    if n == 0:
        return DIGITS[0]
    groups = [n // 10 ** (4 * i) % 10**4 for i in range(3)]  # low to high
    out: list[str] = []
    need_zero = False
    for index in (2, 1, 0):
        group = groups[index]
        if group == 0:
            need_zero = bool(out)
            continue
        # A gap before this group (a zero group, or a group below 1000) reads 零.
        if out and (need_zero or group < 1000):
            out.append("零")
        out.append(_group_reading(group) + _LARGE_UNITS[index])
        need_zero = False
    text = "".join(out)
    if text.startswith("一十"):
        text = text[1:]
    return text


class SymbolTable:
    """Characters ↔ ids with three special tokens: ``<pad>`` = 0, ``<bos>`` = 1, ``<eos>`` = 2.

    Args:
        chars: the ordinary characters, each once.
    """

    PAD, BOS, EOS = "<pad>", "<bos>", "<eos>"
    pad_id, bos_id, eos_id = 0, 1, 2

    def __init__(self, chars: Iterable[str]) -> None:
        chars = list(chars)
        if len(set(chars)) != len(chars) or any(len(c) != 1 for c in chars):
            raise input_error(FieldName("chars"), f" must be distinct single characters, got {chars!r}")
        self.itos = [self.PAD, self.BOS, self.EOS, *chars]
        self.stoi = {token: index for index, token in enumerate(self.itos)}

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, text: str, bos: bool = False, eos: bool = False) -> list[int]:
        """Ids of the characters of ``text``, optionally wrapped in ``<bos>`` / ``<eos>``."""
        unknown = [c for c in text if c not in self.stoi]
        if unknown:
            raise CourseInputError(f"characters {unknown!r} of {text!r} are not in the vocabulary")
        ids = [self.stoi[c] for c in text]
        return [self.bos_id] * bos + ids + [self.eos_id] * eos

    def decode(self, ids: Sequence[int]) -> str:
        """Characters of ``ids`` up to the first ``<eos>``; ``<pad>`` and ``<bos>`` are skipped."""
        out = []
        for i in (int(x) for x in ids):
            if i == self.eos_id:
                break
            if i not in (self.pad_id, self.bos_id):
                out.append(self.itos[i])
        return "".join(out)

    def batch(self, texts: Sequence[str], bos: bool = False, eos: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
        """Padded ids ``(B, L)`` long and their lengths ``(B,)`` long."""
        if not texts:
            raise input_error(FieldName("texts"), " is empty")
        rows = [self.encode(t, bos, eos) for t in texts]
        lengths = torch.tensor([len(r) for r in rows])
        ids = torch.full((len(rows), int(lengths.max())), self.pad_id, dtype=torch.long)
        for i, row in enumerate(rows):
            ids[i, : len(row)] = torch.tensor(row, dtype=torch.long)
        return ids, lengths


@dataclass(frozen=True)
class NumeralSplit:
    """Train and held-out (numeral, digits) pairs; no number occurs in both."""

    train: list[tuple[str, str]]
    test: list[tuple[str, str]]
    source_vocab: SymbolTable
    target_vocab: SymbolTable


def numeral_split(n_train: int, n_test: int, max_value: int = 99_999, seed: int = 0) -> NumeralSplit:
    """Draw distinct numbers in ``[0, max_value]`` and split them into train and held-out sets.

    Args:
        n_train: training pairs.
        n_test: held-out pairs (numbers never seen in training).
        max_value: the largest number; at most ``10**12 - 1``.
        seed: seed of the draw (a private ``random.Random``; global state is untouched).

    Returns:
        A :class:`NumeralSplit` with the vocabularies of both sides.
    """
    for name, value in (("n_train", n_train), ("n_test", n_test), ("max_value", max_value)):
        check_int(value, FieldName(name))
    if n_train + n_test > max_value + 1:
        raise CourseInputError(
            f"n_train + n_test = {n_train + n_test} distinct numbers do not fit in [0, {max_value}]"
        )
    if max_value > MAX_NUMERAL:
        raise input_error(FieldName("max_value"), f" must be at most {MAX_NUMERAL}, got {max_value}")
    numbers = random.Random(seed).sample(range(max_value + 1), n_train + n_test)
    pairs = [(chinese_numeral(n), str(n)) for n in numbers]
    source_chars = sorted({c for text, _ in pairs for c in text}, key=_numeral_char_order)
    return NumeralSplit(
        train=pairs[:n_train],
        test=pairs[n_train:],
        source_vocab=SymbolTable(source_chars),
        target_vocab=SymbolTable("0123456789"),
    )


def _numeral_char_order(char: str) -> int:
    order = DIGITS + "十百千万亿"
    return order.index(char)
