"""Scores for encoder–decoder attention: dot, bilinear ("general") and additive."""

from __future__ import annotations

import pytest
import torch

from lessons_lib.attention.functional import (
    AdditiveScore,
    BilinearScore,
    DotScore,
    attend,
    attention_scores,
    make_scorer,
    masked_softmax,
    padding_mask,
)
from lessons_lib.errors import CourseInputError


def test_dot_score_fails_clearly_when_widths_differ():
    with pytest.raises(CourseInputError, match=r"same width.*d_k=6.*d_k=4.*bilinear or additive"):
        DotScore()(torch.randn(2, 1, 6), torch.randn(2, 5, 4))
    with pytest.raises(CourseInputError, match="d_query == d_key"):
        make_scorer("dot", 6, 4)


def test_dot_score_is_the_unscaled_dot_product():
    q, k = torch.randn(2, 3, 4), torch.randn(2, 5, 4)
    torch.testing.assert_close(DotScore()(q, k), q @ k.transpose(-2, -1))
    torch.testing.assert_close(DotScore(scale=True)(q, k), attention_scores(q, k))


def test_bilinear_score_formula_and_identity_case():
    torch.manual_seed(0)
    score = BilinearScore(6, 4)
    q, k = torch.randn(2, 3, 6), torch.randn(2, 5, 4)
    w = score.key_to_query.weight  # (d_query, d_key)
    expected = torch.einsum("bqi,ij,bkj->bqk", q, w, k)
    torch.testing.assert_close(score(q, k), expected)
    square = BilinearScore(4, 4)
    with torch.no_grad():
        square.key_to_query.weight.copy_(torch.eye(4))
    q4 = torch.randn(2, 3, 4)
    torch.testing.assert_close(square(q4, k), DotScore()(q4, k))


def test_additive_score_formula():
    torch.manual_seed(1)
    score = AdditiveScore(6, 4, 8)
    q, k = torch.randn(2, 3, 6), torch.randn(2, 5, 4)
    got = score(q, k)
    assert got.shape == (2, 3, 5)
    b, i, j = 1, 2, 4
    hidden = torch.tanh(score.query_proj(q[b, i]) + score.key_proj(k[b, j]))
    torch.testing.assert_close(got[b, i, j], score.v(hidden)[0])


@pytest.mark.parametrize("kind", ["general", "additive"])
def test_projected_scores_accept_any_widths_and_give_distributions(kind):
    torch.manual_seed(2)
    scorer = make_scorer(kind, 7, 12, d_hidden=5)
    q, k = torch.randn(3, 1, 7), torch.randn(3, 6, 12)
    keep = padding_mask([6, 4, 1])
    context, weights = attend(scorer(q, k), k, keep[:, None, :])
    assert context.shape == (3, 1, 12) and weights.shape == (3, 1, 6)
    torch.testing.assert_close(weights.sum(-1), torch.ones(3, 1))
    assert torch.all(weights[1, :, 4:] == 0) and torch.all(weights[2, :, 1:] == 0)


def test_attend_equals_masked_softmax_times_values():
    scores, values = torch.randn(2, 3, 5), torch.randn(2, 5, 4)
    keep = padding_mask([5, 2])[:, None, :]
    context, weights = attend(scores, values, keep)
    torch.testing.assert_close(weights, masked_softmax(scores, keep))
    torch.testing.assert_close(context, weights @ values)
    with pytest.raises(CourseInputError, match="L_k=5"):
        attend(scores, values[:, :4])


def test_bad_widths_are_rejected():
    with pytest.raises(CourseInputError, match="d_key"):
        BilinearScore(4, 0)
    with pytest.raises(CourseInputError, match="query"):
        BilinearScore(4, 6)(torch.randn(2, 1, 5), torch.randn(2, 3, 6))
    with pytest.raises(CourseInputError, match="key"):
        AdditiveScore(4, 6, 8)(torch.randn(2, 1, 4), torch.randn(2, 3, 5))
    with pytest.raises(CourseInputError, match="kind"):
        make_scorer("cosine", 4, 4)
