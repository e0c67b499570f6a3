"""Dependency trees as head arrays, and the root-convention pitfall.

The course's convention (used by every function of :mod:`lessons_lib.syntax`):

- a sentence of ``n`` words has a **head array** ``heads`` of length ``n``;
- ``heads[i]`` is the **0-based** index of word ``i``'s head;
- the root's head is **-1** (it has none).

Two other conventions meet the course and are easy to mix up:

- CoNLL-U (UD treebanks): ids are **1-based** and the root's head is **0**.
  :func:`heads_from_conllu` converts.
- spaCy: ``token.head.i`` is 0-based, but the root is its **own** head
  (``token.head is token``). :func:`heads_from_spacy` converts.

Reading a CoNLL-U head column as if it were 0-based shifts every arc by one word and
turns the root marker 0 into "the first word": a silent error that still "looks like" a
tree most of the time. :func:`validate_heads` catches what can be caught.
"""

from __future__ import annotations

from typing import Sequence

from lessons_lib.errors import CourseInputError

ROOT_HEAD = -1


def validate_heads(heads: Sequence[int], name: str = "heads") -> list[int]:
    """Check that ``heads`` (0-based, root = -1) is one tree; return it as a list of ints.

    Checks: at least one word, integer entries, every head in ``[-1, n)``, no word its own
    head, exactly one root, no cycle (every word reaches the root).

    Args:
        heads: length-``n`` sequence of head indices.
        name: how the sentence is named in error messages (file and line, sentence id, text).

    Raises:
        CourseInputError: naming ``name`` and the offending word.
    """
    try:
        heads = [int(h) for h in heads]
    except (TypeError, ValueError):
        raise CourseInputError(f"{name}: head array must hold integers, got {list(heads)!r}") from None
    n = len(heads)
    if n == 0:
        raise CourseInputError(f"{name}: empty sentence (no words, no tree)")
    for i, h in enumerate(heads):
        if not -1 <= h < n:
            raise CourseInputError(
                f"{name}: word {i} has head {h}, outside [-1, {n - 1}] "
                "(0-based heads with root = -1; a CoNLL-U column is 1-based with root = 0)"
            )
        if h == i:
            raise CourseInputError(
                f"{name}: word {i} is its own head (spaCy's root convention?); the course marks the root with -1"
            )
    roots = [i for i, h in enumerate(heads) if h == ROOT_HEAD]
    if len(roots) != 1:
        raise CourseInputError(f"{name}: a tree has exactly one root (head -1), found {len(roots)}: words {roots}")
    # Colour walk: 0 = unseen, 1 = on the current path, 2 = known to reach the root.
    state = [0] * n
    state[roots[0]] = 2
    for start in range(n):
        path = []
        node = start
        while state[node] == 0:
            state[node] = 1
            path.append(node)
            node = heads[node]
        if state[node] == 1:
            cycle = path[path.index(node):]
            raise CourseInputError(f"{name}: the heads form a cycle through words {cycle}")
        for p in path:
            state[p] = 2
    return heads


def heads_from_conllu(ud_heads: Sequence[int]) -> list[int]:
    """CoNLL-U head column (1-based ids, root = 0) → course head array (0-based, root = -1)."""
    return [int(h) - 1 for h in ud_heads]


def heads_to_conllu(heads: Sequence[int]) -> list[int]:
    """Course head array (0-based, root = -1) → CoNLL-U head column (1-based, root = 0)."""
    return [int(h) + 1 for h in heads]


def heads_from_spacy(spacy_heads: Sequence[int]) -> list[int]:
    """spaCy's ``[t.head.i for t in doc]`` (root is its own head) → course head array."""
    return [ROOT_HEAD if int(h) == i else int(h) for i, h in enumerate(spacy_heads)]


def heads_to_spacy(heads: Sequence[int]) -> list[int]:
    """Course head array → spaCy's absolute heads (root points to itself), e.g. for ``Doc(heads=...)``."""
    return [i if int(h) == ROOT_HEAD else int(h) for i, h in enumerate(heads)]


def depths(heads: Sequence[int]) -> list[int]:
    """Depth of every word (root = 0) of a valid head array."""
    heads = list(heads)
    out = [-1] * len(heads)
    for start in range(len(heads)):
        path = []
        node = start
        while node != ROOT_HEAD and out[node] < 0:
            path.append(node)
            node = heads[node]
        base = -1 if node == ROOT_HEAD else out[node]
        for offset, p in enumerate(reversed(path)):
            out[p] = base + 1 + offset
    return out
