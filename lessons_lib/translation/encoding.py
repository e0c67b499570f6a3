"""From translation pairs to tensors: tokens, vocabularies and batches.

The source is read character by character, like the course's pair classifier (whitespace left
out, no special tokens), so a tree over words maps onto it with
:func:`lessons_lib.syntax.buckets.char_word_index`. The target is English words and punctuation
(:func:`english_tokens`); a hypothesis is written back with one space between tokens
(:func:`detokenize`), which sacreBLEU's default tokenizer splits again the same way.

Both vocabularies are :class:`lessons_lib.pairs.vocab.Vocabulary` objects: ids 0–3 are
``[PAD]``, ``[UNK]``, ``[CLS]`` and ``[SEP]``; on the target side ``[CLS]`` serves as the
beginning of a sentence (:data:`BOS_ID`) and ``[SEP]`` as its end (:data:`EOS_ID`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

import torch

from lessons_lib.errors import CourseInputError
from lessons_lib.pairs.vocab import SPECIAL_TOKENS, Vocabulary
from lessons_lib.translation.pairs_folder import TranslationPair

__all__ = ["BOS_ID", "EOS_ID", "PAD_ID", "english_tokens", "detokenize", "target_vocabulary",
           "TranslationBatch", "encode_batch"]

PAD_ID = Vocabulary.pad_id
BOS_ID = Vocabulary.cls_id
EOS_ID = Vocabulary.sep_id
# A word (letters, digits, inner apostrophes as in "don't" or "student's") or one other character.
_ENGLISH_TOKEN = re.compile(r"\w+(?:'\w*)*|[^\w\s]")


def english_tokens(text: str) -> list[str]:
    """``"The student's teacher."`` → ``["The", "student's", "teacher", "."]``."""
    return _ENGLISH_TOKEN.findall(text)


def detokenize(tokens: Sequence[str]) -> str:
    """Tokens joined by single spaces (what the metric reads as the hypothesis)."""
    return " ".join(tokens)


def target_vocabulary(references: Sequence[str]) -> Vocabulary:
    """The English tokens of ``references`` (the training split), most frequent first, ties by token."""
    counts: dict[str, int] = {}
    for reference in references:
        for token in english_tokens(reference):
            counts[token] = counts.get(token, 0) + 1
    return Vocabulary([*SPECIAL_TOKENS, *sorted(counts, key=lambda token: (-counts[token], token))])


@dataclass
class TranslationBatch:
    """One batch of pairs, padded.

    Attributes:
        source_ids: ``(B, S)`` long character ids; ``source_mask`` ``(B, S)`` bool, ``True`` at real ones.
        target_in: ``(B, T)`` the decoder's input, ``BOS`` + the reference tokens.
        target_out: ``(B, T)`` what each position must predict, the reference tokens + ``EOS``.
        target_mask: ``(B, T)`` bool, ``True`` at real positions of both.
        buckets: ``(B, S, S)`` tree-distance bucket ids of the source (``None`` without a bias).
        indices: the pairs' positions in the list the batch was drawn from.
    """

    source_ids: torch.Tensor
    source_mask: torch.Tensor
    target_in: torch.Tensor
    target_out: torch.Tensor
    target_mask: torch.Tensor
    buckets: torch.Tensor | None
    indices: list[int]


def _padded(rows: Sequence[Sequence[int]]) -> torch.Tensor:
    out = torch.full((len(rows), max(len(row) for row in rows)), PAD_ID, dtype=torch.long)
    for i, row in enumerate(rows):
        out[i, : len(row)] = torch.as_tensor(row, dtype=torch.long)
    return out


def encode_batch(pairs: Sequence[TranslationPair], indices: Sequence[int], source_vocab: Vocabulary,
                 target_vocab: Vocabulary, buckets: torch.Tensor | None = None) -> TranslationBatch:
    """The batch of ``pairs[i]`` for ``i`` in ``indices`` (``buckets``: already made for them)."""
    if not indices:
        raise CourseInputError("a batch needs at least one pair")
    chosen = [pairs[i] for i in indices]
    sources = [source_vocab.encode(pair.source) for pair in chosen]
    if any(not row for row in sources):
        empty = next(pair.id for pair, row in zip(chosen, sources) if not row)
        raise CourseInputError(f"pair {empty!r}: the source has no characters")
    targets = [[target_vocab.token_id(token) for token in english_tokens(pair.reference)] for pair in chosen]
    source_ids = _padded(sources)
    target_in, target_out = _padded([[BOS_ID, *row] for row in targets]), _padded([[*row, EOS_ID] for row in targets])
    return TranslationBatch(source_ids, source_ids != PAD_ID, target_in, target_out, target_out != PAD_ID,
                            buckets, list(indices))

