"""The encoder: config checks, embeddings, FFN ≡ Conv1d, block ≡ torch's layer, the stack."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from lessons_lib.attention.functional import padding_mask
from lessons_lib.transformer.encoder import (
    Embeddings,
    Encoder,
    EncoderBlock,
    PositionwiseFeedForward,
    block_gradient_norms,
    feed_forward_as_conv1d,
    load_torch_encoder_layer_weights,
)
from lessons_lib.errors import CourseInputError
from lessons_lib.transformer.config import EncoderConfig
from lessons_lib.transformer.positional import sinusoidal_encoding

D, H, FF = 32, 4, 64


def _config(**overrides) -> EncoderConfig:
    values = dict(vocab_size=20, d_model=D, n_heads=H, n_layers=2, d_ff=FF, dropout=0.0, max_positions=16)
    values.update(overrides)
    return EncoderConfig(**values)


def _batch():
    torch.manual_seed(0)
    token_ids = torch.randint(1, 20, (3, 7))
    keep = padding_mask([7, 5, 2])
    token_ids = token_ids.masked_fill(~keep, 0)
    segment_ids = (torch.arange(7)[None, :] >= 3).long().expand(3, 7) * keep
    return token_ids, segment_ids, keep


def test_default_config_matches_the_documented_api():
    config = EncoderConfig(vocab_size=100)
    assert (config.d_model, config.n_heads, config.n_layers, config.d_ff) == (256, 4, 1, 1024)
    assert (config.dropout, config.max_positions, config.n_segments, config.norm_first, config.pad_id) == (0.1, 512, 2, False, 0)


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"d_model": 30}, "divisible"),
        ({"d_model": 9, "n_heads": 3}, "even"),
        ({"vocab_size": 0}, "vocab_size"),
        ({"dropout": 1.0}, "dropout"),
        ({"pad_id": 20}, "pad_id"),
        ({"activation": "tanh"}, "activation"),
        ({"n_layers": 2.0}, "n_layers"),
    ],
)
def test_bad_config_is_rejected(overrides, message):
    with pytest.raises(CourseInputError, match=message):
        _config(**overrides)


def test_embeddings_follow_the_formula():
    torch.manual_seed(1)
    emb = Embeddings(_config()).eval()
    token_ids, segment_ids, _ = _batch()
    summed = (emb.token.weight[token_ids] * math.sqrt(D) + sinusoidal_encoding(16, D)[:7]
              + emb.segment.weight[segment_ids])
    torch.testing.assert_close(emb(token_ids, segment_ids), emb.norm(summed))


def test_token_embeddings_scaled_by_sqrt_d_match_the_position_size():
    emb = Embeddings(_config(d_model=256, n_heads=4, vocab_size=2000))
    token_norm = (emb.token.weight[1:].detach() * emb.scale).norm(dim=1).mean()
    position_norm = sinusoidal_encoding(16, 256).norm(dim=1).mean()
    ratio = float(token_norm / position_norm)
    assert 1.0 < ratio < 2.0  # sqrt(D) against sqrt(D/2): ratio about sqrt(2)
    assert float(emb.token.weight[1:].detach().norm(dim=1).mean() / position_norm) < 0.1  # unscaled, drowned
    assert torch.equal(emb.token.weight[0], torch.zeros(256))


@pytest.mark.parametrize(
    "token_ids, segment_ids, message",
    [
        (torch.zeros(2, 3), torch.zeros(2, 3, dtype=torch.long), "token_ids"),
        (torch.full((2, 3), 20), torch.zeros(2, 3, dtype=torch.long), "vocab_size"),
        (torch.zeros(2, 3, dtype=torch.long), torch.full((2, 3), 2), "n_segments"),
        (torch.zeros(2, 3, dtype=torch.long), torch.zeros(2, 4, dtype=torch.long), "shape"),
        (torch.zeros(2, 17, dtype=torch.long), torch.zeros(2, 17, dtype=torch.long), "max_positions"),
    ],
)
def test_embeddings_reject_bad_ids(token_ids, segment_ids, message):
    with pytest.raises(CourseInputError, match=message):
        Embeddings(_config())(token_ids, segment_ids)


@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_ffn_equals_kernel_size_one_conv1d(activation):
    torch.manual_seed(2)
    ffn = PositionwiseFeedForward(D, FF, activation=activation)
    conv = feed_forward_as_conv1d(ffn)
    x = torch.randn(3, 7, D)
    torch.testing.assert_close(conv(x), ffn(x), atol=1e-6, rtol=0)
    assert isinstance(conv.inner[0], nn.Conv1d) and conv.inner[0].kernel_size == (1,)


def test_ffn_is_position_wise():
    torch.manual_seed(3)
    ffn = PositionwiseFeedForward(D, FF)
    x = torch.randn(2, 5, D)
    torch.testing.assert_close(ffn(x)[:, 2], ffn(x[:, 2:3])[:, 0])


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-ln", "pre-ln"])
@pytest.mark.parametrize("grad", [True, False], ids=["slow-path", "fast-path"])
def test_block_equals_torch_transformer_encoder_layer(norm_first, grad):
    torch.manual_seed(4)
    theirs = nn.TransformerEncoderLayer(D, H, FF, dropout=0.1, batch_first=True, norm_first=norm_first).eval()
    ours = load_torch_encoder_layer_weights(EncoderBlock(_config(norm_first=norm_first, activation="relu")), theirs).eval()
    x = torch.randn(3, 7, D)
    keep = padding_mask([7, 5, 2])
    with torch.set_grad_enabled(grad):
        torch.testing.assert_close(ours(x, keep), theirs(x, src_key_padding_mask=~keep), atol=1e-6, rtol=0)
        torch.testing.assert_close(ours(x, None), theirs(x), atol=1e-6, rtol=0)


def test_block_equals_torch_with_gelu():
    torch.manual_seed(5)
    theirs = nn.TransformerEncoderLayer(D, H, FF, activation="gelu", batch_first=True).eval()
    ours = load_torch_encoder_layer_weights(EncoderBlock(_config()), theirs).eval()
    x = torch.randn(2, 6, D)
    torch.testing.assert_close(ours(x, None), theirs(x), atol=1e-6, rtol=0)


def test_load_rejects_mismatched_layers():
    block = EncoderBlock(_config())
    with pytest.raises(CourseInputError, match="norm_first"):
        load_torch_encoder_layer_weights(block, nn.TransformerEncoderLayer(D, H, FF, batch_first=True, norm_first=True))
    with pytest.raises(CourseInputError, match="d_ff"):
        load_torch_encoder_layer_weights(block, nn.TransformerEncoderLayer(D, H, 2 * FF, batch_first=True))
    with pytest.raises(CourseInputError, match="batch_first"):
        load_torch_encoder_layer_weights(block, nn.TransformerEncoderLayer(D, H, FF))


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_forward_shapes_and_final_norm(norm_first):
    torch.manual_seed(6)
    encoder = Encoder(_config(norm_first=norm_first)).eval()
    token_ids, segment_ids, keep = _batch()
    out = encoder(token_ids, segment_ids, keep)
    assert out.shape == (3, 7, D) and torch.isfinite(out).all()
    assert isinstance(encoder.final_norm, nn.LayerNorm) == norm_first
    # Both layouts end normalised: every position has mean 0 and variance 1 over D (affine at init).
    torch.testing.assert_close(out.mean(-1), torch.zeros(3, 7), atol=1e-5, rtol=0)


def test_padding_does_not_change_real_positions():
    torch.manual_seed(7)
    encoder = Encoder(_config()).eval()
    token_ids, segment_ids, keep = _batch()
    full = encoder(token_ids, segment_ids, keep)
    short = encoder(token_ids[2:, :2], segment_ids[2:, :2], keep[2:, :2])
    torch.testing.assert_close(full[2:, :2], short, atol=1e-5, rtol=0)


def test_attn_bias_tensor_and_list_forms():
    torch.manual_seed(8)
    encoder = Encoder(_config()).eval()
    token_ids, segment_ids, keep = _batch()
    plain = encoder(token_ids, segment_ids, keep)
    zeros = torch.zeros(3, 1, 7, 7)
    assert torch.equal(encoder(token_ids, segment_ids, keep, attn_bias=zeros), plain)
    assert torch.equal(encoder(token_ids, segment_ids, keep, attn_bias=[zeros, None]), plain)
    bias = torch.randn(3, 1, 7, 7)
    only_first = encoder(token_ids, segment_ids, keep, attn_bias=[bias, None])
    both = encoder(token_ids, segment_ids, keep, attn_bias=bias)
    assert not torch.allclose(only_first, plain) and not torch.allclose(only_first, both)
    with pytest.raises(CourseInputError, match="2 blocks"):
        encoder(token_ids, segment_ids, keep, attn_bias=[bias])


def test_attention_maps_respect_padding():
    torch.manual_seed(9)
    encoder = Encoder(_config()).eval()
    token_ids, segment_ids, keep = _batch()
    with pytest.raises(CourseInputError, match="set_keep_attention"):
        encoder.attention_maps()
    encoder.set_keep_attention(True)
    encoder(token_ids, segment_ids, keep, attn_bias=torch.full((3, H, 7, 7), 50.0))
    maps = encoder.attention_maps()
    assert len(maps) == 2 and maps[0].shape == (3, H, 7, 7)
    assert torch.all(maps[1][2, :, :, 2:] == 0)
    encoder.set_keep_attention(False)
    with pytest.raises(CourseInputError):
        encoder.attention_maps()


def test_encoder_rejects_bad_key_mask():
    encoder = Encoder(_config())
    token_ids, segment_ids, keep = _batch()
    with pytest.raises(CourseInputError, match="key_mask"):
        encoder(token_ids, segment_ids, keep.long())
    with pytest.raises(CourseInputError, match="key_mask"):
        encoder(token_ids, segment_ids, keep[:, :5])


def test_gradients_reach_every_parameter():
    torch.manual_seed(10)
    encoder = Encoder(_config(norm_first=True))
    token_ids, segment_ids, keep = _batch()
    encoder(token_ids, segment_ids, keep)[keep].square().sum().backward()
    missing = [name for name, p in encoder.named_parameters() if p.grad is None or not torch.isfinite(p.grad).all()]
    assert missing == []


def test_block_gradient_norms():
    torch.manual_seed(11)
    encoder = Encoder(_config())
    token_ids, segment_ids, keep = _batch()
    with pytest.raises(CourseInputError, match="backward"):
        block_gradient_norms(encoder)
    encoder(token_ids, segment_ids, keep)[keep].square().sum().backward()
    norms = block_gradient_norms(encoder)
    block = encoder.blocks[1]
    expected = torch.cat([p.grad.flatten() for p in block.parameters()]).norm()
    assert len(norms) == 2 and abs(norms[1] - float(expected)) < 1e-4 * float(expected)
