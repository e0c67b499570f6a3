"""Multi-head attention: head split/merge, masks, the attention-bias hook, and equality with torch."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from lessons_lib.attention.functional import padding_mask, scaled_dot_product_attention
from lessons_lib.errors import CourseInputError
from lessons_lib.attention.multihead import (
    MultiHeadAttention,
    expand_mask,
    load_torch_multihead_weights,
    merge_heads,
    split_heads,
)

D, H = 32, 4


def _pair(seed: int = 0, dropout: float = 0.0):
    torch.manual_seed(seed)
    theirs = nn.MultiheadAttention(D, H, dropout=dropout, batch_first=True).eval()
    ours = load_torch_multihead_weights(MultiHeadAttention(D, H, dropout=dropout), theirs).eval()
    return ours, theirs


def test_split_and_merge_are_inverse():
    x = torch.randn(2, 5, D)
    heads = split_heads(x, H)
    assert heads.shape == (2, H, 5, D // H)
    # Head h holds features h*d_head ... (h+1)*d_head - 1 of every position.
    assert torch.equal(heads[:, 1], x[:, :, D // H: 2 * D // H])
    assert torch.equal(merge_heads(heads), x)


def test_split_rejects_indivisible_width():
    with pytest.raises(CourseInputError, match=r"width D=30 must be divisible by n_heads=4"):
        split_heads(torch.randn(2, 5, 30), 4)


@pytest.mark.parametrize("grad", [True, False], ids=["slow-path", "fast-path"])
def test_equals_torch_multihead_attention_without_padding(grad):
    ours, theirs = _pair()
    x = torch.randn(3, 7, D)
    with torch.set_grad_enabled(grad):
        expected, _ = theirs(x, x, x, need_weights=False)
        got = ours(x, x, x)
    torch.testing.assert_close(got, expected, atol=1e-6, rtol=0)


@pytest.mark.parametrize("grad", [True, False], ids=["slow-path", "fast-path"])
def test_equals_torch_multihead_attention_with_padding(grad):
    ours, theirs = _pair(1)
    x = torch.randn(3, 7, D)
    keep = padding_mask([7, 4, 2])
    with torch.set_grad_enabled(grad):
        # torch's key_padding_mask means True = ignore: the inverse of ours.
        expected, _ = theirs(x, x, x, key_padding_mask=~keep, need_weights=False)
        got = ours(x, x, x, mask=keep)
    torch.testing.assert_close(got, expected, atol=1e-6, rtol=0)


def test_cross_attention_equals_torch_and_weights_match():
    ours, theirs = _pair(2)
    query, memory = torch.randn(2, 3, D), torch.randn(2, 6, D)
    keep = padding_mask([6, 5])
    ours.keep_attention = True
    got = ours(query, memory, memory, mask=keep)
    expected, weights = theirs(query, memory, memory, key_padding_mask=~keep, average_attn_weights=False)
    torch.testing.assert_close(got, expected, atol=1e-6, rtol=0)
    assert ours.last_attention.shape == (2, H, 3, 6)
    torch.testing.assert_close(ours.last_attention, weights, atol=1e-6, rtol=0)


def test_inverted_mask_gives_a_different_answer_silently():
    """Passing our keep-mask as torch's key_padding_mask raises nothing but attends to padding."""
    ours, theirs = _pair(3)
    x = torch.randn(2, 6, D)
    keep = padding_mask([6, 3])
    right = ours(x, x, x, mask=keep)
    with torch.no_grad():
        wrong, _ = theirs(x, x, x, key_padding_mask=keep)  # the bug: True here means ignore
    assert torch.isfinite(wrong[1]).all()
    assert not torch.allclose(wrong[1], right[1], atol=1e-3)


def test_single_head_matches_the_attention_function():
    torch.manual_seed(4)
    mha = MultiHeadAttention(8, 1)
    x = torch.randn(2, 5, 8)
    keep = padding_mask([5, 2])
    out, _ = scaled_dot_product_attention(mha.q_proj(x), mha.k_proj(x), mha.v_proj(x), keep[:, None, :])
    torch.testing.assert_close(mha(x, x, x, mask=keep), mha.out_proj(out))


