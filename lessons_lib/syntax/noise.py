"""Parser noise: trees made worse on purpose, to measure how much a model relies on them.

:func:`perturb_heads` re-attaches each non-root word, with probability ``p``, to a random
other word that is not its current head and not one of its descendants (so the result is
still one tree with the same root); :func:`noisy_parses` applies it to every parse of a
corpus, the same way for a sentence wherever it occurs. :func:`scrambled_parses` is the
control without any syntax at all: random words (the sentence's own word lengths, shuffled)
under a random tree (:func:`random_heads`).
"""

from __future__ import annotations

import random
from typing import Mapping, Sequence

from lessons_lib.syntax.parser import Parse
from lessons_lib.syntax.trees import ROOT_HEAD, validate_heads
from lessons_lib.validation import check_probability

__all__ = ["perturb_heads", "noisy_parses", "random_heads", "scrambled_parses"]


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


def random_heads(rng: random.Random, n: int) -> tuple[int, ...]:
    """A random tree of ``n`` words (0-based heads, root = -1): the words in random order, each
    attached to a word placed before it (a random recursive tree)."""
    order = list(range(n))
    rng.shuffle(order)
    heads = [ROOT_HEAD] * n
    for position, word in enumerate(order[1:], start=1):
        heads[word] = order[rng.randrange(position)]
    return tuple(heads)


def _boundaries(lengths: Sequence[int]) -> set[int]:
    """The character offsets where one word ends and the next begins."""
    cuts, offset = set(), 0
    for length in lengths[:-1]:
        offset += length
        cuts.add(offset)
    return cuts


def scrambled_parses(parses: Mapping[str, Parse], seed: int = 0) -> tuple[dict[str, Parse], float]:
    """The no-syntax control: every sentence re-cut into words and given a random tree.

    A sentence's word lengths are shuffled and laid over its characters again, so the corpus
    keeps its exact word-length distribution and every sentence its number of words, while
    the boundaries move wherever the lengths differ; :func:`random_heads` then draws the tree.
    Like :func:`noisy_parses`, a sentence's result depends only on ``(seed, text)``, never on
    which other sentences are in ``parses``.

    Returns:
        ``(parses, share of the original word boundaries that are still boundaries)``. The share
        is not zero: a sentence whose words all have one length keeps every boundary.
    """
    out, kept, total = {}, 0, 0
    for text, parse in parses.items():
        rng = random.Random(f"scramble\0{seed}\0{text}")
        characters = "".join(parse.words)
        lengths = [len(w) for w in parse.words]
        rng.shuffle(lengths)
        words, offset = [], 0
        for length in lengths:
            words.append(characters[offset:offset + length])
            offset += length
        before = _boundaries([len(w) for w in parse.words])
        kept += len(before & _boundaries(lengths))
        total += len(before)
        heads = random_heads(rng, len(words))
        deprels = tuple("root" if h == ROOT_HEAD else "dep" for h in heads)
        out[text] = Parse(parse.text, tuple(words), heads, deprels, parse.removed_spaces)
    return out, (kept / total if total else 1.0)
