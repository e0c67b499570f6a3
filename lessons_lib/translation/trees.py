"""Where a translation model's source trees come from, and the bucket matrices they give.

Trees are kept per pair id, not per text: in the course corpus one string can carry two trees
(its two readings), which is exactly what makes the tree decide the translation there.

- ``"gold"``: the folder's ``trees.conllu`` (:data:`lessons_lib.translation.pairs_folder.TREES_FILE`);
- ``"parser"``: a spaCy parser's trees (the course's parser by default), one per distinct text;
- ``"random"``: a random tree over the same words as another source's tree (the control that
  keeps the segmentation and throws the syntax away), drawn from a seed;
- ``"scrambled"``: the words re-cut at random and a random tree over them (the control without
  any syntax or segmentation; :func:`lessons_lib.syntax.noise.scrambled_parses`);
- ``"sequence"``: the same words in a line, each headed by the word before it, so that tree
  distance *is* distance in words (relative position by word: only nearness, no syntax).
"""

from __future__ import annotations

import random
from typing import Mapping, Sequence

import torch

from lessons_lib.errors import CourseInputError
from lessons_lib.syntax.buckets import BucketScheme, batch_sentence_distance_buckets
from lessons_lib.syntax.noise import random_heads, scrambled_parses
from lessons_lib.syntax.parser import Parse, parse_texts
from lessons_lib.syntax.treebank import read_conllu
from lessons_lib.translation.pairs_folder import TREES_FILE, TranslationData, TranslationPair

__all__ = ["TREE_SOURCES", "DERIVED_TREES", "gold_trees", "parser_trees", "random_trees", "sequence_trees",
           "derived_trees", "source_buckets"]

TREE_SOURCES = ("gold", "parser", "random", "scrambled", "sequence")
# The controls: drawn from, or laid over the words of, the gold (else the parser's) trees.
DERIVED_TREES = ("random", "scrambled", "sequence")


def _check_spelling(pair: TranslationPair, parse: Parse, where: str) -> Parse:
    spelled = "".join(ch for word in parse.words for ch in word if not ch.isspace())
    if spelled != "".join(ch for ch in pair.source if not ch.isspace()):
        raise CourseInputError(f"{where}: the tree of {pair.id!r} spells {spelled!r}, not its source {pair.source!r}")
    return parse


def gold_trees(data: TranslationData, pairs: Sequence[TranslationPair]) -> dict[str, Parse]:
    """The gold tree of every pair in ``pairs``, from the folder's ``trees.conllu``."""
    path = data.trees_path
    if path is None:
        raise CourseInputError(f"{data.folder}: no {TREES_FILE}, so no gold trees (use parser trees)")
    sentences = {sentence.sent_id: sentence for sentence in read_conllu(path)}
    trees = {}
    for pair in pairs:
        sentence = sentences.get(pair.id)
        if sentence is None:
            raise CourseInputError(f"{path}: no tree with sent_id {pair.id!r}")
        parse = Parse(pair.source, sentence.words, sentence.heads, sentence.deprels)
        trees[pair.id] = _check_spelling(pair, parse, str(path))
    return trees


def parser_trees(nlp, pairs: Sequence[TranslationPair]) -> dict[str, Parse]:
    """The parser's tree of every pair's source (each distinct text parsed once), checked to spell
    its source (whitespace aside): the buckets are laid over the source's characters."""
    texts = list(dict.fromkeys(pair.source for pair in pairs))
    by_text = dict(zip(texts, parse_texts(nlp, texts)))
    return {pair.id: _check_spelling(pair, by_text[pair.source], "the parser") for pair in pairs}


def random_trees(trees: Mapping[str, Parse], seed: int) -> dict[str, Parse]:
    """A random tree over each tree's words (ids in sorted order, so the draw does not depend on
    the mapping's order)."""
    rng = random.Random(seed)
    out = {}
    for pair_id in sorted(trees):
        parse = trees[pair_id]
        heads = random_heads(rng, len(parse.words))
        deprels = tuple("root" if head == -1 else "dep" for head in heads)
        out[pair_id] = Parse(parse.text, parse.words, heads, deprels)
    return out


def sequence_trees(trees: Mapping[str, Parse]) -> dict[str, Parse]:
    """Each tree's words in a line (word ``i`` headed by word ``i − 1``): the tree distance of two
    words is then ``|i − j|``, relative position counted in words, and a characters' bucket of
    "same word" means what it means on a real tree."""
    out = {}
    for pair_id, parse in trees.items():
        heads = tuple(range(-1, len(parse.words) - 1))
        deprels = ("root",) + ("dep",) * (len(parse.words) - 1)
        out[pair_id] = Parse(parse.text, parse.words, heads, deprels)
    return out


def derived_trees(kind: str, trees: Mapping[str, Parse], seed: int) -> tuple[dict[str, Parse], float | None]:
    """A control's trees from ``trees`` (see :data:`DERIVED_TREES`), and for ``"scrambled"`` the share
    of word boundaries the re-cut segmentation keeps (``None`` for the others)."""
    if kind == "random":
        return random_trees(trees, seed), None
    if kind == "scrambled":
        return scrambled_parses(trees, seed)
    if kind == "sequence":
        return sequence_trees(trees), None
    raise CourseInputError(f"trees {kind!r} are not a control's; choose one of {', '.join(DERIVED_TREES)}")


def source_buckets(pairs: Sequence[TranslationPair], indices: Sequence[int], trees: Mapping[str, Parse],
                   scheme: BucketScheme) -> torch.Tensor:
    """``(B, S, S)`` bucket ids of the sources of ``pairs[i]``, ``i`` in ``indices`` (``-1`` at padding)."""
    missing = [pairs[i].id for i in indices if pairs[i].id not in trees]
    if missing:
        raise CourseInputError(f"no tree for the pairs {missing[:5]}")
    return batch_sentence_distance_buckets([(trees[pairs[i].id].words, trees[pairs[i].id].heads) for i in indices],
                                           scheme)