def test_permutation_equivariance():
    torch.manual_seed(5)
    mha = MultiHeadAttention(D, H).eval()
    x = torch.randn(1, 9, D)
    perm = torch.randperm(9)
    torch.testing.assert_close(mha(x, x, x)[:, perm], mha(x[:, perm], x[:, perm], x[:, perm]), atol=1e-6, rtol=0)


def test_attn_bias_is_added_to_scaled_scores():
    torch.manual_seed(6)
    mha = MultiHeadAttention(D, H)
    mha.keep_attention = True
    x = torch.randn(2, 5, D)
    bias = torch.randn(2, H, 5, 5)
    mha(x, x, x, attn_bias=bias)
    q, k = split_heads(mha.q_proj(x), H), split_heads(mha.k_proj(x), H)
    expected = torch.softmax(q @ k.transpose(-2, -1) / (D // H) ** 0.5 + bias, dim=-1)
    torch.testing.assert_close(mha.last_attention, expected)


def test_zero_bias_changes_nothing():
    torch.manual_seed(7)
    mha = MultiHeadAttention(D, H)
    x = torch.randn(2, 5, D)
    keep = padding_mask([5, 3])
    assert torch.equal(mha(x, x, x, mask=keep), mha(x, x, x, mask=keep, attn_bias=torch.zeros(1, 1, 5, 5)))


def test_masked_keys_stay_at_zero_weight_whatever_the_bias():
    torch.manual_seed(8)
    mha = MultiHeadAttention(D, H)
    mha.keep_attention = True
    x = torch.randn(2, 5, D)
    keep = padding_mask([5, 3])
    huge = torch.full((2, 1, 5, 5), 1e9)
    mha(x, x, x, mask=keep, attn_bias=huge)
    assert torch.all(mha.last_attention[1, :, :, 3:] == 0)
    torch.testing.assert_close(mha.last_attention.sum(-1), torch.ones(2, H, 5))


def test_bias_gradient_reaches_a_learnable_bias():
    torch.manual_seed(9)
    mha = MultiHeadAttention(D, H)
    bias = torch.zeros(2, 1, 5, 5, requires_grad=True)
    x = torch.randn(2, 5, D)
    mha(x, x, x, mask=padding_mask([5, 3]), attn_bias=bias).square().sum().backward()
    assert bias.grad is not None and bias.grad.abs().sum() > 0
    # Masked keys get no gradient through the bias (and no NaN either).
    assert torch.all(bias.grad[1, :, :, 3:] == 0)
    assert torch.isfinite(bias.grad).all()


def test_expand_mask_shapes():
    assert expand_mask(torch.ones(2, 5, dtype=torch.bool), 2, 3, 5).shape == (2, 1, 1, 5)
    assert expand_mask(torch.ones(2, 3, 5, dtype=torch.bool), 2, 3, 5).shape == (2, 1, 3, 5)
    assert expand_mask(torch.ones(1, 1, 3, 5, dtype=torch.bool), 2, 3, 5).shape == (1, 1, 3, 5)


@pytest.mark.parametrize(
    "mask, message",
    [
        (torch.ones(2, 5), "boolean"),
        (torch.ones(2, 4, dtype=torch.bool), "key mask"),
        (torch.ones(2, 2, 5, dtype=torch.bool), r"\(B, L_q, L_k\)"),
        (torch.ones(5, dtype=torch.bool), "2, 3 or 4"),
    ],
)
def test_bad_masks_are_rejected(mask, message):
    mha = MultiHeadAttention(D, H)
    x = torch.randn(2, 5, D)
    with pytest.raises(CourseInputError, match=message):
        mha(x[:, :3], x, x, mask=mask)


def test_bad_bias_and_inputs_are_rejected():
    mha = MultiHeadAttention(D, H)
    x = torch.randn(2, 5, D)
    with pytest.raises(CourseInputError, match="attn_bias"):
        mha(x, x, x, attn_bias=torch.zeros(2, H, 5, 4))
    with pytest.raises(CourseInputError, match="attn_bias"):
        mha(x, x, x, attn_bias=torch.zeros(2, H, 5, 5, dtype=torch.long))
    with pytest.raises(CourseInputError, match="query"):
        mha(torch.randn(2, 5, 16), x, x)
    with pytest.raises(CourseInputError, match="mismatch"):
        mha(x, x, x[:, :4])
    with pytest.raises(CourseInputError, match="must be divisible by `n_heads`"):
        MultiHeadAttention(30, 4)


def test_load_rejects_mismatched_torch_module():
    with pytest.raises(CourseInputError, match="size mismatch"):
        load_torch_multihead_weights(MultiHeadAttention(D, H), nn.MultiheadAttention(D, 2))
    with pytest.raises(CourseInputError, match="MultiheadAttention"):
        load_torch_multihead_weights(MultiHeadAttention(D, H), nn.Linear(D, D))


# --- the fused path: torch's scaled_dot_product_attention against the course's ------------------


def _course_and_fused(seed: int = 10, dropout: float = 0.0):
    torch.manual_seed(seed)
    course = MultiHeadAttention(D, H, dropout=dropout)
    fused = MultiHeadAttention(D, H, dropout=dropout, implementation="sdpa")
    fused.load_state_dict(course.state_dict())
    return course, fused


@pytest.mark.parametrize("case", ["no mask", "key mask", "float bias", "key mask and bias", "3-D mask",
                                  "fully masked rows", "bias with -inf"])
def test_fused_path_equals_the_course_path_in_outputs_and_gradients(case):
    course, fused = _course_and_fused()
    x = torch.randn(3, 6, D)
    mask, bias = None, None
    if case in ("key mask", "key mask and bias"):
        mask = padding_mask([6, 4, 2])
    if case in ("float bias", "key mask and bias", "bias with -inf"):
        bias = torch.randn(3, H, 6, 6)
    if case == "bias with -inf":  # the hard mask's bias: far keys at -inf, never a whole row
        bias[:, :, :, 4:] = float("-inf")
    if case == "3-D mask":
        mask = torch.rand(3, 6, 6) > 0.3
        mask[..., 0] = True
    if case == "fully masked rows":  # a query that may attend nothing gets zeros on both paths
        mask = torch.rand(3, 6, 6) > 0.3
        mask[0, 2] = False
        mask[1] = False
    outputs, gradients = [], []
    for module in (course, fused):
        inputs = x.clone().requires_grad_(True)
        learned = None if bias is None else bias.clone().requires_grad_(True)
        out = module(inputs, inputs, inputs, mask=mask, attn_bias=learned)
        out.square().sum().backward()
        outputs.append(out)
        gradients.append([inputs.grad] + ([] if learned is None else [learned.grad]) +
                         [p.grad for p in module.parameters()])
    torch.testing.assert_close(outputs[1], outputs[0], atol=1e-5, rtol=0)
    for got, expected in zip(gradients[1], gradients[0]):
        assert torch.isfinite(got).all()
        torch.testing.assert_close(got, expected, atol=1e-5, rtol=0)
    if case == "fully masked rows":
        assert torch.all(outputs[1][1] == course.out_proj.bias)  # zero context, then the output projection


def test_fused_path_keeps_weights_through_the_course_path_and_drops_out_in_training():
    course, fused = _course_and_fused(dropout=0.5)
    x = torch.randn(2, 5, D)
    fused.keep_attention = True
    fused.eval()(x, x, x)
    assert fused.last_attention is not None and fused.last_attention.shape == (2, H, 5, 5)
    fused.keep_attention = False
    fused.train(), course.train()
    assert not torch.equal(fused(x, x, x), fused(x, x, x))  # attention dropout is on in training
    # On CPU the fused call drops the same weights as nn.Dropout does, draw for draw.
    torch.manual_seed(3)
    expected = course(x, x, x, mask=padding_mask([5, 3]))
    torch.manual_seed(3)
    torch.testing.assert_close(fused(x, x, x, mask=padding_mask([5, 3])), expected, atol=1e-5, rtol=0)
    with pytest.raises(CourseInputError, match="implementation"):
        MultiHeadAttention(D, H, implementation="flash")


@pytest.mark.parametrize("implementation", ["course", "sdpa"])
def test_a_4d_mask_that_does_not_fit_the_heads_is_one_clear_line(implementation):
    mha = MultiHeadAttention(D, H, implementation=implementation)
    x = torch.randn(2, 5, D)
    with pytest.raises(CourseInputError, match=r"`mask` of shape \(2, 3, 5, 4\) does not broadcast"):
        mha(x, x, x, mask=torch.ones(2, 3, 5, 4, dtype=torch.bool))
