"""Parser noise: trees made worse on purpose, to measure how much a model relies on them.

:func:`perturb_heads` re-attaches each non-root word, with probability ``p``, to a random
other word that is not its current head and not one of its descendants (so the result is
still one tree with the same root); :func:`noisy_parses` applies it to every parse of a
corpus, the same way for a sentence wherever it occurs.
"""

from __future__ import annotations

import random
from typing import Mapping, Sequence

from lessons_lib.syntax.parser import Parse
from lessons_lib.syntax.trees import ROOT_HEAD, validate_heads
from lessons_lib.validation import check_probability

__all__ = ["perturb_heads", "noisy_parses"]


def _descendants(heads: Sequence[int], node: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for i, h in enumerate(heads):
        children.setdefault(h, []).append(i)
    out, stack = set(), [node]
    while stack:
        n = stack.pop()
        out.add(n)
        stack.extend(children.get(n, []))
    return out


def perturb_heads(heads: Sequence[int], probability: float, rng: random.Random) -> list[int]:
    """Parser noise: each non-root word, with ``probability``, gets a new random head.

    The new head is drawn uniformly among the words that are neither the word itself, nor
    its current head, nor one of its descendants — attaching a word below itself would
    make a cycle — so the result is again one tree with the same root. A word with no
    such candidate keeps its head.

    Args:
        heads: a valid head array (0-based, root = -1).
        probability: in ``[0, 1]``.
        rng: the random source (seeded by the caller).
    """
    check_probability(probability, "`probability` (parser noise)")
    heads = validate_heads(heads)
    for word in range(len(heads)):
        if heads[word] == ROOT_HEAD or rng.random() >= probability:
            continue
        banned = _descendants(heads, word) | {heads[word]}
        candidates = [j for j in range(len(heads)) if j not in banned]
        if candidates:
            heads[word] = rng.choice(candidates)
    return validate_heads(heads, name="perturbed heads")


def noisy_parses(parses: Mapping[str, Parse], probability: float, seed: int = 0) -> tuple[dict[str, Parse], float]:
    """Every parse with :func:`perturb_heads` applied; returns ``(parses, share of words re-attached)``.

    The noise of a sentence depends only on ``(seed, text)``, so a sentence gets the same
    noisy tree in train, dev and test and in every run.
    """
    check_probability(probability, "`probability` (parser noise)")
    out, changed, total = {}, 0, 0
    for text, parse in parses.items():
        rng = random.Random(f"{seed}\0{text}")
        heads = perturb_heads(parse.heads, probability, rng) if probability > 0 else list(parse.heads)
        changed += sum(a != b for a, b in zip(heads, parse.heads))
        total += len(heads)
        out[text] = Parse(parse.text, parse.words, tuple(heads), parse.deprels, parse.removed_spaces)
    return out, (changed / total if total else 0.0)
