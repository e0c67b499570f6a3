"""Tree distances: the pairwise LCA walk (reference) against the vectorised ancestor-matrix version."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from lessons_lib.errors import CourseInputError
from lessons_lib.syntax.distances import (
    PAD_DISTANCE,
    ancestor_matrix,
    batch_tree_distances,
    distance_matrix_reference,
    lca_distance_reference,
    pad_heads,
    tree_distances,
)
from lessons_lib.syntax.trees import depths


@st.composite
def random_trees(draw, max_words: int = 30):
    """A random tree: a random order of the words, each attached to an earlier one."""
    n = draw(st.integers(1, max_words))
    order = draw(st.permutations(list(range(n))))
    heads = [0] * n
    heads[order[0]] = -1
    for k in range(1, n):
        heads[order[k]] = order[draw(st.integers(0, k - 1))]
    return heads


@settings(max_examples=200, deadline=None)
@given(random_trees())
def test_vectorised_equals_reference_on_random_trees(heads):
    assert tree_distances(heads).tolist() == distance_matrix_reference(heads)


@settings(max_examples=50, deadline=None)
@given(st.lists(random_trees(max_words=15), min_size=1, max_size=6))
def test_batched_equals_one_by_one_and_pads_with_minus_one(batch):
    out = batch_tree_distances(batch)
    n = max(len(h) for h in batch)
    assert out.shape == (len(batch), n, n) and out.dtype == torch.long
    for b, heads in enumerate(batch):
        k = len(heads)
        assert out[b, :k, :k].tolist() == distance_matrix_reference(heads)
        assert bool((out[b, k:, :] == PAD_DISTANCE).all()) and bool((out[b, :, k:] == PAD_DISTANCE).all())


@settings(max_examples=100, deadline=None)
@given(random_trees())
def test_distance_is_a_tree_metric(heads):
    d = tree_distances(heads)
    n = len(heads)
    assert bool((d == d.T).all()) and bool((d.diagonal() == 0).all())
    for i, h in enumerate(heads):
        if h >= 0:
            assert int(d[i, h]) == 1
    root = heads.index(-1)
    assert d[root].tolist() == depths(heads)
    # Triangle inequality over all triples (small trees keep this cheap).
    if n <= 12:
        assert bool((d[:, None, :] <= d[:, :, None] + d[None, :, :]).all())


def test_worked_example():
    # 手机 没有 信号 是 什么 原因 ？ with 原因 as the root.
    heads = [1, 5, 1, 5, 5, -1, 5]
    assert lca_distance_reference(heads, 0, 2) == 2  # 手机 → 没有 ← 信号
    assert lca_distance_reference(heads, 0, 4) == 3  # 手机 → 没有 → 原因 ← 什么
    assert int(tree_distances(heads)[0, 4]) == 3


def test_ancestor_matrix_rows_are_paths_to_the_root():
    heads, lengths = pad_heads([[1, -1, 1, 2], [-1]])
    A = ancestor_matrix(heads, lengths)
    assert A[0, 3].nonzero().flatten().tolist() == [1, 2, 3]
    assert A[1].nonzero().tolist() == [[0, 0]]


def test_cycles_and_bad_input_are_rejected():
    with pytest.raises(CourseInputError, match="cycle"):
        batch_tree_distances([[1, 2, 1, -1]])
    with pytest.raises(CourseInputError, match="cycle"):
        ancestor_matrix(torch.tensor([[1, 0]]), torch.tensor([2]))  # unvalidated tensor input
    with pytest.raises(CourseInputError, match="empty"):
        batch_tree_distances([])
    with pytest.raises(CourseInputError, match="lengths"):
        batch_tree_distances(torch.tensor([[-1]]))
