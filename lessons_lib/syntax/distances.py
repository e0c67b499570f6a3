"""Tree distances between the words of a dependency tree.

The distance between words ``i`` and ``j`` is the number of arcs on the path between
them in the tree (arcs taken as undirected): 0 for a word and itself, 1 for a word and its
head, 2 for two dependents of the same head, and so on.

Two implementations, equal on every tree (property tests check it):

- :func:`lca_distance_reference` / :func:`distance_matrix_reference` — the course's pairwise
  LCA walk, kept readable as the reference: lift the deeper word until both are at the same depth, then
  walk both up together until they meet at their lowest common ancestor (LCA); the
  distance is the number of steps taken. Pure Python, one pair at a time: O(n² · depth)
  for a sentence's matrix.
- :func:`tree_distances` / :func:`batch_tree_distances` — vectorised and batched, used
  everywhere else. Build the **ancestor matrix** ``A[i, k] = 1`` when ``k`` is ``i`` or
  one of its ancestors. The ancestors that ``i`` and ``j`` share are the path from the
  root down to their LCA, so ``(A Aᵀ)[i, j] = depth(lca(i, j)) + 1``, and with
  ``depth(i) + 1 = A[i].sum()``::

      d(i, j) = depth(i) + depth(j) − 2 · depth(lca(i, j))

  which is one batched matrix product for a whole batch of sentences.

Head arrays follow the course's convention: 0-based, root = -1
(:mod:`lessons_lib.syntax.trees`).
"""

from __future__ import annotations

import itertools
from typing import Sequence

import numpy
import torch

from lessons_lib.errors import FieldName, input_error
from lessons_lib.syntax.trees import ROOT_HEAD, depths, validate_heads

PAD_DISTANCE = -1


# --------------------------------------------------------------------------------------
# Reference: the pairwise LCA walk (readable, slow).
# --------------------------------------------------------------------------------------
def lca_reference(heads: Sequence[int], depth: Sequence[int], i: int, j: int) -> int:
    """Lowest common ancestor of words ``i`` and ``j``: lift the deeper one, then walk both up."""
    while depth[i] > depth[j]:
        i = heads[i]
    while depth[j] > depth[i]:
        j = heads[j]
    while i != j:
        i = heads[i]
        j = heads[j]
    return i


def lca_distance_reference(heads: Sequence[int], i: int, j: int, depth: Sequence[int] | None = None) -> int:
    """Tree distance between words ``i`` and ``j`` by the LCA walk (``heads`` 0-based, root = -1)."""
    if depth is None:
        depth = depths(heads)
    ancestor = lca_reference(heads, depth, i, j)
    return depth[i] + depth[j] - 2 * depth[ancestor]


def distance_matrix_reference(heads: Sequence[int], validate: bool = True) -> list[list[int]]:
    """All pairwise distances of one tree, by the LCA walk: an ``n × n`` list of lists.

    ``validate=False`` skips :func:`validate_heads` (for trees already validated, and for
    timing the algorithm itself).
    """
    heads = validate_heads(heads) if validate else list(heads)
    depth = depths(heads)
    n = len(heads)
    return [[lca_distance_reference(heads, i, j, depth) for j in range(n)] for i in range(n)]


# --------------------------------------------------------------------------------------
# Vectorised: ancestor matrices and one batched matrix product.
# --------------------------------------------------------------------------------------
def pad_heads(heads_batch: Sequence[Sequence[int]], validate: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
    """Stack head arrays into a padded tensor.

    Returns:
        ``(heads, lengths)``: heads ``(B, N)`` long (``N`` = longest sentence; padding
        positions hold -1 and are ignored via ``lengths``), lengths ``(B,)`` long.
    """
    if len(heads_batch) == 0:
        raise input_error(FieldName("heads_batch"), " is empty")
    if validate:
        heads_batch = [validate_heads(h, name=f"`heads_batch`[{b}]") for b, h in enumerate(heads_batch)]
    # Flatten once (numpy.fromiter reads Python ints fast) and scatter into the padded
    # array: far cheaper than padding Python lists or filling a tensor row by row.
    lengths = numpy.fromiter(map(len, heads_batch), dtype=numpy.int64, count=len(heads_batch))
    flat = numpy.fromiter(itertools.chain.from_iterable(heads_batch), dtype=numpy.int64, count=int(lengths.sum()))
    valid = numpy.arange(int(lengths.max()))[None, :] < lengths[:, None]
    out = numpy.full(valid.shape, ROOT_HEAD, dtype=numpy.int64)
    out[valid] = flat
    return torch.from_numpy(out), torch.from_numpy(lengths)


def ancestor_matrix(heads: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """``A[b, i, k]`` is True when word ``k`` is word ``i`` or one of its ancestors.

    Args:
        heads: ``(B, N)`` long, 0-based heads, root = -1 (padding entries are ignored).
        lengths: ``(B,)`` number of real words per sentence.

    Returns:
        ``(B, N, N)`` bool; rows and columns of padding positions are all False.
    """
    B, N = heads.shape
    valid = torch.arange(N)[None, :] < lengths[:, None]  # (B, N)
    # Point the root (and padding) at a sentinel column N whose own head is itself, so
    # walking up never leaves the tensor and finished walks just stay at the sentinel.
    parent = torch.full((B, N + 1), N, dtype=torch.long)
    parent[:, :N] = heads.masked_fill(~valid | (heads < 0), N)
    current = torch.arange(N).expand(B, N).masked_fill(~valid, N)
    A = torch.zeros(B, N, N + 1, dtype=torch.bool)
    for _ in range(N + 1):  # a tree of N words has depth < N; one more step proves it
        if bool((current == N).all()):
            break
        A.scatter_(2, current.unsqueeze(-1), True)
        current = parent.gather(1, current)
    else:
        raise input_error(FieldName("heads"), " contain a cycle: walking up never reached the root")
    return A[:, :, :N]


def batch_tree_distances(
    heads: torch.Tensor | Sequence[Sequence[int]], lengths: torch.Tensor | None = None, validate: bool = True
) -> torch.Tensor:
    """Pairwise tree distances for a batch of sentences.

    Args:
        heads: a list of head arrays, or an already padded ``(B, N)`` long tensor with
            ``lengths``.
        lengths: ``(B,)`` real lengths when ``heads`` is a tensor.
        validate: check every head array of a list with :func:`validate_heads` first
            (skip it for trees already validated, e.g. by the parser adapter; a cycle is
            still detected by :func:`ancestor_matrix`).

    Returns:
        ``(B, N, N)`` long distances; :data:`PAD_DISTANCE` (-1) where ``i`` or ``j`` is padding.
    """
    if not isinstance(heads, torch.Tensor):
        heads, lengths = pad_heads(heads, validate=validate)
    elif lengths is None:
        raise input_error(FieldName("lengths"), " is required when `heads` is a tensor")
    A = ancestor_matrix(heads, lengths).to(torch.float32)
    size = A.sum(-1)  # (B, N) = depth + 1
    shared = A @ A.transpose(1, 2)  # (B, N, N) = depth(lca) + 1
    # Small integers are exact in float32, so the conversion back to long loses nothing.
    dist = (size[:, :, None] + size[:, None, :] - 2 * shared).to(torch.long)
    valid = torch.arange(heads.shape[1])[None, :] < lengths[:, None]
    return dist.masked_fill_(~(valid[:, :, None] & valid[:, None, :]), PAD_DISTANCE)


def tree_distances(heads: Sequence[int]) -> torch.Tensor:
    """Pairwise tree distances of one sentence: ``(n, n)`` long (vectorised)."""
    return batch_tree_distances([heads])[0]
